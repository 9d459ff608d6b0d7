"""Gescheiterte Anmeldung am Datenbankserver: ein deutscher Satz mit dem nächsten Schritt.

Beim Verbinden gibt psycopg keinen SQLSTATE heraus; was libpq ohne Text sagt (``needs_password``,
``ConnectionTimeout``), gilt zuerst, sonst entscheidet der Wortlaut von Server (englisch, deutsch)
und libpq an einer Stelle (``_FAELLE``), sonst steht der Text von libpq im deutschen Rahmen
(docs/betrieb.md, „Exit-Codes (Datenbank und Konfiguration)“). Dazu ``maskieren``, ``ohne_passwort``, ``traegt_passwort`` und die
Passwortdatei, die libpq liest (``passwortdatei``, ``passwortdatei_offen``).

Eine gemeinsame Datei des Hauses neben ``db.py``: sie importiert nichts aus dem Paket
``auswahlstufe`` und kein click.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

import psycopg

_EINRICHTUNG = "docs/betrieb.md, Einrichtung, Schritt 1"


class _Lage(NamedTuple):
    """Was ein Satz zu einer gescheiterten Verbindung einsetzt."""

    treffer: re.Match[str] | None  # None: libpq sagte es ohne Text
    ziel: str  # die URL ohne Passwort
    woher: str  # „ DATABASE_URL kommt aus …“ oder leer
    url: str | None


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


def _hba_satz(lage: _Lage) -> str:
    """pg_hba.conf weist ab („reject“) oder hat keine Zeile – wer was in pg_hba.conf ändert."""
    host, rolle, datenbank = lage.treffer["host"], lage.treffer["rolle"], lage.treffer["datenbank"]
    von = "über den Socket" if host == "[local]" else f"von {host}"
    zeile = _hba_zeile(host, rolle, datenbank)
    if lage.treffer["reject"]:
        return (
            f"Der Server weist die Anmeldung von {rolle} an {datenbank} {von} ab ({lage.ziel}): in "
            f"pg_hba.conf passt zuerst eine Zeile „reject“. Der Admin des Servers setzt davor eine Zeile "
            f"für die Rolle: {zeile} (dann select pg_reload_conf(); {_EINRICHTUNG}).{lage.woher}"
        )
    sslmode = url_teile(lage.url).get("sslmode") or os.environ.get("PGSSLMODE", "")
    ssl = (
        " Erlaubt der Server sie nur mit SSL (hostssl), genügt sslmode=require in DATABASE_URL."
        if host != "[local]" and not sslmode.startswith(("require", "verify"))
        else ""
    )
    return (
        f"Der Server lässt {rolle} an {datenbank} {von} nicht zu ({lage.ziel}): pg_hba.conf hat "
        f"keine passende Zeile. Der Admin des Servers ergänzt eine: {zeile} (dann select "
        f"pg_reload_conf(); {_EINRICHTUNG}).{ssl}{lage.woher}"
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


def _anmeldemethode_satz(lage: _Lage) -> str:
    """peer oder ident: der Server prüft den Benutzer des Systems, nicht das Passwort."""
    rolle, methode, ziel = lage.treffer["rolle"], lage.treffer["methode"].lower(), lage.ziel
    teile = url_teile(lage.url)
    datenbank = teile.get("dbname") or rolle
    wo = "local all all peer" if methode == "peer" else "host all all 127.0.0.1/32 ident"
    zeile = _hba_zeile("[local]" if methode == "peer" else "127.0.0.1", rolle, datenbank)
    anfang = (
        f"Anmeldung an {ziel} gescheitert: der Server prüft {rolle} mit {methode} (pg_hba.conf) – dafür "
        f"müsste der Benutzer des Systems {rolle} heißen; ein Passwort zählt dort nicht."
    )
    ende = f"(dann select pg_reload_conf(); {_EINRICHTUNG}); über TCP (host=localhost in DATABASE_URL) gilt auf Debian schon scram-sha-256.{lage.woher}"
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


# --- Der Satz ---------------------------------------------------------------------------------------


def _kein_passwort(lage: _Lage) -> str:
    return (
        f"Anmeldung an {lage.ziel} gescheitert: der Server verlangt ein Passwort, die URL enthält keins, "
        f"und {passwortdatei(url_teile(lage.url)) or '~/.pgpass'} hat keine passende Zeile "
        "(rechner:port:datenbank:rolle:passwort, * für beliebig; chmod 600; docs/betrieb.md, "
        f"Einrichtung, Schritt 5).{lage.woher}"
    )


def _nicht_erreichbar(lage: _Lage) -> str:
    return f"Datenbankserver nicht erreichbar ({lage.ziel}). Läuft er, stimmen Host und Port?{lage.woher}"


_NAME = r'["»](?P<{}>[^"«]*)["«]'

# Die Fälle eines Betreibers: Muster → Satz; die erste passende Zeile gilt (siehe oben, warum Text).
_FAELLE: tuple[tuple[re.Pattern[str], Callable[[_Lage], str]], ...] = (
    (
        # Server, auth.c (28P01): password authentication failed for user "…"
        re.compile("password authentication failed|passwort-authentifizierung", re.IGNORECASE),
        lambda lage: passwort_falsch(lage.ziel, lage.woher, lage.url),
    ),
    (
        # Server, auth.c (28000): Peer/Ident authentication failed for user "…"
        re.compile(
            r"\b(?P<methode>peer|ident)(?: authentication failed for user|-authentifizierung für benutzer) "
            + _NAME.format("rolle"),
            re.IGNORECASE,
        ),
        _anmeldemethode_satz,
    ),
    (
        # Server, auth.c (28000): no pg_hba.conf entry for host "…", user "…", database "…", …;
        # pg_hba.conf rejects connection for host "…", …
        re.compile(
            r"(?:no pg_hba\.conf entry|kein pg_hba\.conf-eintrag|(?P<reject>rejects connection|lehnt verbindung ab))"
            rf" (?:for|für) host {_NAME.format('host')}, (?:user|benutzer) {_NAME.format('rolle')}, "
            rf"(?:database|datenbank) {_NAME.format('datenbank')}",
            re.IGNORECASE,
        ),
        _hba_satz,
    ),
    (
        # Server (53300): sorry, too many clients already; too many connections for role "…";
        # remaining connection slots are reserved for … (deutsch: die verbleibenden Verbindungen sind … reserviert)
        re.compile(
            "too many (?:clients|connections)|zu viele verbindungen|slots are reserved"
            "|verbleibenden verbindungen sind",
            re.IGNORECASE,
        ),
        lambda lage: (
            f"Der Datenbankserver nimmt keine Verbindung mehr an ({lage.ziel}): zu viele Verbindungen "
            "(max_connections oder die Grenze der Rolle). Später erneut; ein erneuter Lauf setzt fort."
        ),
    ),
    (
        # libpq, fe-connect.c: server does not support SSL, but SSL was required
        re.compile("does not support SSL"),
        lambda lage: (
            f"Der Server spricht kein SSL, DATABASE_URL verlangt es ({lage.ziel}; sslmode=require oder "
            "strenger, auch aus PGSSLMODE). Entweder schaltet der Admin des Servers SSL ein (ssl = on "
            "mit Zertifikat), oder – nur in einem vertrauten Netz, etwa auf demselben Rechner – "
            f"sslmode=prefer in DATABASE_URL.{lage.woher}"
        ),
    ),
    (
        # libpq, fe-connect.c, mit dem Text des Systems (strerror): kein Server am Port, kein Socket,
        # der Name löst sich nicht auf, keine Route zum Rechner
        re.compile(
            "Connection refused|No such file or directory|could not translate host name|No route to host"
            "|Network is unreachable"
        ),
        _nicht_erreichbar,
    ),
)


def verbindungsfehler(
    text: str, ziel: str, herkunft: str = "", url: str | None = None, fehler: psycopg.Error | None = None
) -> str:
    """Der deutsche Satz zu einer gescheiterten Verbindung (``text``: der von libpq und Server, ohne
    Passwort; ``fehler``: die Ausnahme von psycopg): was libpq ohne Text sagt, sonst einer der Fälle
    oben, sonst der Text von libpq im deutschen Rahmen."""
    lage = _Lage(None, ziel, f" {herkunft}" if herkunft else "", url)
    if isinstance(fehler, psycopg.errors.ConnectionTimeout):
        return _nicht_erreichbar(lage)
    if fehler is not None and fehler.pgconn is not None and fehler.pgconn.needs_password:
        return _kein_passwort(lage)
    for muster, satz in _FAELLE:
        if treffer := muster.search(text):
            return satz(lage._replace(treffer=treffer))
    libpq = " ".join(text.removeprefix("connection failed: ").split()).rstrip(".")
    return (
        f"Die Verbindung zu {ziel} scheiterte: „{libpq}“.{lage.woher} Weiter: DATABASE_URL und Server "
        "prüfen, etwa mit .venv/bin/python check_db.py (docs/betrieb.md, Einrichtung)."
    )


# --- Passwörter aus Meldungen ----------------------------------------------------------

# Das Passwort reicht bis zum letzten @ der URL (bis Leerraum): ein rohes @, /, ? oder # darin
# bleibt so mit geschwärzt. Ein @ weiter hinten (etwa in der Abfrage) schwärzt auch den Host – lieber
# zu viel als ein Stück des Passworts.
_PASSWORT_URL = re.compile(r"(?P<anfang>[a-z][a-z0-9+.-]*://[^:/@\s]*:)(?P<pw>\S*)(?=@)", re.IGNORECASE)
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


def passwort_zerbrochen(url: str, passwort: str | None) -> bool:
    """Steht in der URL ein Passwort (``rolle:…@``), das libpq anders liest (``passwort``)? Dann
    endet es für libpq an einem rohen / ? # oder @, und der Rest wird zu Rechner oder Port."""
    treffer = _PASSWORT_URL.search(url)
    return bool(treffer and treffer["pw"]) and unquote(treffer["pw"]) != passwort


def traegt_passwort(url: str) -> bool:
    """Trägt die URL ein Passwort – wie libpq sie liest oder dem Muster nach (``rolle:…@``)? Das
    Muster zählt auch, wenn libpq die URL nicht lesen kann (Exit 7 folgt) oder anders liest: ein
    rohes / im Passwort nimmt libpq als Ende des Rechners, im Text steht das Passwort trotzdem."""
    treffer = _PASSWORT_URL.search(url)
    if treffer and treffer["pw"]:
        return True
    try:
        return bool(psycopg.conninfo.conninfo_to_dict(url).get("password"))
    except psycopg.Error:
        return bool(_PASSWORT_KV.search(url))
