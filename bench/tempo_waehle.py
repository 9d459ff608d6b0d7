"""waehle gegen die Grundlinie: gleiche Entscheidungen, dann das Tempoverhältnis.

1. Prüft auf dem erzeugten Bestand und auf den Randfällen, dass
   ``regeln.waehle`` und ``auswahlstufe.referenz.grundlinie.waehle`` gleich entscheiden: Wahl,
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

import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.referenz import grundlinie as basis
from auswahlstufe.referenz.erzeugen import artikel, fuzz
from auswahlstufe.referenz.grundlinie import abweichungen
from auswahlstufe.regeln import waehle
from bench import optionen
from bench.messen import bereinigen_der_wahl, laufzeit


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


@click.command(cls=DeutscherBefehl)
@optionen.anzahl(20000)
@optionen.seed
@click.option(
    "-w",
    "--wiederholungen",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    metavar="N",
    help="Messrunden, gemeldet das Minimum.",
)
@click.option("--ohne-pruefung", is_flag=True, help="Nur messen, nicht vergleichen.")
@click.option(
    "--datei",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="DATEI.json",
    help="Statt erzeugter Items eine Datei im Stapelformat (z. B. die 181 echten Seiten).",
)
def main(anzahl: int, seed: int, wiederholungen: int, ohne_pruefung: bool, datei: Path | None) -> None:
    """waehle gegen die Grundlinie: Gleichheit und Tempo."""
    if datei:
        items = json.loads(datei.read_text(encoding="utf-8"))
    else:
        print(f"erzeuge {anzahl} Items (seed {seed}) …", file=sys.stderr)
        items = list(artikel(anzahl, seed))
    randfaelle = fuzz(seed)
    eingaben = [item["extractions"] for item in items]
    kb = sum(len(k["text"]) for x in eingaben for k in x.values() if isinstance(k.get("text"), str)) / 1024
    quelle = str(datei) if datei else f"erzeugt, seed {seed}"

    if not ohne_pruefung:
        for name, menge in (("Bestand", items), ("Randfälle", randfaelle)):
            falsch = abweichungen(menge)
            print(f"{name}: {len(menge)} Items, {len(falsch)} Abweichungen", file=sys.stderr)
            if falsch:
                for nummer, soll, ist in falsch[:3]:
                    print(f"  Item {nummer}:\n    basis  {soll}\n    waehle {ist}", file=sys.stderr)
                sys.exit(1)

    zeiten = messen(eingaben, wiederholungen)
    n = len(eingaben)
    print(
        f"{n} Items ({quelle}), {kb / n:.1f} KB Kandidatentext je Item, "
        f"Minimum aus {wiederholungen} Runden, ein Kern"
    )
    print("| Messung | ms je Item | Verhältnis zur Grundlinie |")
    print("|---|---:|---:|")
    for name, sekunden in zeiten.items():
        print(f"| {name} | {1000 * sekunden / n:.3f} | {zeiten['basis'] / sekunden:.2f}× |")


if __name__ == "__main__":
    main()
