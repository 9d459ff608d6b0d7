"""Die Läufe auf einem eigenen Bestand gemessen, wie cron sie sieht (bis 2026-12: ``demo.py --bestand``).

Startet einen Wegwerf-PostgreSQL 18, legt ``raw_items`` aus einer Datei im
Stapelformat an und misst je Lauf die Zeit vom Prozessstart bis zum Ende und den
größten Speicher eines Prozesses: Einlesen, Backfill, erneuter Backfill,
Trockenlauf, ein Slot ohne Änderung und ein Slot, dessen Kodierungen vorher
gelöscht wurden. Artikel ohne ``item_id`` (etwa im article-extraction-benchmark)
bekommen ihre Nummer in der Datei als item_id und je 400 einen Slot.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.bestand bench/aeb/candidates.json
    python -m bench.bestand bench/daten/bestand.json --prozesse 1
"""

from __future__ import annotations

import json
import multiprocessing
import shutil
import sys
import tempfile
from pathlib import Path

import click
import psycopg

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from auswahlstufe import kerne
from auswahlstufe.anzeige import zahl
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.betrieb import migrationen
from auswahlstufe.jsoneingabe import laden
from auswahlstufe.server import RAW_ITEMS, wegwerf_datenbank
from bench.ingest import item_zeile, item_zeilen, items_eintragen
from bench.messen import gemessen

# raw_items in einem Zug füllen (COPY), auch bei 100.000 Items in Sekunden.
# Wie viele Items, welcher Slot zuerst; wie viele Items in einem Slot.
BESTAND_ZAHL = "select count(*), min(slot) from raw_items"
SLOT_ZAHL = "select count(*) from raw_items where slot = %s"
# Die Kodierungen eines Slots löschen, damit der Slot-Lauf sie neu schreibt.
SLOT_LEEREN = "delete from selected_extractor s using raw_items r where r.id = s.item_id and r.slot = %s"


def bestand_vorbereiten(datei: Path, verzeichnis: Path) -> tuple[Path, list[tuple]]:
    """(Datei mit item_id, Zeilen für raw_items); fehlende item_id und slot vergibt
    ``bench.ingest.item_zeile`` (wie ``python -m bench.ingest`` im Testhaus)."""
    artikel, _ = laden(str(datei))
    geaendert = False
    for index, a in enumerate(artikel):
        if a.get("item_id") is None:
            a["item_id"] = item_zeile(a, index, datei.name)[0]
            geaendert = True
    if geaendert:
        datei = verzeichnis / "bestand-mit-item_id.json"
        datei.write_text(json.dumps(artikel, ensure_ascii=False), encoding="utf-8")
    return datei, item_zeilen(artikel, datei.name)


def bestand_laden(bestand: Path, verzeichnis: Path, url: str) -> None:
    """Im eigenen Prozess: Datei vorbereiten, raw_items anlegen und füllen."""
    _, zeilen = bestand_vorbereiten(bestand, verzeichnis)
    with psycopg.connect(url) as conn:
        conn.execute(RAW_ITEMS)
        items_eintragen(conn, zeilen)


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
        click.echo(f"Bestand: {bestand} ({anzahl} Items), Prozesse: {prozesse or kerne.nutzbar()}")
        click.echo("| Lauf | Sekunden | Spitze RSS (MB) | Bilanz |")
        click.echo("|---|---:|---:|---|")
        for name, (sekunden, spitze, bilanz) in ergebnisse:
            click.echo(f"| {name} | {zahl(sekunden, 2)} | {spitze:.0f} | {bilanz} |")


@click.command(cls=DeutscherBefehl)
@click.argument("bestand", type=click.Path(exists=True, dir_okay=False, path_type=Path), metavar="DATEI.json")
@click.option("--prozesse", type=click.IntRange(min=1), metavar="N", help="An auswahl.py weitergeben.")
def main(bestand: Path, prozesse: int | None) -> None:
    """Auf DATEI.json (Stapelformat) die Läufe der Stufe messen: Zeit und Spitzenspeicher je Lauf."""
    verzeichnis = Path(tempfile.mkdtemp(prefix="aw-bestand-"))
    try:
        messen(bestand.resolve(), prozesse, verzeichnis)
    finally:
        shutil.rmtree(verzeichnis, ignore_errors=True)


if __name__ == "__main__":
    main()
