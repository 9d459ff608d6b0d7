"""Bau-Backend: setuptools, aber nur editierbar (``pip install -e .`` im Klon).

Jedes Wheel wird mit einer klaren Meldung verweigert, alles andere (editierbar, sdist) geht an
``setuptools.build_meta``; gefiltert wird genau die eine Information „Editable installation. …“
von setuptools, jede andere Warnung bleibt sichtbar. Warum: docs/betrieb.md, „Installation: nur
aus dem Klon“.
"""

from __future__ import annotations

import sys
import warnings

from setuptools.build_meta import *  # noqa: F403 – die übrigen Hooks unverändert
from setuptools.build_meta import __all__  # noqa: F401

# Die Information von setuptools zu jeder editierbaren Installation ohne src/ (Modulkopf);
# re.match gegen den Anfang der Meldung, die Sterne dazwischen wie setuptools sie setzt.
EDITIERBAR_HINWEIS = r"Editable installation\.\s+!!\s+\*+\s+Please be careful with folders in your working"
warnings.filterwarnings("ignore", message=EDITIERBAR_HINWEIS, category=UserWarning)

MELDUNG = (
    "wurzelwerk-auswahl lässt sich nicht als Wheel installieren (pip install . oder pip wheel .): "
    "die Stufe läuft nur aus ihrem Klon, mit den Migrationen daneben. Im Klon: "
    "python3 -m venv .venv && .venv/bin/pip install -e . (siehe docs/betrieb.md)."
)


def _verweigern(*_args, **_kwargs):
    print(f"Fehler: {MELDUNG}", file=sys.stderr)
    raise SystemExit(4)


get_requires_for_build_wheel = _verweigern
prepare_metadata_for_build_wheel = _verweigern
build_wheel = _verweigern
