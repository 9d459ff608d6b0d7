"""Verbindung zur Datenbank: DATABASE_URL finden (``datenbank_url``, mit ``herkunft``), prüfen und
verbinden (``verbinden``: Grenzen, Passwortdatei, Mindestversion des Servers) und psycopg-Fehler in
die Fehlerklassen unten übersetzen (``fehler_uebersetzen``: nach SQLSTATE, ohne ihn ``db_anmeldung``)
– nie ein Traceback, nie ein Passwort. Welcher Fehler welchen Code bekommt: docs/betrieb.md,
„Exit-Codes (Datenbank und Konfiguration)“.

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import psycopg
from psycopg import errors

from db_anmeldung import (
    maskieren,
    ohne_passwort,
    passwort_zerbrochen,
    passwortdatei_offen,
    traegt_passwort,
    url_teile,
    verbindungsfehler,
)


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
# Der Rauchtest, wie ein Mensch ihn im Klon aufruft; jede Meldung, die dorthin schickt, nimmt ihn von hier.
CHECK_DB = ".venv/bin/python check_db.py"
# Grenzen je Anweisung und je Sperrwartezeit; über die Umgebung zu ändern
# (Werte wie in postgresql.conf: "60s", "500ms", "0" = aus).
STATEMENT_TIMEOUT = "120s"
LOCK_TIMEOUT = "10s"
CONNECT_TIMEOUT = 10  # Sekunden bis „Server nicht erreichbar“
# TCP-Keepalives; was DATABASE_URL selbst setzt, gilt (docs/betrieb-lauf.md, „Ruhende Verbindungen“).
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 6}
# Ein Migrationslauf: kein statement_timeout (ein alter table auf einer großen
# Tabelle darf dauern), aber nicht endlos hinter einem Lauf der Stufe warten.
MIGRATION_GRENZEN = {"statement_timeout": "0", "lock_timeout": "60s"}
# Woher die Grenzen kommen dürfen (Umgebungsvariable je Grenze).
UMGEBUNG_LAUF = {"statement_timeout": "AUSWAHL_STATEMENT_TIMEOUT", "lock_timeout": "AUSWAHL_LOCK_TIMEOUT"}
UMGEBUNG_MIGRATION = {"lock_timeout": "AUSWAHL_MIGRATION_LOCK_TIMEOUT"}
# Eine Dauer wie in postgresql.conf: Zahl, wahlweise mit Einheit ("0" = aus).
_DAUER = re.compile(r"^\d+(?:\.\d+)?(?:us|ms|s|min|h|d)?$")

# Die niedrigste unterstützte und die getesteten Hauptversionen des Servers; warum diese:
# docs/betrieb.md, „Unterstützte PostgreSQL-Versionen“. Jede Meldung nennt sie von hier.
MINDESTVERSION = 15
GETESTET = (15, 18)

# Warnungen an einen Menschen; wohin sie gehen, richtet der Einstieg ein (``protokoll.einrichten``).
WARNUNG = logging.getLogger("db")
_gewarnt: set[str] = set()  # jede Warnung einmal je Prozess (ein Lauf, ein Aufruf von check_db.py)

# Ein Passwort in DATABASE_URL: wo es dann überall steht und wohin es gehört – ohne das Passwort.
PASSWORT_IN_URL = (
    'DATABASE_URL enthält ein Passwort – es steht so in der Umgebung, in .env und bei psql "$DATABASE_URL" '
    "in `ps`; besser in ~/.pgpass (docs/betrieb.md, Einrichtung, Schritt 5)."
)


def warnen(satz: str) -> None:
    """„Warnung: …“ an ``WARNUNG``, jeder Satz einmal je Prozess."""
    if satz not in _gewarnt:
        _gewarnt.add(satz)
        WARNUNG.warning(f"Warnung: {satz}")


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
    return traegt_passwort(werte.get("DATABASE_URL") or "")


def datenbank_url() -> DatenbankUrl:
    """DATABASE_URL aus der Umgebung, sonst aus .env (mit ihrer Herkunft); sonst VoraussetzungFehlt.

    Trägt sie ein Passwort, warnt sie (``PASSWORT_IN_URL``, einmal je Prozess)."""
    url = os.environ.get("DATABASE_URL")
    datei = _env_datei()
    if url:
        herkunft = "DATABASE_URL kommt aus der Umgebung"
        if datei is not None:
            herkunft += f" (die Datei {datei} wird dann nicht gelesen)"
        return _mit_warnung(DatenbankUrl(url, herkunft + "."))
    if datei is not None:
        from dotenv import dotenv_values

        werte = dotenv_values(datei)
        url = werte.get("DATABASE_URL")
        if datei.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO) and _mit_passwort(werte):
            warnen(f"{datei} enthält ein Passwort und ist für Gruppe oder andere lesbar – chmod 600 {datei}")
        if url:
            return _mit_warnung(DatenbankUrl(url, f"DATABASE_URL kommt aus {datei}."))
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


def _mit_warnung(url: DatenbankUrl) -> DatenbankUrl:
    if _mit_passwort({"DATABASE_URL": url}):
        warnen(PASSWORT_IN_URL)
    return url


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
_BEISPIEL = "erwartet z. B. postgresql://rolle@host:5432/datenbank oder host=… dbname=…"


def url_pruefen(url: str) -> dict[str, str]:
    """Liest DATABASE_URL wie libpq; kaputt → KonfigurationsFehler (Exit 7), ohne Passwort. Eine
    Option, die die URL nicht setzt, nimmt libpq aus der Umgebung (PGSSLMODE, PGPORT, …): auch sie
    wird hier geprüft, sonst meldete libpq sie erst beim Verbinden, englisch, wie einen Serverfehler."""
    try:
        teile = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error as fehler:
        text = " ".join(ohne_passwort(str(fehler), url).split())
        raise KonfigurationsFehler(
            f"DATABASE_URL ist nicht lesbar: libpq meldet „{text}“ ({_BEISPIEL})."
        ) from None
    for name, erlaubt in _AUSWAHL.items():
        wert, variable = _wert(teile, name)
        if wert is None or wert in erlaubt:
            continue
        erlaubt_text = f"(erlaubt: {', '.join(erlaubt)})"
        if variable:
            raise KonfigurationsFehler(
                f"{variable}={wert!r:.40} aus der Umgebung ist kein gültiger Wert für {name} {erlaubt_text}; "
                f"libpq nimmt ihn, weil DATABASE_URL {name} nicht setzt."
            )
        raise KonfigurationsFehler(
            f"DATABASE_URL: {name}={wert!r:.40} ist kein gültiger Wert {erlaubt_text}."
        )
    for name in _GANZZAHL:
        wert = teile.get(name)
        if wert is not None and not re.fullmatch(r"-?\d+", str(wert).strip()):
            raise KonfigurationsFehler(f"DATABASE_URL: {name}={wert!r:.40} ist keine ganze Zahl.")
    ports, variable = _wert(teile, "port")
    for port in ports.split(",") if ports else ():
        if not port or (re.fullmatch(r"\s*\d+\s*", port, re.ASCII) and 1 <= int(port) <= 65535):
            continue
        if not variable and ("@" in port or passwort_zerbrochen(url, teile.get("password"))):
            # der „Port“ ist ein Stück des Passworts: nicht zitieren
            raise KonfigurationsFehler(
                "DATABASE_URL: libpq liest als Port keine Zahl von 1 bis 65535 – steht im Passwort ein "
                "rohes /, ?, # oder @? libpq nimmt es als Ende des Passworts. Im Passwort %-kodieren "
                "(/ → %2F, ? → %3F, # → %23, @ → %40)."
            )
        wo = f"{variable} (aus der Umgebung)" if variable else "DATABASE_URL"
        raise KonfigurationsFehler(f"{wo}: Port {port!r:.20} ist keine Zahl von 1 bis 65535.")
    return teile


# Woher libpq eine Option nimmt, die die URL nicht setzt (connect_timeout setzt verbinden selbst).
_UMGEBUNG_LIBPQ = {
    "sslmode": "PGSSLMODE",
    "gssencmode": "PGGSSENCMODE",
    "channel_binding": "PGCHANNELBINDING",
    "target_session_attrs": "PGTARGETSESSIONATTRS",
    "load_balance_hosts": "PGLOADBALANCEHOSTS",
    "sslnegotiation": "PGSSLNEGOTIATION",
    "port": "PGPORT",
}


def _wert(teile: dict[str, str], name: str) -> tuple[str | None, str | None]:
    """Der Wert einer Option, wie libpq ihn nimmt: aus der URL (Variable None), sonst aus der Umgebung."""
    if name in teile:
        return teile[name], None
    if teile.get("service") or os.environ.get("PGSERVICE"):
        return None, None  # libpq nimmt die Datei des Dienstes vor der Umgebung: sie prüft libpq
    variable = _UMGEBUNG_LIBPQ.get(name)
    return (os.environ.get(variable), variable) if variable else (None, None)


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
    # idle_session_timeout 0: docs/betrieb-lauf.md, „Ruhende Verbindungen und die Sperre“.
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


def version_text(nummer: int) -> str:
    """server_version_num als Text: 180001 → „18.1“, 90624 → „9.6.24“."""
    if nummer >= 100000:
        return f"{nummer // 10000}.{nummer % 10000}"
    return f"{nummer // 10000}.{nummer // 100 % 100}.{nummer % 100}"


def getestet_text() -> str:
    """``15 und 18``: die getesteten Hauptversionen (``GETESTET``) für einen Satz."""
    namen = [str(v) for v in sorted(GETESTET)]
    return " und ".join([", ".join(namen[:-1]), namen[-1]] if len(namen) > 1 else namen)


def server_version_pruefen(nummer: int) -> None:
    """Zu alter Server (server_version_num) → VoraussetzungFehlt (Exit 4) mit beiden Versionen."""
    if nummer // 10000 < MINDESTVERSION:
        raise VoraussetzungFehlt(
            f"Der Datenbankserver hat PostgreSQL {version_text(nummer)}; nötig ist mindestens "
            f"PostgreSQL {MINDESTVERSION} (getestet mit {getestet_text()}). Siehe docs/betrieb.md."
        )


def versionshinweis(nummer: int) -> str | None:
    """Ein unterstützter, aber nicht getesteter Server (etwa 16.4): der Hinweis dazu; sonst None."""
    if nummer // 10000 < MINDESTVERSION or nummer // 10000 in GETESTET:
        return None
    return (
        f"unterstützt ab PostgreSQL {MINDESTVERSION}, getestet mit {getestet_text()}; "
        f"der Server hat {version_text(nummer)}"
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
    if satz := passwortdatei_offen(teile):  # libpq läse sie nicht: vorher, deutsch, Exit 7
        raise KonfigurationsFehler(satz)
    grenzen = laufgrenzen() if grenzen is None else grenzen
    with fehler_uebersetzen(url, anmeldung=True):
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


# --- Fehler übersetzen ---------------------------------------------------------------

# 42501 sagt nur, dass ein Recht fehlt; welches Objekt, steht allein im Text des Servers (diag hat
# kein Feld dafür). Englisch (lc_messages) wird es ein deutscher Satz, anderer Wortlaut bleibt zitiert.
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
_RECHT = re.compile(r"^(?:permission denied for|(must be owner of)) (materialized view|\w+) (.+?)\.?$")


def recht_fehlt_satz(haupt: str, rolle: str | None, ziel: str) -> str:
    """„Der Rolle aw_stufe fehlt ein Recht auf die Tabelle extraktionen.“ aus der Meldung des Servers."""
    rolle = rolle or f"({ziel})"
    treffer = _RECHT.match(haupt)
    if not treffer or treffer[2] not in _OBJEKTARTEN:
        return f"Der Rolle {rolle} fehlt ein Recht (der Server meldet: {haupt})."
    art, name = _OBJEKTARTEN[treffer[2]], treffer[3]
    if treffer[1]:
        return f"Die Rolle {rolle} ist nicht Eigentümerin von {art.split()[1]} {name}."
    return f"Der Rolle {rolle} fehlt ein Recht auf {art} {name}."


class _Lage(NamedTuple):
    """Was ein Satz der Tabelle unten einsetzt."""

    haupt: str  # die Hauptmeldung des Servers (diag.message_primary)
    ziel: str  # die URL ohne Passwort
    rolle: str | None  # die Rolle der URL


# Fehler mit SQLSTATE: Klasse von psycopg → Fehlerklasse dieses Moduls und Satz; die erste passende
# Zeile gilt. Im Satz {haupt} die Hauptmeldung des Servers, {ziel} die URL ohne Passwort; wo er mehr
# braucht (welche Rolle), steht eine Funktion der Lage.
_NACH_SQLSTATE: tuple[
    tuple[tuple[type[psycopg.Error], ...], type[Fehler], str | Callable[[_Lage], str]], ...
] = (
    (
        (errors.QueryCanceled,),  # 57014: statement_timeout
        Zeitlimit,
        "Zeitlimit der Datenbank überschritten (statement_timeout): {haupt}. "
        "Grenze über AUSWAHL_STATEMENT_TIMEOUT anheben.",
    ),
    (
        (errors.LockNotAvailable,),  # 55P03: lock_timeout
        Zeitlimit,
        "Sperre nicht rechtzeitig bekommen (lock_timeout): {haupt}. Hält ein anderer Prozess die Tabelle?",
    ),
    (
        (errors.UndefinedTable, errors.UndefinedColumn, errors.UndefinedFunction),  # 42P01, 42703, 42883
        VoraussetzungFehlt,
        "Voraussetzung fehlt in der Datenbank: {haupt}. "
        f"Prüfen im Klon mit: {CHECK_DB} – es nennt, was fehlt und wer es behebt (Migrationen wendet "
        f"der Admin der Stufe an: {CHECK_DB} --migrieren).",
    ),
    (
        (errors.InsufficientPrivilege,),  # 42501
        RechtFehlt,
        lambda lage: recht_fehlt_satz(lage.haupt, lage.rolle, lage.ziel),
    ),
    (
        (errors.AdminShutdown, errors.CrashShutdown, errors.CannotConnectNow),  # 57P01, 57P02, 57P03
        DatenbankFehler,
        "Der Datenbankserver wurde heruntergefahren ({ziel}). Geschriebene Stapel bleiben; "
        "ein erneuter Lauf setzt fort.",
    ),
    (
        (errors.InvalidParameterValue,),  # 22023: etwa options=-c statement_timeout=…
        KonfigurationsFehler,
        "Der Server lehnt eine Einstellung ab: {haupt}. Prüfen: AUSWAHL_STATEMENT_TIMEOUT, "
        "AUSWAHL_LOCK_TIMEOUT und options in DATABASE_URL.",
    ),
)


@contextlib.contextmanager
def fehler_uebersetzen(url: str | None, *, anmeldung: bool = False) -> Iterator[None]:
    """Übersetzt psycopg-Fehler in die Fehlerklassen dieses Moduls, ohne Passwort. ``anmeldung``:
    der Block baut die Verbindung erst auf (``verbinden``)."""
    ziel = maskieren(url) if url else "Datenbank"
    try:
        yield
    except psycopg.Error as fehler:
        raise _uebersetzt(fehler, ohne_passwort(str(fehler), url), ziel, url, anmeldung) from None


def _uebersetzt(fehler: psycopg.Error, text: str, ziel: str, url: str | None, anmeldung: bool) -> Fehler:
    haupt = (getattr(fehler.diag, "message_primary", None) or text).strip()
    lage = _Lage(haupt, ziel, url_teile(url).get("user"))
    for klassen, art, satz in _NACH_SQLSTATE:
        if isinstance(fehler, klassen):
            return art(satz(lage) if callable(satz) else satz.format_map(lage._asdict()))
    if isinstance(fehler, psycopg.OperationalError) and not fehler.sqlstate:
        # Ohne SQLSTATE kam die Verbindung nicht zustande (den Satz findet db_anmeldung) oder sie
        # riss ab: libpq, nicht der Server, meldet es.
        if anmeldung:
            return DatenbankFehler(verbindungsfehler(text, ziel, getattr(url, "herkunft", ""), url, fehler))
        return DatenbankFehler(
            f"Verbindung zur Datenbank verloren ({ziel}): „{' '.join(text.split())}“. Geschriebene "
            "Stapel bleiben; ein erneuter Lauf setzt fort."
        )
    return DatenbankFehler(f"Datenbankfehler ({ziel}): {haupt}")
