"""Gescheiterte Anmeldung am Datenbankserver: ein deutscher Satz mit dem nächsten Schritt.

Eine gemeinsame Datei des Hauses neben ``db.py``: sie importiert nichts aus dem Paket
``auswahlstufe`` und kein click. ``db.fehler_uebersetzen`` ruft ``verbindungsfehler`` für
Fehler ohne SQLSTATE.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import psycopg

# libpq und der Server melden eine gescheiterte Verbindung als Text (ohne SQLSTATE): englisch,
# oder in der Sprache von lc_messages des Servers (deutsch mit »…«). Jeder Fall hier sagt, was
# geschah und wer was tut; die Muster stehen für beide Sprachen da (Texte aus libpq 18 und
# PostgreSQL 15, de.po). Was hier nicht steht, bleibt „Datenbankfehler (…): <Text>“.

_NAME = r'["»](?P<{}>.*?)["«]'
_ANMELDEMETHODE = re.compile(
    r"\b(?P<methode>peer|ident)(?: authentication failed for user|-authentifizierung für benutzer) "
    + _NAME.format("rolle"),
    re.IGNORECASE,
)
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
_EINRICHTUNG = "docs/betrieb.md, Einrichtung, Schritt 1"


def passwort_ausdruecklich(teile: dict[str, str]) -> bool:
    """Steht ein Passwort in der URL oder in PGPASSWORD (dann liest libpq keine Passwortdatei)?"""
    return bool(teile.get("password") or os.environ.get("PGPASSWORD"))


def url_teile(url: str | None) -> dict[str, str]:
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


def _hba_zeile(host: str, rolle: str, datenbank: str) -> str:
    """Die Zeile in pg_hba.conf, die ``rolle`` von ``host`` mit Passwort an ``datenbank`` lässt."""
    if host in ("[local]", ""):
        return f"local {datenbank} {rolle} scram-sha-256"
    maske = "128" if ":" in host else "32"
    return f"host {datenbank} {rolle} {host}/{maske} scram-sha-256"


def _hba_satz(text: str, ziel: str) -> str | None:
    """pg_hba.conf weist ab („reject“) oder hat keine Zeile – wer was in pg_hba.conf ändert."""
    klein = text.lower()
    abgewiesen = "rejects connection" in klein or "lehnt verbindung ab" in klein
    keine_zeile = "no pg_hba.conf entry" in klein or "kein pg_hba.conf-eintrag" in klein
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


def _ssl_satz(text: str, ziel: str) -> str | None:
    klein = text.lower()
    if "does not support ssl" in klein or "unterstützt kein ssl" in klein:
        return (
            f"Der Server spricht kein SSL, DATABASE_URL verlangt es ({ziel}; sslmode=require oder "
            "strenger, auch aus PGSSLMODE). Entweder schaltet der Admin des Servers SSL ein (ssl = on "
            "mit Zertifikat), oder – nur in einem vertrauten Netz, etwa auf demselben Rechner – "
            "sslmode=prefer in DATABASE_URL."
        )
    if treffer := re.search(r'root certificate file ["»](.*?)["«] does not exist', text, re.IGNORECASE):
        return (
            f"sslmode=verify-ca oder verify-full prüft das Zertifikat des Servers ({ziel}) und braucht "
            f"dafür ein Stammzertifikat; {treffer[1]} gibt es nicht. sslrootcert=PFAD in DATABASE_URL "
            "(oder sslrootcert=system für die Stammzertifikate des Systems)."
        )
    if treffer := re.search(r'server certificate for ["»](.*?)["«].*? host name ["»](.*?)["«]', text, re.I):
        return (
            f"Das Zertifikat des Servers gilt für {treffer[1]}, DATABASE_URL nennt den Host {treffer[2]} "
            f"({ziel}; sslmode=verify-full). Den Namen aus dem Zertifikat als Host nehmen."
        )
    if "certificate verify failed" in klein:
        return (
            f"Das Zertifikat des Servers ließ sich nicht prüfen ({ziel}): es ist nicht von dem "
            "Stammzertifikat in sslrootcert unterschrieben (oder abgelaufen). sslrootcert in DATABASE_URL "
            "prüfen."
        )
    if "requires a valid client certificate" in klein:
        return (
            f"Der Server verlangt ein Client-Zertifikat ({ziel}; pg_hba.conf: cert oder clientcert): "
            "sslcert=… und sslkey=… in DATABASE_URL."
        )
    if "channel binding" in klein:
        return (
            f"channel_binding=require in DATABASE_URL, aber die Anmeldung am Server ({ziel}) bietet es "
            "nicht (nur mit SSL und scram-sha-256). SSL einschalten oder channel_binding=prefer."
        )
    if "gssapi" in klein and "required" in klein:
        return (
            f"gssencmode=require in DATABASE_URL, aber der Server ({ziel}) verschlüsselt nicht mit GSSAPI "
            "(über einen Socket nie). gssencmode=prefer oder disable."
        )
    return None


def verbindungsfehler(text: str, ziel: str, herkunft: str = "", url: str | None = None) -> str:
    klein = text.lower()
    woher = f" {herkunft}" if herkunft else ""
    if "password authentication failed" in klein or "passwort-authentifizierung" in klein:
        return passwort_falsch(ziel, woher, url)
    if "no password supplied" in klein:
        datei = passwortdatei(url_teile(url))
        return (
            f"Anmeldung an {ziel} gescheitert: der Server verlangt ein Passwort, die URL enthält keins, "
            f"und {datei or '~/.pgpass'} hat keine passende Zeile (rechner:port:datenbank:rolle:passwort, "
            f"* für beliebig; chmod 600; docs/betrieb.md, Einrichtung, Schritt 5).{woher}"
        )
    for satz in (_anmeldemethode_satz(text, ziel, url), _hba_satz(text, ziel), _ssl_satz(text, ziel)):
        if satz:
            return satz + woher
    if treffer := re.search(
        r'(?:role|rolle) ["»](.*?)["«] (?:is not permitted to log in|hat keine berechtigung zum einloggen)',
        text,
        re.I,
    ):
        return (
            f"Die Rolle {treffer[1]} darf sich nicht anmelden (NOLOGIN; {ziel}). Der Admin der Stufe gibt "
            f"es mit dem Rollenrezept (docs/betrieb.md, Einrichtung, Schritt 4) oder: alter role {treffer[1]} login;"
        )
    if "connect privilege" in klein or "connect-privileg" in klein:
        rolle = url_teile(url).get("user") or "der Rolle"
        return (
            f"Der Rolle {rolle} fehlt das Recht CONNECT auf die Datenbank ({ziel}). Der Eigentümer der "
            "Datenbank gibt es (grant connect on database …), oder der Admin der Stufe mit dem "
            "Rollenrezept (docs/betrieb.md, Einrichtung, Schritt 4)."
        )
    if any(
        s in klein
        for s in (
            "too many clients",
            "too many connections",
            "zu viele verbindungen",
            "connection slots are reserved",
        )
    ):
        return (
            f"Der Datenbankserver nimmt keine Verbindung mehr an ({ziel}): zu viele Verbindungen "
            "(max_connections oder die Grenze der Rolle). Später erneut; ein erneuter Lauf setzt fort."
        )
    if any(
        s in klein
        for s in (
            "is starting up",
            "is shutting down",
            "in recovery mode",
            "not yet accepting connections",
            "datenbanksystem startet",
            "datenbanksystem fährt herunter",
        )
    ):
        return (
            f"Der Datenbankserver startet gerade oder fährt herunter ({ziel}). Später erneut; "
            "ein erneuter Lauf setzt fort."
        )
    if "not currently accepting connections" in klein:
        return f"Die Datenbank in {ziel} nimmt gerade keine Verbindungen an (ALLOW_CONNECTIONS false).{woher}"
    if re.search(r"database .* does not exist|datenbank .* existiert nicht", klein):
        return f"Die Datenbank in {ziel} gibt es nicht.{woher}"
    if re.search(r"role .* does not exist|rolle .* existiert nicht", klein):
        return f"Die Rolle in {ziel} gibt es nicht.{woher}"
    if any(
        s in klein for s in ("connection refused", "no such file", "could not connect", "timeout expired")
    ):
        return f"Datenbankserver nicht erreichbar ({ziel}). Läuft er, stimmen Host und Port?{woher}"
    if any(
        s in klein
        for s in (
            "server closed the connection",
            "terminating connection",
            "connection is lost",
            "connection socket closed",  # psycopg, wenn der Server mitten im Lesen verschwindet
        )
    ):
        return (
            f"Verbindung zur Datenbank verloren ({ziel}). Geschriebene Stapel bleiben; "
            "ein erneuter Lauf setzt fort."
        )
    return f"Datenbankfehler ({ziel}): {text.strip()}"
