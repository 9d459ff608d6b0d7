"""Die Kommandozeile: welche Optionen zusammenpassen, deutsche Aufruffehler, Hilfe, Version."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import check_db
from auswahlstufe.befehl import KLICK_MELDUNGEN, DeutscherBefehl
from auswahlstufe.cli import cli
from auswahlstufe.fehler import EXIT_AUFRUF
from auswahlstufe.pruefung import bewertung
from version import CODER_VERSION


def aufruf(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize(
    ("args", "satz"),
    [
        (
            [],
            "Fehler: Genau eine Betriebsart angeben: DATEI, --backfill, --slot, --nachholen oder --einlesen.",
        ),
        (
            ["a.json", "--backfill"],
            "Fehler: Genau eine Betriebsart angeben: DATEI, --backfill, --slot, --nachholen oder "
            "--einlesen (angegeben: DATEI, --backfill).",
        ),
        (["--slot", "x", "--hoechstens", "3"], "Fehler: --hoechstens gilt nur mit --nachholen."),
        (
            ["--nachholen", "--teil", "1/2"],
            "Fehler: --teil und --stichprobe gelten nicht mit --nachholen (es kodiert ganze Slots, einen "
            "nach dem anderen).",
        ),
        (["--backfill", "-o", "x.json"], "Fehler: -o/--ausgabe gilt nur im Stapelbetrieb mit DATEI."),
        (["--slot", "x", "--output", "x.json"], "Fehler: -o/--ausgabe gilt nur im Stapelbetrieb mit DATEI."),
        (
            ["--backfill", "--mit-entscheidung"],
            "Fehler: --mit-entscheidung gilt nur im Stapelbetrieb mit DATEI.",
        ),
        (
            ["a.json", "--trocken"],
            "Fehler: --trocken, --teil und --prozesse gelten nur mit --backfill, --slot oder --nachholen.",
        ),
        (
            ["a.json", "--teil", "1/2"],
            "Fehler: --trocken, --teil und --prozesse gelten nur mit --backfill, --slot oder --nachholen.",
        ),
        (["--einlesen", "a.json", "--stichprobe", "3"], "Fehler: --stichprobe gilt nicht mit --einlesen."),
        *(
            (
                args,
                "Fehler: --haus und --seit gelten nur mit --trocken und --stichprobe N (zu --backfill oder "
                "--slot): sie zeigen die Prüfseite eines Hauses seit einem Zeitpunkt und schreiben nichts.",
            )
            for args in (
                ["--backfill", "--haus", "taz"],
                ["--backfill", "--stichprobe", "5", "--haus", "taz"],
                ["--slot", "x", "--trocken", "--seit", "2026-12-03T14:00"],
                ["a.json", "--stichprobe", "3", "--haus", "taz"],
            )
        ),
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
        (
            ["."],
            "Fehler: „.“ ist ein Verzeichnis; ein Ordner mit .html/.html.gz-Seiten ist nur mit "
            "--extrahieren Eingabe.",
        ),
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


def test_version_nennt_stufe_coder_version_und_extraktoren():
    from auswahlstufe import VERSION

    ergebnis = aufruf("--version")
    assert ergebnis.exit_code == 0, ergebnis.output
    assert ergebnis.stdout.splitlines() == [
        f"wurzelwerk-auswahl {VERSION}",
        f"coder_version {CODER_VERSION}",
        "Extraktoren: trafilatura 2.3.1, newspaper4k 0.9.6, readability-lxml 0.9",
    ]


def test_strg_c_vor_dem_lauf_ist_exit_130(monkeypatch):
    """Ein KeyboardInterrupt, bevor ein Lauf seine eigene Behandlung hat, endet wie jeder Abbruch."""
    from auswahlstufe.lauf import stufe

    def unterbrochen(*_, **__):
        raise KeyboardInterrupt

    monkeypatch.setattr(stufe, "lauf", unterbrochen)
    ergebnis = aufruf("--backfill")
    assert ergebnis.exit_code == 130, ergebnis.output
    assert ergebnis.stderr.startswith("Fehler: Abgebrochen (SIGINT)")
    assert "Aborted" not in ergebnis.stderr


# --- Ganz deutsch: jede Hilfe und jeder Aufruffehler jedes Skripts ----------------------------

PROJEKT = Path(__file__).resolve().parents[1]
# Englische Reste von click und argparse. Groß geschriebene Typnamen nur als ganze Wörter.
ENGLISCH = re.compile(
    r"Usage|usage:|Options|options:|Show this message|show this help|\bdefault\b|\bINTEGER\b|\bFILE\b"
    r"|\bTEXT\b|\bPATH\b|\bFLOAT\b|\bRANGE\b|%%|x>=|x<=|<=x|<x|required|Error|Aborted|unrecognized"
    r"|expected one argument|invalid int|arguments|Missing|No such|Got unexpected|is not"
)


def skripte() -> list[tuple[str, ...]]:
    """Jeder Einstieg für Menschen: die Skripte oben und jedes bench-Skript mit __main__ (auch der
    Testhaus-Helfer von Ingest, bench.ingest)."""
    oben = [(f,) for f in ("auswahl.py", "check_db.py", "bewertung.py", "demo.py")]
    bench = [
        ("-m", f"bench.{p.stem}")
        for p in sorted((PROJEKT / "bench").glob("*.py"))
        if 'if __name__ == "__main__"' in p.read_text(encoding="utf-8")
    ]
    return oben + bench


def starten(*args: str) -> subprocess.CompletedProcess:
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [sys.executable, *args], cwd=PROJEKT, env=umgebung, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("skript", skripte(), ids=lambda s: s[-1])
def test_jede_hilfe_und_jeder_aufruffehler_ist_deutsch(skript):
    hilfe = starten(*skript, "--help")
    assert hilfe.returncode == 0, hilfe.stderr
    assert hilfe.stdout.startswith("Aufruf: "), hilfe.stdout[:200]
    assert "\nOptionen:\n" in hilfe.stdout and "Diese Hilfe zeigen und beenden." in hilfe.stdout
    assert not ENGLISCH.search(hilfe.stdout), ENGLISCH.search(hilfe.stdout)
    assert starten(*skript, "-h").stdout == hilfe.stdout

    falsch = starten(*skript, "--gibt-es-nicht")
    assert falsch.returncode == EXIT_AUFRUF, falsch.stderr
    assert "Fehler: Unbekannte Option: --gibt-es-nicht" in falsch.stderr
    assert not ENGLISCH.search(falsch.stderr), falsch.stderr


@click.command(cls=DeutscherBefehl)
@click.argument("datei", metavar="DATEI.json")
def MIT_PFLICHTARGUMENT(datei):
    """Ein Befehl mit einem Pflichtargument."""


@pytest.mark.parametrize(
    ("befehl", "args", "satz"),
    [
        # bewertung.py und vergleich.py haben keine Pflichtargumente mehr (--urteile, --datenbank):
        # ein Befehl mit Pflichtargument, gebaut wie die Skripte, prüft click's fehlendes Argument.
        (MIT_PFLICHTARGUMENT, [], "Fehler: Es fehlt das Argument DATEI.json."),
        (cli, ["--backfill", "--prozesse", "1.5"], "„1.5“ ist keine ganze Zahl."),
        (cli, ["--backfill", "--prozesse", "0"], "0 ist kleiner als 1."),
        (cli, ["--backfill", "--trocken=ja"], "Die Option --trocken nimmt keinen Wert."),
        (cli, ["a.json", "b.json", "c.json"], "Unerwartete Argumente: b.json c.json"),
        (
            bewertung.cli,
            ["gibt-es-nicht.json", "auch-nicht.json", "--bootstrap", "-1"],
            "-1 ist kleiner als 0.",
        ),
    ],
)
def test_aufruffehler_aus_dem_katalog(befehl, args, satz):
    ergebnis = CliRunner().invoke(befehl, args)
    assert ergebnis.exit_code == EXIT_AUFRUF, ergebnis.output
    assert satz in ergebnis.stderr
    assert not ENGLISCH.search(ergebnis.stderr), ergebnis.stderr


def test_jeder_satz_des_katalogs_steht_so_in_click():
    """Ändert eine neue click-Fassung einen Satz, fällt das hier auf – nicht erst beim Nutzer."""
    quelle = "".join(inspect.getsource(m) for m in (click.core, click.parser, click.types, click.exceptions))
    fehlend = [msgid for msgid, _ in KLICK_MELDUNGEN if f'"{msgid}"' not in quelle]
    assert fehlend == []


def test_bereiche_und_voreinstellungen_deutsch():
    @click.command(cls=DeutscherBefehl)
    @click.option("--a", type=click.IntRange(1, 9), default=3, show_default=True)
    @click.option("--b", type=click.FloatRange(max=1.0, max_open=True))
    @click.option("--c", type=click.Path(dir_okay=False), required=True)
    @click.option("--d", type=float)
    def befehl(a, b, c, d):
        pass

    hilfe = CliRunner().invoke(befehl, ["--help"]).stdout
    assert "--a ZAHL" in hilfe and "[Voreinstellung: 3; 1 bis 9]" in hilfe
    assert "--b KOMMAZAHL" in hilfe and "[kleiner als 1.0]" in hilfe
    assert "--c DATEI" in hilfe and "[Pflicht]" in hilfe
    assert not ENGLISCH.search(hilfe), hilfe
    fehlt = CliRunner().invoke(befehl, [])
    assert "Fehler: Es fehlt die Option --c." in fehlt.stderr


def test_erste_id_sagt_dasselbe_wie_ihr_bereich():
    """Die Hilfe nennt für --erste-id denselben Bereich wie die Option: „[Voreinstellung: 1; ab 1]“,
    kein „(ab 0)“ daneben."""
    hilfe = " ".join(starten("-m", "bench.ingest", "--help").stdout.split())
    assert (
        "Artikel ohne item_id bekommen ihre Stelle in der Datei als Nummer, gezählt ab N (der erste "
        "Artikel der Datei N, der zweite N+1 …). [Voreinstellung: 1; ab 1]"
    ) in hilfe, hilfe
    assert "(ab 0)" not in hilfe
