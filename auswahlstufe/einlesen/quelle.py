"""Was die beiden Durchgänge von ``--einlesen DATEI.json`` lesen – entschieden, bevor gelesen wird.

Zwei Durchgänge brauchen Bytes, die sich zweimal lesen lassen. Eine gewöhnliche Datei
(auch hinter einem Link) lesen beide selbst. stdin, eine FIFO, ``<(…)`` oder ein Gerät
geben ihre Bytes nur einmal: sie gehen zuerst ganz in eine temporäre Kopie auf der Platte
(nicht in den Speicher), und beide Durchgänge lesen die Kopie. Die Kopie verschwindet mit
dem Ende des Einlesens, auch nach einem Fehler.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from auswahlstufe.jsoneingabe import STDIO, STUECK, lesefehler


def nur_einmal_lesbar(datei: str) -> bool:
    """Gibt ``datei`` ihre Bytes nur einmal? Alles außer einer gewöhnlichen Datei: stdin,
    FIFO, ``<(…)``, Gerät – und was es nicht gibt (das sagt dann ``_oeffnen``)."""
    return datei == STDIO or not Path(datei).is_file()


def zweimal_lesbar(datei: str) -> contextlib.AbstractContextManager[str]:
    """Ein Pfad, den beide Durchgänge lesen: die Datei selbst oder eine Kopie (``nur_einmal_lesbar``)."""
    return _kopie(datei) if nur_einmal_lesbar(datei) else contextlib.nullcontext(datei)


@contextlib.contextmanager
def _kopie(datei: str) -> Iterator[str]:
    quelle = _oeffnen(datei)
    with tempfile.NamedTemporaryFile(prefix="aw-einlesen-", suffix=".json") as kopie:
        with quelle as strom:
            shutil.copyfileobj(strom, kopie, STUECK)
        kopie.flush()
        yield kopie.name


def _oeffnen(datei: str) -> contextlib.AbstractContextManager[BinaryIO]:
    """stdin (bleibt offen) oder die Datei; lässt sie sich nicht öffnen, derselbe Satz wie
    beim Lesen im Stapelbetrieb (gibt es nicht, ein Verzeichnis, nicht lesbar)."""
    if datei == STDIO:
        return contextlib.nullcontext(sys.stdin.buffer)
    try:
        return open(datei, "rb")  # schließt _kopie
    except OSError as fehler:
        raise lesefehler(datei, fehler) from None
