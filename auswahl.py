"""wurzelwerk-auswahl: der Einstieg von der Kommandozeile.

``.venv/bin/python auswahl.py --help`` zeigt alle Betriebsarten; installiert heißt
derselbe Befehl ``wurzelwerk-auswahl``, und so nennt er sich in Hilfe und Fehlern. Die Regeln stehen in
``regeln.py``, die Kommandozeile in ``cli.py``; dieses Skript startet nur.
"""

import auswahlstufe.pakete  # noqa: F401 – zuerst: das richtige Python? (sonst Exit 4, ein Satz)

from auswahlstufe.cli import BEFEHL, cli

if __name__ == "__main__":
    cli(prog_name=BEFEHL)
