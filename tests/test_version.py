"""Tests für version.py: coder_version ist lesbar und ändert sich mit jedem Bestandteil."""

from __future__ import annotations

import inspect
import itertools
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import version
from auswahlstufe import regeln
from version import CODER_VERSION, coder_version

STANDARD = {
    "regelwerk": version.REGELWERK,
    "normalisierung": version.NORMALISIERUNG,
    "bereinigung": version.BEREINIGUNG,
    "k": version.K,
    "toleranz": version.TOLERANZ,
    "prioritaet": version.PRIORITAET,
}
# Das dokumentierte Format: auswahl-<Regeln>+norm-<tokens>+rein-<bereinigen>+k<k>+t<Toleranz>+<Rangfolge>
FORMAT = re.compile(
    r"auswahl-(\d+)\+norm-(\d+)\+rein-(\d+)\+k(\d+)\+t([0-9.e-]+)\+([a-z0-9]+(?:>[a-z0-9]+)*)"
)


def test_heutige_version_wortlaut():
    # 2 seit metriken den Abstand zur Wahl tragen (Zweifelsmaß, version.py)
    assert CODER_VERSION == "auswahl-2+norm-1+rein-1+k5+t0.03+n4k>rd>tf"
    assert coder_version() == CODER_VERSION


def test_format_lesbar_und_zerlegbar():
    teile = FORMAT.fullmatch(CODER_VERSION)
    assert teile is not None
    regelwerk, norm, rein, k, t, rang = teile.groups()
    assert (int(regelwerk), int(norm), int(rein)) == (
        version.REGELWERK,
        version.NORMALISIERUNG,
        version.BEREINIGUNG,
    )
    assert (int(k), float(t)) == (version.K, version.TOLERANZ)
    assert rang == ">".join(version.KUERZEL[name] for name in version.PRIORITAET)


def test_dokumentiertes_beispiel_ist_die_heutige_version():
    assert CODER_VERSION in coder_version.__doc__


def test_die_regeln_nutzen_dieselben_groessen():
    """Sonst beschriebe die coder_version andere Regeln, als waehle anwendet."""
    parameter = inspect.signature(regeln.waehle).parameters
    assert parameter["k"].default == version.K
    assert parameter["toleranz"].default == version.TOLERANZ
    assert [k.extraktor for k in regeln.waehle({}).kandidaten] == list(version.PRIORITAET)


@pytest.mark.parametrize(
    ("bestandteil", "anderer_wert"),
    [
        ("regelwerk", 3),
        ("normalisierung", 2),
        ("bereinigung", 2),
        ("k", 4),
        ("k", 50),
        ("toleranz", 0.05),
        ("toleranz", 0.0),
        ("toleranz", 0.025),
        ("prioritaet", ("readability", "newspaper4k", "trafilatura")),
        ("prioritaet", ("newspaper4k", "trafilatura", "readability")),
        ("prioritaet", ("newspaper4k", "readability")),
    ],
    ids=str,
)
def test_jeder_bestandteil_aendert_die_version(bestandteil, anderer_wert):
    assert anderer_wert != STANDARD[bestandteil]
    neu = coder_version(**{**STANDARD, bestandteil: anderer_wert})
    assert neu != CODER_VERSION
    assert FORMAT.fullmatch(neu)


def test_jede_rangfolge_eine_eigene_version():
    versionen = {coder_version(prioritaet=p) for p in itertools.permutations(version.PRIORITAET)}
    assert len(versionen) == 6


_kombination = st.fixed_dictionaries(
    {
        "regelwerk": st.integers(1, 1000),
        "normalisierung": st.integers(1, 1000),
        "bereinigung": st.integers(1, 1000),
        "k": st.integers(1, 50),
        "toleranz": st.sampled_from([0.0, 0.01, 0.02, 0.025, 0.03, 0.035, 0.05, 0.1, 0.125, 0.3]),
        "prioritaet": st.permutations(version.PRIORITAET).map(tuple),
    }
)


@given(_kombination, _kombination)
def test_verschiedene_kombinationen_verschiedene_versionen(a, b):
    assert (coder_version(**a) == coder_version(**b)) == (a == b)


def _kern_plus_rest(n: int, extra_a: int, extra_b: int, kuerzung_c: int) -> dict:
    """Kern W mit n Shingles; newspaper4k und readability hängen neue Wörter an,
    trafilatura lässt Wörter am Ende weg."""
    w = [f"w{i}" for i in range(n + 4)]
    return {
        "newspaper4k": {"text": " ".join(w + [f"xa{i}" for i in range(extra_a)])},
        "readability": {"text": " ".join(w + [f"xb{i}" for i in range(extra_b)])},
        "trafilatura": {"text": " ".join(w[: n - kuerzung_c + 4])},
    }


def test_gleiche_version_heisst_gleiche_entscheidung():
    """Toleranzen, die verschieden entscheiden, haben verschiedene coder_versionen.

    Scores 7544/7571 und 7054/7299 liegen 0,03 + 2,35e-9 auseinander. Mit
    Toleranz 0,03 ist das kein Gleichstand, mit 0,030000004 schon; die Version
    schreibt die Toleranz darum voll aus (``repr``), nicht auf sechs Stellen gerundet.
    """
    extraktionen = _kern_plus_rest(3772, 27, 400, 245)
    streng = regeln.waehle(extraktionen, toleranz=0.03)
    weit = regeln.waehle(extraktionen, toleranz=0.030000004)
    assert (streng.extraktor, streng.regel) == ("newspaper4k", "bester_score")
    assert (weit.extraktor, weit.regel) == ("trafilatura", "gleichstand_kuerzester")
    assert coder_version(toleranz=0.03) != coder_version(toleranz=0.030000004)


@given(st.floats(0.0001, 0.5))
def test_toleranz_jede_aenderung_aendert_die_version(toleranz):
    """Auch Toleranzen, die sich erst in der letzten Stelle unterscheiden, haben je ihre Version."""
    naechste = math.nextafter(toleranz, 1.0)
    assert coder_version(toleranz=toleranz) != coder_version(toleranz=naechste)


# --- Varianten: eine Ableitung für bewertung.py und die Datenbankmodi ----------------


def test_voreinstellung_als_variante_ist_die_coder_version():
    assert version.Variante().coder_version == CODER_VERSION
    assert version.variante_lesen("k5:0.03").coder_version == CODER_VERSION


@pytest.mark.parametrize(
    ("text", "erwartet"),
    [
        ("k4:0.03", "auswahl-2+norm-1+rein-1+k4+t0.03+n4k>rd>tf"),
        ("4:0,03", "auswahl-2+norm-1+rein-1+k4+t0.03+n4k>rd>tf"),
        ("quelle000", "auswahl-2+norm-0+rein-1+k5+t0.03+n4k>rd>tf"),
        ("k6:0+quelle000", "auswahl-2+norm-0+rein-1+k6+t0.0+n4k>rd>tf"),
    ],
)
def test_variante_hat_ihre_eigene_version(text, erwartet):
    variante = version.variante_lesen(text)
    assert variante.coder_version == erwartet != CODER_VERSION
    assert FORMAT.fullmatch(variante.coder_version)
    # der Name liest sich wieder als dieselbe Variante
    assert version.variante_lesen(variante.name) == variante


def test_variante_argumente_passen_zu_waehle():
    parameter = inspect.signature(regeln.waehle).parameters
    argumente = version.variante_lesen("k4:0.05+quelle000").argumente()
    assert set(argumente) <= set(parameter)
    assert argumente == {"k": 4, "toleranz": 0.05, "formatzeichen_loeschen": False}
    assert parameter["formatzeichen_loeschen"].default is True


@pytest.mark.parametrize("text", ["", "k4", "4:", "k0:0.03", "k4:1", "quelle", "k4:0.03+x", "quelle000+"])
def test_variante_unsinn_ist_ein_valueerror_mit_satz(text):
    with pytest.raises(ValueError, match=r"erwartet K:TOLERANZ|k ab 1"):
        version.variante_lesen(text)
