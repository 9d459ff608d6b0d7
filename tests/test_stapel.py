"""Stapelbetrieb: die Kommandozeile über CliRunner und als echter Unterprozess.

Ohne Datenbank. Der Speichertest mit 100 MB ist als ``langsam`` markiert:
``python -m pytest -q --langsam -m langsam tests/test_stapel.py -s`` zeigt die gemessenen Zahlen.
"""

from __future__ import annotations

import csv
import json
import os
import pty
import random
import re
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from auswahlstufe import jsoneingabe, stapel
from auswahlstufe.cli import cli
from auswahlstufe.fehler import EXIT_ABGEBROCHEN, EXIT_AUFRUF, EXIT_EINGABE, EingabeFehler
from auswahlstufe.pruefung import stichprobe
from auswahlstufe.regeln import REGELN, waehle
from normalisierung import bereinigen
from tests.hilfen.prozesse import ohne_leserechte
from version import PRIORITAET

HIER = Path(__file__).resolve().parents[1]
BEISPIEL = HIER / "beispiele" / "artikel.json"
BENCH = HIER / "bench" / "aeb" / "candidates.json"

TEXT_A = "Der Stadtrat hat am Montag den neuen Haushalt mit großer Mehrheit beschlossen und vertagt."
TEXT_B = "Die Brücke über die Moosach bleibt wegen Rissen in zwei Pfeilern bis Oktober gesperrt."


def artikel(i: int, **extraktionen) -> dict:
    return {"id": f"a{i}", "url": f"https://example.org/{i}", "extractions": extraktionen}


def kandidat(text, error=None) -> dict:
    return {"text": text, "error": error}


def ablegen(pfad: Path, inhalt) -> Path:
    """Schreibt Bytes, Text oder (als JSON) ein Objekt."""
    if isinstance(inhalt, bytes):
        pfad.write_bytes(inhalt)
    elif isinstance(inhalt, str):
        pfad.write_text(inhalt, encoding="utf-8")
    else:
        pfad.write_text(json.dumps(inhalt, ensure_ascii=False, indent=1), encoding="utf-8")
    return pfad


def aufrufen(*args: str, eingabe: bytes | None = None):
    return CliRunner().invoke(cli, list(args), input=eingabe, catch_exceptions=False)


def unterprozess(*args: str, cwd: Path, eingabe: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(HIER / "auswahl.py"), *args],
        cwd=cwd,
        input=eingabe,
        capture_output=True,
        timeout=120,
    )


def geordnet(wert):
    """Dicts als Listen von Paaren: so vergleicht == auch die Schlüsselreihenfolge."""
    if isinstance(wert, dict):
        return [(k, geordnet(v)) for k, v in wert.items()]
    if isinstance(wert, list):
        return [geordnet(v) for v in wert]
    return wert


def zustand(verzeichnis: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(verzeichnis.iterdir()) if p.is_file()}


@pytest.fixture
def zwei(tmp_path: Path) -> Path:
    """Eine kleine Eingabe: zwei Artikel, eine Wahl mit Konsens, ein Rückfall."""
    daten = [
        artikel(0, newspaper4k=kandidat(TEXT_A), readability=kandidat(TEXT_A), trafilatura=kandidat(TEXT_B)),
        artikel(1),
    ]
    return ablegen(tmp_path / "daten.json", daten)


# --- Pfade: Voreinstellung, -o, stdin und stdout -----------------------------------


def test_voreinstellung_schreibt_neben_die_eingabe(tmp_path, zwei, monkeypatch):
    anderswo = tmp_path / "anderswo"
    anderswo.mkdir()
    monkeypatch.chdir(anderswo)
    ergebnis = aufrufen(str(zwei))
    assert ergebnis.exit_code == 0, ergebnis.output
    ziel = tmp_path / "daten_selected.json"
    assert [a["selected_extractor"] for a in json.loads(ziel.read_text("utf-8"))] == [
        "newspaper4k",
        "newspaper4k",
    ]
    assert ergebnis.stdout == ""
    assert f"Ausgabe: {ziel}" in ergebnis.stderr
    assert list(anderswo.iterdir()) == []


def test_stamm_ohne_und_mit_mehreren_punkten(tmp_path):
    assert stapel.ausgabepfad(str(tmp_path / "daten"), None) == str(tmp_path / "daten_selected.json")
    assert stapel.ausgabepfad(str(tmp_path / "a.v2.json"), None) == str(tmp_path / "a.v2_selected.json")
    assert stapel.ausgabepfad("-", None) == "-"
    assert stapel.ausgabepfad("x.json", "y.json") == "y.json"


def test_ausgabe_mit_o(tmp_path, zwei):
    ziel = tmp_path / "unter" / "ergebnis.json"
    ziel.parent.mkdir()
    ergebnis = aufrufen(str(zwei), "-o", str(ziel))
    assert ergebnis.exit_code == 0, ergebnis.output
    assert len(json.loads(ziel.read_text("utf-8"))) == 2
    assert not (tmp_path / "daten_selected.json").exists()


def test_output_wie_in_quelle_000_gleichwertig_mit_ausgabe(tmp_path, zwei):
    for schalter in ("-o", "--ausgabe", "--output"):
        ziel = tmp_path / f"aus{schalter}.json"
        ergebnis = aufrufen(str(zwei), schalter, str(ziel))
        assert ergebnis.exit_code == 0, ergebnis.output
    assert (tmp_path / "aus-o.json").read_bytes() == (tmp_path / "aus--output.json").read_bytes()
    assert (tmp_path / "aus--ausgabe.json").read_bytes() == (tmp_path / "aus--output.json").read_bytes()


def test_befehlsname_ist_wurzelwerk_auswahl_auch_ueber_auswahl_py(tmp_path):
    """python auswahl.py und der installierte Befehl heißen in der Aufrufzeile gleich; die Zeile
    „Hilfe:“ nennt den Aufruf, wie er getippt wurde (nach .venv/bin/python auswahl.py nicht
    „wurzelwerk-auswahl -h“ – den Befehl gibt es dann oft nicht im PATH)."""
    hilfe = unterprozess("--help", cwd=tmp_path)
    assert hilfe.stdout.decode().startswith("Aufruf: wurzelwerk-auswahl [OPTIONEN] [DATEI.json]")
    assert "-o, --ausgabe, --output AUSGABE.json" in hilfe.stdout.decode()
    falsch = unterprozess("--bla", cwd=tmp_path)
    assert falsch.stderr.decode().splitlines() == [
        "Aufruf: wurzelwerk-auswahl [OPTIONEN] [DATEI.json]",
        f"Hilfe: {sys.executable} {HIER / 'auswahl.py'} -h",
        "Fehler: Unbekannte Option: --bla",
    ]
    # wie im README: im Klon, .venv/bin/python auswahl.py – ohne Argumente
    python = os.path.relpath(sys.executable, HIER)
    ohne = subprocess.run([python, "auswahl.py"], cwd=HIER, capture_output=True, text=True, timeout=120)
    assert ohne.returncode == 2 and ohne.stderr.splitlines()[1] == f"Hilfe: {python} auswahl.py -h", (
        ohne.stderr
    )
    # installiert: der Befehl, wie er heißt
    installiert = Path(sys.executable).parent / "wurzelwerk-auswahl"
    falsch = subprocess.run([installiert, "--bla"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert falsch.stderr.splitlines()[1] == "Hilfe: wurzelwerk-auswahl -h", falsch.stderr


def test_mit_entscheidung_traegt_regel_konsens_und_bereinigten_text(tmp_path):
    ziel = tmp_path / "mit.json"
    ergebnis = aufrufen(str(BEISPIEL), "--mit-entscheidung", "-o", str(ziel))
    assert ergebnis.exit_code == 0, ergebnis.output
    eingabe = json.loads(BEISPIEL.read_text("utf-8"))
    aus = json.loads(ziel.read_text("utf-8"))
    for vorher, nachher in zip(eingabe, aus, strict=True):
        e = waehle(vorher["extractions"])
        kandidat_ = vorher["extractions"].get(e.extraktor)
        roh = kandidat_.get("text") if isinstance(kandidat_, dict) else None
        assert nachher["selected_extractor"] == e.extraktor
        assert nachher["auswahl"] == {
            "regel": e.regel,
            "konsens": e.konsens,
            "text": bereinigen(roh) if isinstance(roh, str) else None,
        }
        # direkt hinter selected_extractor, der Rest wie in der Eingabe
        schluessel_ = list(nachher)
        assert schluessel_[schluessel_.index("selected_extractor") + 1] == "auswahl"
    assert aus[0]["auswahl"]["text"].startswith("Der Stadtrat von Wurzelhausen hat am Montagabend")
    assert aus[9]["auswahl"] == {"regel": "rueckfall", "konsens": 0, "text": None}


def test_ohne_mit_entscheidung_bleibt_die_ausgabe_wie_spezifiziert(tmp_path):
    aufrufen(str(BEISPIEL), "-o", str(tmp_path / "ohne.json"))
    aufrufen(str(BEISPIEL), "--mit-entscheidung", "-o", str(tmp_path / "mit.json"))
    ohne = json.loads((tmp_path / "ohne.json").read_text("utf-8"))
    mit = json.loads((tmp_path / "mit.json").read_text("utf-8"))
    assert all("auswahl" not in a for a in ohne)
    assert [{k: v for k, v in a.items() if k != "auswahl"} for a in mit] == ohne


def test_stdin_nach_stdout(zwei):
    ergebnis = aufrufen("-", eingabe=zwei.read_bytes())
    assert ergebnis.exit_code == 0, ergebnis.output
    assert [a["id"] for a in json.loads(ergebnis.stdout)] == ["a0", "a1"]
    assert "Ausgabe: stdout" in ergebnis.stderr
    assert "Je Regel" not in ergebnis.stdout


def test_stdin_in_eine_datei(tmp_path, zwei):
    ziel = tmp_path / "aus.json"
    ergebnis = aufrufen("-", "-o", str(ziel), eingabe=zwei.read_bytes())
    assert ergebnis.exit_code == 0, ergebnis.output
    assert ergebnis.stdout == ""
    assert len(json.loads(ziel.read_text("utf-8"))) == 2


def test_datei_nach_stdout_nur_json(tmp_path, zwei):
    ergebnis = aufrufen(str(zwei), "-o", "-")
    assert ergebnis.exit_code == 0, ergebnis.output
    json.loads(ergebnis.stdout)  # stdout ist reines JSON
    assert not (tmp_path / "daten_selected.json").exists()


# --- Inhalt: Felder, Reihenfolge, Überschreiben ------------------------------------------


def test_felder_und_reihenfolge_bleiben(tmp_path):
    daten = [
        {"zuerst": 1, "extractions": {"trafilatura": kandidat(TEXT_B, ""), "zusatz": [1, {"b": 2, "a": 1}]}},
        {"selected_extractor": "trafilatura", "z": None, "a": {"y": 1.5, "x": True}},
        {"extractions": {"readability": kandidat(TEXT_A)}, "selected_extractor": "alt", "danach": "bleibt"},
        {"titel": "Ölpreis „steigt“ – 😀", "extractions": "kein Objekt"},
    ]
    eingabe = ablegen(tmp_path / "d.json", daten)
    ergebnis = aufrufen(str(eingabe))
    assert ergebnis.exit_code == 0, ergebnis.output
    aus = json.loads((tmp_path / "d_selected.json").read_text("utf-8"))
    erwartet = [dict(a) for a in daten]
    erwartet[0]["selected_extractor"] = "trafilatura"  # neu: hinten angehängt
    erwartet[1]["selected_extractor"] = "newspaper4k"  # überschrieben an seiner Stelle (vorn)
    erwartet[2]["selected_extractor"] = "readability"  # überschrieben an seiner Stelle (Mitte)
    erwartet[3]["selected_extractor"] = "newspaper4k"
    assert geordnet(aus) == geordnet(erwartet)
    assert list(aus[1]) == ["selected_extractor", "z", "a"]
    assert list(aus[2]) == ["extractions", "selected_extractor", "danach"]
    roh = (tmp_path / "d_selected.json").read_bytes()
    assert "„steigt“ – 😀".encode() in roh  # UTF-8, nicht \u-maskiert


def test_eingabe_bleibt_unveraendert(tmp_path, zwei):
    vorher = zwei.read_bytes(), zwei.stat().st_mtime_ns
    assert aufrufen(str(zwei)).exit_code == 0
    assert (zwei.read_bytes(), zwei.stat().st_mtime_ns) == vorher


def test_ausgabe_ist_ein_artikel_je_zeile(tmp_path, zwei):
    aufrufen(str(zwei))
    zeilen = (tmp_path / "daten_selected.json").read_text("utf-8").splitlines()
    assert zeilen[0] == "[" and zeilen[-1] == "]" and len(zeilen) == 4
    assert json.loads(zeilen[1].rstrip(","))["id"] == "a0"


def test_leere_liste(tmp_path):
    eingabe = ablegen(tmp_path / "leer.json", [])
    ergebnis = aufrufen(str(eingabe))
    assert ergebnis.exit_code == 0, ergebnis.output
    assert (tmp_path / "leer_selected.json").read_text() == "[]\n"
    assert "0 Artikel entschieden" in ergebnis.stderr


def test_neue_ausgabe_bekommt_umask_rechte_bestehende_behaelt_ihre(tmp_path, zwei):
    alte_umask = os.umask(0o022)
    try:
        aufrufen(str(zwei))
        ziel = tmp_path / "daten_selected.json"
        assert ziel.stat().st_mode & 0o777 == 0o644  # nicht die 0600 von mkstemp
        ziel.chmod(0o640)
        aufrufen(str(zwei))
        assert ziel.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(alte_umask)


def test_nul_und_steuerzeichen_als_escape_sind_text(tmp_path):
    text = "Erste Zeile\u0000mit NUL und \u0007 Glocke, dann noch fünf Wörter mehr hier."
    eingabe = ablegen(tmp_path / "nul.json", [artikel(0, trafilatura=kandidat(text))])
    ergebnis = aufrufen(str(eingabe))
    assert ergebnis.exit_code == 0, ergebnis.output
    aus = json.loads((tmp_path / "nul_selected.json").read_text("utf-8"))
    assert aus[0]["extractions"]["trafilatura"]["text"] == text
    assert aus[0]["selected_extractor"] == "trafilatura"


def test_einzelnes_surrogat_wird_maskiert_geschrieben(tmp_path):
    # "\ud800" ist gültiges JSON, aber kein UTF-8: der Artikel geht mit \u-Escapes hinaus.
    roh = b'[{"id": 1, "extractions": {"newspaper4k": {"text": "eins zwei \\ud800 drei vier f\xc3\xbcnf"}}}]'
    eingabe = ablegen(tmp_path / "s.json", roh)
    ergebnis = aufrufen(str(eingabe))
    assert ergebnis.exit_code == 0, ergebnis.output
    aus = (tmp_path / "s_selected.json").read_bytes()
    aus.decode("utf-8")  # gültiges UTF-8
    assert json.loads(aus)[0]["extractions"] == json.loads(roh)[0]["extractions"]


def test_falsche_typen_sind_kein_fehler(tmp_path):
    daten = [
        artikel(0, newspaper4k="Zeichenkette", readability={"text": 42}, trafilatura={"text": ["Liste"]}),
        artikel(1, newspaper4k={"text": {"a": 1}}, readability=None, trafilatura=kandidat(TEXT_A, 0)),
        {"id": "ohne"},
        {"id": "liste", "extractions": [1, 2]},
    ]
    ergebnis = aufrufen(str(ablegen(tmp_path / "t.json", daten)))
    assert ergebnis.exit_code == 0, ergebnis.output
    aus = json.loads((tmp_path / "t_selected.json").read_text("utf-8"))
    assert [a["selected_extractor"] for a in aus] == [
        "newspaper4k",
        "trafilatura",
        "newspaper4k",
        "newspaper4k",
    ]
    assert "Ohne extractions-Objekt (Rückfall newspaper4k): 2 Artikel" in ergebnis.stderr


# --- Laute Warnung bei falschem Format -----------------------------------------------------


def test_falscher_feldname_extraction_warnt_mit_feld_und_artikel(tmp_path):
    daten = [{"id": f"a{i}", "extraction": {"trafilatura": kandidat(TEXT_A)}} for i in range(3)]
    ergebnis = aufrufen(str(ablegen(tmp_path / "f.json", daten)))
    assert ergebnis.exit_code == 0, ergebnis.output
    assert (
        "Warnung: kein Artikel hat das Feld „extractions“ – alle 3 fallen auf newspaper4k zurück. "
        "Artikel [0] (a0) hat „extraction“ (gemeint: extractions?)."
    ) in ergebnis.stderr
    # Die Regeln bleiben, wie sie sind: Rückfall, Ausgabe wie immer.
    aus = json.loads((tmp_path / "f_selected.json").read_text("utf-8"))
    assert [a["selected_extractor"] for a in aus] == ["newspaper4k"] * 3


def test_einzelner_artikel_mit_aehnlichem_feld_warnt_auch_neben_richtigen(tmp_path):
    daten = [
        artikel(0, newspaper4k=kandidat(TEXT_A), readability=kandidat(TEXT_A)),
        {"id": "a1", "extraktionen": {"readability": kandidat(TEXT_A)}},
    ]
    ergebnis = aufrufen(str(ablegen(tmp_path / "f.json", daten)))
    assert ergebnis.exit_code == 0, ergebnis.output
    assert (
        "Warnung: Artikel [1] (a1) hat „extraktionen“ (gemeint: extractions?) – "
        "der Artikel fällt auf newspaper4k zurück."
    ) in ergebnis.stderr
    streng = CliRunner().invoke(cli, [str(tmp_path / "f.json"), "--streng", "-o", str(tmp_path / "s.json")])
    assert streng.exit_code == EXIT_EINGABE, streng.output
    assert "Artikel [1] (a1) hat „extraktionen“ (gemeint: extractions?); --streng: nichts geschrieben." in (
        streng.stderr
    )
    assert not (tmp_path / "s.json").exists()


def test_ohne_aehnliches_feld_nennt_die_warnung_die_felder_des_artikels(tmp_path):
    daten = [{"id": 7, "kandidaten": {}, "url": "u"}]
    ergebnis = aufrufen(str(ablegen(tmp_path / "f.json", daten)))
    assert "Artikel [0] (7) hat die Felder „id“, „kandidaten“, „url“." in ergebnis.stderr


def test_kandidat_mit_content_statt_text_warnt_mit_artikel_und_kandidat(tmp_path):
    daten = [
        artikel(0, newspaper4k=kandidat(TEXT_A), readability=kandidat(TEXT_A)),
        artikel(1, newspaper4k={"content": TEXT_A, "error": None}, trafilatura={"error": "HTTP 404"}),
    ]
    ergebnis = aufrufen(str(ablegen(tmp_path / "k.json", daten)))
    assert ergebnis.exit_code == 0, ergebnis.output
    assert (
        "Warnung: Artikel [1] (a1), Kandidat „newspaper4k“: kein Feld „text“, aber „content“ – "
        "der Kandidat gilt als nicht verfügbar."
    ) in ergebnis.stderr
    assert "trafilatura" not in ergebnis.stderr.split("Je Extraktor")[0]  # nur error: kein Formfehler


def test_kandidatenwarnungen_hoechstens_zwanzig_einzeln(tmp_path):
    daten = [artikel(i, readability={"content": TEXT_A}) for i in range(25)]
    fehler = aufrufen(str(ablegen(tmp_path / "k.json", daten))).stderr
    assert fehler.count("kein Feld „text“") == 20
    assert (
        "Warnung: 5 weitere Kandidaten ohne „text“ mit unbekannten Feldern, nicht einzeln gezeigt." in fehler
    )


@pytest.mark.parametrize(
    ("daten", "satz"),
    [
        (
            [{"id": "x", "extraction": {}}],
            "Fehler: k.json: kein Artikel hat das Feld „extractions“",
        ),
        (
            [artikel(0, newspaper4k={"content": TEXT_A})],
            "Fehler: k.json: Artikel [0] (a0), Kandidat „newspaper4k“: kein Feld „text“, aber „content“",
        ),
    ],
    ids=["extraction", "content"],
)
def test_streng_macht_die_warnung_zum_fehler_und_schreibt_nichts(tmp_path, daten, satz):
    eingabe = ablegen(tmp_path / "k.json", daten)
    ergebnis = CliRunner().invoke(cli, [str(eingabe), "--streng"])
    assert ergebnis.exit_code == EXIT_EINGABE, ergebnis.output
    assert ergebnis.stderr.startswith(satz.replace("k.json", str(eingabe))), ergebnis.stderr
    assert "--streng: nichts geschrieben." in ergebnis.stderr
    assert not (tmp_path / "k_selected.json").exists()


def test_streng_ohne_befund_schreibt_wie_sonst(tmp_path, zwei):
    ergebnis = aufrufen(str(zwei), "--streng", "-o", str(tmp_path / "s.json"))
    assert ergebnis.exit_code == 0, ergebnis.output
    ohne = aufrufen(str(zwei), "-o", str(tmp_path / "o.json"))
    assert (tmp_path / "s.json").read_bytes() == (tmp_path / "o.json").read_bytes()
    assert "Warnung" not in ergebnis.stderr + ohne.stderr


def test_streng_gilt_nur_im_stapelbetrieb():
    ergebnis = aufrufen("--backfill", "--streng")
    assert ergebnis.exit_code == EXIT_AUFRUF
    assert "--streng gilt nur im Stapelbetrieb mit DATEI." in ergebnis.stderr


def streng_laden(roh: bytes):
    """json.loads, das NaN/Infinity nicht durchgehen lässt – wie jeder andere JSON-Leser."""

    def ablehnen(konstante):
        raise ValueError(f"{konstante} ist kein JSON")

    return json.loads(roh, parse_constant=ablehnen)


def test_grosse_und_genaue_zahlen_gehen_als_gueltiges_json_durch(tmp_path):
    # Ganze Zahlen bleiben exakt; Kommazahlen laufen über float: mehr als 17 Stellen werden gerundet.
    roh = (
        b'[{"z": 123456789012345678901234567890, "w": 1.5e300, "m": 1.7976931348623157e308, '
        b'"r": 1.00000000000000000001, "n": -0.0}]'
    )
    ergebnis = aufrufen(str(ablegen(tmp_path / "n.json", roh)))
    assert ergebnis.exit_code == 0, ergebnis.output
    aus = (tmp_path / "n_selected.json").read_bytes()
    assert (
        b'"z": 123456789012345678901234567890, "w": 1.5e+300, "m": 1.7976931348623157e+308, '
        b'"r": 1.0, "n": -0.0' in aus
    )
    assert streng_laden(aus)[0]["z"] == 123456789012345678901234567890


ZAHLFEHLER = {
    "nan": (b"NaN", "NaN ist keine JSON-Zahl"),
    "infinity": (b"Infinity", "Infinity ist keine JSON-Zahl"),
    "minus_infinity": (b"-Infinity", "-Infinity ist keine JSON-Zahl"),
    "ueberlauf": (b"1e400", "die Zahl 1e400 ist größer als eine Gleitkommazahl fasst"),
    "ueberlauf_negativ": (b"-2.5E+309", "die Zahl -2.5E+309 ist größer als eine Gleitkommazahl fasst"),
    "zu_viele_stellen": (b"9" * 5000, "eine ganze Zahl mit mehr als 4300 Stellen wird nicht gelesen"),
}


@pytest.mark.parametrize("fall", ZAHLFEHLER)
def test_zahl_ohne_gueltiges_json_wird_abgelehnt(tmp_path, fall):
    # Gültiges JSON hinein muss gültiges JSON hinaus geben: ±inf und NaN hätten keine Schreibweise.
    zahl, grund = ZAHLFEHLER[fall]
    roh = b'[{"id": 1, "extractions": {}},\n {"id": 2, "x": [1, ' + zahl + b'], "extractions": {}}]'
    eingabe = ablegen(tmp_path / "z.json", roh)
    (tmp_path / "z_selected.json").write_text("ALT", encoding="utf-8")
    vorher = zustand(tmp_path)
    ergebnis = aufrufen(str(eingabe))
    assert ergebnis.exit_code == EXIT_EINGABE, ergebnis.output
    assert ergebnis.stderr == f"Fehler: {eingabe}: Artikel [1]: {grund}" + ergebnis.stderr.split(grund)[1]
    assert ergebnis.stderr.count("\n") == 1 and "Traceback" not in ergebnis.stderr
    assert zustand(tmp_path) == vorher


def test_zahlfehler_ausserhalb_einer_liste_nennt_die_datei(tmp_path):
    ergebnis = aufrufen("-", eingabe=b'{"x": NaN}')
    assert ergebnis.exit_code == EXIT_EINGABE
    assert (
        ergebnis.stderr
        == "Fehler: stdin: NaN ist keine JSON-Zahl (nur endliche Zahlen sind gültiges JSON).\n"
    )
    assert ergebnis.stdout == ""


def test_zeile_schreibt_nie_nan_oder_infinity():
    for wert in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(ValueError):
            stapel.zeile({"x": wert})


# --- Zusammenfassung, Warnungen ---------------------------------------------------------


def test_zusammenfassung_zaehlt_extraktoren_regeln_und_namen(tmp_path):
    daten = [
        artikel(0, newspaper4k=kandidat(TEXT_A), readability=kandidat(TEXT_A)),
        artikel(1, Trafilatura=kandidat(TEXT_A), trafilatura=kandidat(TEXT_B)),
        artikel(2, Trafilatura=kandidat(TEXT_A), readabilty=kandidat(TEXT_A), boilerpipe=kandidat(TEXT_A)),
    ]
    ergebnis = aufrufen(str(ablegen(tmp_path / "z.json", daten)))
    assert ergebnis.exit_code == 0, ergebnis.output
    fehler = ergebnis.stderr
    assert "3 Artikel entschieden" in fehler
    assert re.search(r"newspaper4k\s+2\s+66,7 %", fehler)
    assert re.search(r"trafilatura\s+1\s+33,3 %", fehler)
    assert re.search(r"readability\s+0\s+0,0 %", fehler)
    assert re.search(r"gleichstand_rang\s+1\s", fehler)
    assert re.search(r"einziger\s+1\s", fehler)
    assert re.search(r"rueckfall\s+1\s", fehler)
    assert "„Trafilatura“: 2 (gemeint: trafilatura?)" in fehler
    assert "„readabilty“: 1 (gemeint: readability?)" in fehler
    assert "„boilerpipe“: 1\n" in fehler
    assert f"Ausgabe: {tmp_path / 'z_selected.json'}" in fehler
    # jede Regel steht da, auch mit 0
    for regel in REGELN:
        assert re.search(rf"^  {regel}\s+\d+", fehler, re.M), regel


def test_doppelte_schluessel_warnung_mit_index_letzter_gilt(tmp_path):
    roh = (
        '[{"id": 1, "extractions": {}},\n'
        ' {"id": 2, "id": 3, "extractions": {"trafilatura": {"text": "alt", "text": "' + TEXT_A + '"}}}]'
    )
    ergebnis = aufrufen(str(ablegen(tmp_path / "d.json", roh)))
    assert ergebnis.exit_code == 0, ergebnis.output
    assert (
        "Warnung: Artikel [1], (Artikel): Schlüssel „id“ doppelt – der letzte Wert gilt." in ergebnis.stderr
    )
    assert "Warnung: Artikel [1], extractions.trafilatura: Schlüssel „text“ doppelt" in ergebnis.stderr
    assert "Artikel [0]" not in ergebnis.stderr
    aus = json.loads((tmp_path / "d_selected.json").read_text("utf-8"))
    assert aus[1]["id"] == 3 and aus[1]["selected_extractor"] == "trafilatura"
    assert list(aus[1]) == ["id", "extractions", "selected_extractor"]


def test_doppelte_schluessel_hoechstens_zwanzig_einzeln(tmp_path):
    roh = "[" + ",".join('{"a": 1, "a": 2}' for _ in range(25)) + "]"
    ergebnis = aufrufen(str(ablegen(tmp_path / "d.json", roh)))
    assert ergebnis.exit_code == 0, ergebnis.output
    # (dazu käme die Warnung, dass kein Artikel extractions hat – hier nicht gemeint)
    warnungen = [z for z in ergebnis.stderr.splitlines() if z.startswith("Warnung") and "Schlüssel" in z]
    assert len(warnungen) == stapel.HOECHSTENS_WARNUNGEN + 1 == 21
    assert warnungen[19].startswith("Warnung: Artikel [19], (Artikel)")
    assert warnungen[20] == "Warnung: doppelte Schlüssel in 5 weiteren Objekten, nicht einzeln gezeigt."


def test_doppelte_schluessel_in_tiefer_verschachtelung(tmp_path):
    # Die Suche nach den Fundstellen kommt ohne Rekursion aus: 900 Ebenen, je ein Fund.
    roh = '[{"x": ' + '{"k": 1, "k": ' * 900 + "1" + "}" * 900 + "}]"
    ergebnis = aufrufen(str(ablegen(tmp_path / "t.json", roh)))
    assert ergebnis.exit_code == 0, ergebnis.output
    assert "Warnung: Artikel [0], x: Schlüssel „k“ doppelt" in ergebnis.stderr
    assert "in 880 weiteren Objekten" in ergebnis.stderr


def test_kein_fortschrittsbalken_ohne_terminal(tmp_path, zwei, monkeypatch):
    monkeypatch.setattr(stapel, "BALKEN_AB_BYTES", 0)
    ergebnis = aufrufen(str(zwei))
    assert ergebnis.exit_code == 0
    assert "Auswahl" not in ergebnis.stderr
    assert ergebnis.stderr.startswith("2 Artikel entschieden")


def test_fortschrittsbalken_auf_einem_terminal(tmp_path):
    # Ein echtes Pseudo-Terminal als stderr; die Eingabe liegt über der Schwelle.
    daten = [artikel(i, trafilatura=kandidat(TEXT_A + " " + "x" * 400)) for i in range(12000)]
    eingabe = ablegen(tmp_path / "gross.json", daten)
    assert eingabe.stat().st_size >= stapel.BALKEN_AB_BYTES
    haupt, neben = pty.openpty()
    prozess = subprocess.Popen(
        [sys.executable, str(HIER / "auswahl.py"), str(eingabe)],
        cwd=tmp_path,
        stderr=neben,
        stdout=subprocess.PIPE,
    )
    os.close(neben)
    gelesen = b""
    while True:
        try:
            stueck = os.read(haupt, 65536)
        except OSError:  # EIO: das Terminal ist zu
            break
        if not stueck:
            break
        gelesen += stueck
    os.close(haupt)
    assert prozess.wait(timeout=120) == 0
    text = gelesen.decode("utf-8", "replace")
    assert "Auswahl" in text and "12000/12000" in text
    assert prozess.stdout.read() == b""


# --- Fehler: eine Meldung, nichts geschrieben -----------------------------------------


KAPUTT = {
    "fehlend": (None, "Die Eingabedatei {datei} gibt es nicht."),
    "leer": (b"", "{datei} ist leer; erwartet wird eine JSON-Liste von Artikeln."),
    "nur_leerraum": (b" \n\t\n", "{datei} ist leer"),
    "json_kaputt": (
        b'[\n {"id": 1},\n {"id": 2 "x": 3}\n]',
        "{datei} ist kein gültiges JSON: Zeile 3, Spalte 11: Komma erwartet.",
    ),
    "abgeschnitten": (b'[{"id": 1, "extractions": {', "{datei} ist kein gültiges JSON: Zeile 1, Spalte 28: "),
    "komma_zu_viel": (b'[{"id": 1},]', "Zeile 1, Spalte 12: Wert erwartet."),
    "daten_danach": (b"[] []", "Zeile 1, Spalte 4: weitere Daten nach dem Ende des JSON-Werts."),
    "nul_roh_im_string": (b'[{"t": "a\x00b"}]', "Zeile 1, Spalte 10: Steuerzeichen in einer Zeichenkette"),
    "utf8_kaputt": (
        b'[{"id": 1},\n {"t": "Gr\xfc\xdfe"}]',
        "{datei} ist kein gültiges UTF-8: Byte 22 (Zeile 2) ist 0xfc (invalid start byte).",
    ),
    "latin1": (b'["\xe4"]', "kein gültiges UTF-8: Byte 2 (Zeile 1) ist 0xe4"),
    "objekt_oben": (b'{"extractions": {}}', "{datei}: oben steht ein Objekt; erwartet wird eine JSON-Liste"),
    "zahl_oben": (b"42", "{datei}: oben steht eine Zahl;"),
    "null_oben": (b"null", "{datei}: oben steht null;"),
    "artikel_zahl": (
        b'[{"id": 1}, {"id": 2}, 7]',
        "{datei}: Artikel [2] ist kein Objekt, sondern eine Zahl.",
    ),
    "artikel_liste": (b"[{}, [1]]", "{datei}: Artikel [1] ist kein Objekt, sondern eine Liste."),
    "artikel_string": (b'["text"]', "Artikel [0] ist kein Objekt, sondern eine Zeichenkette."),
    "artikel_null": (b"[{}, {}, {}, null]", "Artikel [3] ist kein Objekt, sondern null."),
    "artikel_bool": (b"[true]", "Artikel [0] ist kein Objekt, sondern ein Wahrheitswert."),
    "tief": (
        b'[{"extractions": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]",
        "{datei} ist zu tief verschachtelt",
    ),
}


@pytest.mark.parametrize("fall", KAPUTT)
def test_kaputte_eingabe(tmp_path, fall):
    roh, meldung = KAPUTT[fall]
    eingabe = tmp_path / "eingabe.json"
    if roh is not None:
        eingabe.write_bytes(roh)
    ziel = tmp_path / "eingabe_selected.json"
    ziel.write_text("ALT", encoding="utf-8")
    vorher = zustand(tmp_path)
    ergebnis = aufrufen(str(eingabe))
    assert ergebnis.exit_code == EXIT_EINGABE, ergebnis.output
    assert ergebnis.stderr.startswith("Fehler: "), ergebnis.stderr
    assert meldung.format(datei=eingabe) in ergebnis.stderr
    assert ergebnis.stderr.count("\n") == 1  # ein Satz, kein Traceback, keine Zusammenfassung
    assert ergebnis.stdout == ""
    assert zustand(tmp_path) == vorher  # Ausgabe unberührt, keine temporäre Datei


@pytest.mark.parametrize("fall", ["json_kaputt", "artikel_zahl", "utf8_kaputt"])
def test_kaputte_eingabe_von_stdin_schreibt_nichts_nach_stdout(fall):
    roh, meldung = KAPUTT[fall]
    ergebnis = aufrufen("-", eingabe=roh)
    assert ergebnis.exit_code == EXIT_EINGABE
    assert ergebnis.stdout == ""
    assert ergebnis.stderr.startswith("Fehler: stdin") and meldung.format(datei="stdin") in ergebnis.stderr


def test_eingabe_ohne_leserechte_exit_1_und_nichts_geschrieben(tmp_path):
    eingabe = ablegen(tmp_path / "geheim.json", BEISPIEL.read_bytes())
    eingabe.chmod(0)
    p = ohne_leserechte("geheim.json", cwd=tmp_path)
    fehler = p.stderr
    assert p.returncode == EXIT_EINGABE, fehler
    assert fehler == "Fehler: Die Eingabedatei geheim.json ist nicht lesbar: keine Leserechte.\n"
    assert [f.name for f in tmp_path.iterdir()] == ["geheim.json"]


def test_byte_order_mark_ist_erlaubt(tmp_path, zwei):
    eingabe = ablegen(tmp_path / "bom.json", b"\xef\xbb\xbf" + zwei.read_bytes())
    ergebnis = aufrufen(str(eingabe))
    assert ergebnis.exit_code == 0, ergebnis.output
    assert not (tmp_path / "bom_selected.json").read_bytes().startswith(b"\xef\xbb\xbf")


def test_zielverzeichnis_fehlt(tmp_path, zwei):
    ziel = tmp_path / "gibtsnicht" / "aus.json"
    vorher = zustand(tmp_path)
    ergebnis = aufrufen(str(zwei), "-o", str(ziel))
    assert ergebnis.exit_code == EXIT_EINGABE
    assert ergebnis.stderr == (f"Fehler: Das Verzeichnis der Ausgabe {ziel} gibt es nicht: {ziel.parent}\n")
    assert zustand(tmp_path) == vorher and not ziel.parent.exists()


def test_ausgabe_gleich_eingabe_wird_abgelehnt(tmp_path, zwei):
    vorher = zwei.read_bytes()
    ergebnis = aufrufen(str(zwei), "-o", str(tmp_path / "." / "daten.json"))
    assert ergebnis.exit_code == EXIT_EINGABE
    assert "ist die Eingabedatei selbst" in ergebnis.stderr
    assert zwei.read_bytes() == vorher


def test_verzeichnis_als_ein_oder_ausgabe_ist_ein_aufruffehler(tmp_path, zwei):
    assert aufrufen(str(tmp_path)).exit_code == EXIT_AUFRUF
    assert aufrufen(str(zwei), "-o", str(tmp_path)).exit_code == EXIT_AUFRUF


def fifo_lesen(pfad: Path) -> threading.Thread:
    """Liest eine FIFO in einem Faden aus; das Ergebnis steht danach in .inhalt."""

    def lesen():
        with pfad.open("rb") as f:
            faden.inhalt = f.read()

    faden = threading.Thread(target=lesen, daemon=True)
    faden.start()
    return faden


def test_ausgabe_in_eine_fifo_ersetzt_sie_nicht(tmp_path, zwei):
    # Wie /dev/null oder /dev/stdout: hineinschreiben, nie durch eine Datei ersetzen.
    fifo = tmp_path / "aus.fifo"
    os.mkfifo(fifo)
    faden = fifo_lesen(fifo)
    ergebnis = aufrufen(str(zwei), "-o", str(fifo))
    faden.join(timeout=30)
    assert ergebnis.exit_code == 0, ergebnis.output
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert len(json.loads(faden.inhalt)) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aus.fifo", "daten.json"]


def test_eingabe_aus_einer_fifo_geht_ohne_o_nach_stdout(tmp_path, zwei):
    # python auswahl.py <(cat daten.json): neben /dev/fd/63 ist kein Platz für eine Datei.
    fifo = tmp_path / "ein.fifo"
    os.mkfifo(fifo)

    def schreiben():
        with fifo.open("wb") as f:
            f.write(zwei.read_bytes())

    faden = threading.Thread(target=schreiben, daemon=True)
    faden.start()
    ergebnis = aufrufen(str(fifo))
    faden.join(timeout=30)
    assert ergebnis.exit_code == 0, ergebnis.output
    assert [a["id"] for a in json.loads(ergebnis.stdout)] == ["a0", "a1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["daten.json", "ein.fifo"]


def test_kaputte_eingabe_aus_einer_fifo_nennt_zeile_und_spalte(tmp_path):
    # <(cat kaputt.json): die FIFO ist nach dem ersten Lesen leer; die Meldung braucht die Bytes von dort.
    # Im Unterprozess mit Zeitlimit: ein zweites open() der FIFO bliebe ohne Schreiber hängen.
    fifo = tmp_path / "kaputt.fifo"
    os.mkfifo(fifo)

    def schreiben():
        with fifo.open("wb") as f:
            f.write('[{"t": "Grüße – „x“"},\n {"t": "ä" "u": 1}]'.encode())

    faden = threading.Thread(target=schreiben, daemon=True)
    faden.start()
    try:
        p = subprocess.run(
            [sys.executable, str(HIER / "auswahl.py"), "kaputt.fifo"],
            cwd=tmp_path,
            capture_output=True,
            timeout=30,
        )
    finally:
        if faden.is_alive():  # der Unterprozess hat die FIFO nie geöffnet: den Schreiber freigeben
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        faden.join(timeout=30)
    assert p.returncode == EXIT_EINGABE
    meldung = "Fehler: kaputt.fifo ist kein gültiges JSON: Zeile 2, Spalte 12: Komma erwartet.\n"
    assert p.stderr.decode("utf-8") == meldung
    assert p.stdout == b""


def test_symbolischer_link_bleibt_link(tmp_path, zwei):
    (tmp_path / "echt").mkdir()
    echt = tmp_path / "echt" / "ergebnis.json"
    echt.write_text("ALT")
    link = tmp_path / "link.json"
    link.symlink_to(echt)
    ergebnis = aufrufen(str(zwei), "-o", str(link))
    assert ergebnis.exit_code == 0, ergebnis.output
    assert link.is_symlink() and link.resolve() == echt
    assert len(json.loads(echt.read_text("utf-8"))) == 2
    assert [p.name for p in (tmp_path / "echt").iterdir()] == ["ergebnis.json"]


# --- Atomar: Abbruch und Schreibfehler ----------------------------------------------------


def test_abbruch_beim_schreiben_laesst_alte_ausgabe_und_keinen_rest(tmp_path, zwei, monkeypatch):
    ziel = tmp_path / "daten_selected.json"
    ziel.write_text("ALT")
    vorher = zustand(tmp_path)

    def teile_mit_strg_c(zeilen):
        yield b"[\n"
        yield zeilen[0]
        raise KeyboardInterrupt

    monkeypatch.setattr(stapel, "teile", teile_mit_strg_c)
    ergebnis = aufrufen(str(zwei))
    assert ergebnis.exit_code == EXIT_ABGEBROCHEN
    assert ergebnis.stderr == (
        "Fehler: Abgebrochen; nichts geschrieben, eine bestehende Ausgabe bleibt unverändert.\n"
    )
    assert zustand(tmp_path) == vorher


def test_abbruch_beim_entscheiden(tmp_path, zwei, monkeypatch):
    def strg_c(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(stapel, "waehle", strg_c)
    vorher = zustand(tmp_path)
    ergebnis = aufrufen(str(zwei))
    assert ergebnis.exit_code == EXIT_ABGEBROCHEN
    assert zustand(tmp_path) == vorher


def test_abbruch_vor_der_stichprobe_laesst_die_vollstaendige_ausgabe(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ziel = tmp_path / "aus.json"

    def strg_c(*_, **__):
        raise KeyboardInterrupt

    monkeypatch.setattr(stichprobe, "schreiben", strg_c)
    ergebnis = aufrufen(str(BEISPIEL), "-o", str(ziel), "--stichprobe", "2")
    assert ergebnis.exit_code == EXIT_ABGEBROCHEN
    assert ergebnis.stderr == f"Fehler: Abgebrochen vor der Stichprobe; die Ausgabe {ziel} ist vollständig.\n"
    assert len(json.loads(ziel.read_text(encoding="utf-8"))) == len(
        json.loads(BEISPIEL.read_text(encoding="utf-8"))
    )
    assert not list(tmp_path.glob("stichprobe-*.csv"))


def test_schreibfehler_raeumt_auf(tmp_path):
    ziel = tmp_path / "aus.json"
    ziel.write_text("ALT")

    def voll():
        yield b"[\n"
        raise OSError(28, "No space left on device")

    with pytest.raises(EingabeFehler, match=r"Die Ausgabe .*aus\.json konnte nicht geschrieben werden"):
        stapel.schreiben_atomar(str(ziel), voll())
    assert zustand(tmp_path) == {"aus.json": b"ALT"}


def test_schreiben_atomar_ersetzt_ganz(tmp_path):
    ziel = tmp_path / "aus.json"
    ziel.write_text("ALT")
    stapel.schreiben_atomar(str(ziel), [b"[", b"]\n"])
    assert zustand(tmp_path) == {"aus.json": b"[]\n"}


# --- Stichprobe -----------------------------------------------------------------------


def test_stichprobe_schreibt_csv_in_zweifelsordnung(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ergebnis = aufrufen(str(BEISPIEL), "-o", str(tmp_path / "aus.json"), "--stichprobe", "11")
    assert ergebnis.exit_code == 0, ergebnis.output
    assert ergebnis.stdout == ""
    # die Zeile nennt beide Dateien, die CSV und die Prüfseite daneben
    treffer = re.search(r"^Stichprobe: (.+\.csv) und (.+\.html)$", ergebnis.stderr, re.M)
    assert treffer, ergebnis.stderr
    pfad = Path(treffer.group(1))
    assert pfad.parent == tmp_path and pfad.name.startswith("stichprobe-auswahl-")
    assert Path(treffer.group(2)) == pfad.with_suffix(".html") and pfad.with_suffix(".html").is_file()
    with pfad.open(encoding="utf-8", newline="") as f:
        zeilen = list(csv.DictReader(f))
    assert len(zeilen) == 11
    # Zweifel 1 (kein Kandidat, kein Konsens, nur einer), dann nach dem Abstand der Wahl zum
    # nächsten Kandidaten: 0,33, 0,27, 0,02 (Artikel 2, bestätigt); fast gleiche (Artikel 3, 4)
    # zuletzt; bei gleichem Zweifel in Dateireihenfolge
    assert [(z["schluessel"], z["regel"]) for z in zeilen] == [
        ("wz-2026-0010", "rueckfall"),
        ("wz-2026-0011", "rueckfall"),
        ("wz-2026-0005", "ohne_konsens_median"),
        ("wz-2026-0006", "ohne_konsens_groesster"),
        ("wz-2026-0007", "einziger"),
        ("wz-2026-0008", "einziger"),
        ("wz-2026-0012", "einziger"),
        ("wz-2026-0013", "einziger"),
        ("wz-2026-0001", "bester_score"),
        ("wz-2026-0009", "bester_score"),
        ("wz-2026-0002", "gleichstand_kuerzester"),
    ]
    assert zeilen[0]["url"] == "https://tagblatt.example/lokales/geloescht"
    assert zeilen[10]["marge"] == "0.0112" and zeilen[10]["zweifel_grund"] == "bestaetigt"
    assert zeilen[10]["readability_anfang"].startswith("Die Brücke über die Moosach")


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_stichprobe_ist_nur_fuer_den_eigentuemer_lesbar(umask, tmp_path, monkeypatch):
    """CSV und Prüfseite tragen volle Texte: 0600 wie .env, gleich welche umask (nicht 0644 unter
    der üblichen umask 022, nicht 0666 unter 000)."""
    monkeypatch.chdir(tmp_path)
    alt = os.umask(umask)
    try:
        ergebnis = aufrufen(str(BEISPIEL), "-o", str(tmp_path / "aus.json"), "--stichprobe", "3")
    finally:
        os.umask(alt)
    assert ergebnis.exit_code == 0, ergebnis.output
    dateien = sorted(tmp_path.glob("stichprobe-*"))
    assert [d.suffix for d in dateien] == [".csv", ".html"]
    assert {d.stat().st_mode & 0o777 for d in dateien} == {0o600}


def test_stichprobe_bei_stdout_bleibt_stdout_reines_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ergebnis = aufrufen("-", "--stichprobe", "2", eingabe=BEISPIEL.read_bytes())
    assert ergebnis.exit_code == 0, ergebnis.output
    assert len(json.loads(ergebnis.stdout)) == 13
    assert "Stichprobe: " in ergebnis.stderr and ".csv" not in ergebnis.stdout
    assert len(list(tmp_path.glob("stichprobe-*.csv"))) == 1


def test_stichprobe_schluessel_ohne_id_ist_der_index(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    daten = [{"extractions": {}}, {"item_id": 17}, {"id": True}]
    aufrufen(str(ablegen(tmp_path / "x.json", daten)), "--stichprobe", "5")
    with next(tmp_path.glob("stichprobe-*.csv")).open(encoding="utf-8") as f:
        assert sorted(z["schluessel"] for z in csv.DictReader(f)) == ["17", "[0]", "[2]"]


# --- Das Beispiel (jede Regel wie in beispiele/README.md: test_auswahl.py) -------------------


def test_beispiel_hat_die_felder_fuer_die_demo():
    daten = json.loads(BEISPIEL.read_text("utf-8"))
    slots = set()
    for a in daten:
        assert list(a)[:6] == ["id", "item_id", "haus", "titel", "url", "slot"]
        assert isinstance(a["item_id"], int) and a["url"].startswith("https://")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", a["slot"])
        slots.add(a["slot"])
    assert 2 <= len(slots) <= 3
    texte = json.dumps(daten)
    for zeichen in ("\\u00ad", "&amp;", "<p>", "&nbsp;"):  # Markup, Entitäten, weiches Trennzeichen
        assert zeichen in texte
    assert any(k.get("error") for a in daten for k in a["extractions"].values() if isinstance(k, dict))
    assert any(set(a["extractions"]) - set(PRIORITAET) for a in daten)


# --- Der echte Einstieg: python auswahl.py ---------------------------------------------------


def test_unterprozess_erfolg_stdin_stdout(tmp_path):
    p = unterprozess("-", cwd=tmp_path, eingabe=BEISPIEL.read_bytes())
    assert p.returncode == 0, p.stderr.decode()
    assert [a["item_id"] for a in json.loads(p.stdout)] == list(range(1, 14))
    fehler = p.stderr.decode("utf-8")
    assert fehler.startswith("13 Artikel entschieden") and "Ausgabe: stdout" in fehler
    assert list(tmp_path.iterdir()) == []


def test_unterprozess_voreinstellung(tmp_path):
    eingabe = ablegen(tmp_path / "b.json", BEISPIEL.read_bytes())
    p = unterprozess("b.json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout == b""
    assert (tmp_path / "b_selected.json").exists() and eingabe.read_bytes() == BEISPIEL.read_bytes()


@pytest.mark.parametrize(
    ("args", "roh", "code", "anfang"),
    [
        (["fehlt.json"], None, EXIT_EINGABE, "Fehler: Die Eingabedatei fehlt.json gibt es nicht."),
        (
            ["-"],
            b"[1,",
            EXIT_EINGABE,
            "Fehler: stdin ist kein gültiges JSON: Zeile 1, Spalte 4: Wert erwartet.",
        ),
        (["-"], b"[\xff]", EXIT_EINGABE, "Fehler: stdin ist kein gültiges UTF-8: Byte 1 (Zeile 1) ist 0xff"),
        (["-"], b"[" * 50_000, EXIT_EINGABE, "Fehler: stdin ist zu tief verschachtelt"),
        (["-", "--backfill"], b"[]", EXIT_AUFRUF, "Aufruf:"),
        (["-", "--stichprobe", "0"], b"[]", EXIT_AUFRUF, "Aufruf:"),
    ],
)
def test_unterprozess_fehler(tmp_path, args, roh, code, anfang):
    p = unterprozess(*args, cwd=tmp_path, eingabe=roh or b"")
    fehler = p.stderr.decode("utf-8")
    assert p.returncode == code, fehler
    assert fehler.startswith(anfang), fehler
    assert "Traceback" not in fehler
    assert p.stdout == b""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("signal_nr", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_unterprozess_signal_hinterlaesst_nichts(tmp_path, signal_nr):
    """Strg-C oder kill mitten im Lauf: Exit 130, keine Ausgabe, keine temporäre Datei.

    Ohne Zeitrennen: die Eingabe kommt aus einer FIFO. Öffnet der Test sie zum
    Schreiben, ist der Lauf sicher schon in stapel() (sie öffnet erst das Lesen
    der Eingabe); nach der Hälfte der Daten wartet er auf den Rest – und dann
    kommt das Signal. Ein schneller Rechner kann nicht vorher fertig sein, und
    die halbe Datei wäre ohne das Signal ein Eingabefehler (Exit 1), kein Erfolg.
    """
    fifo = tmp_path / "eingabe.fifo"
    os.mkfifo(fifo)
    bestehend = ablegen(tmp_path / "aus.json", "alt")
    prozess = subprocess.Popen(
        [sys.executable, str(HIER / "auswahl.py"), str(fifo), "-o", str(bestehend)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    roh = json.dumps([artikel(i, trafilatura=kandidat(TEXT_A)) for i in range(200)]).encode()
    with fifo.open("wb") as schreiber:  # blockiert, bis der Lauf die FIFO liest
        schreiber.write(roh[: len(roh) // 2])
        schreiber.flush()
        prozess.send_signal(signal_nr)
    # Das Ende der FIFO weckt einen read(), der das Signal knapp verpasste (kam es
    # zwischen zwei Systemaufrufen in C an, prüft Python es erst danach) – vor dem Parsen.
    _, stderr = prozess.communicate(timeout=60)
    fehler = stderr.decode("utf-8")
    assert prozess.returncode == EXIT_ABGEBROCHEN, fehler
    assert fehler.startswith("Fehler: Abgebrochen; nichts geschrieben"), fehler
    assert "Traceback" not in fehler
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aus.json", "eingabe.fifo"]
    assert bestehend.read_text() == "alt"


def test_sigterm_handler_wird_wiederhergestellt(tmp_path, zwei):
    vorher = signal.getsignal(signal.SIGTERM)
    stapel.stapel(str(zwei), str(tmp_path / "aus.json"))
    assert signal.getsignal(signal.SIGTERM) == vorher


# --- Eigenschaften ---------------------------------------------------------------------------

WOERTER = ["der", "rat", "hat", "den", "haushalt", "beschlossen", "brücke", "gesperrt", "<b>", "&amp;"]
NAMEN = [*PRIORITAET, "Trafilatura", "boilerpipe"]
eintraege = st.one_of(
    st.builds(
        lambda woerter, fehler: {"text": " ".join(woerter), "error": fehler},
        st.lists(st.sampled_from(WOERTER), max_size=14),
        st.sampled_from([None, "", "HTTP 500"]),
    ),
    st.none(),
    st.integers(),
    st.text(max_size=5),
    st.fixed_dictionaries({"text": st.one_of(st.none(), st.integers(), st.lists(st.text(max_size=3)))}),
)
artikel_listen = st.lists(
    st.fixed_dictionaries(
        {"extractions": st.dictionaries(st.sampled_from(NAMEN), eintraege, max_size=5)},
        optional={"selected_extractor": st.text(max_size=4), "id": st.integers()},
    ),
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(daten=artikel_listen, saat=st.integers())
def test_ausgabe_gleich_waehle_je_artikel_in_jeder_schluesselreihenfolge(tmp_path, daten, saat):
    eingabe = ablegen(tmp_path / "p.json", daten)
    ziel = tmp_path / "p_aus.json"
    stapel.stapel(str(eingabe), str(ziel))
    aus = json.loads(ziel.read_text("utf-8"))
    assert len(aus) == len(daten)
    for vorher, nachher in zip(daten, aus, strict=True):
        extraktionen = list(vorher["extractions"].items())
        random.Random(saat).shuffle(extraktionen)
        assert nachher["selected_extractor"] == waehle(dict(extraktionen)).extraktor
        ohne = {k: v for k, v in nachher.items() if k != "selected_extractor" or k in vorher}
        ohne.pop("selected_extractor", None)
        assert geordnet(ohne) == geordnet({k: v for k, v in vorher.items() if k != "selected_extractor"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json", "p_aus.json"]


json_werte = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda kinder: st.lists(kinder) | st.dictionaries(st.text(), kinder),
    max_leaves=20,
)


# Mit NaN, ±Infinity (json.dumps schreibt sie) und Zahltexten, die als float überlaufen.
zahlen_aller_art = st.recursive(
    st.floats() | st.integers() | st.sampled_from(["1e400", "-1E309", "1.00000000000000000001", "1e308"]),
    lambda kinder: st.lists(kinder, max_size=3) | st.dictionaries(st.sampled_from("ab"), kinder, max_size=2),
    max_leaves=6,
).map(lambda w: re.sub(r'"(-?1[eE.][0-9]+)"', r"\1", json.dumps(w)).encode())


@settings(max_examples=300, deadline=None)
@given(
    roh=st.one_of(json_werte.map(lambda w: json.dumps(w).encode()), st.binary(max_size=60), zahlen_aller_art)
)
def test_beliebige_eingabe_gibt_ergebnis_oder_eingabefehler(tmp_path, roh):
    eingabe = ablegen(tmp_path / "f.json", roh)
    ziel = tmp_path / "f_aus.json"
    ziel.unlink(missing_ok=True)
    try:
        stapel.stapel(str(eingabe), str(ziel))
    except EingabeFehler as e:
        assert e.format_message() and "\n" not in e.format_message()
        assert not ziel.exists()
    else:
        # was hinausgeht, liest jeder JSON-Leser – auch einer ohne NaN/Infinity
        assert len(streng_laden(ziel.read_bytes())) == len(json.loads(roh))
    assert sorted(p.name for p in tmp_path.iterdir()) in (["f.json"], ["f.json", "f_aus.json"])


# --- Sparsames Laden: breite Zeichen als \\u-Escapes, derselbe Wert ------------------------


@settings(max_examples=300, deadline=None)
@given(text=st.text(), stueck=st.integers(min_value=1, max_value=9))
def test_maskieren_gibt_denselben_wert_an_jeder_schnittstelle(text, stueck):
    roh = json.dumps(text, ensure_ascii=False).encode("utf-8")  # st.text() kennt keine Surrogate
    maskiert = jsoneingabe._maskieren(roh, stueck)
    assert all(byte < 0xC4 for byte in maskiert)  # nur noch ASCII und Latin-1
    assert json.loads(maskiert.decode("utf-8")) == text


@settings(max_examples=150, deadline=None)
@given(daten=st.lists(st.dictionaries(st.text(max_size=4), json_werte, max_size=3), max_size=4))
def test_laden_gleich_json_loads(tmp_path, daten):
    eingabe = ablegen(tmp_path / "l.json", json.dumps(daten, ensure_ascii=False))
    artikel, groesse = stapel.laden(str(eingabe))
    assert geordnet(artikel) == geordnet(daten) and groesse == eingabe.stat().st_size


@pytest.mark.parametrize(
    ("roh", "meldung"),
    [
        # Spalte zählt Zeichen der Datei, nicht der maskierten Fassung
        ('[{"t": "’’’ 😀 ‚x‘"} {"u": 1}]'.encode(), "Zeile 1, Spalte 21: Komma erwartet."),
        ('[{"t": "a"},\n {"t": "€€€", "u": 1,}]'.encode(), "Zeile 2, Spalte 22: Schlüssel in doppelten"),
        ('["\\’"]'.encode(), "Zeile 1, Spalte 3: ungültige Escape-Folge."),
        (b'["\xe2\x80 kaputt \xe2\x80\x99"]', "kein gültiges UTF-8: Byte 2 (Zeile 1) ist 0xe2"),
        (b'["\xed\xa0\x80"]', "kein gültiges UTF-8: Byte 2 (Zeile 1) ist 0xed"),  # Surrogat in UTF-8
    ],
)
@pytest.mark.parametrize("ueber_stdin", [False, True])
def test_fehlerstellen_mit_breiten_zeichen(tmp_path, roh, meldung, ueber_stdin):
    argument = "-" if ueber_stdin else str(ablegen(tmp_path / "w.json", roh))
    ergebnis = aufrufen(argument, eingabe=roh if ueber_stdin else None)
    assert ergebnis.exit_code == EXIT_EINGABE
    assert meldung in ergebnis.stderr, ergebnis.stderr


# --- Große Eingabe: Speicher und Zeit ----------------------------------------------------------


def grosse_datei(pfad: Path, ziel_bytes: int) -> int:
    """Echte Artikel (die 181 Seiten aus bench, sonst das Beispiel) wiederholt, bis ``ziel_bytes`` erreicht."""
    quelle = BENCH
    zeilen = [json.dumps(a, ensure_ascii=False).encode() for a in json.loads(quelle.read_text("utf-8"))]
    geschrieben = anzahl = 0
    with pfad.open("wb") as f:
        f.write(b"[\n")
        while geschrieben < ziel_bytes:
            zeile = zeilen[anzahl % len(zeilen)]
            f.write((b",\n" if anzahl else b"") + zeile)
            geschrieben += len(zeile) + 2
            anzahl += 1
        f.write(b"\n]\n")
    return anzahl


@pytest.mark.langsam
def test_100_mb_speicher_proportional(tmp_path):
    eingabe = tmp_path / "gross.json"
    anzahl = grosse_datei(eingabe, 100 * 10**6)
    groesse = eingabe.stat().st_size
    messen = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "r = subprocess.run(sys.argv[1:], capture_output=True); "
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.perf_counter() - t)"
    )
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            messen,
            sys.executable,
            str(HIER / "auswahl.py"),
            str(eingabe),
            "-o",
            "aus.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    code, kib, sekunden = p.stdout.split()
    spitze = int(kib) * 1024
    print(
        f"\n{anzahl} Artikel, {groesse / 1e6:.1f} MB: Spitze {spitze / 1e6:.0f} MB RSS "
        f"({spitze / groesse:.1f}× der Eingabe), {float(sekunden):.1f} s"
    )
    assert code == "0"
    assert len(json.loads((tmp_path / "aus.json").read_bytes())) == anzahl
    assert spitze < 5 * groesse  # gemessen 3,8×; json.load allein braucht 8,3×


# --- Artikel einzeln (jsoneingabe.artikel_einzeln, der Weg von --einlesen) ----------------------


def einzeln(pfad: Path, stueck: int) -> list[dict]:
    return [a for _, a in jsoneingabe.artikel_einzeln(str(pfad), stueck=stueck)]


@settings(max_examples=200, deadline=None)
@given(
    daten=st.lists(st.dictionaries(st.text(max_size=4), json_werte, max_size=3), max_size=5),
    einrueckung=st.sampled_from([None, 0, 2]),
    bom=st.booleans(),
    stueck=st.integers(min_value=1, max_value=16),
)
def test_einzeln_gibt_dieselben_artikel_wie_json_loads(tmp_path, daten, einrueckung, bom, stueck):
    """An jeder Stückgrenze – mitten in einem Zeichen, einer Zahl, einem Escape – derselbe Wert."""
    roh = ("\ufeff" if bom else "") + json.dumps(daten, ensure_ascii=False, indent=einrueckung)
    eingabe = ablegen(tmp_path / "e.json", roh.encode("utf-8"))
    assert geordnet(einzeln(eingabe, stueck)) == geordnet(daten)


@settings(max_examples=300, deadline=None)
@given(
    daten=st.lists(st.dictionaries(st.text(max_size=3), json_werte, max_size=2), min_size=1, max_size=3),
    stelle=st.floats(min_value=0, max_value=1),
    einschub=st.sampled_from(
        ["", "[", "]", "{", "}", ",", ":", '"', "\\", "1", "e", "-", "NaN", "\x00", "\xff"]
    ),
    kuerzen=st.booleans(),
    stueck=st.integers(min_value=1, max_value=16),
)
def test_einzeln_scheitert_genau_dort_wo_parsen_scheitert(tmp_path, daten, stelle, einschub, kuerzen, stueck):
    """Verdorbenes JSON: entweder dieselben Artikel wie parsen, oder Unregelmaessig, und dann
    meldet parsen einen Eingabefehler – nie ein anderes Ergebnis, nie ein stiller Abbruch."""
    text = json.dumps(daten, ensure_ascii=False)
    i = int(stelle * len(text))
    text = text[:i] if kuerzen else text[:i] + einschub + text[i:]
    roh = text.encode("utf-8", "surrogatepass").replace("\xff".encode(), b"\xff")  # auch kaputtes UTF-8
    eingabe = ablegen(tmp_path / "v.json", roh)
    try:
        erwartet = jsoneingabe.parsen(jsoneingabe.dekodieren(roh, "v.json"), "v.json")
    except EingabeFehler:
        erwartet = None
    try:
        gelesen = einzeln(eingabe, stueck)
    except jsoneingabe.Unregelmaessig:
        gelesen = None
    if erwartet is None:
        assert gelesen is None
    else:
        assert gelesen is not None and geordnet(gelesen) == geordnet(erwartet)


def test_einzeln_langer_artikel_ueber_viele_stuecke(tmp_path):
    daten = [{"a": "x" * 5000, "b": [1.5, -2e-3, "€" * 100]}, {"c": 12345678901234567890}]
    eingabe = ablegen(tmp_path / "l.json", json.dumps(daten, ensure_ascii=False))
    assert einzeln(eingabe, 7) == daten


def test_einzeln_meldet_doppelte_schluessel_wie_parsen(tmp_path, capsys):
    roh = '[{"a": 1}, {"b": {"c": 1, "c": 2}}, {"d": 1, "d": 2}]'
    eingabe = ablegen(tmp_path / "d.json", roh)
    melder = jsoneingabe.DoppelteMelder()
    artikel_ = [a for _, a in jsoneingabe.artikel_einzeln(str(eingabe), melder, stueck=5)]
    melder.zeigen()
    einzeln_ = capsys.readouterr().err
    assert artikel_ == json.loads(roh)
    jsoneingabe.parsen(roh, "d.json")
    assert einzeln_ == capsys.readouterr().err != ""
