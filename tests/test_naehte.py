"""Nähte, die der Schichtenvertrag nicht fasst – geprüft am Quelltext.

Die Schichten selbst (wer wen importieren darf) stehen als Vertrag in
``pyproject.toml`` und prüft ``lint-imports`` in CI (docs/aufbau.md). Hier, was
import-linter nicht ausdrücken kann:

* Kein Produktmodul, kein Benchmark und keine Testhilfe importiert eine
  Testdatei oder ``conftest``.
* Benchmarks importieren keine privaten ``_namen`` anderer Module.
* Tests importieren nie eine andere Testdatei und nie aus ``conftest``
  (Fixtures kommen über pytest, Helfer aus ``tests/hilfen/``).
* ``check_db.py`` ist ein Skript, keine Bibliothek des Betriebs.
* Das Paket enthält, was ein Haus betreibt: sein einziger ``python -m``-Einstieg ist das
  Rollenrezept; Items für ein Testhaus trägt ``bench.ingest`` ein.
* ``bewertung.py`` und ``vergleich.py`` sind dünne Skripte über ``auswahlstufe.pruefung``:
  sie definieren nichts, niemand importiert sie (Tests und Benchmarks nehmen das Paketmodul).
* Ein Import richtet kein Logging ein; das tut der Einstieg (``protokoll.einrichten``). Die
  übrigen Einstiege (Skripte an der Wurzel, ``python -m …``) richten nichts ein: ihre Fehler und
  Warnungen stehen trotzdem so auf stderr wie die der Kommandozeile.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import pytest

from tests.hilfen import PROJEKT


def importe(datei) -> list[tuple[str, list[str]]]:
    """(Modul, importierte Namen) je Import einer Datei."""
    gefunden = []
    for knoten in ast.walk(ast.parse(datei.read_text(encoding="utf-8"))):
        if isinstance(knoten, ast.Import):
            gefunden += [(a.name, []) for a in knoten.names]
        elif isinstance(knoten, ast.ImportFrom) and knoten.module and not knoten.level:
            gefunden.append((knoten.module, [a.name for a in knoten.names]))
    return gefunden


def ist_test(modul: str) -> bool:
    return modul == "conftest" or modul.split(".")[-1].startswith("test_")


NICHT_TESTS = sorted(
    [p for p in PROJEKT.glob("*.py") if not p.name.startswith("test_")]
    + list((PROJEKT / "auswahlstufe").rglob("*.py"))
    + list((PROJEKT / "bench").glob("*.py"))
    + list((PROJEKT / "tests" / "hilfen").glob("*.py"))
)
TESTS = sorted([PROJEKT / "test_auswahl.py", *(PROJEKT / "tests").glob("test_*.py")])


@pytest.mark.parametrize("datei", NICHT_TESTS, ids=lambda p: p.relative_to(PROJEKT).as_posix())
def test_kein_import_aus_tests(datei):
    assert [m for m, _ in importe(datei) if ist_test(m)] == []


@pytest.mark.parametrize("datei", sorted((PROJEKT / "bench").glob("*.py")), ids=lambda p: p.name)
def test_benchmarks_importieren_keine_privaten_namen(datei):
    privat = [(m, n) for m, namen in importe(datei) for n in namen if n.startswith("_") and n != "__all__"]
    assert privat == []


@pytest.mark.parametrize("datei", TESTS, ids=lambda p: p.relative_to(PROJEKT).as_posix())
def test_tests_importieren_keine_andere_testdatei(datei):
    assert [m for m, _ in importe(datei) if ist_test(m)] == []


@pytest.mark.parametrize("datei", NICHT_TESTS, ids=lambda p: p.relative_to(PROJEKT).as_posix())
def test_das_skript_check_db_ist_keine_bibliothek(datei):
    """Migrationen kommen aus migrationen.py; check_db.py ist nur ein Skript."""
    assert [m for m, _ in importe(datei) if m == "check_db"] == []


DUENNE_SKRIPTE = ("bewertung", "vergleich")


@pytest.mark.parametrize("datei", NICHT_TESTS + TESTS, ids=lambda p: p.relative_to(PROJEKT).as_posix())
def test_niemand_importiert_die_duennen_skripte(datei):
    """Wer das Maß oder den Vergleich braucht, nimmt ``auswahlstufe.pruefung.bewertung`` bzw.
    ``…vergleich``; die Skripte an der Wurzel starten sie nur."""
    assert [m for m, _ in importe(datei) if m in DUENNE_SKRIPTE] == []


@pytest.mark.parametrize("name", DUENNE_SKRIPTE)
def test_die_duennen_skripte_definieren_nichts(name):
    """Nur Importe und der Aufruf des Befehls: keine Funktion, keine Klasse, kein ``sys.modules``."""
    quelle = (PROJEKT / f"{name}.py").read_text(encoding="utf-8")
    baum = ast.parse(quelle)
    definiert = [k.name for k in baum.body if isinstance(k, ast.FunctionDef | ast.ClassDef)]
    assert (definiert, "sys.modules" in quelle) == ([], False)


def test_das_paket_hat_nur_einstiege_fuer_den_betrieb():
    """Sein einziger ``python -m``-Einstieg ist das Rollenrezept (``auswahlstufe.lauf.rechte``); Items
    für ein Testhaus trägt ``bench.ingest`` ein. ``raw_items`` gehört Ingest: im Paket schreibt es nur
    ``server`` (die Beispielitems der Vorführung)."""
    dateien = {
        p.relative_to(PROJEKT).as_posix(): p.read_text(encoding="utf-8")
        for p in (PROJEKT / "auswahlstufe").rglob("*.py")
    }
    einstiege = sorted(d for d, text in dateien.items() if 'if __name__ == "__main__"' in text)
    assert einstiege == ["auswahlstufe/lauf/rechte.py"]
    schreiben = re.compile(r"\b(copy|insert\s+into|update)\s+raw_items\b", re.IGNORECASE)
    assert sorted(d for d, text in dateien.items() if schreiben.search(text)) == ["auswahlstufe/server.py"]


def test_der_stapelbetrieb_laedt_die_pruefseite_erst_fuer_eine_stichprobe(tmp_path):
    """Ein Stapellauf ohne --stichprobe braucht die HTML-Prüfseite nicht; sie lädt erst, wer eine
    Stichprobe schreibt."""
    code = (
        "import sys; from click.testing import CliRunner; from auswahlstufe.cli import cli; "
        f"r = CliRunner().invoke(cli, [{str(PROJEKT / 'beispiele' / 'artikel.json')!r}, '-o', "
        f"{str(tmp_path / 'a.json')!r}]); assert r.exit_code == 0, r.output; "
        "print('auswahlstufe.pruefung.pruefseite' in sys.modules)"
    )
    lauf = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJEKT)
    assert lauf.stdout.strip() == "False", lauf.stdout + lauf.stderr


def test_ein_import_richtet_kein_logging_ein():
    """Jedes Modul des Pakets und db.py geladen: kein Logger hat einen Handler – die Handler setzt
    erst der Einstieg (``betrieb.protokoll.einrichten``, die Kommandozeile und conftest)."""
    code = (
        "import importlib, logging, pkgutil, auswahlstufe, db\n"
        "for m in pkgutil.walk_packages(auswahlstufe.__path__, 'auswahlstufe.'):\n"
        "    if m.name not in ('auswahlstufe.paketbau', 'auswahlstufe.server'):\n"
        "        importlib.import_module(m.name)\n"
        "loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]\n"
        "print(sorted(l.name for l in loggers if getattr(l, 'handlers', None)))"
    )
    lauf = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJEKT)
    assert lauf.stdout.strip() == "[]", lauf.stdout + lauf.stderr


KAPUTTE_URL = "postgresql://ich:geheim@h:keinport/db"
WARNUNG_PASSWORT = (
    'Warnung: DATABASE_URL enthält ein Passwort – es steht so in der Umgebung, in .env und bei psql "$DATABASE_URL" '
    "in `ps`; besser in ~/.pgpass (docs/betrieb.md, Einrichtung, Schritt 5)."
)
FEHLER_PORT = "Fehler: DATABASE_URL: Port 'keinport' ist keine Zahl von 1 bis 65535."


@pytest.mark.parametrize(
    ("aufruf", "code", "stderr"),
    [
        (["auswahl.py", "--backfill"], 7, [WARNUNG_PASSWORT, FEHLER_PORT]),
        (["check_db.py"], 7, [WARNUNG_PASSWORT, FEHLER_PORT]),
        (["-m", "bench.ingest"], 7, [WARNUNG_PASSWORT, FEHLER_PORT]),
        (["vergleich.py", "--datenbank", "auswahl-1", "auswahl-2"], 7, [WARNUNG_PASSWORT, FEHLER_PORT]),
        (
            ["bewertung.py", "fehlt-a.json", "fehlt-b.json"],
            1,
            ["Fehler: Die Eingabedatei fehlt-a.json gibt es nicht."],
        ),
        (
            ["demo.py", "--lokal-stoppen", "--daten", "kein-server"],
            4,
            [
                "Fehler: In {ort}/kein-server liegt kein lokaler Server ({python} demo.py --lokal legt ihn an)."
            ],
        ),
    ],
    ids=["auswahl.py", "check_db.py", "ingest", "vergleich.py", "bewertung.py", "demo.py"],
)
def test_jeder_einstieg_meldet_fehler_und_warnung_auf_stderr_wie_die_kommandozeile(
    tmp_path, aufruf, code, stderr
):
    """Ohne ``protokoll.einrichten`` (nur die Kommandozeile ruft es) stehen Fehler und Warnungen,
    die über logging gehen, als deutscher Satz auf stderr – ohne Präfix von logging, nicht auf
    stdout, nicht verloren."""
    umgebung = {
        **os.environ,
        "DATABASE_URL": KAPUTTE_URL,
        "AUSWAHL_ZEILENKOPF": "aus",
        "PYTHONPATH": str(PROJEKT),
    }
    if aufruf[0].endswith(".py"):
        aufruf = [str(PROJEKT / aufruf[0]), *aufruf[1:]]
    lauf = subprocess.run(
        [sys.executable, *aufruf], capture_output=True, text=True, cwd=tmp_path, env=umgebung, timeout=120
    )
    erwartet = [z.format(ort=tmp_path.resolve(), python=sys.executable) for z in stderr]
    assert (lauf.returncode, lauf.stderr.splitlines(), lauf.stdout) == (code, erwartet, "")
