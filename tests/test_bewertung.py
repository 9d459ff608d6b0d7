"""Bewertung gegen eine Handreferenz: das Maß, die Zeilen, die Kommandozeile."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from auswahlstufe.pruefung import bewertung
from auswahlstufe.pruefung.bewertung import (
    AUSWAHL,
    LAENGSTER,
    ORAKEL,
    Seite,
    bootstrap,
    guete,
    intervall,
    messen,
    ohne_erste_zeile,
    shingles,
    zeilen_messen,
)
from version import Variante, variante_lesen

BENCH = Path(__file__).resolve().parents[1] / "bench" / "aeb"


def p_r(seite: Seite) -> tuple[float, float]:
    return seite.praezision, seite.recall


# --- das Maß je Seite ----------------------------------------------------------


def test_shingles_multimenge_und_kurze_texte():
    assert shingles("") == Counter() and shingles(" ,. ") == Counter()
    assert shingles("Ja, nein!") == Counter({("Ja", "nein"): 1})
    assert shingles("a b c d a b c d") == Counter(
        {("a", "b", "c", "d"): 2, ("b", "c", "d", "a"): 1, ("c", "d", "a", "b"): 1, ("d", "a", "b", "c"): 1}
    )


def test_teilweise_treffer():
    # Referenz: abcd, bcde; Ausgabe: abcd, bcdx → tp 1, fp 1, fn 1
    assert p_r(messen("a b c d x", "a b c d e")) == (0.5, 0.5)


def test_wiederholung_zaehlt_als_fehler():
    # Ausgabe: abcd ×2, bcda, cdab, dabc → tp = min(2, 1) = 1, fp = 4
    assert p_r(messen("a b c d a b c d", "a b c d")) == (0.2, 1.0)


def test_gross_und_klein_zaehlen():
    assert p_r(messen("A b c d", "a b c d")) == (0.0, 0.0)


def test_leere_ausgabe_und_leere_referenz():
    leer = messen("", "a b c d")
    assert p_r(leer) == (0.0, 0.0) and (leer.mit_ausgabe, leer.mit_referenz) == (False, True)
    ohne_ref = messen("a b c d", "")
    assert p_r(ohne_ref) == (0.0, 0.0) and (ohne_ref.mit_ausgabe, ohne_ref.mit_referenz) == (True, False)
    beide = messen("", "")
    assert p_r(beide) == (1.0, 1.0) and (beide.mit_ausgabe, beide.mit_referenz) == (False, False)
    # Nur Leerraum und Satzzeichen: kein Token, also leer
    assert messen(" \n – . ", "a b c d").mit_ausgabe is False


def test_weniger_als_vier_tokens():
    assert p_r(messen("Ja.", "Ja")) == (1.0, 1.0)
    assert p_r(messen("Ja nein", "Ja")) == (0.0, 0.0)  # ein Shingle je Seite, verschieden
    assert p_r(messen("Ja", "Ja sagt er heute")) == (0.0, 0.0)


@given(st.text(max_size=80), st.text(max_size=80))
def test_masse_liegen_zwischen_null_und_eins(ausgabe, referenz):
    seite = messen(ausgabe, referenz)
    assert 0 <= seite.praezision <= 1 and 0 <= seite.recall <= 1
    assert p_r(messen(referenz, referenz)) == (1.0, 1.0)


# --- Mittel, Zeilen, Bootstrap ---------------------------------------------------


def test_mittel_ueber_seiten_mit_ausgabe_und_mit_referenz():
    seiten = [
        messen("a b c d", "a b c d"),  # 1 / 1
        messen("", "a b c d"),  # keine Ausgabe: nur im Recall (0)
        messen("a b c d x", ""),  # keine Referenz: nur in der Präzision (0)
        messen("a b c d x", "a b c d e"),  # 0,5 / 0,5
    ]
    g = guete(seiten)
    assert (g.mit_ausgabe, g.mit_referenz) == (3, 3)
    assert g.praezision == pytest.approx(1.5 / 3) and g.recall == pytest.approx(1.5 / 3)
    assert g.f1 == pytest.approx(0.5)


def artikel(id_: str, texte: dict[str, str], wahl: str) -> dict:
    return {
        "id": id_,
        "extractions": {n: {"text": t, "error": None} for n, t in texte.items()},
        "selected_extractor": wahl,
    }


def test_zeilen_orakel_und_laengster():
    ref = ["a b c d e f", "x y z w"]
    arts = [
        artikel(
            "1",
            {"newspaper4k": "a b c d", "readability": "a b c d e f", "trafilatura": "a b c d e f g h i"},
            "newspaper4k",
        ),
        artikel("2", {"newspaper4k": "x y z w", "readability": "x y z w", "trafilatura": ""}, "trafilatura"),
    ]
    zeilen = zeilen_messen(arts, ref)
    assert [p_r(s) for s in zeilen[ORAKEL]] == [(1.0, 1.0), (1.0, 1.0)]
    assert zeilen[LAENGSTER][0] == zeilen["trafilatura"][0]
    assert zeilen[LAENGSTER][1] == zeilen["newspaper4k"][1]  # Gleichstand: Rangfolge
    assert zeilen[AUSWAHL] == [zeilen["newspaper4k"][0], zeilen["trafilatura"][1]]
    assert guete(zeilen[AUSWAHL]).mit_ausgabe == 1  # die leere Wahl zählt nur im Recall


def test_bootstrap_fest_mit_seed_und_gepaart():
    seiten = {"a": [messen("a b c d", "a b c d"), messen("a b c d x", "a b c d e")] * 5}
    seiten["b"] = list(seiten["a"])
    eins, zwei = bootstrap(seiten, 200, 7), bootstrap(seiten, 200, 7)
    assert eins == zwei
    assert eins["a"] == eins["b"]  # dieselben Stichproben für jede Zeile
    unten, oben = intervall(eins["a"])
    assert unten <= guete(seiten["a"]).f1 <= oben and unten < oben
    assert intervall([0.5] * 50) == (0.5, 0.5)


def test_ohne_erste_zeile():
    assert ohne_erste_zeile("Titel\nErster Absatz\nZweiter") == "Erster Absatz\nZweiter"
    assert ohne_erste_zeile("nur eine Zeile") == ""


# --- Kommandozeile -------------------------------------------------------------


def schreiben(pfad: Path, daten: object) -> str:
    pfad.write_text(json.dumps(daten, ensure_ascii=False), encoding="utf-8")
    return str(pfad)


@pytest.fixture
def dateien(tmp_path) -> tuple[str, str]:
    text = "Der Rat beschloss am Abend den Neubau der Brücke über den Fluss."
    arts = [
        artikel("a", {"newspaper4k": text, "readability": "Menü " + text, "trafilatura": ""}, "newspaper4k"),
        artikel("b", {"newspaper4k": "", "readability": text, "trafilatura": text}, "readability"),
    ]
    wahrheit = {"a": {"articleBody": "Brücke gebaut\n" + text}, "b": {"articleBody": "Rat tagte\n" + text}}
    return schreiben(tmp_path / "auswahl.json", arts), schreiben(tmp_path / "wahrheit.json", wahrheit)


def aufruf(*argumente: str):
    return CliRunner().invoke(bewertung.cli, list(argumente))


def test_cli_tabelle(dateien):
    ergebnis = aufruf(*dateien, "--bootstrap", "50")
    assert ergebnis.exit_code == 0, ergebnis.output
    zeilen = {z.split("  ")[0]: z for z in ergebnis.stdout.splitlines()}
    assert set(zeilen) >= {"newspaper4k", "readability", "trafilatura", "Auswahl", ORAKEL, LAENGSTER}
    assert "Bootstrap: 50 Stichproben" in ergebnis.stdout
    # Mit Titel fehlt jeder Ausgabe die Überschrift: Recall < 1; ohne Titel ist die Auswahl perfekt
    assert "1,000  1,000  1,000" not in zeilen["Auswahl"]
    ohne = aufruf(*dateien, "--ohne-titel", "--bootstrap", "0")
    assert ohne.exit_code == 0, ohne.output
    auswahl_zeile = next(z for z in ohne.stdout.splitlines() if z.startswith("Auswahl"))
    assert auswahl_zeile.split()[1:4] == ["1,000", "1,000", "1,000"]
    assert "Bootstrap" not in ohne.stdout


def test_cli_waehlt_selbst_ohne_selected_extractor(tmp_path, dateien):
    arts = json.loads(Path(dateien[0]).read_text(encoding="utf-8"))
    for a in arts:
        del a["selected_extractor"]
    ergebnis = aufruf(schreiben(tmp_path / "roh.json", arts), dateien[1], "--bootstrap", "0")
    assert ergebnis.exit_code == 0, ergebnis.output
    assert "2 Artikel ohne selected_extractor" in ergebnis.stderr


@pytest.mark.parametrize(
    ("auswahl_inhalt", "wahrheit_inhalt", "meldung"),
    [
        ("[", None, "kein gültiges JSON: Zeile 1, Spalte 2: Wert erwartet."),
        ('{"a": 1}', None, "oben steht ein Objekt; erwartet wird eine JSON-Liste von Artikeln"),
        ('[{"id": "a"}, 3]', None, "Artikel [1] ist kein Objekt, sondern eine Zahl"),
        ('[{"extractions": {}}]', None, "Artikel 0 hat keine id"),
        ('[{"id": "fehlt", "extractions": {}}]', None, "keine Referenz für Artikel 0 (id fehlt)"),
        (
            None,
            '{"a": {"articleBody": 5}, "b": {}}',
            "id a (Artikel 0) hat kein articleBody als Text (sondern eine Zahl)",
        ),
        (None, '{"a": {"body": "x"}, "b": {}}', "id a (Artikel 0) hat kein articleBody als Text."),
        (None, "[]", "erwartet ein JSON-Objekt"),
        (None, '"text"', "erwartet ein JSON-Objekt"),
        (
            None,
            '{"a": "nur Text", "b": {}}',
            "Referenz für Artikel 0 (id a) ist eine Zeichenkette, erwartet ein Objekt",
        ),
        (None, '{"a": [], "b": {}}', "Referenz für Artikel 0 (id a) ist eine Liste, erwartet ein Objekt"),
        (None, '{"a": null, "b": {}}', "Referenz für Artikel 0 (id a) ist null"),
        ("[" * 100_000, None, "ist zu tief verschachtelt"),
        (None, '{"a": ' * 100_000, "ist zu tief verschachtelt"),
        ("[" + "9" * 5000 + "]", None, "eine ganze Zahl mit mehr als 4300 Stellen wird nicht gelesen"),
        (
            '[{"id": "a", "selected_extractor": ["newspaper4k"]}]',
            None,
            "Artikel 0 (id a): selected_extractor ist eine Liste",
        ),
        (
            '[{"id": "a", "selected_extractor": {"x": 1}}]',
            None,
            "Artikel 0 (id a): selected_extractor ist ein Objekt",
        ),
        ('[{"id": 7, "selected_extractor": null}]', None, "Artikel 0 (id 7): selected_extractor ist null"),
        (
            '[{"id": "a", "selected_extractor": "goose"}]',
            None,
            "selected_extractor ist „goose“, erwartet einer von",
        ),
    ],
)
def test_cli_fehler_klar_und_ohne_traceback(tmp_path, dateien, auswahl_inhalt, wahrheit_inhalt, meldung):
    auswahl_datei, wahrheit_datei = dateien
    if auswahl_inhalt is not None:
        auswahl_datei = str(tmp_path / "kaputt.json")
        Path(auswahl_datei).write_text(auswahl_inhalt, encoding="utf-8")
    if wahrheit_inhalt is not None:
        wahrheit_datei = str(tmp_path / "kaputt_wahrheit.json")
        Path(wahrheit_datei).write_text(wahrheit_inhalt, encoding="utf-8")
    ergebnis = aufruf(auswahl_datei, wahrheit_datei, "--bootstrap", "0")
    assert ergebnis.exit_code == 1, ergebnis.output
    assert meldung in ergebnis.stderr and "Traceback" not in ergebnis.output
    # Die Meldung nennt die kaputte Datei, und stdout bleibt leer.
    # „keine Referenz“ betrifft die Wahrheitsdatei, auch wenn die id aus der Auswahl stammt.
    kaputt = wahrheit_datei if wahrheit_inhalt is not None or "keine Referenz" in meldung else auswahl_datei
    assert ergebnis.stderr.splitlines()[-1].startswith(f"Fehler: {kaputt}")
    assert ergebnis.stdout == ""
    assert ergebnis.exception is None or isinstance(ergebnis.exception, SystemExit)


@pytest.mark.parametrize("extraktionen", [[], ["newspaper4k"], "Text", 3, None])
def test_extractions_ohne_mapping_heisst_keine_kandidaten(tmp_path, dateien, extraktionen):
    """Wie auswahl.waehle: extractions ohne Mapping ist keine Ausgabe, kein Absturz."""
    art = {"id": "a", "extractions": extraktionen, "selected_extractor": "newspaper4k"}
    assert bewertung.text_von(art, "newspaper4k") == ""
    wahrheit = schreiben(tmp_path / "w.json", {"a": {"articleBody": "Der Rat tagte am Abend lange."}})
    for mit_wahl in (art, {k: v for k, v in art.items() if k != "selected_extractor"}):
        ergebnis = aufruf(schreiben(tmp_path / "a.json", [mit_wahl]), wahrheit, "--bootstrap", "0")
        assert ergebnis.exit_code == 0, ergebnis.output
        auswahl_zeile = next(z for z in ergebnis.stdout.splitlines() if z.startswith("Auswahl"))
        # keine Ausgabe: Präzision 0 (keine Seite mit Ausgabe), Recall 0
        assert auswahl_zeile.split()[1:4] == ["0,000", "0,000", "0,000"]


@pytest.mark.parametrize("eintrag", [["text"], "text", None, {"text": 5}, {"text": ["a"]}, {"error": "x"}])
def test_kandidat_ohne_mapping_oder_text_ist_leer(eintrag):
    art = artikel("a", {"readability": "Der Rat tagte am Abend."}, "readability")
    art["extractions"]["newspaper4k"] = eintrag
    assert bewertung.text_von(art, "newspaper4k") == ""
    assert bewertung.text_von(art, "readability") == "Der Rat tagte am Abend."
    # Namen, die kein Text sind, finden nichts – auch unhashbare
    assert bewertung.text_von(art, ["readability"]) == "" and bewertung.text_von(art, None) == ""


def test_cli_fehlende_datei(tmp_path, dateien):
    ergebnis = aufruf(str(tmp_path / "gibtsnicht.json"), dateien[1])
    assert ergebnis.exit_code == 1 and "gibtsnicht.json gibt es nicht." in ergebnis.stderr


# --- die veröffentlichten Zahlen des Benchmarks ---------------------------------


def test_benchmark_zahlen_reproduzieren():
    from auswahlstufe.regeln import waehle

    arts = bewertung.artikel_laden(str(BENCH / "candidates.json"), lambda ex: waehle(ex).extraktor)
    refs = bewertung.referenzen_laden(str(BENCH / "ground-truth.json"), arts, ohne_titel=False)
    zeilen = zeilen_messen(arts, refs)

    def gerundet(name: str) -> tuple[float, float, float]:
        g = guete(zeilen[name])
        return round(g.f1, 3), round(g.praezision, 3), round(g.recall, 3)

    # ../shared/bench/README.md
    assert gerundet("trafilatura") == (0.953, 0.928, 0.978)
    assert gerundet("newspaper4k") == (0.949, 0.964, 0.934)
    assert gerundet("readability") == (0.952, 0.936, 0.968)
    assert gerundet(ORAKEL)[0] == 0.979
    assert gerundet(LAENGSTER)[0] == 0.936


def test_cli_variante_neu_entschieden(dateien):
    ergebnis = aufruf(*dateien, "--variante", "4:0.03", "--variante", "5:0", "--bootstrap", "20")
    assert ergebnis.exit_code == 0, ergebnis.output
    assert "Auswahl k4 t0,03  " in ergebnis.stdout and "Auswahl k5 t0  " in ergebnis.stdout
    assert "coder_version auswahl-2+norm-1+rein-1+k4+t0.03+n4k>rd>tf" in ergebnis.stdout
    assert "Auswahl k5 t0 − Auswahl:" in ergebnis.stdout


def test_cli_variante_quelle000_und_kombiniert(dateien):
    ergebnis = aufruf(
        *dateien, "--variante", "quelle000", "--variante", "k4:0.03+quelle000", "--bootstrap", "0"
    )
    assert ergebnis.exit_code == 0, ergebnis.output
    assert (
        "Auswahl k5 t0,03 quelle000: coder_version auswahl-2+norm-0+rein-1+k5+t0.03+n4k>rd>tf"
        in ergebnis.stdout
    )
    assert (
        "Auswahl k4 t0,03 quelle000: coder_version auswahl-2+norm-0+rein-1+k4+t0.03+n4k>rd>tf"
        in ergebnis.stdout
    )


def test_variante_quelle000_trennt_an_formatzeichen():
    """Quelle 000 wörtlich löscht Formatzeichen nicht: „Bundes\u00adregierung“ sind zwei Tokens,
    readability (ohne weiches Trennzeichen) steht dann abseits."""
    wort = "Bundes\u00adregierung"
    kern = " ".join(f"w{i}" for i in range(30))
    texte = {
        "newspaper4k": f"{kern} {wort} beschließt heute",
        "readability": f"{kern} Bundesregierung beschließt heute",
        "trafilatura": f"{kern} {wort} beschließt heute mehr",
    }
    extraktionen = {n: {"text": t, "error": None} for n, t in texte.items()}
    from auswahlstufe.regeln import waehle

    voreinstellung = waehle(extraktionen)
    variante = waehle(extraktionen, **variante_lesen("quelle000").argumente())
    assert (voreinstellung.regel, voreinstellung.konsens) == ("gleichstand_rang", 29)
    assert voreinstellung.kandidat("readability").abstand == 0.0  # Formatzeichen gelöscht: derselbe Text
    assert (variante.regel, variante.konsens) == ("gleichstand_kuerzester", 30)
    assert variante.kandidat("readability").abstand == pytest.approx(1 - 26 / 33)


def test_variante_entscheidet_wirklich_neu():
    # trafilatura trifft den Konsens genau (Score 1,0), readability ist kürzer (0,923):
    # ohne Toleranz gewinnt trafilatura, mit 0,5 der kürzere im Gleichstand.
    basis = " ".join(f"w{i}" for i in range(40))
    texte = {"newspaper4k": basis + " " + " ".join(f"n{i}" for i in range(12)), "readability": basis}
    texte["trafilatura"] = basis + " " + " ".join(f"n{i}" for i in range(6))
    arts = [artikel("x", texte, "newspaper4k")]
    zeilen = bewertung.varianten_messen(arts, [basis], [Variante(5, 0.0), Variante(5, 0.5)])
    assert p_r(zeilen["Auswahl k5 t0,5"][0]) == (1.0, 1.0)  # readability: genau die Referenz
    assert zeilen["Auswahl k5 t0"][0].praezision < 1.0


@pytest.mark.parametrize("wert", ["4", "x:0.1", "0:0.03", "5:1.5", "quelle001", "k4:0.03+", "k4"])
def test_cli_variante_unsinn_ist_aufruffehler(dateien, wert):
    ergebnis = aufruf(*dateien, "--variante", wert)
    assert ergebnis.exit_code == 2, ergebnis.output
    assert "K:TOLERANZ" in ergebnis.stderr or "k ab 1" in ergebnis.stderr
    assert f"'{wert}'" in ergebnis.stderr


# --- Hilfe und Aufruf ---------------------------------------------------------


def test_hilfe_ganz_deutsch():
    hilfe = aufruf("--help").stdout
    for englisch in ("[default:", "FILE", "INTEGER", "RANGE", "x>=", "Usage", "Options"):
        assert englisch not in hilfe
    assert "[Voreinstellung: 1000; ab 0]" in hilfe and "--urteile URTEILE.json" in hilfe


@pytest.mark.parametrize(
    ("argumente", "meldung"),
    [
        ((), "Fehler: Es fehlen die Argumente AUSWAHL.json und WAHRHEIT.json (oder --urteile URTEILE.json)."),
        (("a.json",), "Fehler: Es fehlt das Argument WAHRHEIT.json (oder --urteile URTEILE.json)."),
        (
            ("a.json", "b.json", "--bootstrap", "-1"),
            "Fehler: Ungültiger Wert für '--bootstrap': -1 ist kleiner als 0.",
        ),
        (("a.json", "--urteile", "u.json"), "--urteile gilt allein, ohne AUSWAHL.json und WAHRHEIT.json."),
    ],
)
def test_aufruffehler_mit_grund(argumente, meldung):
    ergebnis = aufruf(*argumente)
    assert ergebnis.exit_code == 2
    assert meldung in ergebnis.stderr
    assert "Ungültiger Wert für 'AUSWAHL.json': \n" not in ergebnis.stderr


# --- Urteile von der Prüfseite ------------------------------------------------


def urteilsdatei(tmp_path: Path, urteile: list, **kopf) -> str:
    daten = {"format": "wurzelwerk-urteile/1", "coder_version": "auswahl-2+x", "urteile": urteile, **kopf}
    pfad = tmp_path / "urteile.json"
    pfad.write_text(json.dumps(daten), encoding="utf-8")
    return str(pfad)


def u(schluessel: str, wahl: str, besser: str | None = None, grund: str = "wahl_kuerzer") -> dict:
    urteil = "richtig" if besser is None else "anderer"
    return {"schluessel": schluessel, "wahl": wahl, "urteil": urteil, "besser": besser, "grund": grund}


def test_urteile_genauigkeit_mit_intervall(tmp_path):
    liste = [u(str(i), "readability") for i in range(7)]
    liste += [u("7", "readability", "trafilatura"), u("8", "newspaper4k", "trafilatura", "kein_konsens")]
    liste += [u("9", "newspaper4k", "readability", "kein_konsens")]
    ergebnis = aufruf("--urteile", urteilsdatei(tmp_path, liste))
    assert ergebnis.exit_code == 0, ergebnis.output
    aus = ergebnis.stdout
    assert "10 Urteile über Wahlen von coder_version auswahl-2+x" in aus
    # Wilson-Intervall für 7 von 10: 0,397 … 0,892
    assert "Wahl richtig: 7 von 10 (70 %, 95 %: 40 % – 89 %)" in aus
    assert "Anderer Kandidat besser: readability 1, trafilatura 2" in aus
    assert "Je gewähltem Extraktor richtig: newspaper4k 0/2, readability 7/8" in aus
    assert "Je Grund des Zweifels richtig: kein_konsens 0/2, wahl_kuerzer 7/8" in aus
    assert "keine Zufallsstichprobe" in aus


def test_urteile_leer(tmp_path):
    ergebnis = aufruf("--urteile", urteilsdatei(tmp_path, []))
    assert ergebnis.exit_code == 0 and "Keine Urteile" in ergebnis.stdout


@pytest.mark.parametrize(
    ("inhalt", "meldung"),
    [
        ([], "keine Urteilsdatei"),
        ({"format": "anderes", "urteile": []}, "keine Urteilsdatei"),
        ({"format": "wurzelwerk-urteile/1"}, "„urteile“ fehlt oder ist keine Liste"),
        ({"format": "wurzelwerk-urteile/1", "urteile": [3]}, "Urteil 0 ist kein Objekt"),
        (
            {"format": "wurzelwerk-urteile/1", "urteile": [{"wahl": "readability"}]},
            "Urteil 0 hat keinen Schlüssel",
        ),
        ({"format": "wurzelwerk-urteile/1", "urteile": [u("a", "x")]}, "Urteil 0 (a): „wahl“ ist keiner"),
        (
            {"format": "wurzelwerk-urteile/1", "urteile": [u("a", "readability", "readability")]},
            "Urteil 0 (a): erwartet „urteil“",
        ),
        (
            {
                "format": "wurzelwerk-urteile/1",
                "urteile": [{**u("a", "readability"), "besser": "trafilatura"}],
            },
            "Urteil 0 (a): erwartet „urteil“",
        ),
        (
            {"format": "wurzelwerk-urteile/1", "urteile": [u("a", "readability"), u("a", "trafilatura")]},
            "Urteil 1 (a) steht doppelt",
        ),
    ],
)
def test_urteile_kaputt_klare_meldung(tmp_path, inhalt, meldung):
    pfad = tmp_path / "u.json"
    pfad.write_text(json.dumps(inhalt), encoding="utf-8")
    ergebnis = aufruf("--urteile", str(pfad))
    assert ergebnis.exit_code == 1
    assert meldung in ergebnis.stderr and str(pfad) in ergebnis.stderr
    assert "Traceback" not in ergebnis.output


def test_fehlende_datei_deutsch_benannt(dateien, tmp_path):
    e = aufruf(str(dateien[0]), str(tmp_path / "gibtsnicht.json"))
    assert e.exit_code == 1
    assert "Die Eingabedatei " in e.output and "gibtsnicht.json gibt es nicht." in e.output, e.output
