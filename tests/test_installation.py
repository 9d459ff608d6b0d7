"""Installation: nur editierbar im Klon; ein Wheel wird klar verweigert.

Gewählter Weg: ``pip install -e .`` im Klon (der Hausweg). ``pip install .``
oder ``pip wheel .`` bricht mit deutscher Meldung ab, bevor etwas gebaut wird
(paketbau.py) – so landen weder allgemeine Modulnamen (``cli``, ``db`` …) in
site-packages noch eine Stufe ohne ihre Migrationen.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from auswahlstufe import paketbau, pakete
from auswahlstufe.betrieb import migrationen
from auswahlstufe.fehler import EXIT_VORAUSSETZUNG
from tests.hilfen import PROJEKT

# Module im Klon, die kein Teil des Pakets sind: Tests und das Bau-Backend.
KEIN_PAKET = {"conftest", "paketbau"}


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


def test_editierbare_installation_ohne_englischen_block_von_setuptools(tmp_path):
    """``pip install -e .`` zeigt keinen Block „BuildBackendWarning: Editable installation. !! … Please
    be careful with folders in your working directory …“ (pip 26.3, das ``pip install -U pip`` der
    Installation, reicht Warnungen des Backends weiter; älteres pip nur mit ``-v``). Echt: pip baut
    in seiner eigenen Umgebung mit setuptools vom Paketindex, in ein frisches venv; ``-v`` zeigt
    alles, was das Backend schreibt."""
    ziel = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(ziel)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(ziel / "bin" / "python")]
    lauf = subprocess.run(
        [*pip, "install", "-v", "--no-deps", "-e", str(PROJEKT)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    ausgabe = lauf.stdout + lauf.stderr
    assert lauf.returncode == 0, ausgabe
    assert "Successfully installed wurzelwerk-auswahl-" in ausgabe, ausgabe
    assert "Please be careful with folders" not in ausgabe and "InformationOnly" not in ausgabe, ausgabe
    assert "\n!!\n" not in ausgabe, ausgabe  # auch kein anderer Block von setuptools


def test_das_backend_filtert_genau_diese_eine_warnung():
    """Andere Warnungen von setuptools – auch die zweite „Editable installation.“ (strict, mit dem
    Ordner, den man nicht löschen darf) – bleiben sichtbar."""
    rahmen = "'Editable installation.\\n!!\\n\\n        ' + '*' * 80 + '\\n        '"
    programm = "\n".join(
        [
            "import warnings",
            "import auswahlstufe.paketbau",
            f"warnings.warn({rahmen} + 'Please be careful with folders in your working directory', UserWarning)",
            f"warnings.warn({rahmen} + 'Strict editable installation performed using', UserWarning)",
            "warnings.warn('Eine andere Warnung', UserWarning)",
        ]
    )
    lauf = subprocess.run([sys.executable, "-c", programm], cwd=PROJEKT, capture_output=True, text=True)
    assert lauf.returncode == 0, lauf.stderr
    assert "Please be careful" not in lauf.stderr, lauf.stderr
    assert "Strict editable installation" in lauf.stderr and "Eine andere Warnung" in lauf.stderr, lauf.stderr


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


# --- Das falsche Python ----------------------------------------------------------------------

SKRIPTE = ("auswahl.py", "check_db.py", "demo.py", "bewertung.py", "vergleich.py")


def test_ein_python_ohne_die_pakete_fehlt_click_wirklich():
    """Die Probe unten: ``python -S`` lädt site nicht – ohne site-packages des venv und des Systems."""
    lauf = subprocess.run(
        [sys.executable, "-S", "-c", "import importlib.util as u; print(u.find_spec('click'))"],
        capture_output=True,
        text=True,
    )
    assert lauf.stdout == "None\n", lauf.stdout + lauf.stderr


@pytest.mark.parametrize("skript", SKRIPTE)
def test_skript_mit_einem_python_ohne_die_pakete_sagt_welches_python(skript, tmp_path):
    """``python3 auswahl.py`` mit dem Python des Systems: ein Satz mit dem Aufruf über das Python
    des Klons und dem Befehl der Installation, Exit 4 – aus dem Klon wie von woanders; kein
    englischer Traceback (``ModuleNotFoundError: No module named 'click'``)."""
    im_klon = subprocess.run(
        [sys.executable, "-S", skript, "--hilfe-gibt-es-nicht"], cwd=PROJEKT, capture_output=True, text=True
    )
    assert im_klon.returncode == EXIT_VORAUSSETZUNG == pakete.EXIT_FALSCHES_PYTHON, im_klon.stderr
    assert im_klon.stdout == "" and im_klon.stderr == (
        f"Fehler: Diesem Python ({sys.executable}) fehlen click, psycopg, python-dotenv. Die Stufe läuft mit "
        f"dem Python ihrer Umgebung im Klon: .venv/bin/python {skript} --hilfe-gibt-es-nicht – gibt es .venv "
        "noch nicht, vorher im Klon (README, Schnellstart): python3 -m venv .venv && .venv/bin/pip install "
        "-q -e '.[demo]'\n"
    ), im_klon.stderr
    woanders = subprocess.run(
        [sys.executable, "-S", str(PROJEKT / skript)], cwd=tmp_path, capture_output=True, text=True
    )
    assert woanders.returncode == EXIT_VORAUSSETZUNG, woanders.stderr
    assert f"im Klon: {PROJEKT}/.venv/bin/python {PROJEKT / skript} – " in woanders.stderr, woanders.stderr
    assert "Traceback" not in woanders.stderr


def _klon_nach_git_pull(ort: Path) -> Path:
    """Ein Klon nach ``git pull`` ohne ``pip install -e .``: der Code von heute, daneben die
    Metadaten, die pip bei der letzten Installation dort schrieb (``*.egg-info``, Fassung 1.0.0;
    git kennt sie nicht, ``git pull`` lässt sie stehen)."""
    klon = ort / "klon"
    shutil.copytree(
        PROJEKT / "auswahlstufe", klon / "auswahlstufe", ignore=shutil.ignore_patterns("__pycache__")
    )
    for datei in PROJEKT.glob("*.py"):
        shutil.copy(datei, klon / datei.name)
    metadaten = klon / "wurzelwerk_auswahl.egg-info"
    metadaten.mkdir()
    (metadaten / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: wurzelwerk-auswahl\nVersion: 1.0.0\n")
    return klon


# Der Befehl ``wurzelwerk-auswahl``, wie pip ihn für eine Installation vor 2.0.0 schrieb (``cli:cli``;
# deren .pth legte den Klon in den Pfad).
ALTER_BEFEHL = "import sys; sys.path.insert(0, sys.argv.pop(1)); from cli import cli; sys.exit(cli())"


@pytest.mark.parametrize(
    "aufruf",
    [
        ["auswahl.py", "--version"],
        ["check_db.py"],
        ["vergleich.py", "--help"],
        ["-c", ALTER_BEFEHL, "K", "--version"],
    ],
    ids=["auswahl.py", "check_db.py", "vergleich.py", "alter Befehl wurzelwerk-auswahl"],
)
def test_eine_veraltete_installation_sagt_welcher_befehl_sie_erneuert(aufruf, tmp_path):
    """Code gezogen, pip nicht gelaufen: jeder Einstieg endet mit Exit 4 und einem Satz mit dem
    Befehl – vor jedem Import, der scheitern könnte, ohne Traceback, ohne etwas zu tun. Sind die
    Extraktoren installiert (wie hier), nennt der Befehl das Extra: ohne es bekäme das Update neue
    Pins der Extraktoren nicht."""
    klon = _klon_nach_git_pull(tmp_path)
    aufruf = [str(klon) if a == "K" else a for a in aufruf]
    lauf = subprocess.run([sys.executable, *aufruf], cwd=klon, capture_output=True, text=True)
    from auswahlstufe import VERSION

    assert lauf.returncode == EXIT_VORAUSSETZUNG and lauf.stdout == "", lauf.stdout + lauf.stderr
    assert lauf.stderr == (
        f"Fehler: Die Installation passt nicht zum Code im Klon (installiert ist 1.0.0, der Code ist {VERSION}) "
        f"– nach dem Holen des Codes muss pip noch einmal laufen. Im Klon ({klon}): .venv/bin/pip install -q -e '.[extraktion]' – "
        "dann denselben Aufruf wiederholen (docs/betrieb.md, Aktualisieren).\n"
    )


def test_im_cron_log_traegt_der_satz_zeit_und_aufruf(tmp_path):
    """Ein Tick von cron nach git pull (stderr kein Terminal, AUSWAHL_ZEILENKOPF wie voreingestellt):
    der Satz landet mit ``tee -a`` im Log – mit Zeit und Aufruf davor, wie jede Zeile eines Laufs."""
    klon = _klon_nach_git_pull(tmp_path)
    umgebung = {k: v for k, v in os.environ.items() if k != "AUSWAHL_ZEILENKOPF"}
    lauf = subprocess.run(
        [sys.executable, "auswahl.py", "--extrahieren", "--nachholen"],
        cwd=klon,
        capture_output=True,
        text=True,
        env=umgebung,
    )
    assert lauf.returncode == EXIT_VORAUSSETZUNG, lauf.stderr
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[12]:00 aufruf=auswahl.py --extrahieren --nachholen \| "
        r"Fehler: Die Installation passt nicht zum Code im Klon .*\n",
        lauf.stderr,
    ), lauf.stderr


def test_die_installierte_fassung_ist_die_des_codes():
    """Die Gegenprobe: in dieser Umgebung passt die Installation (sonst liefe kein Test)."""
    from auswahlstufe import VERSION

    assert pakete.installiert() == VERSION and pakete.veraltet() is None


def test_die_installation_in_der_meldung_ist_die_des_schnellstarts():
    readme = (PROJEKT / "README.md").read_text(encoding="utf-8")
    assert "python3 -m venv .venv && .venv/bin/pip install -q -e '.[demo]' && " in readme
    assert pakete.INSTALLATION == "python3 -m venv .venv && .venv/bin/pip install -q -e '.[demo]'"
    abhaengigkeiten = tomllib.loads((PROJEKT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert sorted(pakete.PAKETE.values()) == sorted(a.split("[")[0].split(">")[0] for a in abhaengigkeiten)


# --- Befehle in Meldungen: das Python des Klons ------------------------------------------------

# „python check_db.py …“, „python -m …“ – ohne .venv/bin davor (python3 -m venv legt die Umgebung an).
NACKT = re.compile(r"(?<![\w/.-])python3? (?:-m (?!venv\b)[\w.]+|[\w./-]+\.py\b)")


def _produktdateien() -> list[Path]:
    wurzel = [p for p in PROJEKT.glob("*.py") if not p.name.startswith("test_")]
    sql = [
        *PROJEKT.glob("migrations/*.sql"),
        *PROJEKT.glob("rollen/*.sql"),
        PROJEKT / "auswahlstufe/lauf/rezept.sql",
    ]
    return sorted([*wurzel, *PROJEKT.glob("auswahlstufe/**/*.py"), *sql])


def _texte(datei: Path) -> list[str]:
    """Was ein Mensch zu sehen bekommen kann: die Zeichenketten einer Python-Datei (Meldungen,
    Hilfetexte; der Moduldocstring nur bei den Skripten an der Wurzel – ihr Kopf zeigt den Aufruf),
    in SQL die Literale in '…' (notice, exception)."""
    quelle = datei.read_text(encoding="utf-8")
    if datei.suffix == ".sql":
        return re.findall(r"'((?:[^']|'')*)'", re.sub(r"--[^\n]*", "", quelle))
    baum = ast.parse(quelle)
    kopf = None if datei.parent == PROJEKT else ast.get_docstring(baum, clean=False)
    return [
        knoten.value
        for knoten in ast.walk(baum)
        if isinstance(knoten, ast.Constant) and isinstance(knoten.value, str) and knoten.value != kopf
    ]


@pytest.mark.parametrize(
    "datei",
    _produktdateien(),
    ids=lambda datei: datei.relative_to(PROJEKT).as_posix(),
)
def test_meldungen_nennen_das_python_des_klons(datei):
    """Ein „python“ gibt es auf Debian 12 nicht (nur python3), und die Stufe läuft mit
    .venv/bin/python aus ihrem Klon: keine Meldung, kein Hilfetext nennt einen Befehl mit nacktem
    python (etwa „Anwenden mit: python check_db.py --migrieren“ in einer cron-Mail)."""
    nackt = [treffer for text in _texte(datei) for treffer in NACKT.findall(text)]
    assert not nackt, f"{datei.relative_to(PROJEKT)}: {nackt}"
