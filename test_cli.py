"""Die Kommandozeile: welche Optionen zusammenpassen, deutsche Aufruffehler, Hilfe, Version."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import bewertung
import check_db
from cli import cli
from fehler import EXIT_AUFRUF
from version import CODER_VERSION


def aufruf(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize(
    ("args", "satz"),
    [
        ([], "Fehler: Genau eine Betriebsart angeben: DATEI, --backfill, --slot oder --einlesen."),
        (
            ["a.json", "--backfill"],
            "Fehler: Genau eine Betriebsart angeben: DATEI, --backfill, --slot oder "
            "--einlesen (angegeben: DATEI, --backfill).",
        ),
        (["--backfill", "-o", "x.json"], "Fehler: -o/--ausgabe gilt nur im Stapelbetrieb mit DATEI."),
        (
            ["a.json", "--trocken"],
            "Fehler: --trocken, --teil und --prozesse gelten nur mit --backfill oder --slot.",
        ),
        (
            ["a.json", "--teil", "1/2"],
            "Fehler: --trocken, --teil und --prozesse gelten nur mit --backfill oder --slot.",
        ),
        (["--einlesen", "a.json", "--stichprobe", "3"], "Fehler: --stichprobe gilt nicht mit --einlesen."),
        (["--bla"], "Fehler: Unbekannte Option: --bla"),
        (["--backfil"], "Fehler: Unbekannte Option: --backfil (gemeint: --backfill?)"),
        (["--slot"], "Fehler: Die Option --slot braucht einen Wert."),
        (
            ["--backfill", "--stichprobe", "x"],
            "Fehler: Ungültiger Wert für '--stichprobe': „x“ ist keine ganze Zahl.",
        ),
        (
            ["--backfill", "--stichprobe", "0"],
            "Fehler: Ungültiger Wert für '--stichprobe': 0 ist kleiner als 1.",
        ),
        (["a.json", "b.json"], "Fehler: Unerwartetes Argument: b.json"),
        (["."], "Fehler: Ungültiger Wert für '[DATEI.json]': „.“ ist ein Verzeichnis."),
    ],
)
def test_aufruffehler_auf_deutsch_mit_exit_2(args, satz):
    ergebnis = aufruf(*args)
    assert ergebnis.exit_code == EXIT_AUFRUF, ergebnis.output
    zeilen = ergebnis.stderr.splitlines()
    assert zeilen[0].startswith("Aufruf: ")
    assert zeilen[1].startswith("Hilfe: ") and zeilen[1].endswith(" -h")
    assert zeilen[2] == satz
    assert ergebnis.stdout == ""
    assert "Usage" not in ergebnis.stderr and "Error" not in ergebnis.stderr


@pytest.mark.parametrize("befehl", [cli, check_db.main, bewertung.cli])
def test_hilfe_ist_deutsch(befehl):
    for schalter in ("-h", "--help"):
        ergebnis = CliRunner().invoke(befehl, [schalter])
        assert ergebnis.exit_code == 0, ergebnis.output
        assert ergebnis.stdout.startswith("Aufruf: ")
        assert "\nOptionen:\n" in ergebnis.stdout
        assert "Diese Hilfe zeigen und beenden." in ergebnis.stdout
        assert "Usage" not in ergebnis.stdout and "Show this message" not in ergebnis.stdout


def test_version_ist_die_coder_version():
    ergebnis = aufruf("--version")
    assert (ergebnis.exit_code, ergebnis.stdout) == (0, CODER_VERSION + "\n")


def test_strg_c_vor_dem_lauf_ist_exit_130(monkeypatch):
    """Ein KeyboardInterrupt, bevor ein Lauf seine eigene Behandlung hat, endet wie jeder Abbruch."""
    import stufe

    def unterbrochen(**_):
        raise KeyboardInterrupt

    monkeypatch.setattr(stufe, "lauf", unterbrochen)
    ergebnis = aufruf("--backfill")
    assert ergebnis.exit_code == 130, ergebnis.output
    assert ergebnis.stderr.startswith("Fehler: Abgebrochen (SIGINT)")
    assert "Aborted" not in ergebnis.stderr
