"""Gemeinsame Fixtures: ein echter PostgreSQL 18 für die Datenbanktests.

Die Helfer dazu (Server, Daten, Unterprozesse, das Haus) stehen im Paket ``tests/hilfen/``;
Tests importieren sie von dort, nie aus dieser Datei.

Das Schema entsteht einmal in einer Vorlagedatenbank – ein ``raw_items`` wie
bei Ingest, dann die echten Migrationen über migrationen.py –, und jeder Test
bekommt ``CREATE DATABASE … TEMPLATE`` und danach ``DROP DATABASE … WITH
(FORCE)``. Ist ``CI`` gesetzt, laufen die Datenbanktests oder scheitern; sie
werden nie übersprungen.

Fixtures: ``pg`` (der Server, mit ``stoppen()`` und ``starten()`` für
Fehlertests), ``db_name``, ``db_url`` (frische Datenbank mit Schema),
``leere_db_url`` (ohne alles), ``daten`` (Items und Kandidaten einfügen),
``cli`` (``python auswahl.py …`` als Unterprozess), ``passwort_rolle``.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from psycopg import sql

from auswahlstufe.betrieb import migrationen, protokoll
from tests.hilfen.daten import Daten, raw_items_anlegen
from tests.hilfen.haus import Haus, haus_abreissen, haus_vorbereiten, klon_anlegen
from tests.hilfen.prozesse import auswahl_starten
from tests.hilfen.server import (
    PG15,
    Server,
    ohne_server,
    pg15_starten,
    pg15_stoppen,
    psql_verzeichnis,
    server_starten,
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--langsam",
        action="store_true",
        help="Auch die langen Läufe (Marke langsam: 100 Abbrüche, 1 Mio. Artikel, 50-MB-Texte).",
    )


# Fixtures, die einen Server starten (``haus`` holt ``pg``/``pg15`` erst zur Laufzeit).
SERVER_FIXTURES = {"pg", "pg15", "haus"}


# Gemessen mit --durations (docs/zuverlaessigkeit.md, Dauer der Suite): die Module, deren einzelne
# Tests oder Fixtures am längsten rechnen, das längste zuerst.
ZUERST = [
    "test_extraktion_schnell.py",
    "test_aktualisieren.py",
    "test_bench_db.py",
    "test_betrieb_nacht.py",
    "test_zuverlaessigkeit.py",
    "test_extraktion_nachpruefen.py",
    "test_bench_million.py",
    "test_extraktion_stufe.py",
    "test_betrieb_haus.py",
]


@pytest.hookimpl(tryfirst=True)  # vor der Auswahl mit -m: die Marke muss schon dran sein
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Jeder Test, der einen Server braucht (Fixture ``pg``, ``pg15`` oder ``haus``, auch über
    andere Fixtures), trägt die Marke ``datenbank``; ``-m "not datenbank"`` startet dann keinen
    Server. Die langen Läufe (``langsam``) laufen nur mit ``--langsam`` – ein ``-m`` allein holt
    sie nicht zurück."""
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.datenbank)
    # Die Module mit den längsten Tests zuerst, je Modul in seiner Reihenfolge: mit -n 2 und
    # --dist worksteal (pyproject.toml) endet die Suite nicht mit einem Worker, der allein noch
    # eine Minute rechnet, während der andere nichts mehr zu tun hat.
    items.sort(key=lambda item: ZUERST.index(item.path.name) if item.path.name in ZUERST else len(ZUERST))
    if config.getoption("--langsam"):
        return
    lang = [item for item in items if item.get_closest_marker("langsam")]
    if lang:
        config.hook.pytest_deselected(items=lang)
        items[:] = [item for item in items if not item.get_closest_marker("langsam")]


# Eigenschaftstests: gleiche Beispiele in jedem Lauf (derandomize), keine
# Beispieldatenbank, keine Zeitgrenzen und keine Gesundheitsprüfung auf Tempo –
# auf einer ausgelasteten 2-Kern-Maschine und aus einem frischen Klon
# (ohne .hypothesis) scheiterte „input generation is slow“ sonst 5 von 5 Mal.
NICHT_AUF_TEMPO = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
settings.register_profile(
    "wurzelwerk", derandomize=True, database=None, deadline=None, suppress_health_check=NICHT_AUF_TEMPO
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "wurzelwerk"))

# Ohne Terminal beginnt jede Zeile eines Datenbanklaufs mit Zeit, Modus, Slot und
# coder_version (betrieb.protokoll, für das cron-Log). Die Tests vergleichen Ausgaben Zeile für
# Zeile und schalten ihn darum für ihre Unterprozesse aus; was er tut, zeigen die Tests in
# tests/test_stufe_cron.py, die ihn ausdrücklich setzen.
os.environ.setdefault("AUSWAHL_ZEILENKOPF", "aus")
# Die Tests rufen die Stufe auch ohne ihre Kommandozeile: sie richten das Protokoll ein wie sie.
protokoll.einrichten()

# Ein Skript, das die Tests mit „&“ ohne Job-Kontrolle startet (nohup, eine CI-Schleife),
# vererbt SIGINT als ignoriert; Python lässt es dann ignoriert, und jeder Unterprozess
# auch – die Tests, die Strg-C schicken, sähen nichts. Ein Handler hier wird beim exec
# der Unterprozesse wieder zur Voreinstellung, dort installiert Python seinen eigenen.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def pg(request) -> Server:
    """Der Server der Sitzung (läuft bis zum Ende der Sitzung)."""
    try:
        server = server_starten(request)
        with server.verwalten() as conn:
            version = conn.info.server_version
    except (pytest.skip.Exception, pytest.fail.Exception):
        raise
    except Exception as fehler:
        ohne_server(f"{type(fehler).__name__}: {fehler}")
    if version < 180000 and os.environ.get("CI"):
        pytest.fail(f"PostgreSQL {version} statt 18")
    return server


@pytest.fixture(scope="session")
def vorlage(pg: Server) -> str:
    """Name der Vorlagedatenbank: raw_items wie bei Ingest plus unsere Migrationen."""
    name = f"aw_vorlage_{os.getpid()}"
    with pg.verwalten() as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    url = pg.url(name)
    raw_items_anlegen(url)
    migrationen.migrieren(url, ausgabe=lambda _: None)
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


@pytest.fixture
def daten(db_url: str):
    helfer = Daten(db_url)
    yield helfer
    helfer.schliessen()


@pytest.fixture
def cli(db_url: str, tmp_path: Path):
    """``cli("--backfill")`` startet ``python auswahl.py --backfill`` mit DATABASE_URL=db_url.

    ``url=None`` lässt DATABASE_URL weg; ``cwd`` ist tmp_path (dort landen Stichproben).
    """

    def starten(*args: str, url: str | None = db_url, env: dict | None = None, cwd: Path = tmp_path):
        return auswahl_starten(*args, url=url, cwd=cwd, env=env)

    return starten


@pytest.fixture
def ablage() -> Path:
    """Ein eigenes Verzeichnis in /tmp für Wegwerf-Server, die Vorführung und Benchmarks als
    Unterprozess anlegen – nicht unter tmp_path: eine zweite pytest-Sitzung desselben Nutzers
    setzt /tmp/pytest-of-root beim Start wieder auf 0700, und ein Server, der als Nutzer
    embedded_postgres läuft, käme nicht mehr an seine Daten (zwei CI-Läufe nebeneinander
    scheitern sonst am Stoppen des Servers)."""
    pfad = Path(tempfile.mkdtemp(prefix="aw-test-ablage-"))
    yield pfad
    shutil.rmtree(pfad, ignore_errors=True)


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


@pytest.fixture(scope="session")
def pg15() -> Server:
    """PostgreSQL 15 aus dem Debian-Paket postgresql-15: die niedrigste unterstützte Fassung.

    Außerhalb von CI übersprungen, wenn das Paket fehlt; in CI (``.ci/run`` installiert es) ein
    Fehler – die Probe der Mindestversion fällt nie still aus.
    """
    if not (PG15 / "initdb").exists():
        grund = "PostgreSQL 15 nicht installiert (apt-get install postgresql-15)"
        if os.environ.get("CI"):
            pytest.fail(grund)
        pytest.skip(grund)
    ort = Path(tempfile.mkdtemp(prefix="aw-pg15-"))
    try:
        yield pg15_starten(ort)
    finally:
        pg15_stoppen(ort)
        shutil.rmtree(ort, ignore_errors=True)


@pytest.fixture(params=["18", "15"], ids=["pg18", "pg15"])
def haus(request, tmp_path) -> Haus:
    """Das Haus der Doku (docs/betrieb.md, Einrichtung) auf PostgreSQL 18 und 15, noch leer:
    ``haus.bauen(4)`` führt die Schritte 1–4 aus, wie sie dort stehen. Danach wieder weg."""
    if request.param == "18":
        server = request.getfixturevalue("pg")
        if server.pgdata is None:  # TEST_DATABASE_URL, Docker: pg_hba.conf gehört nicht uns
            grund = "das Haus braucht einen Server, dessen pg_hba.conf die Tests setzen (eingebettet)"
            if os.environ.get("CI"):
                pytest.fail(grund)  # in CI fällt das Haus nie still aus
            pytest.skip(grund)
        bin_pfad = psql_verzeichnis()
    else:
        server = request.getfixturevalue("pg15")
        bin_pfad = PG15
    yield haus_vorbereiten(server, bin_pfad, klon_anlegen(tmp_path / "klon"), tmp_path / "home")
    haus_abreissen(server)
