"""Gemeinsame Werkzeuge der Benchmarks (und des Rauchtests test_bench.py).

Kein Benchmark selbst: hier stehen der Zeitnehmer, die Arbeit „Wahl und
Lesetext der Wahl“ und der Vergleich mit der Grundlinie (bench.basis), damit
Benchmarks und Tests sie importieren, statt einander.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable

from bench import basis
from normalisierung import bereinigen
from regeln import Entscheidung, waehle


def als_dict(e: Entscheidung) -> dict:
    """Eine Entscheidung in der Form der Grundlinie."""
    return {
        "extraktor": e.extraktor,
        "regel": e.regel,
        "konsens": e.konsens,
        "unbekannt": e.unbekannt,
        "kandidaten": e.metriken(),
    }


def abweichungen(items: Iterable[dict]) -> list[tuple[object, dict, dict]]:
    """Items, bei denen waehle anders entscheidet als die Grundlinie.

    ``repr`` vergleicht Gleitkommazahlen bitgenau (kürzeste eindeutige
    Darstellung) und unterscheidet 0 von 0.0.
    """
    falsch = []
    for item in items:
        soll = basis.waehle(item["extractions"])
        ist = als_dict(waehle(item["extractions"]))
        if repr(soll) != repr(ist):
            falsch.append((item.get("id"), soll, ist))
    return falsch


def laufzeit(funktion: Callable[[object], object], eingaben: list) -> float:
    """CPU-Sekunden dieses Prozesses für alle Eingaben, ohne Speicherbereinigung.

    Prozesszeit statt Wanduhr: die zwei Kerne teilen sich mehrere Prozesse,
    und Wartezeit auf den Kern soll nicht als Rechenzeit zählen.
    """
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        for eingabe in eingaben:
            funktion(eingabe)
        return time.process_time() - start
    finally:
        gc.enable()


def bereinigen_der_wahl(extraktionen: object) -> str:
    """Was der Backfill je Item rechnet: Wahl und Lesetext der Wahl."""
    e = waehle(extraktionen)
    eintrag = extraktionen.get(e.extraktor) if isinstance(extraktionen, dict) else None
    text = eintrag.get("text") if isinstance(eintrag, dict) else None
    return bereinigen(text) if isinstance(text, str) else ""
