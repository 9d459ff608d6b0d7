"""Stichprobe: die zweifelhaftesten Entscheidungen eines Laufs zum Prüfen von Hand.

Ein Lauf reicht jede Entscheidung an ``Stichprobe.beachte``; behalten werden
nur die N zweifelhaftesten (ein Heap), der Speicher bleibt also flach, wie
groß der Bestand auch ist. ``schreiben`` legt die CSV-Datei im aktuellen
Verzeichnis an und gibt ihren Pfad zurück.
"""

from __future__ import annotations

import csv
import heapq
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from auswahl import Entscheidung, zweifel
from version import PRIORITAET

ANFANG_ZEICHEN = 200  # so viel Text je Kandidat in der CSV


@dataclass(frozen=True)
class Fall:
    """Eine Entscheidung mit dem, was ein Mensch zum Prüfen braucht."""

    schluessel: str  # item_id, im Stapelbetrieb id oder Index des Artikels
    entscheidung: Entscheidung
    texte: Mapping[str, str | None]  # Rohtexte der bekannten Extraktoren
    info: Mapping[str, str] = field(default_factory=dict)  # z. B. url, titel


class Stichprobe:
    """Behält die N zweifelhaftesten Fälle, in Zweifelsordnung."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._heap: list[tuple] = []
        self._zaehler = itertools.count()  # stabile Reihenfolge bei gleichem Zweifel

    def beachte(self, fall: Fall) -> None:
        # Heap der „am wenigsten zweifelhaften“ oben: Schlüssel negiert über den Rang.
        rang, marge = zweifel(fall.entscheidung)
        eintrag = (-rang, -marge, -next(self._zaehler), fall)
        if len(self._heap) < self.n:
            heapq.heappush(self._heap, eintrag)
        elif eintrag > self._heap[0]:
            heapq.heapreplace(self._heap, eintrag)

    def faelle(self) -> list[Fall]:
        """Die behaltenen Fälle, zweifelhaftester zuerst."""
        return [e[3] for e in sorted(self._heap, reverse=True)]


def dateiname(coder_version: str, zeitpunkt: datetime, endung: str) -> str:
    # '>' ist in Dateinamen lästig (Shell-Umleitung); sonst bleibt die Version lesbar.
    version = coder_version.replace(">", "-")
    return f"stichprobe-{version}-{zeitpunkt:%Y%m%dT%H%M%S}.{endung}"


def _zeile(rang: int, fall: Fall) -> dict[str, object]:
    e = fall.entscheidung
    zeile: dict[str, object] = {
        "rang": rang,
        "schluessel": fall.schluessel,
        "extraktor": e.extraktor,
        "regel": e.regel,
        "konsens": e.konsens,
        "marge": "" if e.marge is None else f"{e.marge:.4f}",
    }
    zeile.update(fall.info)
    for k in e.kandidaten:
        zeile[f"{k.extraktor}_klasse"] = k.klasse
        zeile[f"{k.extraktor}_shingles"] = k.shingles
        for mass in ("abdeckung", "stuetzung", "score"):
            wert = getattr(k, mass)
            zeile[f"{k.extraktor}_{mass}"] = "" if wert is None else f"{wert:.4f}"
        text = fall.texte.get(k.extraktor)
        zeile[f"{k.extraktor}_anfang"] = text[:ANFANG_ZEICHEN] if isinstance(text, str) else ""
    return zeile


def schreiben_csv(faelle: list[Fall], pfad: Path) -> Path:
    """Schreibt die Fälle als CSV (UTF-8, Komma, Kopfzeile)."""
    zeilen = [_zeile(rang, fall) for rang, fall in enumerate(faelle, 1)]
    spalten = ["rang", "schluessel", "extraktor", "regel", "konsens", "marge"]
    for zeile in zeilen:
        spalten += [s for s in zeile if s not in spalten]
    if not zeilen:  # auch eine leere Stichprobe hat eine Kopfzeile
        spalten += [f"{name}_{s}" for name in PRIORITAET for s in ("klasse", "shingles", "score")]
    with pfad.open("w", newline="", encoding="utf-8") as datei:
        schreiber = csv.DictWriter(datei, fieldnames=spalten)
        schreiber.writeheader()
        schreiber.writerows(zeilen)
    return pfad


def schreiben(
    stichprobe: Stichprobe,
    coder_version: str,
    *,
    verzeichnis: Path | None = None,
    zeitpunkt: datetime | None = None,
) -> Path:
    """Schreibt die Stichprobe nach ``stichprobe-<coder_version>-<zeit>.csv``; gibt den Pfad zurück."""
    zeitpunkt = zeitpunkt or datetime.now()
    verzeichnis = verzeichnis or Path.cwd()
    return schreiben_csv(stichprobe.faelle(), verzeichnis / dateiname(coder_version, zeitpunkt, "csv"))
