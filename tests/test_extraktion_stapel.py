"""Stapelmodus der Extraktion: ``auswahl.py --extrahieren SEITEN.json`` als echter Unterprozess."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from auswahlstufe.fehler import EXIT_AUFRUF, EXIT_EINGABE
from auswahlstufe.referenz import binaer
from auswahlstufe.referenz.feindlich import grosse_seite
from auswahlstufe.regeln import waehle
from tests.hilfen.prozesse import ende, ohne_leserechte, worker_mit_seite

HIER = Path(__file__).resolve().parents[1]
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
    assert "--extrahieren gilt mit DATEI, --backfill, --slot oder --nachholen" in ergebnis.stderr


# --- Ein Ordner mit .html/.html.gz als Eingabe ----------------------------------------------

ORDNER_IDS = [
    "042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856",  # bleibt .html.gz
    "04a6711caa7c687592777718866e781e976e0fe684faebe8b3cedcef8cd0ea34",  # entpackt als .html
    "05844573ca7e1fba714d715bb11ca08c26e25328999c74a1cb3bc8a0e4399f0f",  # bleibt .html.gz
]


@pytest.fixture(scope="module")
def ordnerlauf(tmp_path_factory):
    wurzel = tmp_path_factory.mktemp("ordner")
    ordner = wurzel / "seiten"
    ordner.mkdir()
    for nummer, seiten_id in enumerate(ORDNER_IDS):
        gepackt = (AEB / "html" / f"{seiten_id}.html.gz").read_bytes()
        if nummer == 1:
            (ordner / f"{seiten_id}.html").write_bytes(gzip.decompress(gepackt))
        else:
            (ordner / f"{seiten_id}.html.gz").write_bytes(gepackt)
    (ordner / "liesmich.txt").write_text("keine Seite")
    ergebnis = auswahl("--extrahieren", "seiten", "--prozesse", "2", cwd=wurzel)
    return wurzel, ergebnis


def test_ordner_gibt_die_veroeffentlichten_kandidaten_neben_dem_ordner(ordnerlauf, veroeffentlicht):
    wurzel, ergebnis = ordnerlauf
    assert ergebnis.returncode == 0, ergebnis.stderr
    ausgabe = json.loads((wurzel / "seiten_selected.json").read_text(encoding="utf-8"))
    assert [a["id"] for a in ausgabe] == sorted(ORDNER_IDS)  # andere Dateien zählen nicht
    for artikel in ausgabe:
        assert set(artikel) == {"id", "extractions", "selected_extractor"}
        assert artikel["extractions"] == veroeffentlicht[artikel["id"]]["extractions"]
        assert artikel["selected_extractor"] == waehle(artikel["extractions"]).extraktor
    assert "Extrahiert: 3 Seiten" in ergebnis.stderr


def test_ordner_mit_o_schreibt_dorthin(tmp_path):
    ordner = tmp_path / "s"
    ordner.mkdir()
    (ordner / "a.html").write_bytes("<html><body><p>Grüße</p></body></html>".encode("cp1252"))
    ergebnis = auswahl("--extrahieren", str(ordner), "-o", "-", cwd=tmp_path)
    assert ergebnis.returncode == 0, ergebnis.stderr
    assert [a["id"] for a in json.loads(ergebnis.stdout)] == ["a"]
    assert not (tmp_path / "s_selected.json").exists()


def test_leerer_ordner_exit_1(tmp_path):
    (tmp_path / "leer").mkdir()
    ergebnis = auswahl("--extrahieren", "leer", cwd=tmp_path)
    assert ergebnis.returncode == EXIT_EINGABE
    assert "keine .html- oder .html.gz-Datei" in ergebnis.stderr
    assert not (tmp_path / "leer_selected.json").exists()


def test_kaputtes_gzip_nennt_die_datei_und_schreibt_nichts(tmp_path):
    ordner = tmp_path / "s"
    ordner.mkdir()
    (ordner / "a.html").write_text("<p>gut</p>")
    (ordner / "b.html.gz").write_bytes(b"kein gzip")
    ergebnis = auswahl("--extrahieren", "s", cwd=tmp_path)
    assert ergebnis.returncode == EXIT_EINGABE, ergebnis.stderr
    assert "b.html.gz: kein gültiges gzip" in ergebnis.stderr
    assert not (tmp_path / "s_selected.json").exists()


def test_seite_ohne_leserechte_nennt_die_datei_und_schreibt_nichts(tmp_path):
    ordner = tmp_path / "s"
    ordner.mkdir()
    (ordner / "a.html").write_text("<p>gut</p>")
    (ordner / "b.html").write_text("<p>geheim</p>")
    (ordner / "b.html").chmod(0)
    ergebnis = ohne_leserechte("--extrahieren", "s", cwd=tmp_path)
    assert ergebnis.returncode == EXIT_EINGABE, ergebnis.stderr
    assert ergebnis.stderr == "Fehler: s/b.html: nicht lesbar (keine Leserechte); nichts geschrieben.\n"
    assert not (tmp_path / "s_selected.json").exists()


@pytest.mark.parametrize("option", ["--streng", "--mit-entscheidung"])
def test_stapeloptionen_der_auswahl_gelten_nicht_mit_extrahieren(tmp_path, option):
    """Sie würden still übergangen; so steht im Fehler, was stattdessen hilft."""
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "a.html").write_text("<p>gut</p>")
    ergebnis = auswahl("--extrahieren", "s", option, cwd=tmp_path)
    assert ergebnis.returncode == EXIT_AUFRUF
    assert "--streng und --mit-entscheidung gelten nicht mit --extrahieren" in ergebnis.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]


def test_ordner_ohne_leserechte_exit_1_ohne_traceback(tmp_path):
    ordner = tmp_path / "s"
    ordner.mkdir()
    (ordner / "a.html").write_text("<p>gut</p>")
    ordner.chmod(0)
    try:
        ergebnis = ohne_leserechte("--extrahieren", "s", cwd=tmp_path)
    finally:
        ordner.chmod(0o755)
    assert ergebnis.returncode == EXIT_EINGABE, ergebnis.stderr
    assert ergebnis.stderr == "Fehler: s: Ordner nicht lesbar (keine Leserechte); nichts geschrieben.\n"
    assert not (tmp_path / "s_selected.json").exists()


def test_dieselbe_id_zweimal_exit_1(tmp_path):
    ordner = tmp_path / "s"
    ordner.mkdir()
    (ordner / "a.html").write_text("<p>eins</p>")
    (ordner / "a.html.gz").write_bytes(gzip.compress(b"<p>zwei</p>"))
    ergebnis = auswahl("--extrahieren", "s", cwd=tmp_path)
    assert ergebnis.returncode == EXIT_EINGABE
    assert "die id „a“ gibt es zweimal (a.html und a.html.gz)" in ergebnis.stderr


def test_ordner_ohne_extrahieren_ist_aufruffehler(tmp_path):
    (tmp_path / "s").mkdir()
    ergebnis = auswahl("s", cwd=tmp_path)
    assert ergebnis.returncode == EXIT_AUFRUF
    assert "„s“ ist ein Verzeichnis; ein Ordner mit .html/.html.gz-Seiten ist nur mit --extrahieren" in (
        ergebnis.stderr
    )


# --- beispiele/seiten.json: drei erfundene Seiten, wie in docs/extraktion.md ----------------


def test_beispielseiten_geben_den_artikeltext_ohne_beiwerk(tmp_path):
    ergebnis = auswahl("--extrahieren", "beispiele/seiten.json", "-o", "-", cwd=HIER)
    assert ergebnis.returncode == 0, ergebnis.stderr
    ausgabe = json.loads(ergebnis.stdout)
    assert [a["item_id"] for a in ausgabe] == [1, 2, 3]
    for artikel in ausgabe:
        gewaehlt = artikel["extractions"][artikel["selected_extractor"]]
        assert artikel["selected_extractor"] == waehle(artikel["extractions"]).extraktor
        assert gewaehlt["error"] is None
        erster_absatz = artikel["html"].split("<p>")[1].split("</p>")[0]
        assert erster_absatz in gewaehlt["text"]
        for beiwerk in ("Cookies", "Impressum", "Newsletter"):
            assert beiwerk not in gewaehlt["text"]
    assert not (HIER / "beispiele" / "seiten_selected.json").exists()


# --- Keine HTML-Seiten, und ein zweiter Versuch gleich im Stapel ---------------------------


def test_pdf_bild_und_archiv_im_ordner_sind_fehler_die_verirrten_steuerbytes_nicht(tmp_path, veroeffentlicht):
    """Im Ordner wie in der Datenbank: die Bytes entscheiden, alle drei Kandidaten bekommen
    denselben Fehler, die Wahl fällt nach den Regeln zurück; die echte Seite mit fünf
    verirrten Steuerbytes gibt die veröffentlichten Kandidaten."""
    ordner = tmp_path / "s"
    ordner.mkdir()
    normal = ORDNER_IDS[0]
    (ordner / "pdf.html").write_bytes(binaer.pdf())
    (ordner / "png.html").write_bytes(binaer.png())
    (ordner / "docx.html").write_bytes(binaer.docx())
    roh = gzip.decompress((AEB / "html" / f"{normal}.html.gz").read_bytes())
    (ordner / f"{normal}.html").write_bytes(binaer.verirrte_steuerzeichen(roh, 5))
    ergebnis = auswahl("--extrahieren", "s", "-o", "-", "--prozesse", "2", cwd=tmp_path)
    assert ergebnis.returncode == 0, ergebnis.stderr
    ausgabe = {a["id"]: a for a in json.loads(ergebnis.stdout)}
    for name, grund in (("pdf", "PDF"), ("png", "PNG-Bild"), ("docx", "ZIP-Archiv")):
        kandidaten = ausgabe[name]["extractions"]
        assert {k["text"] for k in kandidaten.values()} == {None}
        assert all(k["error"].startswith(f"keine HTML-Seite: {grund}") for k in kandidaten.values()), (
            kandidaten
        )
        assert waehle(kandidaten).regel == "rueckfall"
    assert ausgabe[normal]["extractions"] == veroeffentlicht[normal]["extractions"]
    assert "3 Seiten sind keine HTML-Seiten" in ergebnis.stderr, ergebnis.stderr


def test_stapel_versucht_einen_getoeteten_worker_gleich_noch_einmal(tmp_path):
    """Den nächsten Lauf gibt es im Stapel nicht: was an der Umgebung scheiterte, kommt am
    Ende noch einmal dran, nur dieser Extraktor – und bekommt jetzt Text."""
    ordner = tmp_path / "s"
    ordner.mkdir()
    (ordner / "gross.html").write_bytes(grosse_seite(4))
    prozess = subprocess.Popen(
        [sys.executable, str(HIER / "auswahl.py"), "--extrahieren", "s", "-o", "aus.json", "--prozesse", "1"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    os.kill(worker_mit_seite(prozess, 4 * 2**20), signal.SIGKILL)
    code, _, err = ende(prozess)
    assert code == 0, err
    (artikel,) = json.loads((tmp_path / "aus.json").read_text(encoding="utf-8"))
    # newspaper4k gibt auf dieser Seite leeren Text – sein Urteil, kein Fehler
    assert all(k["error"] is None and isinstance(k["text"], str) for k in artikel["extractions"].values())
    assert "Worker abgestürzt 1×" in err and "1 Kandidaten gleich noch einmal versucht, davon 0 " in err, err


def test_stapel_gibt_nach_zwei_versuchen_auf(tmp_path):
    ordner = tmp_path / "s"
    ordner.mkdir()
    # 8 MB: jeder der drei braucht dafür deutlich länger als 0,1 s – so genau prüft der Pool das
    # Zeitlimit eines Aufrufs (trafilatura schafft 2 MB auf einer schnellen Maschine darunter).
    (ordner / "gross.html").write_bytes(grosse_seite(8))
    ergebnis = auswahl(
        "--extrahieren", "s", "-o", "-", "--prozesse", "1", "--extraktion-zeitlimit", "0.02", cwd=tmp_path
    )
    assert ergebnis.returncode == 0, ergebnis.stderr
    (artikel,) = json.loads(ergebnis.stdout)
    assert {k["error"] for k in artikel["extractions"].values()} == {
        "Zeitlimit 0,02 s überschritten – nach 2 Versuchen aufgegeben"
    }
    assert "3 Kandidaten gleich noch einmal versucht, davon 3 nach 2 Versuchen aufgegeben" in ergebnis.stderr


def test_extraktion_zeitlimit_nur_mit_extrahieren(tmp_path):
    ergebnis = auswahl("beispiele/artikel.json", "-o", "-", "--extraktion-zeitlimit", "5", cwd=HIER)
    assert ergebnis.returncode == EXIT_AUFRUF
    assert "--extraktion-zeitlimit gilt nur mit --extrahieren." in ergebnis.stderr
