"""Verbindung zur Datenbank: DATABASE_URL finden, verbinden, Fehler übersetzen.

* ``datenbank_url`` liest DATABASE_URL aus der Umgebung, sonst aus ``.env``
  (python-dotenv) und warnt, wenn Gruppe oder andere die Datei lesen dürfen und ein
  Passwort darin steht; sie
  merkt sich, woher (``DatenbankUrl.herkunft``) – eine gescheiterte Anmeldung sagt es.
* ``maskieren`` ersetzt das Passwort in einer URL oder einem ``key=value``-
  String durch ``***``; jede Meldung mit einer URL geht hier durch.
* ``verbinden`` prüft DATABASE_URL, die Grenzen aus der Umgebung und – ohne
  Passwort in der URL – die Passwortdatei ``~/.pgpass`` (eines kaputt oder die
  Datei für andere lesbar: Exit 7), setzt application_name, statement_timeout und lock_timeout
  und prüft die Mindestversion des Servers (zu alt: Exit 4).
* ``fehler_uebersetzen`` macht aus psycopg-Fehlern die Fehlerklassen unten
  mit einem deutschen Satz – nie ein Traceback, nie ein Passwort. Eine
  gescheiterte Anmeldung (pg_hba.conf, peer, SSL, …) nennt den nächsten
  Schritt und woher URL und Passwort kamen. Ein fehlendes
  Recht wird ``RechtFehlt``: welche Rolle, welches Objekt; den nächsten Schritt
  hängt der Befehl an, der weiß, welche Betriebsart lief.

Die Fehlerklassen gehören diesem Modul: es steht als gemeinsame Datei des
Hauses unter dem Paket der Stufe und importiert nichts aus ihm. Welchen
Exit-Code jede bekommt, entscheidet die Stufe (``auswahlstufe/fehler.py``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import psycopg
from psycopg import errors


class Fehler(Exception):
    """Ein Fehler an der Datenbank als ein deutscher Satz, ohne Passwort; ``ART`` sagt, welcher."""

    ART = "datenbank"


class DatenbankFehler(Fehler):
    """Server nicht erreichbar, Anmeldung gescheitert, Verbindung verloren, sonst ein Fehler des Servers."""


class VoraussetzungFehlt(Fehler):
    """DATABASE_URL fehlt, der Server ist zu alt, eine Tabelle, Spalte oder ein Recht fehlt."""

    ART = "voraussetzung"


class RechtFehlt(VoraussetzungFehlt):
    """Der Rolle fehlt ein Recht (permission denied); der Befehl kann den nächsten Schritt anhängen."""

    ART = "recht"


class Zeitlimit(Fehler):
    """statement_timeout oder lock_timeout überschritten."""

    ART = "zeitlimit"


class KonfigurationsFehler(Fehler):
    """DATABASE_URL, eine Verbindungsoption oder eine Grenze aus der Umgebung ist kaputt."""

    ART = "konfiguration"


ANWENDUNG = "wurzelwerk-auswahl"
# Grenzen je Anweisung und je Sperrwartezeit; über die Umgebung zu ändern
# (Werte wie in postgresql.conf: "60s", "500ms", "0" = aus).
STATEMENT_TIMEOUT = "120s"
LOCK_TIMEOUT = "10s"
CONNECT_TIMEOUT = 10  # Sekunden bis „Server nicht erreichbar“
# TCP-Keepalives (libpq): eine Verbindung, die ein langer Lauf minutenlang ruhen lässt
# (die Schreibverbindung mit der Sperre, während die Extraktion rechnet), behält so ihren
# Eintrag in NAT und Firewall, und eine tote Gegenstelle fällt nach etwa 90 s auf statt nie.
# Was DATABASE_URL selbst setzt, gilt.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 6}
# Ein Migrationslauf: kein statement_timeout (ein alter table auf einer großen
# Tabelle darf dauern), aber nicht endlos hinter einem Lauf der Stufe warten.
MIGRATION_GRENZEN = {"statement_timeout": "0", "lock_timeout": "60s"}
# Woher die Grenzen kommen dürfen (Umgebungsvariable je Grenze).
UMGEBUNG_LAUF = {"statement_timeout": "AUSWAHL_STATEMENT_TIMEOUT", "lock_timeout": "AUSWAHL_LOCK_TIMEOUT"}
UMGEBUNG_MIGRATION = {"lock_timeout": "AUSWAHL_MIGRATION_LOCK_TIMEOUT"}
# Eine Dauer wie in postgresql.conf: Zahl, wahlweise mit Einheit ("0" = aus).
_DAUER = re.compile(r"^\d+(?:\.\d+)?(?:us|ms|s|min|h|d)?$")

# Die niedrigste unterstützte Hauptversion des Servers. 15 ist die älteste, die
# das PostgreSQL-Projekt am 2026-12-01 noch pflegt (14 endete im November 2026);
# das SQL der Stufe nutzt nichts Neueres (etwa ``storage`` in einer
# Spaltendefinition erst ab 16 – deshalb ``alter column … set storage``).
MINDESTVERSION = 15

# psycopg meldet beim Aufräumen nach einem Verbindungsverlust Dinge wie
# „error ignored terminating <psycopg.Copy [BAD]>“ über sein Logging; ohne
# eigenen Handler druckte Python sie auf stderr – englisch, neben unserer
# eigenen Meldung, die dasselbe schon sagt.
logging.getLogger("psycopg").addHandler(logging.NullHandler())

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


class DatenbankUrl(str):
    """DATABASE_URL, die weiß, woher sie kam (``herkunft``: ein Satz für Meldungen)."""

    herkunft: str = ""

    def __new__(cls, url: str, herkunft: str) -> DatenbankUrl:
        selbst = super().__new__(cls, url)
        selbst.herkunft = herkunft
        return selbst

    def __reduce__(self):  # bleibt beim Weiterreichen an Worker (pickle), was sie ist
        return (DatenbankUrl, (str(self), self.herkunft))


# Der Klon: db.py steht an seiner Wurzel, neben .env.example.
KLON = Path(__file__).resolve().parent


def _env_datei() -> Path | None:
    # Nur das Arbeitsverzeichnis: wer aus einem anderen Verzeichnis startet
    # (cron), setzt DATABASE_URL oder wechselt dorthin – keine Suche, die
    # unbemerkt eine fremde .env findet.
    ort = Path.cwd() / ".env"
    return ort if ort.is_file() else None


def _mit_passwort(werte: dict[str, str | None]) -> bool:
    """Steht in der .env ein Passwort – in DATABASE_URL oder einer Variablen wie PGPASSWORD?"""
    if any(wert and "PASSWORD" in name.upper() for name, wert in werte.items()):
        return True
    url = werte.get("DATABASE_URL") or ""
    try:
        return bool(psycopg.conninfo.conninfo_to_dict(url).get("password"))
    except psycopg.Error:  # nicht lesbar (Exit 7 folgt): dann nach dem Muster
        treffer = _PASSWORT_URL.search(url)
        return bool(treffer and treffer["pw"]) or bool(_PASSWORT_KV.search(url))


def datenbank_url() -> DatenbankUrl:
    """DATABASE_URL aus der Umgebung, sonst aus .env (mit ihrer Herkunft); sonst VoraussetzungFehlt."""
    url = os.environ.get("DATABASE_URL")
    datei = _env_datei()
    if url:
        herkunft = "DATABASE_URL kommt aus der Umgebung"
        if datei is not None:
            herkunft += f" (die Datei {datei} wird dann nicht gelesen)"
        return DatenbankUrl(url, herkunft + ".")
    if datei is not None:
        from dotenv import dotenv_values

        werte = dotenv_values(datei)
        url = werte.get("DATABASE_URL")
        if datei.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO) and _mit_passwort(werte):
            print(
                f"Warnung: {datei} enthält ein Passwort und ist für Gruppe oder andere lesbar – chmod 600 {datei}",
                file=sys.stderr,
            )
        if url:
            return DatenbankUrl(url, f"DATABASE_URL kommt aus {datei}.")
    gesucht = Path.cwd() / ".env"
    if datei is not None:
        wo = f"{gesucht} enthält keine Zeile DATABASE_URL=…"
    else:
        wo = f"{gesucht} gibt es nicht (gesucht wird nur im Arbeitsverzeichnis)"
    if (Path.cwd() / ".env.example").is_file():
        weiter = "Vorlage: .env.example kopieren nach .env, dann chmod 600 .env."
    else:
        weiter = (
            f"Im Klon aufrufen (cd {KLON}: dort gehört .env hin, Vorlage .env.example) oder "
            "DATABASE_URL setzen."
        )
    raise VoraussetzungFehlt(f"DATABASE_URL ist nicht gesetzt – nicht in der Umgebung, und {wo}. {weiter}")


# --- Konfiguration prüfen ------------------------------------------------------------

# Optionen mit fester Auswahl, die libpq erst beim Verbinden prüft (und dann
# auf Englisch und wie ein Serverfehler meldet).
_AUSWAHL = {
    "sslmode": ("disable", "allow", "prefer", "require", "verify-ca", "verify-full"),
    "gssencmode": ("disable", "prefer", "require"),
    "channel_binding": ("disable", "prefer", "require"),
    "target_session_attrs": ("any", "read-write", "read-only", "primary", "standby", "prefer-standby"),
    "load_balance_hosts": ("disable", "random"),
    "sslnegotiation": ("postgres", "direct"),
}
_GANZZAHL = ("connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count")
# libpq-Meldungen beim Lesen der URL, auf Deutsch.
_LESEFEHLER = (
    (re.compile(r'missing "=" after "(.*)" in connection info string'), "fehlendes „=“ nach „{}“"),
    (re.compile(r'invalid URI query parameter: "(.*)"'), "unbekannter Parameter „{}“ in der URL"),
    (re.compile(r'invalid connection option "(.*)"'), "unbekannte Verbindungsoption „{}“"),
    (re.compile(r'invalid percent-encoded token: "(.*)"'), "ungültige %-Kodierung „{}“"),
    (re.compile(r"unterminated quoted string"), "ein Anführungszeichen ist nicht geschlossen"),
)
_BEISPIEL = "erwartet z. B. postgresql://rolle@host:5432/datenbank oder host=… dbname=…"


def url_pruefen(url: str) -> dict[str, str]:
    """Liest DATABASE_URL wie libpq; kaputt → KonfigurationsFehler (Exit 7), ohne Passwort."""
    try:
        teile = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error as fehler:
        text = ohne_passwort(str(fehler), url).strip()
        for muster, satz in _LESEFEHLER:
            if treffer := muster.search(text):
                text = satz.format(*treffer.groups())
                break
        raise KonfigurationsFehler(f"DATABASE_URL ist nicht lesbar: {text} ({_BEISPIEL}).") from None
    for name, erlaubt in _AUSWAHL.items():
        wert = teile.get(name)
        if wert is not None and wert not in erlaubt:
            raise KonfigurationsFehler(
                f"DATABASE_URL: {name}={wert!r:.40} ist kein gültiger Wert (erlaubt: {', '.join(erlaubt)})."
            )
    for name in _GANZZAHL:
        wert = teile.get(name)
        if wert is not None and not re.fullmatch(r"-?\d+", str(wert).strip()):
            raise KonfigurationsFehler(f"DATABASE_URL: {name}={wert!r:.40} ist keine ganze Zahl.")
    for port in str(teile.get("port", "")).split(",") if teile.get("port") else ():
        if port and not (port.isdigit() and 1 <= int(port) <= 65535):
            raise KonfigurationsFehler(f"DATABASE_URL: Port {port!r:.20} ist keine Zahl von 1 bis 65535.")
    return teile


def grenzen_aus_umgebung(voreinstellung: dict[str, str], umgebung: dict[str, str]) -> dict[str, str]:
    """Die Grenzen eines Zwecks; Werte aus der Umgebung geprüft (kaputt → Exit 7)."""
    grenzen = dict(voreinstellung)
    for name, variable in umgebung.items():
        wert = os.environ.get(variable)
        if wert is None:
            continue
        wert = wert.strip()
        if not _DAUER.fullmatch(wert):
            raise KonfigurationsFehler(
                f"{variable}={wert!r:.40} ist keine Dauer (erwartet z. B. 120s, 500ms, 5min; 0 = aus)."
            )
        grenzen[name] = wert
    return grenzen


def laufgrenzen() -> dict[str, str]:
    # idle_session_timeout 0: ein Lauf lässt seine Verbindungen ruhen, während die Worker oder
    # Extraktoren rechnen (Minuten) – der Server soll sie dabei nicht beenden, mit der
    # Schreibverbindung die Sperre. Jede Rolle darf es für ihre Sitzung setzen (Kontext user).
    return grenzen_aus_umgebung(
        {"statement_timeout": STATEMENT_TIMEOUT, "lock_timeout": LOCK_TIMEOUT, "idle_session_timeout": "0"},
        UMGEBUNG_LAUF,
    )


def migrationsgrenzen() -> dict[str, str]:
    return grenzen_aus_umgebung(MIGRATION_GRENZEN, UMGEBUNG_MIGRATION)


def _optionswert(wert: str) -> str:
    # libpq trennt „options“ an Leerraum; Backslash maskiert (\\ für einen Backslash).
    return re.sub(r"([\\\s])", r"\\\1", wert)


def optionen(grenzen: dict[str, str], vorhanden: str | None = None) -> str:
    """Der libpq-String „options“: vorhandene Optionen der URL, dann unsere Grenzen (maskiert)."""
    eigene = " ".join(f"-c {name}={_optionswert(wert)}" for name, wert in grenzen.items())
    return f"{vorhanden} {eigene}" if vorhanden else eigene


def _passwort_ausdruecklich(teile: dict[str, str]) -> bool:
    """Steht ein Passwort in der URL oder in PGPASSWORD (dann liest libpq keine Passwortdatei)?"""
    return bool(teile.get("password") or os.environ.get("PGPASSWORD"))


def passwortdatei_pruefen(teile: dict[str, str]) -> None:
    """Ohne Passwort in der URL (und ohne PGPASSWORD) liest libpq die Passwortdatei – aber nicht,
    wenn Gruppe oder andere sie lesen dürfen; dann schreibt libpq bei jeder Verbindung eine
    englische Warnung auf stderr. Hier vorher, deutsch: KonfigurationsFehler (Exit 7)."""
    if _passwort_ausdruecklich(teile):
        return
    datei = passwortdatei(teile)
    try:
        modus = datei.stat().st_mode if datei is not None else 0
    except OSError:
        return
    if stat.S_ISREG(modus) and modus & (stat.S_IRWXG | stat.S_IRWXO):
        raise KonfigurationsFehler(
            f"{datei} ist für Gruppe oder andere lesbar; libpq liest die Passwortdatei dann nicht. "
            f"chmod 600 {datei}"
        )


def version_text(nummer: int) -> str:
    """server_version_num als Text: 180001 → „18.1“, 90624 → „9.6.24“."""
    if nummer >= 100000:
        return f"{nummer // 10000}.{nummer % 10000}"
    return f"{nummer // 10000}.{nummer // 100 % 100}.{nummer % 100}"


def server_version_pruefen(nummer: int) -> None:
    """Zu alter Server (server_version_num) → VoraussetzungFehlt (Exit 4) mit beiden Versionen."""
    if nummer // 10000 < MINDESTVERSION:
        raise VoraussetzungFehlt(
            f"Der Datenbankserver hat PostgreSQL {version_text(nummer)}; nötig ist mindestens "
            f"PostgreSQL {MINDESTVERSION} (getestet mit 18). Siehe docs/betrieb.md."
        )


def verbinden(
    url: str, zweck: str, *, autocommit: bool = False, grenzen: dict[str, str] | None = None
) -> psycopg.Connection:
    """Eine Verbindung, die sagt, wer sie ist, und ihre Wartezeiten begrenzt.

    ``grenzen`` (statement_timeout, lock_timeout) – sonst die eines Laufs
    (``laufgrenzen``). Die Verbindung endet gleich wieder, wenn der Server
    älter als ``MINDESTVERSION`` ist.
    """
    teile = url_pruefen(url)
    passwortdatei_pruefen(teile)
    grenzen = laufgrenzen() if grenzen is None else grenzen
    with fehler_uebersetzen(url):
        conn = psycopg.connect(
            url,
            autocommit=autocommit,
            application_name=f"{ANWENDUNG} {zweck}"[:63],
            # Die Stufe schickt fertig kodierte COPY-Daten (kodierung.stapel_kodieren):
            # UTF-8, was auch immer PGCLIENTENCODING sagt.
            client_encoding="UTF8",
            options=optionen(grenzen, teile.get("options")),
            connect_timeout=CONNECT_TIMEOUT,
            **{name: wert for name, wert in KEEPALIVES.items() if name not in teile},
        )
    try:
        server_version_pruefen(conn.info.server_version)
    except VoraussetzungFehlt:
        conn.close()
        raise
    return conn


# --- Gescheiterte Anmeldung: ein deutscher Satz mit dem nächsten Schritt ---------------------------
#
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


def _teile(url: str | None) -> dict[str, str]:
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
    teile = _teile(url)
    if teile.get("password"):
        return ""
    if os.environ.get("PGPASSWORD"):
        return " Das Passwort kommt aus PGPASSWORD."
    datei = passwortdatei(teile)
    if datei is not None and datei.is_file():
        return f" Das Passwort kommt aus {datei}."
    return ""


def _passwort_falsch(ziel: str, woher: str, url: str | None) -> str:
    """„Rolle oder Passwort falsch“, woher URL und Passwort kamen, und der nächste Schritt."""
    teile = _teile(url)
    if not _passwort_ausdruecklich(teile):
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
    teile = _teile(url)
    datenbank = teile.get("dbname") or rolle
    wo = "local all all peer" if methode == "peer" else "host all all 127.0.0.1/32 ident"
    zeile = _hba_zeile("[local]" if methode == "peer" else "127.0.0.1", rolle, datenbank)
    anfang = (
        f"Anmeldung an {ziel} gescheitert: der Server prüft {rolle} mit {methode} (pg_hba.conf) – dafür "
        f"müsste der Benutzer des Systems {rolle} heißen; ein Passwort zählt dort nicht."
    )
    ende = f"(dann select pg_reload_conf(); {_EINRICHTUNG}); über TCP (host=localhost in DATABASE_URL) gilt auf Debian schon scram-sha-256."
    datei = passwortdatei(teile)
    if _passwort_ausdruecklich(teile) or _passwortdatei_hat(datei, datenbank, rolle):
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


def _verbindungsfehler(text: str, ziel: str, herkunft: str = "", url: str | None = None) -> str:
    klein = text.lower()
    woher = f" {herkunft}" if herkunft else ""
    if "password authentication failed" in klein or "passwort-authentifizierung" in klein:
        return _passwort_falsch(ziel, woher, url)
    if "no password supplied" in klein:
        datei = passwortdatei(_teile(url))
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
        rolle = _teile(url).get("user") or "der Rolle"
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


@contextlib.contextmanager
def fehler_uebersetzen(url: str | None) -> Iterator[None]:
    """Übersetzt psycopg-Fehler in die Fehlerklassen dieses Moduls, ohne Passwort."""
    ziel = maskieren(url) if url else "Datenbank"
    try:
        yield
    except psycopg.Error as fehler:
        text = ohne_passwort(str(fehler), url)
        raise _uebersetzt(fehler, text, ziel, getattr(url, "herkunft", ""), _rolle(url), url) from None


def _rolle(url: str | None) -> str | None:
    """Der Rollenname aus der URL (ohne ihn: libpq nimmt PGUSER oder den Benutzer des Systems)."""
    return _teile(url).get("user")


# Was der Server bei fehlenden Rechten meldet (lc_messages englisch) → deutsch.
_OBJEKTARTEN = {
    "table": "die Tabelle",
    "relation": "die Tabelle",
    "view": "die Sicht",
    "materialized view": "die Sicht",
    "sequence": "die Sequenz",
    "schema": "das Schema",
    "database": "die Datenbank",
    "function": "die Funktion",
}
_KEIN_RECHT = re.compile(r"^permission denied for (materialized view|\w+) (.+?)\.?$")
_NICHT_EIGENTUEMER = re.compile(r"^must be owner of (materialized view|\w+) (.+?)\.?$")


def recht_fehlt_satz(haupt: str, rolle: str | None, ziel: str) -> str:
    """„Der Rolle aw_stufe fehlt ein Recht auf die Tabelle extraktionen.“ aus der Meldung des Servers."""
    wer = f"Der Rolle {rolle}" if rolle else f"Der Rolle ({ziel})"
    if (treffer := _KEIN_RECHT.match(haupt)) and treffer[1] in _OBJEKTARTEN:
        return f"{wer} fehlt ein Recht auf {_OBJEKTARTEN[treffer[1]]} {treffer[2]}."
    if (treffer := _NICHT_EIGENTUEMER.match(haupt)) and treffer[1] in _OBJEKTARTEN:
        wer = f"Die Rolle {rolle}" if rolle else f"Die Rolle ({ziel})"
        return f"{wer} ist nicht Eigentümerin von {_OBJEKTARTEN[treffer[1]].split()[1]} {treffer[2]}."
    return f"{wer} fehlt ein Recht (der Server meldet: {haupt})."


def _uebersetzt(
    fehler: psycopg.Error,
    text: str,
    ziel: str,
    herkunft: str = "",
    rolle: str | None = None,
    url: str | None = None,
) -> Exception:
    haupt = (getattr(fehler.diag, "message_primary", None) or text).strip()
    if isinstance(fehler, errors.QueryCanceled):
        return Zeitlimit(
            f"Zeitlimit der Datenbank überschritten (statement_timeout): {haupt}. "
            "Grenze über AUSWAHL_STATEMENT_TIMEOUT anheben."
        )
    if isinstance(fehler, errors.LockNotAvailable):
        return Zeitlimit(
            f"Sperre nicht rechtzeitig bekommen (lock_timeout): {haupt}. Hält ein anderer Prozess die Tabelle?"
        )
    if isinstance(fehler, errors.UndefinedTable | errors.UndefinedColumn | errors.UndefinedFunction):
        return VoraussetzungFehlt(
            f"Voraussetzung fehlt in der Datenbank: {haupt}. "
            "Prüfen mit: python check_db.py (Migrationen: python check_db.py --migrieren)."
        )
    if isinstance(fehler, errors.InsufficientPrivilege):
        return RechtFehlt(recht_fehlt_satz(haupt, rolle, ziel))
    if isinstance(fehler, errors.AdminShutdown | errors.CrashShutdown | errors.CannotConnectNow):
        return DatenbankFehler(
            f"Der Datenbankserver wurde heruntergefahren ({ziel}). Geschriebene Stapel bleiben; "
            "ein erneuter Lauf setzt fort."
        )
    if isinstance(fehler, errors.InvalidParameterValue):
        return KonfigurationsFehler(
            f"Der Server lehnt eine Einstellung ab: {haupt}. Prüfen: AUSWAHL_STATEMENT_TIMEOUT, "
            "AUSWAHL_LOCK_TIMEOUT und options in DATABASE_URL."
        )
    if isinstance(fehler, psycopg.OperationalError) and not fehler.sqlstate:
        if treffer := re.search(r'invalid (\w+) value: "(.*?)"', text):
            return KonfigurationsFehler(
                f"DATABASE_URL: {treffer[1]}={treffer[2]!r:.40} ist kein gültiger Wert ({ziel})."
            )
        return DatenbankFehler(_verbindungsfehler(text, ziel, herkunft, url))
    if isinstance(fehler, errors.InvalidPassword | errors.InvalidAuthorizationSpecification):
        return DatenbankFehler(_passwort_falsch(ziel, f" {herkunft}" if herkunft else "", url))
    return DatenbankFehler(f"Datenbankfehler ({ziel}): {haupt}")
