"""Beim Start eines Laufs, den ein Test mit Haltepunkten startet (``prozesse.Halt.umgebung``):
die Halte einrichten. Die Variable geht dabei aus der Umgebung – Worker und der forkserver
erben sie nicht."""

import os

if wert := os.environ.pop("AUSWAHL_HALT", None):
    from tests.hilfen.haltepunkte import einrichten

    einrichten(wert)
