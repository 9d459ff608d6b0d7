"""Stapelmodus der Extraktion: ``auswahl.py --extrahieren SEITEN.json`` als echter Unterprozess."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fehler import EXIT_AUFRUF, EXIT_EINGABE
from regeln import waehle

HIER = Path(__file__).resolve().parent
AEB = HIER / "bench" / "aeb"
IDS = [
    "0ec95c7261d122f304728e90c983450ef1ce1e0b423546835c397d50aaf0d0f2",  # koreanisch
    "042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856",
    "85439e26c41c75901820d01a13e8cea7836abb58635ea3986f71a163ab0311d3",  # japanisch
]


def auswahl(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(HIER / "auswahl.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def veroeffentlicht() -> dict[str, dict]:
    return {a["id"]: a for a in json.loads((AEB / "candidates.json").read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def seiten(veroeffentlicht) -> list[dict]:
    seiten = [
        {
            "id": i,
            "url": veroeffentlicht[i]["url"],
            "html": gzip.decompress((AEB / "html" / f"{i}.html.gz").read_bytes()).decode("utf-8"),
            "quelle": "aeb",
        }
        for i in IDS
    ]
    seiten.append({"html": "<html><body></body></html>", "eigenes": {"bleibt": [1, 2]}})
    return seiten


@pytest.fixture(scope="module")
def lauf(tmp_path_factory, seiten):
    ordner = tmp_path_factory.mktemp("extrahieren")
    eingabe = ordner / "seiten.json"
    eingabe.write_text(json.dumps(seiten, ensure_ascii=False), encoding="utf-8")
    ergebnis = auswahl("--extrahieren", str(eingabe), "--prozesse", "2", cwd=ordner)
    return ordner, ergebnis


def test_schreibt_stamm_selected_mit_allen_feldern(lauf, seiten):
    ordner, ergebnis = lauf
    assert ergebnis.returncode == 0, ergebnis.stderr
    ausgabe = json.loads((ordner / "seiten_selected.json").read_text(encoding="utf-8"))
    assert len(ausgabe) == len(seiten)
    for vorher, nachher in zip(seiten, ausgabe, strict=True):
        assert {k: v for k, v in nachher.items() if k not in ("extractions", "selected_extractor")} == vorher
    assert "Extrahiert: 4 Seiten" in ergebnis.stderr
    assert "4 Artikel entschieden" in ergebnis.stderr


def test_kandidaten_sind_die_veroeffentlichten(lauf, veroeffentlicht):
    ordner, _ = lauf
    ausgabe = json.loads((ordner / "seiten_selected.json").read_text(encoding="utf-8"))
    for artikel in ausgabe[:3]:
        assert artikel["extractions"] == veroeffentlicht[artikel["id"]]["extractions"]
    leer = ausgabe[3]["extractions"]
    assert leer["trafilatura"] == leer["newspaper4k"] == {"text": "", "error": None}


def test_ausgabe_ist_eingabe_des_stapelbetriebs_mit_denselben_entscheidungen(lauf):
    ordner, _ = lauf
    ausgabe = json.loads((ordner / "seiten_selected.json").read_text(encoding="utf-8"))
    for artikel in ausgabe:
        assert artikel["selected_extractor"] == waehle(artikel["extractions"]).extraktor
    nochmal = auswahl(str(ordner / "seiten_selected.json"), "-o", str(ordner / "nochmal.json"), cwd=ordner)
    assert nochmal.returncode == 0, nochmal.stderr
    zweite = json.loads((ordner / "nochmal.json").read_text(encoding="utf-8"))
    assert zweite == ausgabe


def test_artikel_ohne_html_exit_1_und_nichts_geschrieben(tmp_path):
    eingabe = tmp_path / "seiten.json"
    eingabe.write_text(json.dumps([{"id": "a", "html": "<p>x</p>"}, {"id": "b", "text": "kein html"}]))
    ergebnis = auswahl("--extrahieren", str(eingabe), cwd=tmp_path)
    assert ergebnis.returncode == EXIT_EINGABE
    assert "Artikel [1] (id b): das Feld „html“ fehlt" in ergebnis.stderr
    assert not (tmp_path / "seiten_selected.json").exists()


def test_html_keine_zeichenkette_exit_1(tmp_path):
    eingabe = tmp_path / "seiten.json"
    eingabe.write_text(json.dumps([{"html": ["<p>"]}]))
    ergebnis = auswahl("--extrahieren", str(eingabe), cwd=tmp_path)
    assert ergebnis.returncode == EXIT_EINGABE
    assert "Artikel [0]: das Feld „html“ ist eine Liste" in ergebnis.stderr


def test_extrahieren_ohne_datei_ist_aufruffehler(tmp_path):
    ergebnis = auswahl("--extrahieren", "--einlesen", "x.json", cwd=tmp_path)
    assert ergebnis.returncode == EXIT_AUFRUF
    assert "--extrahieren gilt mit DATEI, --backfill oder --slot" in ergebnis.stderr
