"""Haltepunkte: ein Lauf der Stufe hält an einer genannten Stelle an, bis der Test ihn weiterlässt.

Fehlertests (ein Worker stirbt, der Server geht, ein Signal kommt) sollen den Lauf an einer
bestimmten Stelle treffen – nicht „ungefähr, wenn die Maschine schnell genug war“. Der Code der
Stufe weiß davon nichts: ``prozesse.Halt.umgebung`` setzt ``AUSWAHL_HALT=<punkt>:<n>:<datei>`` und
legt ``anlauf/`` auf ``PYTHONPATH``; dessen ``sitecustomize`` ruft beim Start des Laufs
``einrichten``, und das legt um zwei Funktionen der Stufe einen Halt. Der Lauf hält, wenn er zum
``n``-ten Mal am Punkt ``punkt`` vorbeikommt: er legt ``<datei>.erreicht`` an (Inhalt: seine PID)
und wartet, bis es ``<datei>.weiter`` gibt. Ein Signal beendet das Warten wie jedes andere
(erstes: der Lauf hört danach auf; zweites: sofort).

Die Punkte: ``stapel`` (ein Stapel der Auswahl ist geschrieben; der Fortschritt zählt ihn erst
danach) und ``seite`` (eine Seite der Extraktion ist extrahiert, noch nicht geschrieben).

Dazu ``AUSWAHL_HAENGEN=<item>,<item>…`` (``prozesse.haengen``): ein Stapel der Auswahl mit einem
dieser Items wird im Worker nie fertig – wie ein Extraktor in einer Endlosschleife, nur ohne
Prozessorzeit. Anders als ein angehaltener Worker (SIGSTOP) hängt er beim Rechnen, nie mitten im
Senden eines Ergebnisses.
"""

from __future__ import annotations

import functools
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

VARIABLE = "AUSWAHL_HALT"
HAENGEN = "AUSWAHL_HAENGEN"
SCHRITT = 0.05


class Haltepunkte:
    """Die Haltepunkte eines Laufs aus dem Wert von ``AUSWAHL_HALT`` (Einträge durch Kommas)."""

    def __init__(self, wert: str) -> None:
        self.punkte: dict[tuple[str, int], Path] = {}
        for eintrag in filter(None, wert.split(",")):
            punkt, n, datei = eintrag.split(":", 2)
            self.punkte[(punkt, int(n))] = Path(datei)
        self._gezaehlt: Counter = Counter()

    def vorbei(self, punkt: str, abgebrochen: Callable[[], bool]) -> None:
        """Der Lauf kommt an ``punkt`` vorbei; hält, wenn es ein genannter ist, bis zur Freigabe
        oder einem Signal (``abgebrochen()``)."""
        self._gezaehlt[punkt] += 1
        datei = self.punkte.get((punkt, self._gezaehlt[punkt]))
        if datei is None:
            return
        Path(f"{datei}.erreicht").write_text(str(os.getpid()))
        freigabe = Path(f"{datei}.weiter")
        while not freigabe.exists() and not abgebrochen():
            time.sleep(SCHRITT)


def einrichten(wert: str) -> None:
    """Die Halte um die Funktionen der Stufe legen (im Hauptprozess des Laufs, vor seinem Start)."""
    from auswahlstufe.extraktion import stufe as extraktion
    from auswahlstufe.lauf import stufe as auswahl

    halt = Haltepunkte(wert)
    abschliessen, seiten_extrahieren = auswahl._abschliessen, extraktion._seiten_extrahieren

    @functools.wraps(abschliessen)
    def stapel(s, *args) -> None:
        abschliessen(s, *args)
        halt.vorbei("stapel", lambda: s.k.abbruch.gesetzt)

    @functools.wraps(seiten_extrahieren)
    def je_seite(k, eintraege: Iterator, arbeit) -> None:
        def seiten() -> Iterator:
            for eintrag in eintraege:
                halt.vorbei("seite", lambda: k.abbruch.gesetzt)
                yield eintrag

        seiten_extrahieren(k, seiten(), arbeit)

    auswahl._abschliessen, extraktion._seiten_extrahieren = stapel, je_seite


def haengen_einrichten(wert: str) -> None:
    """Stapel mit einem der Items in ``wert`` hängen (vor dem Start der Worker: ``fork`` gibt ihnen
    die ersetzte Funktion mit, und pickle findet sie unter ihrem Namen)."""
    from auswahlstufe.lauf import kodierung
    from auswahlstufe.lauf import stufe as auswahl

    items = {int(i) for i in wert.split(",")}
    stapel_kodieren = kodierung.stapel_kodieren

    @functools.wraps(stapel_kodieren)
    def haengend(auftrag, *args):
        if any(zeile[0] in items for zeile in auftrag):
            while True:
                time.sleep(60)
        return stapel_kodieren(auftrag, *args)

    kodierung.stapel_kodieren = auswahl.stapel_kodieren = haengend
