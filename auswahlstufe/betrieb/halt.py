"""Haltepunkte für Tests: ein Lauf hält an einer genannten Stelle an, bis der Test ihn weiterlässt.

Fehlertests (ein Worker stirbt, der Server geht, ein Signal kommt) sollen den Lauf an einer
bestimmten Stelle treffen – nicht „ungefähr, wenn die Maschine schnell genug war“. Mit
``AUSWAHL_HALT=<punkt>:<n>:<datei>`` hält der Lauf, wenn er zum ``n``-ten Mal am Punkt
``punkt`` vorbeikommt: er legt ``<datei>.erreicht`` an (Inhalt: seine PID) und wartet, bis es
``<datei>.weiter`` gibt. Ein Signal beendet das Warten wie jedes andere (erstes: der Lauf
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
        self.punkt, self.n, self.datei = "", 0, Path()
        self._gezaehlt: Counter = Counter()
        if wert:
            punkt, n, datei = wert.split(":", 2)
            self.punkt, self.n, self.datei = punkt, int(n), Path(datei)

    def vorbei(self, punkt: str, weiter: Callable[[], bool] = lambda: False) -> None:
        """Der Lauf kommt an ``punkt`` vorbei; hält, wenn es der genannte ist. ``weiter()``
        True (ein Signal kam) beendet das Warten."""
        if punkt != self.punkt:
            return
        self._gezaehlt[punkt] += 1
        if self._gezaehlt[punkt] != self.n:
            return
        Path(f"{self.datei}.erreicht").write_text(str(os.getpid()))
        freigabe = Path(f"{self.datei}.weiter")
        while not freigabe.exists() and not weiter():
            time.sleep(SCHRITT)
