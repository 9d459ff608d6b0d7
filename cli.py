"""Der Befehl ``wurzelwerk-auswahl`` einer Installation vor 2.0.

Installationen vor 2.0 schrieben ``.venv/bin/wurzelwerk-auswahl`` so, dass er ``cli:cli`` ruft –
ein Modul an dieser Stelle. Nach ``git pull`` ohne ``pip install -e .`` findet der alte Befehl
hier den Weg zur Prüfung der Installation (``auswahlstufe.pakete``): statt eines
``ModuleNotFoundError`` ein Satz mit dem Befehl, der es behebt, und Exit 4. Neue Installationen
rufen ``auswahlstufe.cli:cli`` direkt.
"""

import sys
from pathlib import Path

# Der alte Befehl kennt das Paket auswahlstufe nicht (es kam später): den Klon in den Pfad.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import auswahlstufe.pakete  # noqa: F401 – prüft die Installation (sonst Exit 4, ein Satz)

from auswahlstufe.cli import cli  # noqa: F401
