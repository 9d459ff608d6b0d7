"""Wohin die Zeit geht: cProfile über Grundlinie und waehle auf erzeugten Items.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.profil -n 3000
    python -m bench.profil -n 3000 --nur waehle --zeilen 20

cProfile verlangsamt kurze Python-Funktionen stärker als C-Aufrufe; die Anteile
sind ein Wegweiser, gemessen wird mit bench.tempo_waehle.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.referenz import grundlinie as basis
from auswahlstufe.referenz.erzeugen import artikel
from auswahlstufe.regeln import waehle
from bench import optionen


@click.command(cls=DeutscherBefehl)
@optionen.anzahl(3000)
@optionen.seed
@click.option("--nur", type=click.Choice(["basis", "waehle"]), help="Nur eine der beiden Funktionen.")
@click.option(
    "--zeilen",
    type=click.IntRange(min=1),
    default=12,
    show_default=True,
    metavar="N",
    help="Zeilen je Profil.",
)
def main(anzahl: int, seed: int, nur: str | None, zeilen: int) -> None:
    """cProfile über Grundlinie und waehle auf erzeugten Items."""
    eingaben = [item["extractions"] for item in artikel(anzahl, seed)]
    funktionen = {"basis": basis.waehle, "waehle": waehle}
    for name, funktion in funktionen.items():
        if nur and name != nur:
            continue
        profil = cProfile.Profile()
        profil.enable()
        for eingabe in eingaben:
            funktion(eingabe)
        profil.disable()
        print(f"## {name}: {anzahl} Items, nach Eigenzeit")
        pstats.Stats(profil, stream=sys.stdout).strip_dirs().sort_stats("tottime").print_stats(zeilen)


if __name__ == "__main__":
    main()
