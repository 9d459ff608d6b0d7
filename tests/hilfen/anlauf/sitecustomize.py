"""Beim Start eines Laufs, den ein Test mit Haltepunkten oder hängenden Stapeln startet
(``prozesse.Halt.umgebung``, ``prozesse.haengen``): sie einrichten. Die Variablen gehen dabei aus der
Umgebung – Worker und der forkserver erben sie nicht. Scheitert das, endet der Lauf sofort (Exit 97),
statt ohne Halt weiterzulaufen."""

import os
import sys
import traceback

halt, haengen = os.environ.pop("AUSWAHL_HALT", None), os.environ.pop("AUSWAHL_HAENGEN", None)
if halt or haengen:
    try:
        from tests.hilfen import haltepunkte

        if halt:
            haltepunkte.einrichten(halt)
        if haengen:
            haltepunkte.haengen_einrichten(haengen)
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(97)
