"""vergleich.py: wo eine Variante anders wählt, als Prüfseite in Zweifelsordnung."""

from __future__ import annotations

import csv
import fnmatch
import json
import re
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from auswahlstufe import jsoneingabe
from auswahlstufe.anzeige import BERLIN
from auswahlstufe.pruefung import vergleich
from auswahlstufe.pruefung.vergleich_db import entscheidung_aus_zeile
from auswahlstufe.regeln import waehle, zweifel
from tests.hilfen import PROJEKT
from tests.hilfen.prozesse import starten
from version import CODER_VERSION, PRIORITAET, variante_lesen

KANDIDATEN = PROJEKT / "bench" / "aeb" / "candidates.json"


def aufruf(tmp_path: Path, monkeypatch, *argumente: str):
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(vergleich.cli, list(argumente))


def test_variante_k4_waehlt_auf_drei_seiten_anders(tmp_path, monkeypatch):
    ergebnis = aufruf(tmp_path, monkeypatch, str(KANDIDATEN), "--variante", "k4:0.03")
    assert ergebnis.exit_code == 0, ergebnis.output
    k4 = variante_lesen("k4:0.03").coder_version
    assert f"181 Items; {k4} wählt bei 3 anders als {CODER_VERSION}." in ergebnis.stderr
    pfade = sorted(tmp_path.glob("vergleich-*.csv"))
    assert len(pfade) == 1 and pfade[0].with_suffix(".html").is_file()
    with pfade[0].open(encoding="utf-8") as datei:
        zeilen = list(csv.DictReader(datei))
    assert len(zeilen) == 3
    for zeile in zeilen:
        assert zeile["variante"].startswith("k4:0.03 wählt ")
        assert zeile["variante"].split()[2] != zeile["extraktor"]
    # Zweifelsordnung der Grundlage
    assert [float(z["zweifel"]) for z in zeilen] == sorted(
        (float(z["zweifel"]) for z in zeilen), reverse=True
    )
    seite = pfade[0].with_suffix(".html").read_text(encoding="utf-8")
    assert f"anders gewählt von {k4.replace('>', '&gt;')}" in seite


def test_die_seite_sagt_dass_sie_ein_vergleich_ist(tmp_path, monkeypatch):
    """Die Seite vergleicht zwei Fassungen, es lief kein Lauf: Titel, Überschrift und Zählung sagen
    das (keine „Stichprobe zum Prüfen von Hand“, keine „Zählung des Laufs“), der Kopf nennt beide
    Versionen."""
    ergebnis = aufruf(tmp_path, monkeypatch, str(KANDIDATEN), "--variante", "k4:0.03")
    assert ergebnis.exit_code == 0, ergebnis.output
    k4 = variante_lesen("k4:0.03").coder_version.replace(">", "&gt;")
    grundlage = CODER_VERSION.replace(">", "&gt;")
    seite = next(tmp_path.glob("vergleich-*.html")).read_text(encoding="utf-8")
    assert f"<title>Vergleich {grundlage} – {k4}</title>" in seite
    assert "<h1>Vergleich zweier Fassungen: wo die Variante anders wählt</h1>" in seite
    assert "<h2>Zählung des Vergleichs</h2>" in seite
    assert f"<dt>Grundlage (grün umrandet)</dt><dd><code>{grundlage}</code></dd>" in seite
    assert f"<dt>Variante (unter dem Schlüssel)</dt><dd><code>{k4}</code></dd>" in seite
    assert "Stichprobe zum Prüfen von Hand" not in seite and "Zählung des Laufs" not in seite


def test_ohne_unterschied_sagt_die_seite_es(tmp_path):
    from auswahlstufe.pruefung import pruefseite
    from auswahlstufe.pruefung.stichprobe import Stichprobe, schreiben

    pfad = schreiben(Stichprobe(1), "v1", verzeichnis=tmp_path, art=pruefseite.vergleich("v2"))
    assert pfad.name.startswith("vergleich-v1-")
    seite = pfad.with_suffix(".html").read_text(encoding="utf-8")
    assert "Keine Fälle – die Variante wählt überall wie die Grundlage." in seite
    assert "der Lauf hatte nichts zu entscheiden" not in seite


def test_gegen_eine_andere_grundlage(tmp_path, monkeypatch):
    ergebnis = aufruf(tmp_path, monkeypatch, str(KANDIDATEN), "--variante", "k6:0.03", "--gegen", "k4:0.03")
    assert ergebnis.exit_code == 0, ergebnis.output
    pfad = next(tmp_path.glob("vergleich-*.csv"))
    assert variante_lesen("k4:0.03").coder_version.replace(">", "-") in pfad.name
    artikel = {a["id"]: a for a in jsoneingabe.json_lesen(str(KANDIDATEN))}
    with pfad.open(encoding="utf-8") as datei:
        for zeile in csv.DictReader(datei):
            e = waehle(artikel[zeile["schluessel"]]["extractions"], k=4)
            assert zeile["extraktor"] == e.extraktor and float(zeile["zweifel"]) == round(zweifel(e).wert, 4)


def test_seite_und_csv_eines_vergleichs_uebergeht_git(tmp_path, monkeypatch):
    """Sie tragen volle Texte wie die Stichprobe: keine Datei, die man versehentlich eincheckt."""
    ergebnis = aufruf(tmp_path, monkeypatch, str(KANDIDATEN), "--variante", "k4:0.03")
    assert ergebnis.exit_code == 0, ergebnis.output
    muster = [
        z.strip()
        for z in (PROJEKT / ".gitignore").read_text(encoding="utf-8").splitlines()
        if z.strip() and not z.startswith("#")
    ]
    dateien = sorted(p.name for p in tmp_path.glob("vergleich-*"))
    assert len(dateien) == 2, dateien
    for name in dateien:
        assert any(fnmatch.fnmatch(name, m) for m in muster), f"{name} steht nicht in .gitignore"


@pytest.mark.parametrize("zone", ["UTC", "America/New_York"])
def test_seite_und_csv_heissen_nach_berliner_zeit(tmp_path, zone):
    """Ein eigener Prozess in der Zone ``zone`` (cron: meist UTC): Name und Seite sagen Berliner
    Zeit mit Offset, wie jede Zeit der Stufe."""
    vorher = datetime.now(BERLIN).replace(microsecond=0)
    lauf = starten(
        "vergleich.py", str(KANDIDATEN), "--variante", "k4:0.03", url=None, cwd=tmp_path, env={"TZ": zone}
    )
    nachher = datetime.now(BERLIN)
    assert lauf.code == 0, lauf
    (pfad,) = tmp_path.glob("vergleich-*.csv")
    treffer = re.search(r"-(\d{8}T\d{6}[+-]\d{4})\.csv$", pfad.name)
    assert treffer, pfad.name
    zeit = datetime.strptime(treffer[1], "%Y%m%dT%H%M%S%z")
    assert vorher <= zeit <= nachher and zeit.utcoffset() == nachher.utcoffset(), pfad.name
    seite = pfad.with_suffix(".html").read_text(encoding="utf-8")
    assert f"{zeit:%Y-%m-%d %H:%M:%S} {zeit.isoformat()[-6:]} (Europe/Berlin)" in seite


@pytest.mark.parametrize(
    ("argumente", "meldung"),
    [
        ((), "--variante fehlt"),
        (("--variante", "k4"), "erwartet K:TOLERANZ"),
        (("--variante", "k5:0.03"), "dieselbe Fassung"),
        (("--variante", "quelle000", "--gegen", "quelle000"), "dieselbe Fassung"),
    ],
)
def test_aufruffehler(tmp_path, monkeypatch, argumente, meldung):
    ergebnis = aufruf(tmp_path, monkeypatch, str(KANDIDATEN), *argumente)
    assert ergebnis.exit_code == 2
    assert meldung in ergebnis.stderr
    assert list(tmp_path.iterdir()) == []


def test_kaputte_datei_klare_meldung(tmp_path, monkeypatch):
    datei = tmp_path / "x.json"
    datei.write_text('{"a": 1}', encoding="utf-8")
    ergebnis = aufruf(tmp_path, monkeypatch, str(datei), "--variante", "k4:0.03")
    assert ergebnis.exit_code == 1
    assert "x.json: oben steht ein Objekt; erwartet wird eine JSON-Liste von Artikeln." in ergebnis.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


# --- Die gespeicherte Entscheidung trägt denselben Zweifel (vergleich.py --datenbank) ------------

_WORTE = st.sampled_from([f"w{i}" for i in range(12)])
_TEXT = st.one_of(st.none(), st.lists(_WORTE, max_size=40).map(" ".join))
_EINTRAG = st.fixed_dictionaries({"text": _TEXT, "error": st.one_of(st.none(), st.just("timeout"))})
_EXTRAKTIONEN = st.dictionaries(st.sampled_from(PRIORITAET), _EINTRAG)


@given(_EXTRAKTIONEN, st.sampled_from(["k4:0.03", "k5:0", "quelle000", "k2:0.1"]))
@settings(max_examples=300)
def test_entscheidung_aus_gespeicherten_metriken_hat_denselben_zweifel(extraktionen, schreibweise):
    """Was selected_extractor speichert (Wahl, Regel, Konsens, Metriken als JSON), reicht für
    den Zweifel: die Datenbank ordnet die Prüfseite so wie eine Stichprobe des Laufs."""
    e = waehle(extraktionen, **variante_lesen(schreibweise).argumente())
    gespeichert = json.loads(e.metriken_json())
    wieder = entscheidung_aus_zeile(e.extraktor, e.regel, e.konsens, gespeichert)
    assert zweifel(wieder) == zweifel(e)
    assert wieder.metriken() == e.metriken()
