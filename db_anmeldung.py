"""Gescheiterte Anmeldung am Datenbankserver: ein deutscher Satz mit dem nächsten Schritt.

``verbindungsfehler`` macht aus dem Text einer gescheiterten Verbindung einen Satz, der sagt,
was geschah und wer was tut (pg_hba.conf, peer/ident, SSL, Passwort, zu viele Verbindungen,
Server startet, nicht erreichbar, Verbindung verloren …); was keines der Muster trifft, bleibt
„Datenbankfehler (…): <Text>“. ``passwort_falsch`` sagt dazu, woher URL und Passwort kamen.
Ebenso nur als Text meldet libpq eine URL, die es nicht lesen kann (``lesefehler``), und einen
ungültigen Wert einer Option (``optionsfehler``). Dazu: welche Passwortdatei libpq liest und ob
es sie liest (``passwortdatei``, ``passwortdatei_offen``).

Warum Text und kein SQLSTATE: scheitert der Aufbau einer Verbindung, hat libpq nur
PQerrorMessage – kein Ergebnis mit Feldern –, und psycopg hebt ``OperationalError`` ohne
``sqlstate``, auch wenn der Server einen Code schickte (28P01, 28000, 53300, 57P03, 3D000 …).
Ebenso ohne Code kommen die Meldungen von libpq selbst (SSL, Zertifikat, nicht erreichbar,
Verbindung abgerissen). Die Fehler mit SQLSTATE ordnet ``db.py`` nach ihrer Klasse zu.

Die Muster: was der Server schickt, kommt englisch oder in der Sprache seiner lc_messages
(deutsch mit »…«), darum steht je Fall beides beisammen – englisch wie libpq 18 und die Server
15 bis 18 schreiben, deutsch aus der de.po von PostgreSQL 15. Was libpq selbst meldet, kommt
englisch: die libpq in psycopg-binary ist ohne Übersetzungen gebaut (nur für SSL steht auch ihr
deutscher Satz da). Ändert eine neue Fassung von libpq oder Server den Wortlaut, trifft das
Muster nicht mehr, und der Text erscheint unübersetzt hinter „Datenbankfehler (…)“
(tests/test_db.py prüft die Sätze an den Texten und peer, reject und SSL an PostgreSQL 15).

Dazu, was jede Meldung braucht, die eine URL zitiert: ``maskieren`` und ``ohne_passwort`` nehmen
das Passwort heraus, ``traegt_passwort`` sagt, ob die URL eins hat.

Eine gemeinsame Datei des Hauses neben ``db.py``: sie importiert nichts aus dem Paket
``auswahlstufe`` und kein click.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from urllib.parse import unquote

import psycopg

_EINRICHTUNG = "docs/betrieb.md, Einrichtung, Schritt 1"


def _muster(*texte: str) -> re.Pattern[str]:
    """Ein Fall: trifft, wenn einer der Texte (reguläre Ausdrücke) vorkommt, gleich ob groß oder klein."""
    return re.compile("|".join(texte), re.IGNORECASE)


# --- Die Muster: englisch und deutsch je Fall beisammen ---------------------------------------------

# Server, auth.c (28P01): password authentication failed for user "…"
_PASSWORT_FALSCH = _muster("password authentication failed", "passwort-authentifizierung")
# libpq, fe-auth.c: fe_sendauth: no password supplied
_KEIN_PASSWORT = _muster("no password supplied")

_NAME = r'["»](?P<{}>.*?)["«]'
# Server, auth.c (28000): Peer/Ident authentication failed for user "…"
_ANMELDEMETHODE = re.compile(
    r"\b(?P<methode>peer|ident)(?: authentication failed for user|-authentifizierung für benutzer) "
    + _NAME.format("rolle"),
    re.IGNORECASE,
)
# Server, auth.c (28000): pg_hba.conf rejects connection for host "…", user "…", database "…", no encryption
_HBA_ABGEWIESEN = _muster("rejects connection", "lehnt verbindung ab")
# Server, auth.c (28000): no pg_hba.conf entry for host "…", user "…", database "…", SSL encryption
_HBA_KEINE_ZEILE = _muster(r"no pg_hba\.conf entry", r"kein pg_hba\.conf-eintrag")
_HBA_FELDER = re.compile(
    r"(?:for host|für host) "
    + _NAME.format("host")
    + r", (?:user|benutzer) "
    + _NAME.format("rolle")
    + r", (?:database|datenbank) "
    + _NAME.format("datenbank")
    + r", (?P<verschluesselung>[^\n]*)",
    re.IGNORECASE,
)
_VERSCHLUESSELUNG = {
    "no encryption": "ohne Verschlüsselung",
    "keine verschlüsselung": "ohne Verschlüsselung",
    "ssl encryption": "mit SSL",
    "ssl-verschlüsselung": "mit SSL",
    "gss encryption": "mit GSS",
    "gss-verschlüsselung": "mit GSS",
}

# libpq, fe-connect.c: warum sich DATABASE_URL nicht lesen lässt (conninfo_to_dict) – auf Deutsch.
_LESEFEHLER = (
    (re.compile(r'missing "=" after "(.*)" in connection info string'), "fehlendes „=“ nach „{}“"),
    (re.compile(r'invalid URI query parameter: "(.*)"'), "unbekannter Parameter „{}“ in der URL"),
    (re.compile(r'invalid connection option "(.*)"'), "unbekannte Verbindungsoption „{}“"),
    (re.compile(r'invalid percent-encoded token: "(.*)"'), "ungültige %-Kodierung „{}“"),
    (re.compile(r"unterminated quoted string"), "ein Anführungszeichen ist nicht geschlossen"),
)
# libpq, fe-connect.c: invalid sslmode value: "…" – eine Option mit fester Auswahl, erst beim Verbinden geprüft
_OPTIONSWERT = re.compile(r'invalid (\w+) value: "(.*?)"')

# Die übrigen Fälle nach Passwort, peer/ident und pg_hba.conf, in dieser Reihenfolge geprüft (die erste
# passende Zeile gilt): Muster → Satz. Im Satz {ziel} die URL ohne Passwort, {woher} woher sie kam,
# {rolle} die Rolle der URL, {0}, {1} die Gruppen des Musters.
_FAELLE: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        # libpq, fe-connect.c: server does not support SSL, but SSL was required (deutsch: de.po von libpq 15)
        _muster("does not support ssl", "unterstützt kein ssl"),
        "Der Server spricht kein SSL, DATABASE_URL verlangt es ({ziel}; sslmode=require oder "
        "strenger, auch aus PGSSLMODE). Entweder schaltet der Admin des Servers SSL ein (ssl = on "
        "mit Zertifikat), oder – nur in einem vertrauten Netz, etwa auf demselben Rechner – "
        "sslmode=prefer in DATABASE_URL.{woher}",
    ),
    (
        # libpq, fe-secure-openssl.c: root certificate file "…" does not exist
        _muster(r'root certificate file ["»](.*?)["«] does not exist'),
        "sslmode=verify-ca oder verify-full prüft das Zertifikat des Servers ({ziel}) und braucht "
        "dafür ein Stammzertifikat; {0} gibt es nicht. sslrootcert=PFAD in DATABASE_URL "
        "(oder sslrootcert=system für die Stammzertifikate des Systems).{woher}",
    ),
    (
        # libpq, fe-secure-common.c: server certificate for "…" does not match host name "…"
        _muster(r'server certificate for ["»](.*?)["«].*? host name ["»](.*?)["«]'),
        "Das Zertifikat des Servers gilt für {0}, DATABASE_URL nennt den Host {1} "
        "({ziel}; sslmode=verify-full). Den Namen aus dem Zertifikat als Host nehmen.{woher}",
    ),
    (
        # OpenSSL über libpq: SSL error: certificate verify failed
        _muster("certificate verify failed"),
        "Das Zertifikat des Servers ließ sich nicht prüfen ({ziel}): es ist nicht von dem "
        "Stammzertifikat in sslrootcert unterschrieben (oder abgelaufen). sslrootcert in DATABASE_URL "
        "prüfen.{woher}",
    ),
    (
        # Server, auth.c (28000): connection requires a valid client certificate
        _muster("requires a valid client certificate"),
        "Der Server verlangt ein Client-Zertifikat ({ziel}; pg_hba.conf: cert oder clientcert): "
        "sslcert=… und sslkey=… in DATABASE_URL.{woher}",
    ),
    (
        # libpq, fe-auth.c: channel binding required, but …
        _muster("channel binding"),
        "channel_binding=require in DATABASE_URL, aber die Anmeldung am Server ({ziel}) bietet es "
        "nicht (nur mit SSL und scram-sha-256). SSL einschalten oder channel_binding=prefer.{woher}",
    ),
    (
        # libpq, fe-connect.c: GSSAPI encryption required but was impossible …
        _muster(r"(?s:gssapi.*required)", r"(?s:required.*gssapi)"),
        "gssencmode=require in DATABASE_URL, aber der Server ({ziel}) verschlüsselt nicht mit GSSAPI "
        "(über einen Socket nie). gssencmode=prefer oder disable.{woher}",
    ),
    (
        # Server, miscinit.c (28000): role "…" is not permitted to log in
        _muster(
            r'(?:role|rolle) ["»](.*?)["«] (?:is not permitted to log in|hat keine berechtigung zum einloggen)'
        ),
        "Die Rolle {0} darf sich nicht anmelden (NOLOGIN; {ziel}). Der Admin der Stufe gibt "
        "es mit dem Rollenrezept (docs/betrieb.md, Einrichtung, Schritt 4) oder: alter role {0} login;",
    ),
    (
        # Server, postinit.c (42501): DETAIL:  User does not have CONNECT privilege.
        _muster("connect privilege", "connect-privileg"),
        "Der Rolle {rolle} fehlt das Recht CONNECT auf die Datenbank ({ziel}). Der Eigentümer der "
        "Datenbank gibt es (grant connect on database …), oder der Admin der Stufe mit dem "
        "Rollenrezept (docs/betrieb.md, Einrichtung, Schritt 4).",
    ),
    (
        # Server, proc.c, miscinit.c, postinit.c (53300): sorry, too many clients already; too many
        # connections for role/database "…"; remaining connection slots are reserved for …
        _muster(
            "too many clients",
            "too many connections",
            "zu viele verbindungen",
            "connection slots are reserved",
        ),
        "Der Datenbankserver nimmt keine Verbindung mehr an ({ziel}): zu viele Verbindungen "
        "(max_connections oder die Grenze der Rolle). Später erneut; ein erneuter Lauf setzt fort.",
    ),
    (
        # Server beim Start der Sitzung (57P03): the database system is starting up / is shutting
        # down / is in recovery mode / is not yet accepting connections
        _muster(
            "is starting up",
            "is shutting down",
            "in recovery mode",
            "not yet accepting connections",
            "datenbanksystem startet",
            "datenbanksystem fährt herunter",
        ),
        "Der Datenbankserver startet gerade oder fährt herunter ({ziel}). Später erneut; "
        "ein erneuter Lauf setzt fort.",
    ),
    (
        # Server, postinit.c (55000): database "…" is not currently accepting connections
        _muster("not currently accepting connections"),
        "Die Datenbank in {ziel} nimmt gerade keine Verbindungen an (ALLOW_CONNECTIONS false).{woher}",
    ),
    (
        # Server, postinit.c (3D000): database "…" does not exist
        _muster("database .* does not exist", "datenbank .* existiert nicht"),
        "Die Datenbank in {ziel} gibt es nicht.{woher}",
    ),
    (
        # Server, miscinit.c (28000): role "…" does not exist
        _muster("role .* does not exist", "rolle .* existiert nicht"),
        "Die Rolle in {ziel} gibt es nicht.{woher}",
    ),
    (
        # libpq, fe-connect.c, mit dem Text des Systems: Connection refused, No such file or
        # directory (kein Socket), timeout expired; „could not connect“ aus älteren libpq
        _muster("connection refused", "no such file", "could not connect", "timeout expired"),
        "Datenbankserver nicht erreichbar ({ziel}). Läuft er, stimmen Host und Port?{woher}",
    ),
    (
        # libpq, fe-misc.c: server closed the connection unexpectedly; Server, postgres.c:
        # terminating connection …; psycopg: the connection is lost, connection socket closed
        # (der Server verschwindet mitten im Lesen)
        _muster(
            "server closed the connection",
            "terminating connection",
            "connection is lost",
            "connection socket closed",
        ),
        "Verbindung zur Datenbank verloren ({ziel}). Geschriebene Stapel bleiben; "
        "ein erneuter Lauf setzt fort.",
    ),
)


# --- Woher das Passwort kommt ------------------------------------------------------------------------


def passwort_ausdruecklich(teile: dict[str, str]) -> bool:
    """Steht ein Passwort in der URL oder in PGPASSWORD (dann liest libpq keine Passwortdatei)?"""
    return bool(teile.get("password") or os.environ.get("PGPASSWORD"))


def url_teile(url: str | None) -> dict[str, str]:
    """Die Teile der URL wie libpq sie liest; leer ohne URL oder wenn sie nicht lesbar ist."""
    try:
        return psycopg.conninfo.conninfo_to_dict(url) if url else {}
    except psycopg.Error:
        return {}


def passwortdatei(teile: dict[str, str]) -> Path | None:
    """Die Passwortdatei, die libpq liest, wenn die URL kein Passwort hat: ``passfile`` der URL,
    sonst PGPASSFILE, sonst ``~/.pgpass``."""
    pfad = teile.get("passfile") or os.environ.get("PGPASSFILE")
    if pfad:
        return Path(pfad)
    try:
        return Path.home() / ".pgpass"
    except RuntimeError:  # kein HOME
        return None


def passwortdatei_offen(teile: dict[str, str]) -> str | None:
    """Ohne Passwort in der URL (und ohne PGPASSWORD) liest libpq die Passwortdatei – aber nicht,
    wenn Gruppe oder andere sie lesen dürfen; dann schreibt libpq bei jeder Verbindung eine
    englische Warnung auf stderr. Der Satz dazu (``db.verbinden``: Exit 7), sonst None."""
    if passwort_ausdruecklich(teile):
        return None
    datei = passwortdatei(teile)
    try:
        modus = datei.stat().st_mode if datei is not None else 0
    except OSError:
        return None
    if stat.S_ISREG(modus) and modus & (stat.S_IRWXG | stat.S_IRWXO):
        return (
            f"{datei} ist für Gruppe oder andere lesbar; libpq liest die Passwortdatei dann nicht. "
            f"chmod 600 {datei}"
        )
    return None


def _passwort_herkunft(url: str | None) -> str:
    """Woher libpq das Passwort nahm: „ Das Passwort kommt aus …“ – leer, wenn es in der URL steht."""
    teile = url_teile(url)
    if teile.get("password"):
        return ""
    if os.environ.get("PGPASSWORD"):
        return " Das Passwort kommt aus PGPASSWORD."
    datei = passwortdatei(teile)
    if datei is not None and datei.is_file():
        return f" Das Passwort kommt aus {datei}."
    return ""


def passwort_falsch(ziel: str, woher: str, url: str | None) -> str:
    """„Rolle oder Passwort falsch“, woher URL und Passwort kamen, und der nächste Schritt."""
    teile = url_teile(url)
    if not passwort_ausdruecklich(teile):
        datei = passwortdatei(teile) or Path("~/.pgpass")
        weiter = (
            f"Schritt 5 wiederholen – er schreibt die Zeile der Rolle in {datei} aus der Passwortdatei von "
            "Schritt 4 neu –; scheitert es dann noch, setzt der Admin mit Schritt 4 das Passwort aus "
            "derselben Datei neu (docs/betrieb.md, Einrichtung)."
        )
    else:
        wo = "DATABASE_URL" if teile.get("password") else "PGPASSWORD"
        weiter = (
            f"das Passwort in {wo} mit der Passwortdatei aus Schritt 4 vergleichen – oder es dort weglassen "
            "und ~/.pgpass nehmen (docs/betrieb.md, Einrichtung, Schritt 5)."
        )
    return (
        f"Anmeldung an {ziel} gescheitert: Rolle oder Passwort falsch.{woher}{_passwort_herkunft(url)} "
        f"Weiter: {weiter}"
    )


# --- peer, ident und pg_hba.conf --------------------------------------------------------------------


def _hba_zeile(host: str, rolle: str, datenbank: str) -> str:
    """Die Zeile in pg_hba.conf, die ``rolle`` von ``host`` mit Passwort an ``datenbank`` lässt."""
    if host in ("[local]", ""):
        return f"local {datenbank} {rolle} scram-sha-256"
    maske = "128" if ":" in host else "32"
    return f"host {datenbank} {rolle} {host}/{maske} scram-sha-256"


def _hba_satz(text: str, ziel: str) -> str | None:
    """pg_hba.conf weist ab („reject“) oder hat keine Zeile – wer was in pg_hba.conf ändert."""
    abgewiesen = bool(_HBA_ABGEWIESEN.search(text))
    keine_zeile = bool(_HBA_KEINE_ZEILE.search(text))
    if not (abgewiesen or keine_zeile):
        return None
    treffer = _HBA_FELDER.search(text)
    if not treffer:
        return (
            f"Der Server lässt diese Anmeldung nicht zu ({ziel}): pg_hba.conf hat keine Zeile dafür oder "
            f"weist sie ab. Der Admin des Servers ergänzt eine Zeile für die Rolle ({_EINRICHTUNG})."
        )
    host, rolle, datenbank = treffer["host"], treffer["rolle"], treffer["datenbank"]
    verschluesselung = treffer["verschluesselung"].strip().rstrip(".").lower()
    wie = _VERSCHLUESSELUNG.get(verschluesselung, verschluesselung)
    von = "über den Socket" if host == "[local]" else f"von {host}"
    zeile = _hba_zeile(host, rolle, datenbank)
    if abgewiesen:
        return (
            f"Der Server weist die Anmeldung von {rolle} an {datenbank} {von} ab ({ziel}): in "
            f"pg_hba.conf passt zuerst eine Zeile „reject“. Der Admin des Servers setzt davor eine Zeile "
            f"für die Rolle: {zeile} (dann select pg_reload_conf(); {_EINRICHTUNG})."
        )
    ssl = (
        " Erlaubt der Server sie nur mit SSL (hostssl), genügt sslmode=require in DATABASE_URL."
        if wie == "ohne Verschlüsselung" and host != "[local]"
        else ""
    )
    return (
        f"Der Server lässt {rolle} an {datenbank} {von} ({wie}) nicht zu ({ziel}): pg_hba.conf hat "
        f"keine passende Zeile. Der Admin des Servers ergänzt eine: {zeile} (dann select "
        f"pg_reload_conf(); {_EINRICHTUNG}).{ssl}"
    )


def _passwortdatei_hat(datei: Path | None, datenbank: str, rolle: str) -> bool:
    """Hat die Passwortdatei eine Zeile für ``rolle`` an ``datenbank`` (Rechner und Port: egal)?"""
    try:
        zeilen = datei.read_text(encoding="utf-8", errors="replace").splitlines() if datei else []
    except OSError:
        return False
    for zeile in zeilen:
        if zeile.startswith("#"):
            continue
        felder = [
            f.replace("\\:", ":").replace("\\\\", "\\") for f in re.split(r"(?<!\\):", zeile, maxsplit=4)
        ]
        if len(felder) == 5 and felder[2] in ("*", datenbank) and felder[3] in ("*", rolle) and felder[4]:
            return True
    return False


def _anmeldemethode_satz(text: str, ziel: str, url: str | None) -> str | None:
    """peer oder ident: der Server prüft den Benutzer des Systems, nicht das Passwort."""
    treffer = _ANMELDEMETHODE.search(text)
    if not treffer:
        return None
    rolle, methode = treffer["rolle"], treffer["methode"].lower()
    teile = url_teile(url)
    datenbank = teile.get("dbname") or rolle
    wo = "local all all peer" if methode == "peer" else "host all all 127.0.0.1/32 ident"
    zeile = _hba_zeile("[local]" if methode == "peer" else "127.0.0.1", rolle, datenbank)
    anfang = (
        f"Anmeldung an {ziel} gescheitert: der Server prüft {rolle} mit {methode} (pg_hba.conf) – dafür "
        f"müsste der Benutzer des Systems {rolle} heißen; ein Passwort zählt dort nicht."
    )
    ende = f"(dann select pg_reload_conf(); {_EINRICHTUNG}); über TCP (host=localhost in DATABASE_URL) gilt auf Debian schon scram-sha-256."
    datei = passwortdatei(teile)
    if passwort_ausdruecklich(teile) or _passwortdatei_hat(datei, datenbank, rolle):
        return (
            f"{anfang} Für die Anmeldung mit Passwort setzt der Admin des Servers vor die Zeile „{wo}“ eine "
            f"Zeile wie {zeile} {ende}"
        )
    # Eine Rolle ohne Passwort (ingest, aw_admin aus Schritt 1): eine Zeile scram-sha-256 hülfe nicht.
    datei_text = str(datei or "~/.pgpass")
    return (
        f"{anfang} Ohne Passwort (DATABASE_URL, PGPASSWORD und {datei_text} haben keins für {rolle}) kommt "
        f"{rolle} so nur an, wenn der Aufruf unter dem Benutzer des Systems {rolle} läuft oder pg_ident.conf "
        f"ihn zuordnet ({methode} map=…, {_EINRICHTUNG}). Sonst bekommt die Rolle erst ein Passwort (als "
        f"Superuser: \\password {rolle}) in {datei_text}, und der Admin des Servers setzt vor die Zeile "
        f"„{wo}“ eine Zeile wie {zeile} {ende}"
    )


# --- Was libpq beim Lesen der URL und ihrer Optionen meldet -----------------------------------------


def lesefehler(text: str) -> str:
    """Warum libpq DATABASE_URL nicht lesen kann, auf Deutsch; ein unbekannter Text bleibt, wie er ist."""
    for muster, satz in _LESEFEHLER:
        if treffer := muster.search(text):
            return satz.format(*treffer.groups())
    return text


def optionsfehler(text: str, ziel: str) -> str | None:
    """Eine Option der URL mit ungültigem Wert, die libpq erst beim Verbinden prüft; sonst None."""
    if treffer := _OPTIONSWERT.search(text):
        return f"DATABASE_URL: {treffer[1]}={treffer[2]!r:.40} ist kein gültiger Wert ({ziel})."
    return None


# --- Der Satz ---------------------------------------------------------------------------------------


def verbindungsfehler(text: str, ziel: str, herkunft: str = "", url: str | None = None) -> str:
    """Der deutsche Satz zu einer gescheiterten Verbindung (Text von libpq oder Server, ohne Passwort)."""
    woher = f" {herkunft}" if herkunft else ""
    if _PASSWORT_FALSCH.search(text):
        return passwort_falsch(ziel, woher, url)
    if _KEIN_PASSWORT.search(text):
        datei = passwortdatei(url_teile(url))
        return (
            f"Anmeldung an {ziel} gescheitert: der Server verlangt ein Passwort, die URL enthält keins, "
            f"und {datei or '~/.pgpass'} hat keine passende Zeile (rechner:port:datenbank:rolle:passwort, "
            f"* für beliebig; chmod 600; docs/betrieb.md, Einrichtung, Schritt 5).{woher}"
        )
    for satz in (_anmeldemethode_satz(text, ziel, url), _hba_satz(text, ziel)):
        if satz:
            return satz + woher
    rolle = url_teile(url).get("user") or "der Rolle"
    for muster, satz in _FAELLE:
        if treffer := muster.search(text):
            return satz.format(*treffer.groups(), ziel=ziel, woher=woher, rolle=rolle)
    return f"Datenbankfehler ({ziel}): {text.strip()}"


# --- Passwörter aus Meldungen ----------------------------------------------------------

_PASSWORT_URL = re.compile(r"(?P<anfang>[a-z][a-z0-9+.-]*://[^:/@\s]*:)(?P<pw>[^@\s]*)(?=@)", re.IGNORECASE)
_PASSWORT_KV = re.compile(r"(?P<anfang>\bpassword\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def maskieren(url: str | None) -> str:
    """Die URL ohne Passwort: ``postgresql://rolle:***@host/db``."""
    if not url:
        return ""
    url = _PASSWORT_URL.sub(lambda m: m["anfang"] + ("***" if m["pw"] else ""), url)
    return _PASSWORT_KV.sub(lambda m: m["anfang"] + "***", url)


def _passwoerter(url: str) -> set[str]:
    """Das Passwort der URL in jeder Form, in der eine Meldung es zitieren könnte.

    Lässt sich die URL nicht lesen (etwa ``%ZZ`` im Passwort), zitiert libpq
    gerade das rohe Stück – dann sucht ein Muster es in der URL selbst.
    """
    formen: set[str] = set()
    try:
        pw = psycopg.conninfo.conninfo_to_dict(url).get("password")
        if pw:
            formen.add(pw)
    except psycopg.Error:
        pass
    for muster in (_PASSWORT_URL, _PASSWORT_KV):
        if treffer := muster.search(url):
            roh = treffer["pw"].strip("'")
            formen |= {roh, unquote(roh)}
    return {f for f in formen if len(f) >= 3}


def ohne_passwort(text: str, url: str | None) -> str:
    """Entfernt das Passwort aus einem beliebigen Text (z. B. einer libpq-Meldung)."""
    text = maskieren(text)
    for pw in sorted(_passwoerter(url) if url else (), key=len, reverse=True):
        text = text.replace(pw, "***")
    return text


def traegt_passwort(url: str) -> bool:
    """Trägt die URL ein Passwort? Lässt sie sich nicht lesen (Exit 7 folgt), nach dem Muster."""
    try:
        return bool(psycopg.conninfo.conninfo_to_dict(url).get("password"))
    except psycopg.Error:
        treffer = _PASSWORT_URL.search(url)
        return bool(treffer and treffer["pw"]) or bool(_PASSWORT_KV.search(url))
