"""Testfälle zur Auswahl, ohne Datenbank: die Regeln, die Bereinigung, der Stapelbetrieb.

Die Datei, die man zuerst laufen lässt (``python -m pytest test_auswahl.py``): sie
startet keinen Server und braucht Sekunden. Sie liest sich als Kurzfassung der
Spezifikation (docs/regeln.md); alles andere steht in ``tests/``.

Der Goldtest am Ende hält die Ergebnisse an der ``coder_version`` fest: ändert sich
eine Regel oder die Bereinigung, ohne dass ``version.py`` hochzählt, scheitert er –
denn auf dieser Regel ruht die Idempotenz der Stufe (ein Lauf rechnet nur neu, was
sich an der Eingabe oder der Version änderte).
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from auswahlstufe.cli import cli
from auswahlstufe.lauf.kodierung import ergebnissumme
from auswahlstufe.regeln import (
    BESTER_SCORE,
    EINZIGER,
    GLEICHSTAND_KUERZESTER,
    GLEICHSTAND_RANG,
    OHNE_KONSENS_GROESSTER,
    OHNE_KONSENS_MEDIAN,
    REGELN,
    RUECKFALL,
    waehle,
)
from normalisierung import SCHRITTE, bereinigen
from version import CODER_VERSION, PRIORITAET, Variante, variante_lesen

PROJEKT = Path(__file__).resolve().parent
BEISPIELE = PROJEKT / "beispiele" / "artikel.json"
AEB = PROJEKT / "bench" / "aeb" / "candidates.json"


def kandidat(text: str | None, error: str | None = None) -> dict:
    return {"text": text, "error": error}


SATZ = "der rat der stadt hat am montag den neuen haushalt fuer das kommende jahr beschlossen"


# --- Die Regeln (Quelle 000, §3) -----------------------------------------------------


def test_drei_nutzbare_der_beste_score_gegen_den_konsens_gewinnt():
    """Konsens = Shingles in mindestens zwei aktiven Kandidaten; gewählt wird das beste F1."""
    vorspann = "cookies akzeptieren oder ablehnen bitte jetzt entscheiden "
    e = waehle(
        {
            "newspaper4k": kandidat(vorspann + SATZ),
            "readability": kandidat(SATZ[:40]),
            "trafilatura": kandidat(SATZ),
        }
    )
    assert (e.extraktor, e.regel) == ("trafilatura", BESTER_SCORE)


def test_gleichstand_innerhalb_von_0_03_der_kuerzere_dann_die_rangfolge():
    gleich = {name: kandidat(SATZ) for name in PRIORITAET}
    assert (waehle(gleich).extraktor, waehle(gleich).regel) == ("newspaper4k", GLEICHSTAND_RANG)
    # ein Shingle mehr (46 statt 45): Score 0,989 gegen 1,0 – Gleichstand, der kürzere gewinnt
    lang = " ".join(f"wort{i}" for i in range(49))
    e = waehle({"newspaper4k": kandidat(lang + " anzeige"), "readability": kandidat(lang)})
    assert (e.extraktor, e.regel) == ("readability", GLEICHSTAND_KUERZESTER)


def test_ohne_konsens_median_bei_drei_groesster_bei_zwei():
    drei = {
        "newspaper4k": kandidat("eins zwei drei vier fuenf sechs"),
        "readability": kandidat(" ".join(f"wort{i}" for i in range(40))),
        "trafilatura": kandidat(" ".join(f"text{i}" for i in range(20))),
    }
    assert (waehle(drei).extraktor, waehle(drei).regel) == ("trafilatura", OHNE_KONSENS_MEDIAN)
    zwei = {k: v for k, v in drei.items() if k != "newspaper4k"}
    assert (waehle(zwei).extraktor, waehle(zwei).regel) == ("readability", OHNE_KONSENS_GROESSTER)


def test_nutzbare_gehen_beeintraechtigten_vor_und_ohne_kandidat_gilt_newspaper4k():
    e = waehle({"newspaper4k": kandidat(SATZ[:30]), "trafilatura": kandidat(SATZ, error="abgeschnitten")})
    assert (e.extraktor, e.regel) == ("newspaper4k", EINZIGER)
    leer = waehle({"readability": kandidat("   "), "trafilatura": kandidat(None, error="HTTP 404")})
    assert (leer.extraktor, leer.regel) == ("newspaper4k", RUECKFALL)


def beispiele_laut_readme() -> dict[int, tuple[str, str]]:
    """item_id → (Extraktor, Regel) aus der Tabelle in beispiele/README.md."""
    tabelle = {}
    for zeile in (PROJEKT / "beispiele" / "README.md").read_text("utf-8").splitlines():
        spalten = [s.strip() for s in zeile.strip().strip("|").split("|")]
        if len(spalten) == 4 and spalten[0].isdigit():
            tabelle[int(spalten[0])] = (spalten[2], spalten[3])
    return tabelle


def test_die_beispiele_durchlaufen_jede_regel_wie_ihr_readme_sagt():
    tabelle = beispiele_laut_readme()
    artikel = json.loads(BEISPIELE.read_text("utf-8"))
    assert sorted(tabelle) == [a["item_id"] for a in artikel]
    for a in artikel:
        e = waehle(a["extractions"])
        assert (e.extraktor, e.regel) == tabelle[a["item_id"]], a["titel"]
    assert {regel for _, regel in tabelle.values()} == set(REGELN)
    assert {extraktor for extraktor, _ in tabelle.values()} == set(PRIORITAET)


# --- Die Bereinigung des gespeicherten Texts (Quelle 003) -----------------------------

# Das durchgerechnete Beispiel aus Quelle 003, Zeichen für Zeichen nachgebaut.
BEISPIEL = (
    "  <h2>Q3 &amp;amp;  Q4 report</h2>\r\n"
    "<p>Revenue rose 12%.\u200b</p>\r\n"
    "<p>Revenue  rose  12%.</p>\r\n"
    "\r\n"
    "\n"
    "<p>Costs fell\n"
    "  slightly.</p>\ufeff  "
)
BEISPIEL_ERGEBNIS = "Q3 &amp; Q4 report\nRevenue rose 12%.\n\nCosts fell\nslightly."
# Länge vor Schritt 1 und nach jedem der neun Schritte (Quelle 003).
BEISPIEL_LAENGEN = [126, 122, 92, 88, 86, 86, 80, 77, 76, 58]
ZEILENENDEN, TAGS, ENTITAETEN, *_, TRIMMEN, _, _, DUBLETTEN = SCHRITTE


def durchlaufen(text: str, schritte) -> str:
    return functools.reduce(lambda zwischen, schritt: schritt(zwischen), schritte, text)


def test_neun_schritte_in_fester_reihenfolge_von_126_auf_58_zeichen():
    assert len(SCHRITTE) == len(set(SCHRITTE)) == 9
    laengen = [len(BEISPIEL)]
    for n in range(1, 10):
        laengen.append(len(durchlaufen(BEISPIEL, SCHRITTE[:n])))
    assert laengen == BEISPIEL_LAENGEN
    assert bereinigen(BEISPIEL) == durchlaufen(BEISPIEL, SCHRITTE) == BEISPIEL_ERGEBNIS


@pytest.mark.parametrize("position", [1, 2], ids=["an_zweiter_stelle", "direkt_nach_den_tags"])
def test_dublettenentfernung_zu_frueh_findet_nichts(position):
    """Die Schritte kommutieren nicht: früh gestellt, findet die Dublettenentfernung die
    beiden gleichen Sätze nicht, weil sie erst durch Schritt 4 und 7 gleich werden."""
    umgestellt = list(SCHRITTE[:-1])
    umgestellt.insert(position, DUBLETTEN)
    ergebnis = durchlaufen(BEISPIEL, umgestellt)
    assert ergebnis.split("\n").count("Revenue rose 12%.") == 2
    assert ergebnis == durchlaufen(BEISPIEL, SCHRITTE[:8])
    assert len(ergebnis) == 76


def test_falle_tags_vor_entitaeten_und_genau_einmal_dekodieren():
    roh = "<p>Terms &amp;amp; conditions: write &lt;b&gt; to show a bold tag.</p>"
    assert bereinigen(roh) == "Terms &amp; conditions: write <b> to show a bold tag."
    # Gegenprobe: erst dekodieren, dann Tags – das sichtbare <b> fällt weg.
    vertauscht = [ZEILENENDEN, ENTITAETEN, TAGS, *SCHRITTE[3:]]
    assert durchlaufen(roh, vertauscht) == "Terms &amp; conditions: write to show a bold tag."
    # Gegenprobe: zweimal dekodieren – aus dem wörtlichen &amp; wird ein &.
    zweimal = [ZEILENENDEN, TAGS, ENTITAETEN, ENTITAETEN, *SCHRITTE[3:]]
    assert durchlaufen(roh, zweimal) == "Terms & conditions: write <b> to show a bold tag."


def test_falle_trennzeile_mit_einem_leerzeichen_trennt_absaetze():
    roh = "Paragraph one text.\n \nParagraph two text."
    assert bereinigen(roh) == "Paragraph one text.\n\nParagraph two text."
    # Gegenprobe: ohne das Trimmen der Zeilen bleibt die Trennzeile nicht leer.
    ohne_trimmen = [s for s in SCHRITTE if s is not TRIMMEN]
    assert len(durchlaufen(roh, ohne_trimmen).split("\n\n")) == 1


def test_falle_dedup_erst_nach_dem_trimmen():
    roh = "alpha \nbeta\nalpha\nbeta\t\ngamma"
    assert bereinigen(roh) == "alpha\nbeta\ngamma"
    # Gegenprobe: Dublettenentfernung allein findet keine der beiden Dubletten.
    assert DUBLETTEN(roh).split("\n") == ["alpha ", "beta", "alpha", "beta\t", "gamma"]


# --- Der Stapelbetrieb auf den Beispielen ------------------------------------------------


def test_stapelbetrieb_setzt_selected_extractor_und_laesst_alles_andere(tmp_path):
    eingabe = tmp_path / "artikel.json"
    eingabe.write_bytes(BEISPIELE.read_bytes())
    lauf = CliRunner().invoke(cli, [str(eingabe)])
    assert lauf.exit_code == 0, lauf.output
    assert lauf.stdout == ""  # Ergebnis in die Datei, die Zusammenfassung auf stderr
    assert "13 Artikel entschieden" in lauf.stderr
    vorher = json.loads(BEISPIELE.read_text("utf-8"))
    nachher = json.loads((tmp_path / "artikel_selected.json").read_text("utf-8"))
    tabelle = beispiele_laut_readme()
    assert [a["item_id"] for a in nachher] == [a["item_id"] for a in vorher]
    for alt, neu in zip(vorher, nachher, strict=True):
        assert neu["selected_extractor"] == tabelle[neu["item_id"]][0]
        assert {k: v for k, v in neu.items() if k != "selected_extractor"} == {
            k: v for k, v in alt.items() if k != "selected_extractor"
        }
    # atomar: die Eingabe bleibt, neben der Ausgabe liegt keine halbe Datei
    assert eingabe.read_bytes() == BEISPIELE.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["artikel.json", "artikel_selected.json"]


# --- Goldwerte: die Ergebnisse hängen an der coder_version ---------------------------------

# coder_version → SHA-256 über (Schlüssel, Ergebnissumme) je Item der Beispiele und der 181
# Seiten des article-extraction-benchmark; die Ergebnissumme ist die der Datenbank
# (Extraktor, Regel, Konsens, Metriken, bereinigter Text). Eine neue coder_version bekommt
# hier ihre Zeile; eine alte Zeile ändert sich nie.
GOLDWERTE = {
    "auswahl-2+norm-1+rein-1+k5+t0.03+n4k>rd>tf": "d8c183fed6a52518587c292de941285990ca801e6db72ead3127b09aacf0e0a1",
    "auswahl-2+norm-1+rein-1+k4+t0.03+n4k>rd>tf": "206e44826ff4bf6113eac5cdbe248a907ce77e1cd5787cdf8e9d9783db7b7493",
    "auswahl-2+norm-0+rein-1+k5+t0.03+n4k>rd>tf": "5f52b0bc8405a95d474ef1327a436f8527727f36ca5c0613e9105656b1470b97",
    "auswahl-2+norm-0+rein-1+k4+t0.03+n4k>rd>tf": "309f82fdd08c7d0d51c3aad615dab12a56c2a92a2f521b97c7481de8fba84832",
}


def goldwert(variante: Variante) -> str:
    summe = hashlib.sha256()
    quellen = [
        *((f"beispiele:{a['item_id']}", a["extractions"]) for a in json.loads(BEISPIELE.read_text("utf-8"))),
        *((f"aeb:{a['id']}", a["extractions"]) for a in json.loads(AEB.read_text("utf-8"))),
    ]
    for schluessel, extraktionen in quellen:
        e = waehle(extraktionen, **variante.argumente())
        gewaehlt = extraktionen.get(e.extraktor) if isinstance(extraktionen, dict) else None
        roh = gewaehlt.get("text") if isinstance(gewaehlt, dict) else None
        text = bereinigen(roh) if isinstance(roh, str) else None
        summe.update(schluessel.encode())
        summe.update(ergebnissumme(e.extraktor, e.regel, str(e.konsens), e.metriken_json(), text))
    return summe.hexdigest()


@pytest.mark.parametrize(
    "name", ["", "k4:0.03", "quelle000", "k4:0.03+quelle000"], ids=lambda n: n or "voreinstellung"
)
def test_ergebnisse_aendern_sich_nur_mit_der_coder_version(name):
    variante = variante_lesen(name) if name else Variante()
    assert variante.coder_version in GOLDWERTE, (
        f"Neue coder_version {variante.coder_version}: ihren Goldwert {goldwert(variante)} in GOLDWERTE eintragen."
    )
    assert goldwert(variante) == GOLDWERTE[variante.coder_version], (
        "Regeln oder Bereinigung liefern andere Ergebnisse, aber die coder_version ist dieselbe: "
        "in version.py hochzählen (REGELWERK, NORMALISIERUNG oder BEREINIGUNG)."
    )
    assert Variante().coder_version == CODER_VERSION
