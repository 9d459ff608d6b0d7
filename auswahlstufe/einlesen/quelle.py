"""Was die beiden Durchgänge von ``--einlesen DATEI.json`` lesen."""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from auswahlstufe.jsoneingabe import STDIO, STUECK, lesen


@contextlib.contextmanager
def zweimal_lesbar(datei: str) -> Iterator[str]:
    """Ein Pfad, der sich zweimal lesen lässt: die Datei selbst oder, für stdin,
    eine FIFO oder <(…), eine temporäre Kopie auf der Platte (nicht im Speicher)."""
    if datei != STDIO and Path(datei).is_file():
        yield datei
        return
    try:
        quelle = sys.stdin.buffer if datei == STDIO else open(datei, "rb")  # noqa: SIM115
    except OSError:
        lesen(datei)  # dieselbe Meldung wie sonst (gibt es nicht, nicht lesbar …)
        raise
    with tempfile.NamedTemporaryFile(prefix="aw-einlesen-", suffix=".json") as kopie:
        with quelle if datei != STDIO else contextlib.nullcontext():
            shutil.copyfileobj(quelle, kopie, STUECK)
        kopie.flush()
        yield kopie.name
