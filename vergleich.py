"""Zwei Fassungen der Auswahl vergleichen: wo eine Variante anders wählt; der Vergleich steht in
``auswahlstufe/pruefung/vergleich.py``.

    .venv/bin/python vergleich.py KANDIDATEN.json --variante k4:0.03
    .venv/bin/python vergleich.py --datenbank GRUNDLAGE VARIANTE [--hoechstens N]
"""

import auswahlstufe.pakete  # noqa: F401 – zuerst: das richtige Python? (sonst Exit 4, ein Satz)

from auswahlstufe.pruefung.vergleich import cli

if __name__ == "__main__":
    cli()
