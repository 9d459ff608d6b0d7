"""Was ein Worker je Item rechnet, Teil für Teil: CPU-Zeit in µs je Item.

Baut die Aufträge genau so, wie ``kodierung.vorsortieren`` sie an die Worker gibt
(Texte als UTF-8-Bytes), und misst dann die Teile von ``kodierung.stapel_kodieren``
einzeln – dekodieren, ``waehle``, ``bereinigen`` der Wahl, Metriken als JSON,
Ergebnissumme, COPY-Zeile – und das Ganze. Minimum aus den Runden, ein Prozess.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.teile_stufe                 # 3000 Items, 5 Runden
    python -m bench.teile_stufe -n 300 -r 1     # Rauchtest
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.einlesen.zeilen import Einlesebilanz
from auswahlstufe.lauf import kodierung
from auswahlstufe.referenz.erzeugen import artikel
from auswahlstufe.regeln import waehle
from bench import optionen
from bench.erzeugen import kandidatenzeilen
from bench.messen import laufzeit
from normalisierung import bereinigen
from version import CODER_VERSION, PRIORITAET


def auftraege(n: int, seed: int) -> list[tuple]:
    """Aufträge wie aus ``vorsortieren``: (item_id, alt, alt_ergebnis, summe, namen, Bytes, Fehler)."""
    zeilen = kandidatenzeilen(list(artikel(n, seed)), "bench.erzeugen", Einlesebilanz())
    je_item: dict[int, list] = {}
    for (item_id, name), (text, fehler) in sorted(zeilen.items()):
        if name in PRIORITAET:
            je_item.setdefault(item_id, []).append((name, text, fehler))
    return [
        (
            item_id,
            None,
            None,
            bytes(32),
            [name for name, _, _ in kandidaten],
            [text.encode("utf-8") if text is not None else None for _, text, _ in kandidaten],
            [fehler for _, _, fehler in kandidaten],
        )
        for item_id, kandidaten in je_item.items()
    ]


def messen(funktion: Callable[[object], object], eingaben: list, runden: int) -> float:
    """Beste CPU-Zeit aus den Runden, gemessen mit ``bench.messen.laufzeit``."""
    return min(laufzeit(funktion, eingaben) for _ in range(runden))


@click.command(cls=DeutscherBefehl)
@optionen.anzahl(3000)
@optionen.seed
@click.option(
    "-r",
    "--runden",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    metavar="N",
    help="Runden, das Minimum zählt.",
)
def main(anzahl: int, seed: int, runden: int) -> None:
    """Die Teile von kodierung.stapel_kodieren, je Item: CPU-Zeit in µs."""
    auftrag = auftraege(anzahl, seed)
    texte = [[t.decode("utf-8") if t is not None else None for t in roh] for *_, roh, _ in auftrag]
    eingaben = [
        {n: {"text": t, "error": f} for n, t, f in zip(a[4], ts, a[6], strict=True)}
        for a, ts in zip(auftrag, texte, strict=True)
    ]
    entscheidungen = [waehle(e) for e in eingaben]
    gewaehlt = [(e.get(d.extraktor) or {}).get("text") for e, d in zip(eingaben, entscheidungen, strict=True)]
    lesetexte = [bereinigen(t) if isinstance(t, str) else None for t in gewaehlt]
    metriken = [d.metriken_json() for d in entscheidungen]
    zeilen = list(zip(entscheidungen, metriken, lesetexte, strict=True))

    # Je Teil: Funktion je Item und ihre Eingaben.
    teile: dict[str, tuple[Callable[[object], object], list]] = {
        "UTF-8 dekodieren": (lambda a: [t.decode("utf-8") if t is not None else None for t in a[5]], auftrag),
        "waehle": (waehle, eingaben),
        "bereinigen der Wahl": (bereinigen, [t for t in gewaehlt if isinstance(t, str)]),
        "Metriken als JSON": (lambda d: d.metriken_json(), entscheidungen),
        "Ergebnissumme": (
            lambda z: kodierung.ergebnissumme(z[0].extraktor, z[0].regel, str(z[0].konsens), *z[1:]),
            zeilen,
        ),
        "COPY-Zeile": (
            lambda z: kodierung.copy_zeile(
                1, CODER_VERSION, z[0].extraktor, z[0].regel, z[0].konsens, *z[1:], bytes(32), bytes(32)
            ),
            zeilen,
        ),
    }
    gesamt = messen(lambda a: kodierung.stapel_kodieren(a, CODER_VERSION, None), [auftrag], runden)
    je_item = 1e6 / len(auftrag)
    print(f"{len(auftrag)} Items (seed {seed}), CPU-Zeit je Item, Minimum aus {runden} Runden")
    print("| Teil | µs je Item | Anteil |")
    print("|---|---:|---:|")
    for name, (funktion, eingaben_des_teils) in teile.items():
        sekunden = messen(funktion, eingaben_des_teils, runden)
        print(f"| {name} | {sekunden * je_item:.1f} | {sekunden / gesamt:.0%} |")
    print(f"| `stapel_kodieren` ganz | {gesamt * je_item:.1f} | 100% |")


if __name__ == "__main__":
    main()
