"""Verbindung zur Datenbank: DATABASE_URL finden, verbinden, Fehler übersetzen.

* ``datenbank_url`` liest DATABASE_URL aus der Umgebung, sonst aus ``.env``
  (python-dotenv) und warnt, wenn Gruppe oder andere die Datei lesen dürfen.
* ``maskieren`` ersetzt das Passwort in einer URL oder einem ``key=value``-
  String durch ``***``; jede Meldung mit einer URL geht hier durch.
* ``verbinden`` setzt application_name, statement_timeout und lock_timeout.
* ``fehler_uebersetzen`` macht aus psycopg-Fehlern die Klassen aus fehler.py
  mit einem deutschen Satz – nie ein Traceback, nie ein Passwort.
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

from fehler import DatenbankFehler, VoraussetzungFehlt, Zeitlimit

ANWENDUNG = "wurzelwerk-auswahl"
# Grenzen je Anweisung und je Sperrwartezeit; über die Umgebung zu ändern
# (Werte wie in postgresql.conf: "60s", "500ms", "0" = aus).
STATEMENT_TIMEOUT = "120s"
LOCK_TIMEOUT = "10s"
CONNECT_TIMEOUT = 10  # Sekunden bis „Server nicht erreichbar“

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


def _env_datei() -> Path | None:
    # Nur das Arbeitsverzeichnis: wer aus einem anderen Verzeichnis startet
    # (cron), setzt DATABASE_URL oder wechselt dorthin – keine Suche, die
    # unbemerkt eine fremde .env findet.
    ort = Path.cwd() / ".env"
    return ort if ort.is_file() else None


def datenbank_url() -> str:
    """DATABASE_URL aus der Umgebung, sonst aus .env; sonst VoraussetzungFehlt."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    datei = _env_datei()
    if datei is not None:
        if datei.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            print(
                f"Warnung: {datei} ist für Gruppe oder andere lesbar und enthält ein Passwort – "
                f"chmod 600 {datei}",
                file=sys.stderr,
            )
        from dotenv import dotenv_values

        url = dotenv_values(datei).get("DATABASE_URL")
        if url:
            return url
    raise VoraussetzungFehlt(
        "DATABASE_URL ist nicht gesetzt – weder in der Umgebung noch in .env "
        "(Vorlage: .env.example kopieren nach .env, dann chmod 600 .env)."
    )


def _optionen() -> str:
    statement = os.environ.get("AUSWAHL_STATEMENT_TIMEOUT", STATEMENT_TIMEOUT)
    sperre = os.environ.get("AUSWAHL_LOCK_TIMEOUT", LOCK_TIMEOUT)
    return f"-c statement_timeout={statement} -c lock_timeout={sperre}"


def verbinden(url: str, zweck: str, *, autocommit: bool = False) -> psycopg.Connection:
    """Eine Verbindung, die sagt, wer sie ist, und ihre Wartezeiten begrenzt."""
    with fehler_uebersetzen(url):
        return psycopg.connect(
            url,
            autocommit=autocommit,
            application_name=f"{ANWENDUNG} {zweck}"[:63],
            # Die Stufe schickt fertig kodierte COPY-Daten (stufe.stapel_kodieren):
            # UTF-8, was auch immer PGCLIENTENCODING sagt.
            client_encoding="UTF8",
            options=_optionen(),
            connect_timeout=CONNECT_TIMEOUT,
        )


def _verbindungsfehler(text: str, ziel: str) -> str:
    klein = text.lower()
    if "password authentication failed" in klein or "passwort-authentifizierung" in klein:
        return f"Anmeldung an {ziel} gescheitert: Rolle oder Passwort falsch."
    if "no password supplied" in klein:
        return f"Anmeldung an {ziel} gescheitert: der Server verlangt ein Passwort, die URL enthält keins."
    if "does not exist" in klein and "database" in klein:
        return f"Die Datenbank in {ziel} gibt es nicht."
    if "does not exist" in klein and "role" in klein:
        return f"Die Rolle in {ziel} gibt es nicht."
    if any(
        s in klein for s in ("connection refused", "no such file", "could not connect", "timeout expired")
    ):
        return f"Datenbankserver nicht erreichbar ({ziel}). Läuft er, stimmen Host und Port?"
    if any(
        s in klein for s in ("server closed the connection", "terminating connection", "connection is lost")
    ):
        return (
            f"Verbindung zur Datenbank verloren ({ziel}). Geschriebene Stapel bleiben; "
            "ein erneuter Lauf setzt fort."
        )
    return f"Datenbankfehler ({ziel}): {text.strip()}"


@contextlib.contextmanager
def fehler_uebersetzen(url: str | None) -> Iterator[None]:
    """Übersetzt psycopg-Fehler in die Klassen aus fehler.py, ohne Passwort."""
    ziel = maskieren(url) if url else "Datenbank"
    try:
        yield
    except psycopg.Error as fehler:
        text = ohne_passwort(str(fehler), url)
        raise _uebersetzt(fehler, text, ziel) from None


def _uebersetzt(fehler: psycopg.Error, text: str, ziel: str) -> Exception:
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
        return VoraussetzungFehlt(f"Der Rolle fehlt ein Recht: {haupt}.")
    if isinstance(fehler, errors.AdminShutdown | errors.CrashShutdown | errors.CannotConnectNow):
        return DatenbankFehler(
            f"Der Datenbankserver wurde heruntergefahren ({ziel}). Geschriebene Stapel bleiben; "
            "ein erneuter Lauf setzt fort."
        )
    if isinstance(fehler, psycopg.OperationalError) and not fehler.sqlstate:
        return DatenbankFehler(_verbindungsfehler(text, ziel))
    if isinstance(fehler, errors.InvalidPassword | errors.InvalidAuthorizationSpecification):
        return DatenbankFehler(f"Anmeldung an {ziel} gescheitert: Rolle oder Passwort falsch.")
    return DatenbankFehler(f"Datenbankfehler ({ziel}): {haupt}")
