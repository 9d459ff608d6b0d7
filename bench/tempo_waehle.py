"""waehle gegen die Grundlinie: gleiche Entscheidungen, dann das Tempoverhältnis.

1. Prüft auf dem erzeugten Bestand und auf den Randfällen, dass
   ``regeln.waehle`` und ``bench.basis.waehle`` gleich entscheiden: Wahl,
   Regel, Konsensgröße, übergangene Namen und je Kandidat Klasse, Aktivität,
   Shingle-Zahl, Abdeckung, Stützung und Score (Gleitkommazahlen bitgleich).
2. Misst beide im selben Lauf auf einem Kern (CPU-Zeit des Prozesses),
   abwechselnd, mehrmals, und meldet das Minimum je Item und das Verhältnis. Absolute Zeiten schwanken mit
   der Maschine und ihrer Last, das Verhältnis kaum.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.tempo_waehle                    # 20000 Items, 3 Wiederholungen
    python -m bench.tempo_waehle -n 2000 -w 5
    python -m bench.tempo_waehle --datei bench/aeb/candidates.json -w 20
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import basis
from bench.erzeugen import artikel, fuzz
from bench.messen import abweichungen, bereinigen_der_wahl, laufzeit
from regeln import waehle


def messen(eingaben: list, wiederholungen: int) -> dict[str, float]:
    """Minimum über die Wiederholungen, abwechselnd gemessen, in Sekunden."""
    funktionen = {
        "basis": basis.waehle,
        "waehle": waehle,
        "waehle+bereinigen": bereinigen_der_wahl,
    }
    beste = dict.fromkeys(funktionen, float("inf"))
    for runde in range(wiederholungen):
        for name, funktion in funktionen.items():
            beste[name] = min(beste[name], laufzeit(funktion, eingaben))
        print(
            f"Runde {runde + 1}/{wiederholungen}: "
            + ", ".join(f"{n} {1000 * s / len(eingaben):.3f} ms" for n, s in beste.items()),
            file=sys.stderr,
        )
    return beste


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="waehle gegen die Grundlinie: Gleichheit und Tempo.")
    parser.add_argument("-n", "--anzahl", type=int, default=20000, help="erzeugte Items (Vorgabe 20000)")
    parser.add_argument("--seed", type=int, default=1, help="Startwert des Generators (Vorgabe 1)")
    parser.add_argument(
        "-w", "--wiederholungen", type=int, default=3, help="Messrunden, gemeldet das Minimum"
    )
    parser.add_argument("--ohne-pruefung", action="store_true", help="nur messen, nicht vergleichen")
    parser.add_argument(
        "--datei",
        type=Path,
        help="statt erzeugter Items eine Datei im Stapelformat (z. B. die 181 echten Seiten)",
    )
    args = parser.parse_args(argv)

    if args.datei:
        items = json.loads(args.datei.read_text(encoding="utf-8"))
    else:
        print(f"erzeuge {args.anzahl} Items (seed {args.seed}) …", file=sys.stderr)
        items = list(artikel(args.anzahl, args.seed))
    randfaelle = fuzz(args.seed)
    eingaben = [item["extractions"] for item in items]
    kb = sum(len(k["text"]) for x in eingaben for k in x.values() if isinstance(k.get("text"), str)) / 1024
    quelle = str(args.datei) if args.datei else f"erzeugt, seed {args.seed}"

    if not args.ohne_pruefung:
        for name, menge in (("Bestand", items), ("Randfälle", randfaelle)):
            falsch = abweichungen(menge)
            print(f"{name}: {len(menge)} Items, {len(falsch)} Abweichungen", file=sys.stderr)
            if falsch:
                for nummer, soll, ist in falsch[:3]:
                    print(f"  Item {nummer}:\n    basis  {soll}\n    waehle {ist}", file=sys.stderr)
                return 1

    zeiten = messen(eingaben, args.wiederholungen)
    n = len(eingaben)
    print(
        f"{n} Items ({quelle}), {kb / n:.1f} KB Kandidatentext je Item, "
        f"Minimum aus {args.wiederholungen} Runden, ein Kern"
    )
    print("| Messung | ms je Item | Verhältnis zur Grundlinie |")
    print("|---|---:|---:|")
    for name, sekunden in zeiten.items():
        print(f"| {name} | {1000 * sekunden / n:.3f} | {zeiten['basis'] / sekunden:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
