"""Wohin die Zeit geht: cProfile über Grundlinie und waehle auf erzeugten Items.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.profil -n 3000
    python -m bench.profil -n 3000 --nur waehle --zeilen 20

cProfile verlangsamt kurze Python-Funktionen stärker als C-Aufrufe; die Anteile
sind ein Wegweiser, gemessen wird mit bench.tempo_waehle.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import basis
from bench.erzeugen import artikel
from regeln import waehle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="cProfile über Grundlinie und waehle.")
    parser.add_argument("-n", "--anzahl", type=int, default=3000, help="erzeugte Items (Vorgabe 3000)")
    parser.add_argument("--seed", type=int, default=1, help="Startwert des Generators (Vorgabe 1)")
    parser.add_argument("--nur", choices=("basis", "waehle"), help="nur eine der beiden Funktionen")
    parser.add_argument("--zeilen", type=int, default=12, help="Zeilen je Profil (Vorgabe 12)")
    args = parser.parse_args(argv)

    eingaben = [item["extractions"] for item in artikel(args.anzahl, args.seed)]
    funktionen = {"basis": basis.waehle, "waehle": waehle}
    for name, funktion in funktionen.items():
        if args.nur and name != args.nur:
            continue
        profil = cProfile.Profile()
        profil.enable()
        for eingabe in eingaben:
            funktion(eingabe)
        profil.disable()
        print(f"## {name}: {args.anzahl} Items, nach Eigenzeit")
        pstats.Stats(profil, stream=sys.stdout).strip_dirs().sort_stats("tottime").print_stats(args.zeilen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
