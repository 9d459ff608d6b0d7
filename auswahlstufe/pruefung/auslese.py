"""Die Auslese: die N zweifelhaftesten Entscheidungen eines Laufs, ohne Ein- und Ausgabe.

Ein Lauf reicht jede Entscheidung an ``Stichprobe.beachte``; behalten werden
nur die N zweifelhaftesten (``regeln.zweifel``, ein Heap), der Speicher bleibt
also flach, wie groß der Bestand auch ist. Die Worker der Stufe
(``lauf/kodierung.py``) brauchen nur dieses Modul; CSV und Prüfseite schreibt
``stichprobe.py``.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

from auswahlstufe.regeln import Entscheidung, zweifel
from version import PRIORITAET


@dataclass(frozen=True)
class Fall:
    """Eine Entscheidung mit dem, was ein Mensch zum Prüfen braucht."""

    schluessel: str  # item_id, im Stapelbetrieb id oder Index des Artikels
    entscheidung: Entscheidung
    texte: Mapping[str, str | None]  # Rohtexte der bekannten Extraktoren
    info: Mapping[str, str] = field(default_factory=dict)  # z. B. url, titel


def kennung(eintrag: Mapping) -> str:
    """id oder item_id des Artikels als Text; leer, wenn er keine brauchbare hat."""
    for name in ("id", "item_id"):
        wert = eintrag.get(name)
        if isinstance(wert, str | int) and not isinstance(wert, bool):
            return str(wert)
    return ""


def schluessel(eintrag: Mapping, index: int) -> str:
    return kennung(eintrag) or f"[{index}]"


def fall_aus_artikel(eintrag: Mapping, index: int, entscheidung: Entscheidung, **info: str) -> Fall:
    """Der Fall eines Artikels im Stapelformat: die Texte der Kandidaten (was kein Text ist: None),
    dazu ``info`` und url und titel des Artikels."""
    extraktionen = eintrag.get("extractions")
    texte: dict[str, str | None] = {}
    if isinstance(extraktionen, Mapping):
        for name in PRIORITAET:
            kandidat = extraktionen.get(name)
            text = kandidat.get("text") if isinstance(kandidat, Mapping) else None
            texte[name] = text if isinstance(text, str) else None
    info |= {name: eintrag[name] for name in ("url", "titel") if isinstance(eintrag.get(name), str)}
    return Fall(schluessel(eintrag, index), entscheidung, texte, info)


class Stichprobe:
    """Behält die N zweifelhaftesten Fälle, in Zweifelsordnung."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._heap: list[tuple] = []
        self._zaehler = itertools.count()  # stabile Reihenfolge bei gleichem Zweifel

    def beachte(self, fall: Fall) -> None:
        # Heap mit dem am wenigsten zweifelhaften oben: jeder Teil des Schlüssels
        # negiert; bei gleichem Zweifel gilt der später gekommene als weniger zweifelhaft.
        fast_gleich, minus_wert, grund = zweifel(fall.entscheidung).schluessel()
        eintrag = (-fast_gleich, -minus_wert, -grund, -next(self._zaehler), fall)
        if len(self._heap) < self.n:
            heapq.heappush(self._heap, eintrag)
        elif eintrag > self._heap[0]:
            heapq.heapreplace(self._heap, eintrag)

    def faelle(self) -> list[Fall]:
        """Die behaltenen Fälle, zweifelhaftester zuerst."""
        return [e[-1] for e in sorted(self._heap, key=lambda e: e[:-1], reverse=True)]
