"""Bau-Backend: setuptools, aber nur editierbar (``pip install -e .`` im Klon).

Die gemeinsamen Dateien des Hauses stehen als Module mit allgemeinen Namen an
der Wurzel (``db``, ``version``, ``normalisierung`` …), und die Stufe liest
``migrations/`` und ``rollen/`` neben dem Code. Ein Wheel legte diese Namen in
site-packages, wo sie mit anderen Paketen zusammenstoßen, und ohne die
Migrationen meldete ``check_db.py --migrieren`` „alles angewandt“. Deshalb verweigert dieses Backend jedes Wheel mit einer
klaren Meldung; der Weg ist der Klon mit ``pip install -e .`` (docs/betrieb.md).
Alles andere (editierbar, sdist) reicht es an ``setuptools.build_meta`` durch.

Eine Meldung von setuptools fällt dabei weg: bei jeder editierbaren Installation aus einem Klon
ohne ``src/`` meldet es „Editable installation. … Please be careful with folders in your working
directory with the same name as your package …“ als Warnung (``InformationOnly``), und ein pip,
das Warnungen des Backends weiterreicht, druckt sie als englischen Block (``BuildBackendWarning``).
Sie ist eine Information ohne Schritt für den Betreiber: die Module an der Wurzel *sind* die des
Klons. Keine Einstellung in pyproject.toml vermeidet sie (sie hängt an der Art der Installation,
nicht an einer veralteten Angabe); darum filtert dieses Backend genau diese eine – jede andere
Warnung von setuptools bleibt sichtbar.
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
