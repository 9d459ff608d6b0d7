"""Tests für regeln.waehle: jede Regel aus Quelle 000 §3 mit kleinen, handgebauten Texten.

Die Texte bestehen aus lauter verschiedenen Wörtern (w0, w1, …), damit die
Shingle-Mengen genau planbar sind: m verschiedene Wörter ergeben m − 4
Fünfer-Shingles, und ein angehängtes neues Wort genau ein Shingle mehr.
Die Scores rechnen die Tests mit Brüchen nach: score = 2·|C∩K| / (|K| + |C|).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auswahlstufe import regeln
from auswahlstufe.regeln import REGELN, Entscheidung, Zweifel, f1, waehle, zweifel
from normalisierung import shingles, tokens

PRIORITAET = ("newspaper4k", "readability", "trafilatura")
FEHLT = object()  # Eintrag gar nicht vorhanden


def woerter(praefix: str, anzahl: int) -> list[str]:
    return [f"{praefix}{i}" for i in range(anzahl)]


def text(ws: list[str]) -> str:
    return " ".join(ws)


def eintrag(ws_oder_text, error=None) -> dict:
    t = ws_oder_text if isinstance(ws_oder_text, str) else text(ws_oder_text)
    return {"text": t, "error": error}


def mit_shingles(praefix: str, anzahl: int) -> dict:
    """Ein nutzbarer Text mit genau ``anzahl`` eigenen Shingles."""
    return eintrag(woerter(praefix, anzahl + 4))


def score(treffer: int, konsens: int, eigene: int) -> Fraction:
    return Fraction(2 * treffer, konsens + eigene)


def kern_plus_rest(n: int, extra_a: int, extra_b: int, kuerzung_c: int) -> dict:
    """Drei Texte um einen gemeinsamen Kern W mit n Shingles.

    newspaper4k = W + extra_a neue Wörter, readability = W + extra_b neue
    Wörter, trafilatura = W ohne seine letzten kuerzung_c Wörter. Dann ist
    K genau W (n Shingles), trafilatura hat n − kuerzung_c, alle davon in K.
    """
    w = woerter("w", n + 4)
    return {
        "newspaper4k": eintrag(w + woerter("xa", extra_a)),
        "readability": eintrag(w + woerter("xb", extra_b)),
        "trafilatura": eintrag(w[: n - kuerzung_c + 4]),
    }


def pruefe_kern_plus_rest(e: Entscheidung, n: int, extra_a: int, extra_b: int, kuerzung_c: int) -> dict:
    """Konsens, Shingle-Zahlen und Maße gegen die Rechnung mit Brüchen."""
    eigene = {"newspaper4k": n + extra_a, "readability": n + extra_b, "trafilatura": n - kuerzung_c}
    treffer = {"newspaper4k": n, "readability": n, "trafilatura": n - kuerzung_c}
    assert e.konsens == n
    scores = {}
    for name in PRIORITAET:
        k = e.kandidat(name)
        assert k.aktiv
        assert k.shingles == eigene[name]
        assert (k.abdeckung, k.stuetzung, k.score) == f1(treffer[name], n, eigene[name])
        assert k.abdeckung == pytest.approx(float(Fraction(treffer[name], n)), abs=1e-12)
        assert k.stuetzung == pytest.approx(float(Fraction(treffer[name], eigene[name])), abs=1e-12)
        scores[name] = score(treffer[name], n, eigene[name])
        assert k.score == pytest.approx(float(scores[name]), abs=1e-12)
    return scores


# --- Klassen ------------------------------------------------------------------

NICHT_VERFUEGBAR = {
    "fehlt": FEHLT,
    "null": None,
    "zeichenkette": "ein Text mit genug Wörtern für Shingles",
    "zahl": 42,
    "liste": ["ein Text mit genug Wörtern"],
    "wahrheitswert": True,
    "ohne_text": {"error": None},
    "text_null": {"text": None, "error": None},
    "text_zahl": {"text": 5},
    "text_kommazahl": {"text": 1.5},
    "text_liste": {"text": ["ein Text mit genug Wörtern"]},
    "text_objekt": {"text": {"text": "ein Text mit genug Wörtern"}},
    "text_wahrheitswert": {"text": True},
    "text_leer": {"text": ""},
    "text_leerraum": {"text": " \n\t\u00a0"},
    "nur_satzzeichen": {"text": "!!! ... --- ? «»"},
    "nur_markup": {"text": "<p></p><br/><div class='x'></div>"},
    "nur_entitaeten": {"text": "&amp; &lt;&gt; &nbsp; &mdash;"},
    "nur_bild": {"text": "![Ein Bild mit Text](bild.png)"},
    "nur_formatzeichen": {"text": "\u200b\u00ad\ufeff"},
    "leer_mit_fehler": {"text": "", "error": "Zeitüberschreitung"},
}


@pytest.mark.parametrize("wert", NICHT_VERFUEGBAR.values(), ids=NICHT_VERFUEGBAR.keys())
def test_klasse_nicht_verfuegbar(wert):
    extraktionen = {"readability": mit_shingles("r", 3)}
    if wert is not FEHLT:
        extraktionen["newspaper4k"] = wert
    e = waehle(extraktionen)
    n4k = e.kandidat("newspaper4k")
    assert n4k.klasse == "nicht_verfuegbar"
    assert not n4k.aktiv
    assert n4k.shingles == 0
    assert (e.extraktor, e.regel) == ("readability", "einziger")


@pytest.mark.parametrize("fehler", [None, "", FEHLT], ids=["null", "leer", "fehlt"])
def test_klasse_nutzbar_nur_bei_fehler_null_oder_leer(fehler):
    wert = {"text": "eins zwei drei vier fünf sechs"}
    if fehler is not FEHLT:
        wert["error"] = fehler
    # readability ist beeintraechtigt: nur wenn newspaper4k nutzbar ist, steht es allein
    e = waehle({"newspaper4k": wert, "readability": mit_shingles("r", 9) | {"error": "x"}})
    assert e.kandidat("newspaper4k").klasse == "nutzbar"
    assert e.kandidat("newspaper4k").shingles == 2
    assert e.kandidat("readability").klasse == "beeintraechtigt"
    assert (e.extraktor, e.regel) == ("newspaper4k", "einziger")


@pytest.mark.parametrize(
    "fehler",
    ["Zeitüberschreitung", " ", "null", 0, 0.0, False, True, 1, [], {}, {"code": 500}],
    ids=repr,
)
def test_klasse_beeintraechtigt_bei_jedem_anderen_fehlerwert(fehler):
    """Nutzbar heißt: error ist null oder "" – auch 0, False, [] sind ein Fehler."""
    e = waehle({"newspaper4k": eintrag("eins zwei drei", fehler), "readability": mit_shingles("r", 1)})
    assert e.kandidat("newspaper4k").klasse == "beeintraechtigt"
    assert not e.kandidat("newspaper4k").aktiv
    assert (e.extraktor, e.regel) == ("readability", "einziger")


# --- Aktivmenge, Rückfall, einziger -------------------------------------------


def test_nutzbare_verdraengen_beeintraechtigte_auch_mit_konsens():
    w = woerter("w", 30)
    e = waehle(
        {
            "newspaper4k": eintrag(w, "teilweise"),
            "readability": mit_shingles("r", 2),
            "trafilatura": eintrag(w, "teilweise"),
        }
    )
    assert (e.extraktor, e.regel, e.konsens) == ("readability", "einziger", 0)
    assert [k.aktiv for k in e.kandidaten] == [False, True, False]


def test_nur_beeintraechtigte_sind_dann_aktiv():
    w = woerter("w", 24)  # 20 Shingles
    e = waehle(
        {
            "newspaper4k": eintrag(w + woerter("x", 20), "teilweise"),
            "readability": eintrag(w, "teilweise"),
            "trafilatura": {"text": None},
        }
    )
    assert [k.klasse for k in e.kandidaten] == ["beeintraechtigt", "beeintraechtigt", "nicht_verfuegbar"]
    assert (e.extraktor, e.regel, e.konsens) == ("readability", "bester_score", 20)


@pytest.mark.parametrize(
    "extraktionen",
    [
        {},
        {"readability": {"text": None}},
        {"readability": {"text": "", "error": "leer"}, "trafilatura": "kein Objekt"},
        {"newspaper4k": None, "readability": [], "trafilatura": {"text": "..."}},
        {"boilerpy3": mit_shingles("b", 50)},
        None,
        [],
        "newspaper4k",
        42,
    ],
    ids=repr,
)
def test_rueckfall_newspaper4k_auch_ohne_eintrag(extraktionen):
    e = waehle(extraktionen)
    assert (e.extraktor, e.regel, e.konsens) == ("newspaper4k", "rueckfall", 0)
    assert [k.extraktor for k in e.kandidaten] == list(PRIORITAET)
    assert all(k.klasse == "nicht_verfuegbar" and not k.aktiv and k.score is None for k in e.kandidaten)
    assert e.marge is None


@pytest.mark.parametrize("name", PRIORITAET)
def test_einziger_aktiver(name):
    andere = {n: {"text": None} for n in PRIORITAET if n != name}
    e = waehle({**andere, name: eintrag("Nur ein Satz.", "irgendein Fehler")})
    assert (e.extraktor, e.regel, e.konsens) == (name, "einziger", 0)
    assert e.kandidat(name).klasse == "beeintraechtigt"
    assert e.kandidat(name).score is None
    assert e.marge is None


# --- mit Konsens --------------------------------------------------------------


def test_bester_score_allein_vorn_auch_wenn_ein_anderer_kuerzer_ist():
    w = woerter("w", 24)  # 20 Shingles
    e = waehle(
        {
            "newspaper4k": eintrag(w + woerter("x", 20)),
            "readability": eintrag(w),
            "trafilatura": eintrag("ganz anderer kurzer Text"),  # 1 Shingle, Score 0
        }
    )
    assert (e.extraktor, e.regel, e.konsens) == ("readability", "bester_score", 20)
    assert e.kandidat("trafilatura").shingles == 1
    assert e.kandidat("trafilatura").score == 0.0
    assert e.kandidat("readability").score == 1.0
    assert e.kandidat("newspaper4k").score == pytest.approx(float(score(20, 20, 40)))
    assert e.marge == pytest.approx(1 - 40 / 60)


def test_gleichstand_genau_0_03_zaehlt_als_gleichstand():
    """newspaper4k 174/175, trafilatura 27/28: Abstand genau 3/100 (als Bruch).
    Im Gleichstand gewinnt der Kürzeste, also trafilatura."""
    n, extra_a, extra_b, kuerzung = 87, 1, 30, 6
    e = waehle(kern_plus_rest(n, extra_a, extra_b, kuerzung))
    s = pruefe_kern_plus_rest(e, n, extra_a, extra_b, kuerzung)
    assert s["newspaper4k"] == Fraction(174, 175)
    assert s["trafilatura"] == Fraction(27, 28)
    assert s["newspaper4k"] - s["trafilatura"] == Fraction(3, 100)
    assert s["newspaper4k"] - s["readability"] > Fraction(3, 100)  # readability außerhalb
    assert (e.extraktor, e.regel) == ("trafilatura", "gleichstand_kuerzester")
    assert e.marge == pytest.approx(-0.03, abs=1e-12)


def test_knapp_ueber_0_03_ist_kein_gleichstand():
    """Abstand 0,0300025: kein Gleichstand, der beste Score entscheidet."""
    n, extra_a, extra_b, kuerzung = 143, 4, 40, 12
    e = waehle(kern_plus_rest(n, extra_a, extra_b, kuerzung))
    s = pruefe_kern_plus_rest(e, n, extra_a, extra_b, kuerzung)
    abstand = s["newspaper4k"] - s["trafilatura"]
    assert Fraction(3, 100) < abstand < Fraction(30003, 1000000)
    assert (e.extraktor, e.regel) == ("newspaper4k", "bester_score")
    assert e.marge == pytest.approx(float(abstand), abs=1e-12)


def test_gleichstand_1_0_gegen_0_97_trotz_gleitkomma():
    """1.0 − 0.97 ist in double 0.030000000000000027 > 0.03; der Spielraum
    1e-9 der Spezifikation macht es zum Gleichstand."""
    n, extra_a, extra_b, kuerzung = 103, 0, 40, 6
    e = waehle(kern_plus_rest(n, extra_a, extra_b, kuerzung))
    s = pruefe_kern_plus_rest(e, n, extra_a, extra_b, kuerzung)
    assert (s["newspaper4k"], s["trafilatura"]) == (1, Fraction(97, 100))
    spitze, c = e.kandidat("newspaper4k").score, e.kandidat("trafilatura").score
    assert spitze == 1.0
    assert spitze - c > 0.03  # ohne Spielraum kein Gleichstand
    assert (e.extraktor, e.regel) == ("trafilatura", "gleichstand_kuerzester")


def test_gleichstand_und_gleich_viele_shingles_rangfolge():
    w = woerter("w", 24)
    e = waehle({"newspaper4k": eintrag(w + woerter("xa", 3)), "readability": eintrag(w + woerter("xb", 3))})
    assert (e.extraktor, e.regel, e.konsens) == ("newspaper4k", "gleichstand_rang", 20)
    assert e.kandidat("newspaper4k").score == e.kandidat("readability").score
    assert e.marge == 0.0


def test_gleichstand_rangfolge_unter_den_uebrigen():
    """newspaper4k ist nur beeintraechtigt, also nicht aktiv: readability vor trafilatura."""
    w = woerter("w", 24)
    e = waehle(
        {
            "trafilatura": eintrag(w + woerter("xt", 2)),
            "readability": eintrag(w + woerter("xr", 2)),
            "newspaper4k": eintrag(w, "Fehler"),
        }
    )
    assert (e.extraktor, e.regel) == ("readability", "gleichstand_rang")


def test_drei_gleiche_texte_rangfolge():
    t = eintrag(woerter("w", 12))
    e = waehle({"trafilatura": t, "readability": t, "newspaper4k": t})
    assert (e.extraktor, e.regel, e.konsens) == ("newspaper4k", "gleichstand_rang", 8)
    assert [k.score for k in e.kandidaten] == [1.0, 1.0, 1.0]


def test_kurze_texte_bilden_konsens_ueber_ihr_eines_tupel():
    e = waehle({"readability": eintrag("Hallo Welt!"), "trafilatura": eintrag("<p>hallo WELT</p>")})
    assert (e.extraktor, e.regel, e.konsens) == ("readability", "gleichstand_rang", 1)


def test_konsens_nur_unter_aktiven():
    """Der beeintraechtigte Text teilt alles mit newspaper4k, zählt aber nicht mit."""
    w = woerter("w", 24)
    e = waehle(
        {
            "newspaper4k": eintrag(w),
            "readability": mit_shingles("r", 5),
            "trafilatura": eintrag(w, "Fehler"),
        }
    )
    assert (e.extraktor, e.regel, e.konsens) == ("newspaper4k", "ohne_konsens_groesster", 0)


def test_konsens_zaehlt_shingles_in_mindestens_zwei():
    """A = P+Q, B = P, C = Q (P, Q je 10 Shingles): K = P ∪ Q, 20 Shingles."""
    p, q = woerter("p", 14), woerter("q", 14)
    e = waehle({"newspaper4k": eintrag(p + q), "readability": eintrag(p), "trafilatura": eintrag(q)})
    # A hat zusätzlich die 4 Shingles über die Naht P|Q
    assert e.konsens == 20
    assert [k.shingles for k in e.kandidaten] == [24, 10, 10]
    assert e.kandidat("newspaper4k").score == pytest.approx(float(score(20, 20, 24)))
    assert e.kandidat("readability").score == pytest.approx(float(score(10, 20, 10)))
    assert (e.extraktor, e.regel) == ("newspaper4k", "bester_score")


# --- ohne Konsens -------------------------------------------------------------


@pytest.mark.parametrize(
    ("zahlen", "erwartet"),
    [
        ((20, 10, 10), "readability"),  # zwei mit dem Median: der ranghöhere
        ((10, 20, 10), "newspaper4k"),
        ((5, 20, 10), "trafilatura"),
        ((10, 20, 20), "readability"),
        ((7, 7, 7), "newspaper4k"),
        ((1, 3, 2), "trafilatura"),
    ],
    ids=str,
)
def test_ohne_konsens_drei_aktive_median(zahlen, erwartet):
    ex = {name: mit_shingles(name[:2], z) for name, z in zip(PRIORITAET, zahlen, strict=True)}
    e = waehle(ex)
    assert [k.shingles for k in e.kandidaten] == list(zahlen)
    assert (e.extraktor, e.regel, e.konsens) == (erwartet, "ohne_konsens_median", 0)
    assert all(k.aktiv and k.score is None for k in e.kandidaten)
    assert e.marge is None


@pytest.mark.parametrize(
    ("paar", "erwartet"),
    [
        ({"readability": 10, "trafilatura": 20}, "trafilatura"),
        ({"newspaper4k": 3, "trafilatura": 2}, "newspaper4k"),
        ({"readability": 10, "trafilatura": 10}, "readability"),
        ({"trafilatura": 10, "newspaper4k": 10}, "newspaper4k"),
    ],
    ids=str,
)
def test_ohne_konsens_zwei_aktive_der_groessere(paar, erwartet):
    e = waehle({name: mit_shingles(name[:2], z) for name, z in paar.items()})
    assert (e.extraktor, e.regel, e.konsens) == (erwartet, "ohne_konsens_groesster", 0)


def test_gleiche_woerter_anders_geordnet_sind_kein_konsens():
    w = woerter("w", 10)
    e = waehle({"newspaper4k": eintrag(w), "readability": eintrag(list(reversed(w)))})
    assert (e.extraktor, e.regel, e.konsens) == ("newspaper4k", "ohne_konsens_groesster", 0)


# --- unbekannte Namen, Maße, Marge, Zweifel -----------------------------------


def test_unbekannte_namen_uebergangen_und_gemeldet():
    bekannt = {"readability": mit_shingles("r", 3)}
    fremd = {
        "boilerpy3": mit_shingles("b", 90),
        "Newspaper4k": mit_shingles("n", 90),
        "": {"text": "x"},
        "jusText": None,
    }
    e = waehle({**fremd, **bekannt})
    # bis auf die gemeldeten Namen dieselbe Entscheidung wie ohne sie
    assert replace(e, unbekannt=()) == waehle(bekannt)
    assert (e.extraktor, e.regel) == ("readability", "einziger")
    assert e.unbekannt == ("", "Newspaper4k", "boilerpy3", "jusText")
    assert waehle(bekannt).unbekannt == ()


def test_unbekannte_namen_die_keine_zeichenketten_sind():
    e = waehle({1: "x", None: {"text": "a b c"}, "readability": eintrag("a b c")})
    assert (e.extraktor, e.regel) == ("readability", "einziger")
    assert sorted(e.unbekannt) == ["1", "None"]


def test_metriken_je_kandidat():
    w = woerter("w", 24)
    e = waehle(
        {
            "newspaper4k": eintrag(w + woerter("x", 20)),
            "readability": eintrag(w),
            "trafilatura": eintrag(woerter("t", 11), "Fehler"),
        }
    )
    m = e.metriken()
    assert list(m) == list(PRIORITAET)
    assert m["readability"] == {
        "klasse": "nutzbar",
        "aktiv": True,
        "shingles": 20,
        "abdeckung": 1.0,
        "stuetzung": 1.0,
        "score": 1.0,
        "abstand": 0.0,  # die Wahl
    }
    assert m["newspaper4k"]["klasse"] == "nutzbar"
    assert m["newspaper4k"]["shingles"] == 40
    assert m["newspaper4k"]["abdeckung"] == 1.0
    assert m["newspaper4k"]["stuetzung"] == 0.5
    assert m["newspaper4k"]["score"] == pytest.approx(2 / 3)
    assert m["newspaper4k"]["abstand"] == 0.5  # 20 gemeinsame von 40 Shingles
    # nicht aktiv: Klasse und Shingle-Zahl, aber keine Maße
    assert m["trafilatura"] == {
        "klasse": "beeintraechtigt",
        "aktiv": False,
        "shingles": 7,
        "abdeckung": None,
        "stuetzung": None,
        "score": None,
        "abstand": None,
    }
    assert json.loads(json.dumps(m)) == m


def test_zweifel_ohne_nachbarn_oder_ohne_gemeinsames_ist_eins():
    """Niemand bestätigt die Wahl: kein aktiver Kandidat, nur einer, oder keiner teilt ein Shingle."""
    ohne = waehle({"readability": mit_shingles("r", 5), "trafilatura": mit_shingles("t", 6)})
    assert zweifel(waehle({})) == Zweifel(1.0, regeln.KEIN_KANDIDAT)
    assert zweifel(waehle({"trafilatura": mit_shingles("t", 9)})) == Zweifel(1.0, regeln.NUR_EINER)
    assert zweifel(ohne) == Zweifel(1.0, regeln.KEIN_KONSENS, "readability")


def test_zweifel_ist_der_abstand_der_wahl_zum_naechsten_kandidaten():
    w = woerter("w", 24)  # 20 Shingles
    e = waehle(
        {
            "newspaper4k": eintrag(w + woerter("x", 20)),  # 40 Shingles, 20 davon gemeinsam
            "readability": eintrag(w),
            "trafilatura": eintrag(w + woerter("y", 5)),  # 25 Shingles
        }
    )
    assert (e.extraktor, e.regel) == ("readability", "bester_score")
    assert [k.abstand for k in e.kandidaten] == [0.5, 0.0, 1 - 20 / 25]
    # trafilatura liegt am nächsten und hat Text, der der Wahl fehlt
    assert zweifel(e) == Zweifel(1 - 20 / 25, regeln.WAHL_KUERZER, "trafilatura")


def test_zweifel_grund_wahl_laenger_bestaetigt_fast_gleich():
    w = woerter("w", 204)  # 200 Shingles
    laenger = waehle({"newspaper4k": eintrag(w + woerter("x", 20)), "readability": eintrag(w)})
    # zwei Kandidaten: der kürzere gewinnt (Score 1); umgekehrt gebaut, damit die Wahl länger ist
    assert (laenger.extraktor, zweifel(laenger).grund) == ("readability", regeln.WAHL_KUERZER)
    mehr = waehle(
        {
            "newspaper4k": eintrag(w + woerter("x", 30)),
            "readability": eintrag(w[:150]),
            "trafilatura": eintrag(w + woerter("x", 30)),
        }
    )
    assert mehr.extraktor == "newspaper4k" and mehr.kandidat("readability").abstand > 0.03
    assert zweifel(mehr) == Zweifel(0.0, regeln.BESTAETIGT, "trafilatura")
    fast = waehle({n: eintrag(w + woerter(n, 3)) for n in PRIORITAET})  # je 3 eigene von ~203
    z = zweifel(fast)
    assert z.grund == regeln.FAST_GLEICH and z.fast_gleich and 0 < z.wert <= regeln.FAST_GLEICH_BIS
    gegen = waehle({"newspaper4k": eintrag(w[:60]), "readability": eintrag(w), "trafilatura": eintrag(w)})
    assert gegen.extraktor == "readability"
    assert zweifel(gegen).grund == regeln.BESTAETIGT  # trafilatura gleich, newspaper4k weit weg
    allein = waehle(
        {
            "newspaper4k": eintrag(w[:100]),
            "readability": eintrag(w[:100] + woerter("x", 60)),
            "trafilatura": eintrag(w[:100] + woerter("y", 60)),
        }
    )
    assert allein.extraktor == "newspaper4k"
    assert zweifel(allein).grund == regeln.WAHL_KUERZER
    # zwei Teilstücke und das Ganze: das Ganze deckt den Konsens allein
    lang = waehle(
        {"newspaper4k": eintrag(w), "readability": eintrag(w[:150]), "trafilatura": eintrag(w[50:])}
    )
    assert (lang.extraktor, lang.regel) == ("newspaper4k", "bester_score")
    assert zweifel(lang) == Zweifel(1 - 150 / 200, regeln.WAHL_LAENGER, "trafilatura")


def test_zweifelsordnung_fast_gleiche_zuletzt():
    """Zweifelhafteste zuerst; bei Wert 1 erst Rückfall, dann ohne Konsens, dann einziger;
    fast gleiche Kandidaten ganz hinten, auch hinter einer Wahl mit Zwilling (Wert 0)."""
    w = woerter("w", 204)
    rueckfall = waehle({})
    ohne_konsens = waehle({"readability": mit_shingles("r", 5), "trafilatura": mit_shingles("t", 6)})
    einziger = waehle({"trafilatura": eintrag(w)})
    weit = waehle({"newspaper4k": eintrag(w[:100] + woerter("x", 100)), "readability": eintrag(w[:100])})
    nah = waehle({"newspaper4k": eintrag(w[:100] + woerter("x", 10)), "readability": eintrag(w[:100])})
    zwilling = waehle({"newspaper4k": eintrag(w[:60]), "readability": eintrag(w), "trafilatura": eintrag(w)})
    fast = waehle({n: eintrag(w + woerter(n, 3)) for n in PRIORITAET})
    erwartet = [rueckfall, ohne_konsens, einziger, weit, nah, zwilling, fast]
    assert zweifel(zwilling).wert == 0.0 < zweifel(fast).wert
    gemischt = [fast, nah, einziger, zwilling, rueckfall, weit, ohne_konsens]
    sortiert = sorted(gemischt, key=lambda e: zweifel(e).schluessel())
    assert [id(e) for e in sortiert] == [id(e) for e in erwartet]


# --- Eigenschaften ------------------------------------------------------------


def waehle_referenz(extraktionen: object) -> tuple:
    """Quelle 000 §3 wörtlich: K als Zählung, keine Abkürzung."""
    if not isinstance(extraktionen, Mapping):
        extraktionen = {}
    klasse, menge = {}, {}
    for name in PRIORITAET:
        wert = extraktionen.get(name)
        t = wert.get("text") if isinstance(wert, Mapping) else None
        menge[name] = shingles(tokens(t)) if isinstance(t, str) else set()
        if not menge[name]:
            klasse[name] = "nicht_verfuegbar"
        elif wert.get("error") is None or wert.get("error") == "":
            klasse[name] = "nutzbar"
        else:
            klasse[name] = "beeintraechtigt"
    aktive = [n for n in PRIORITAET if klasse[n] == "nutzbar"] or [
        n for n in PRIORITAET if klasse[n] == "beeintraechtigt"
    ]
    masse = {}
    if not aktive:
        wahl, regel, k = "newspaper4k", "rueckfall", 0
    elif len(aktive) == 1:
        wahl, regel, k = aktive[0], "einziger", 0
    else:
        zaehlung = Counter(s for n in aktive for s in menge[n])
        konsens = {s for s, z in zaehlung.items() if z >= 2}
        k = len(konsens)
        if not konsens:
            anzahlen = sorted(len(menge[n]) for n in aktive)
            ziel = anzahlen[1] if len(aktive) == 3 else anzahlen[-1]
            regel = "ohne_konsens_median" if len(aktive) == 3 else "ohne_konsens_groesster"
            wahl = next(n for n in PRIORITAET if n in aktive and len(menge[n]) == ziel)
        else:
            for n in aktive:
                schnitt = len(menge[n] & konsens)
                abdeckung, stuetzung = schnitt / k, schnitt / len(menge[n])
                summe = abdeckung + stuetzung
                masse[n] = (abdeckung, stuetzung, 2 * abdeckung * stuetzung / summe if summe else 0.0)
            spitze = max(m[2] for m in masse.values())
            gruppe = [n for n in aktive if spitze - masse[n][2] <= 0.03 + 1e-9]
            wenigste = min(len(menge[n]) for n in gruppe)
            kuerzeste = [n for n in gruppe if len(menge[n]) == wenigste]
            wahl = kuerzeste[0]
            if len(gruppe) == 1:
                regel = "bester_score"
            elif len(kuerzeste) == 1:
                regel = "gleichstand_kuerzester"
            else:
                regel = "gleichstand_rang"
    # Jaccard-Abstand zur Wahl, aus den Mengen selbst
    abstand = {n: 1 - len(menge[n] & menge[wahl]) / len(menge[n] | menge[wahl]) for n in aktive}
    je = tuple(
        (n, klasse[n], len(menge[n]), n in aktive, *masse.get(n, (None, None, None)), abstand.get(n))
        for n in PRIORITAET
    )
    return wahl, regel, k, je


def als_tupel(e: Entscheidung) -> tuple:
    je = tuple(
        (k.extraktor, k.klasse, k.shingles, k.aktiv, k.abdeckung, k.stuetzung, k.score, k.abstand)
        for k in e.kandidaten
    )
    return e.extraktor, e.regel, e.konsens, je


# Texte aus wenigen Wörtern: so teilen die Kandidaten oft Shingles, und
# Gleichstände, Konsens und Median kommen alle vor.
_wort = st.sampled_from(["a", "b", "c", "Ä", "<b>", "&amp;", "!", "\u00ad"])
_text = st.lists(_wort, max_size=14).map(" ".join)
_fehler = st.sampled_from([None, "", "Fehler", 0, False, []])


@st.composite
def kandidaten_mit_gemeinsamem_kern(draw):
    """Drei Texte aus Stücken eines gemeinsamen Kerns plus eigenem Rest."""
    kern = draw(st.lists(st.sampled_from(["k1", "k2", "k3", "k4", "k5", "k6"]), min_size=0, max_size=20))
    ergebnis = {}
    for name in PRIORITAET:
        art = draw(st.sampled_from(["fehlt", "kaputt", "text"]))
        if art == "kaputt":
            ergebnis[name] = draw(st.sampled_from([None, 3, "Text", {"text": None}, {"text": 7}]))
        elif art == "text":
            von = draw(st.integers(0, len(kern)))
            bis = draw(st.integers(von, len(kern)))
            rest = draw(st.lists(st.sampled_from(["r1", "r2", name]), max_size=6))
            vorn = draw(st.booleans())
            ws = rest + kern[von:bis] if vorn else kern[von:bis] + rest
            ergebnis[name] = {"text": " ".join(ws), "error": draw(_fehler)}
    return ergebnis


# Mehrzeilige Texte aus gemeinsamen Absätzen: so teilen die Kandidaten ganze
# Zeilen, wie echte Extraktionen desselben Artikels. Mit Zeichen, bei denen
# Zeilen und Wörter knifflig werden: Schluss-Sigma, Formatzeichen am
# Zeilenrand, Tags und Links über Zeilen hinweg, jede Art von Zeilenende.
_absatz = st.lists(
    st.sampled_from(
        [
            "k1",
            "k2",
            "k3",
            "ΟΔΟΣ",
            "Σ",
            "σ.",
            "Straße",
            "\u00ad",
            "\u200b",
            "<a",
            "href=x>",
            "[Link",
            "](u)",
            "&amp;",
        ]
    ),
    max_size=8,
).map(" ".join)
_umbruch = st.sampled_from(["\n", "\r\n", "\n\n", "\u2028", "\r", " "])


@st.composite
def kandidaten_aus_absaetzen(draw):
    absaetze = draw(st.lists(_absatz, min_size=1, max_size=6))
    ergebnis = {}
    for name in PRIORITAET:
        if draw(st.booleans()) or name == "newspaper4k":
            auswahl = draw(st.lists(st.sampled_from(absaetze), max_size=8))
            teile = []
            for absatz in auswahl:
                teile += [absatz, draw(_umbruch)]
            ergebnis[name] = {"text": "".join(teile), "error": draw(st.sampled_from([None, "", "Fehler"]))}
    return ergebnis


einfache_kandidaten = st.dictionaries(
    st.sampled_from(PRIORITAET),
    st.one_of(st.fixed_dictionaries({"text": _text, "error": _fehler}), st.none(), st.integers()),
)


@given(st.one_of(kandidaten_mit_gemeinsamem_kern(), kandidaten_aus_absaetzen(), einfache_kandidaten))
@settings(max_examples=500)
def test_waehle_wie_referenz(extraktionen):
    assert als_tupel(waehle(extraktionen)) == waehle_referenz(extraktionen)


@given(st.one_of(kandidaten_mit_gemeinsamem_kern(), kandidaten_aus_absaetzen(), einfache_kandidaten))
@settings(max_examples=300)
def test_metriken_json_zeichengleich_mit_json_dumps(extraktionen):
    """Die Ergebnissumme der Stufe hängt an diesem Text: von Hand gebaut, aber wie json.dumps."""
    e = waehle(extraktionen)
    assert e.metriken_json() == json.dumps(e.metriken(), sort_keys=True, separators=(",", ":"))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda innen: st.lists(innen, max_size=4) | st.dictionaries(st.text(max_size=6), innen, max_size=4),
    max_leaves=12,
)
_name = st.sampled_from([*PRIORITAET, "boilerpy3", "jusText", "", "Readability"])
_eintrag = st.one_of(
    _json,
    st.fixed_dictionaries({}, optional={"text": st.one_of(_text, _json), "error": _json}),
)
_extraktionen = st.dictionaries(_name, _eintrag, max_size=7)


@given(_extraktionen, st.randoms(use_true_random=False))
@settings(max_examples=300)
def test_reihenfolge_der_schluessel_egal(extraktionen, zufall):
    eintraege = list(extraktionen.items())
    zufall.shuffle(eintraege)
    assert waehle(dict(eintraege)) == waehle(extraktionen)
    assert waehle(dict(reversed(eintraege))) == waehle(extraktionen)


@given(st.one_of(_json, _extraktionen))
@settings(max_examples=300)
def test_waehle_wirft_nie(extraktionen):
    e = waehle(extraktionen)
    assert e.extraktor in PRIORITAET
    assert e.regel in REGELN
    assert [k.extraktor for k in e.kandidaten] == list(PRIORITAET)
    json.dumps(e.metriken())
    zweifel(e)


def test_gleicher_text_hat_keine_marge_und_kommt_in_der_stichprobe_zuletzt():
    """Sind die Gewinner wortgleich, entschied die Rangfolge zwischen denselben Wörtern:
    nichts abzuwägen. Die Marge misst gegen den besten Kandidaten mit anderem Text."""
    w = woerter("w", 24)
    gleich = waehle({"newspaper4k": eintrag(w), "readability": eintrag(w)})
    assert (gleich.extraktor, gleich.regel, gleich.marge) == ("newspaper4k", "gleichstand_rang", None)
    assert zweifel(gleich) == Zweifel(0.0, regeln.FAST_GLEICH, "readability")

    drei = waehle(
        {"newspaper4k": eintrag(w), "readability": eintrag(w), "trafilatura": eintrag(w + woerter("x", 20))}
    )
    anderer = drei.kandidat("trafilatura").score
    assert drei.extraktor == "newspaper4k"
    assert drei.marge == pytest.approx(drei.kandidat("newspaper4k").score - anderer)
    # derselbe Wert 0 (readability ist ein Zwilling), aber trafilatura weicht ab: vor den fast gleichen
    assert zweifel(drei) == Zweifel(0.0, regeln.BESTAETIGT, "readability")
    assert zweifel(drei).schluessel() < zweifel(gleich).schluessel()


@given(st.one_of(kandidaten_mit_gemeinsamem_kern(), kandidaten_aus_absaetzen(), einfache_kandidaten))
@settings(max_examples=300)
def test_zweifel_ist_der_kleinste_abstand_eines_anderen_aktiven(extraktionen):
    e = waehle(extraktionen)
    z = zweifel(e)
    andere = [k.abstand for k in e.kandidaten if k.aktiv and k.extraktor != e.extraktor]
    assert 0.0 <= z.wert <= 1.0 and z.grund in regeln.GRUENDE
    if e.regel in (regeln.RUECKFALL, regeln.EINZIGER) or e.konsens == 0:
        assert z.wert == 1.0
    else:
        assert z.wert == min(andere)
        assert z.fast_gleich == (max(andere) <= regeln.FAST_GLEICH_BIS + regeln.EPSILON)
