"""Bau-Backend: setuptools, aber nur editierbar (``pip install -e .`` im Klon).

Die gemeinsamen Dateien des Hauses stehen als Module mit allgemeinen Namen an
der Wurzel (``db``, ``version``, ``normalisierung`` …), und die Stufe liest
``migrations/`` und ``rollen/`` neben dem Code. Ein Wheel legte diese Namen in
site-packages, wo sie mit anderen Paketen zusammenstoßen, und ohne die
Migrationen meldete ``check_db.py --migrieren`` „alles angewandt“. Deshalb verweigert dieses Backend jedes Wheel mit einer
klaren Meldung; der Weg ist der Klon mit ``pip install -e .`` (docs/betrieb.md).
Alles andere (editierbar, sdist) reicht es an ``setuptools.build_meta`` durch.
"""

from __future__ import annotations

import sys

from setuptools.build_meta import *  # noqa: F403 – die übrigen Hooks unverändert
from setuptools.build_meta import __all__  # noqa: F401

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
