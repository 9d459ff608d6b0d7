"""Haltepunkte für Tests: ein Lauf hält an einer genannten Stelle an, bis der Test ihn weiterlässt.

Fehlertests (ein Worker stirbt, der Server geht, ein Signal kommt) sollen den Lauf an einer
bestimmten Stelle treffen – nicht „ungefähr, wenn die Maschine schnell genug war“. Mit
``AUSWAHL_HALT=<punkt>:<n>:<datei>`` hält der Lauf, wenn er zum ``n``-ten Mal am Punkt
``punkt`` vorbeikommt: er legt ``<datei>.erreicht`` an (Inhalt: seine PID) und wartet, bis es
``<datei>.weiter`` gibt. Mehrere Haltepunkte stehen durch Kommas getrennt. Ein Signal beendet das Warten wie jedes andere (erstes: der Lauf
hört danach auf; zweites: sofort).

Die Punkte: ``gesperrt`` (Sperre genommen, Protokoll eingetragen, noch nichts gelesen),
``stapel`` (ein Stapel der Auswahl ist geschrieben), ``seite`` (eine Seite der Extraktion ist
extrahiert, noch nicht geschrieben), ``extraktion`` (ein Schreibstapel der Extraktion ist
geschrieben). Ohne die Variable kostet ein Punkt einen Vergleich.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

VARIABLE = "AUSWAHL_HALT"
SCHRITT = 0.05


class Haltepunkte:
    """Die Haltepunkte eines Laufs aus ``AUSWAHL_HALT`` (ohne: keine)."""

    def __init__(self, wert: str | None = None) -> None:
        wert = os.environ.get(VARIABLE, "") if wert is None else wert
        self.punkte: dict[tuple[str, int], Path] = {}
        for eintrag in filter(None, wert.split(",")):
            punkt, n, datei = eintrag.split(":", 2)
            self.punkte[(punkt, int(n))] = Path(datei)
        self._gezaehlt: Counter = Counter()

    def vorbei(self, punkt: str, weiter: Callable[[], bool] = lambda: False) -> None:
        """Der Lauf kommt an ``punkt`` vorbei; hält, wenn es ein genannter ist. ``weiter()``
        True (ein Signal kam) beendet das Warten."""
        if not self.punkte:
            return
        self._gezaehlt[punkt] += 1
        datei = self.punkte.get((punkt, self._gezaehlt[punkt]))
        if datei is None:
            return
        Path(f"{datei}.erreicht").write_text(str(os.getpid()))
        freigabe = Path(f"{datei}.weiter")
        while not freigabe.exists() and not weiter():
            time.sleep(SCHRITT)
