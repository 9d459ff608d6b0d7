"""Installation (Issue 10.3): nur editierbar im Klon; ein Wheel wird klar verweigert.

Gewählter Weg: ``pip install -e .`` im Klon (der Hausweg). ``pip install .``
oder ``pip wheel .`` bricht mit deutscher Meldung ab, bevor etwas gebaut wird
(paketbau.py) – so landen weder allgemeine Modulnamen (``cli``, ``db`` …) in
site-packages noch eine Stufe ohne ihre Migrationen.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib

from auswahlstufe import paketbau
from auswahlstufe.lauf import migrationen
from tests.testhilfen import PROJEKT

# Module im Klon, die kein Teil des Pakets sind: Tests, ihre Hilfen, das Bau-Backend.
KEIN_PAKET = {"conftest", "testhilfen", "paketbau"}


def test_wheel_wird_mit_klarer_meldung_verweigert(tmp_path):
    """Echt: pip baut in seiner eigenen Umgebung (holt setuptools vom Paketindex) und ruft das Backend."""
    lauf = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(PROJEKT)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert lauf.returncode != 0, lauf.stdout + lauf.stderr
    assert "lässt sich nicht als Wheel installieren" in lauf.stdout + lauf.stderr, lauf.stdout + lauf.stderr
    assert "pip install -e ." in lauf.stdout + lauf.stderr
    assert list(tmp_path.glob("*.whl")) == []


def test_backend_baut_editierbar_und_sdist_wie_setuptools():
    from setuptools import build_meta

    assert paketbau.build_editable is build_meta.build_editable
    assert paketbau.build_sdist is build_meta.build_sdist
    assert paketbau.build_wheel is not build_meta.build_wheel


def test_editierbar_findet_die_migrationen_im_klon():
    assert migrationen.VERZEICHNIS == PROJEKT / "migrations"
    assert migrationen.migrationsdateien()


def test_jedes_produktmodul_steht_in_py_modules():
    """Sonst findet der Einstieg ``wurzelwerk-auswahl`` außerhalb des Klons ein Modul nicht."""
    module = set(tomllib.loads((PROJEKT / "pyproject.toml").read_text())["tool"]["setuptools"]["py-modules"])
    im_klon = {p.stem for p in PROJEKT.glob("*.py") if not p.name.startswith("test_")} - KEIN_PAKET
    assert module == im_klon
