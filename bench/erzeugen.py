"""Synthetischer Bestand für die Benchmarks als Datei (der Erzeuger: auswahlstufe/referenz/erzeugen.py).

Aufruf::

    python -m bench.erzeugen -n 20000 --seed 1 -o bench/daten/bestand.json
    python -m bench.erzeugen --fuzz -o bench/daten/fuzz.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.einlesen.zeilen import Einlesebilanz, kandidaten
from auswahlstufe.referenz.erzeugen import artikel, fuzz


def kandidatenzeilen(eintraege: list[dict], name: str, bilanz: Einlesebilanz) -> dict[tuple[int, str], tuple]:
    """(item_id, extraktor) -> (text, fehler) für eine Liste von Artikeln (der letzte gilt), umgesetzt
    wie von ``--einlesen`` – für die Benchmarks, die einen Bestand ohne Datei laden."""
    zeilen: dict[tuple[int, str], tuple] = {}
    for index, eintrag in enumerate(eintraege):
        for paar, werte in kandidaten(eintrag, index, name, bilanz):
            if paar in zeilen:
                bilanz.doppelt += 1
            zeilen[paar] = werte
    return zeilen


@click.command(cls=DeutscherBefehl)
@click.option(
    "-n",
    "--anzahl",
    type=click.IntRange(min=0),
    default=20000,
    show_default=True,
    metavar="N",
    help="Zahl der Items.",
)
@click.option("--seed", type=int, default=1, show_default=True, metavar="N", help="Startwert.")
@click.option("--fuzz", "nur_randfaelle", is_flag=True, help="Statt des Bestands die Randfälle schreiben.")
@click.option(
    "-o", "--ausgabe", default="-", show_default=True, metavar="DATEI.json", help="Zieldatei, - für stdout."
)
def main(anzahl: int, seed: int, nur_randfaelle: bool, ausgabe: str) -> None:
    """Synthetischen Bestand im Stapelformat erzeugen (oder mit --fuzz die Randfälle)."""
    daten = fuzz(seed) if nur_randfaelle else list(artikel(anzahl, seed))
    if ausgabe == "-":
        json.dump(daten, sys.stdout, ensure_ascii=False)
    else:
        ziel = Path(ausgabe)
        ziel.parent.mkdir(parents=True, exist_ok=True)
        ziel.write_text(json.dumps(daten, ensure_ascii=False), encoding="utf-8")
        print(f"{len(daten)} Items nach {ziel}", file=sys.stderr)


if __name__ == "__main__":
    main()
