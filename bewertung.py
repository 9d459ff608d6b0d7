"""Güte gegen eine Handreferenz und Urteile von Hand auswerten; das Maß steht in
``auswahlstufe/pruefung/bewertung.py``.

    .venv/bin/python bewertung.py AUSWAHL.json WAHRHEIT.json
    .venv/bin/python bewertung.py --urteile URTEILE.json
"""

import auswahlstufe.pakete  # noqa: F401 – zuerst: das richtige Python? (sonst Exit 4, ein Satz)

from auswahlstufe.pruefung.bewertung import cli

if __name__ == "__main__":
    cli()
