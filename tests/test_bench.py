"""Rauchtest der Benchmarks: der schnelle Weg entscheidet wie die Grundlinie.

Ohne Zeitmessung: ob ``waehle`` schneller ist, misst ``python -m
bench.tempo_waehle``; hier zählt nur, dass es dasselbe tut.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import normalisierung
from auswahlstufe.referenz import grundlinie as basis
from auswahlstufe.referenz.erzeugen import EXTRAKTOREN, artikel, fuzz
from auswahlstufe.referenz.grundlinie import abweichungen
from auswahlstufe.regeln import REGELN
from tests.hilfen import PROJEKT

BESTAND = list(artikel(300, seed=1))
RANDFAELLE = fuzz(seed=1, n=1500)


def test_bestand_gleiche_entscheidungen():
    assert abweichungen(BESTAND) == []


def test_randfaelle_gleiche_entscheidungen():
    assert abweichungen(RANDFAELLE) == []


def test_randfaelle_treffen_jede_regel_und_die_grenze():
    """Sonst prüfte der Vergleich oben weniger, als er verspricht."""
    regeln = Counter()
    auf_der_grenze = 0
    for item in RANDFAELLE:
        d = basis.waehle(item["extractions"])
        regeln[d["regel"]] += 1
        scores = sorted(
            (k["score"] for k in d["kandidaten"].values() if k["score"] is not None), reverse=True
        )
        auf_der_grenze += sum(0.03 < scores[0] - s <= 0.03 + 1e-9 for s in scores[1:])
    assert set(regeln) == set(REGELN)
    assert auf_der_grenze > 0


# Zeichen, an denen die Abkürzungen in tokens() scheitern könnten: Auslöser der
# Muster, Formatzeichen, NBSP, Schluss-Sigma über Zeilengrenzen, İ, Ligaturen,
# kombinierende Zeichen, Zeilenenden.
_ALPHABET = st.sampled_from(
    [
        *"aAbΣσς İiß ẞ\n\n\r\t.-_1½ﬁÅé\u0301\u0307",
        "\u00ad",
        "\u200b",
        "\u2060",
        "\ufeff",
        "\u00a0",
        "\u2028",
        "\u3000",
        "&amp;",
        "&nbsp;",
        "&shy;",
        "<b>",
        "</p>",
        "<",
        ">",
        "[a](b)",
        "![x](y)",
        "[",
        "]",
        "(",
        ")",
        "!",
        "&",
    ]
)
_TEXT = st.lists(_ALPHABET, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=3))
def test_tokens_wie_grundlinie(texte):
    """Auch mit einem Zeilenspeicher, den mehrere Texte teilen."""
    zeilen: dict[str, list[str]] = {}
    for text in texte:
        soll = basis.tokens(text)
        assert normalisierung.tokens(text) == soll
        assert normalisierung.tokens_zeilenweise(text, zeilen) == soll


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_bereinigen_wie_grundlinie(text):
    assert normalisierung.bereinigen(text) == basis.bereinigen(text)


def test_bereinigen_wie_grundlinie_auf_dem_bestand():
    for item in BESTAND[:100] + RANDFAELLE[:300]:
        ex = item["extractions"]
        for kandidat in ex.values() if isinstance(ex, dict) else ():
            text = kandidat.get("text") if isinstance(kandidat, dict) else None
            if isinstance(text, str):
                assert normalisierung.bereinigen(text) == basis.bereinigen(text)


def test_liste_des_anderen_leerraums_vollstaendig():
    """Die Abkürzung in Schritt 7 kennt jedes Zeichen, das die Regex trifft."""
    muster = re.compile(r"[^\S\n ]")
    alle = "".join(c for c in map(chr, range(0x110000)) if c.isspace() and muster.match(c))
    assert sorted(normalisierung._ANDERER_LEERRAUM) == sorted(alle)


def test_generator_reproduzierbar_und_praefixstabil():
    erste = list(artikel(20, seed=7))
    assert json.dumps(erste) == json.dumps(list(artikel(20, seed=7)))
    assert json.dumps(erste[:5]) == json.dumps(list(artikel(5, seed=7)))
    assert json.dumps(erste) != json.dumps(list(artikel(20, seed=8)))


def test_generator_form_und_groesse():
    laengen = []
    for item in BESTAND:
        assert set(item) == {"id", "item_id", "haus", "titel", "url", "slot", "extractions"}
        assert item["id"] == item["item_id"]
        for name, kandidat in item["extractions"].items():
            assert name in EXTRAKTOREN or name == "goose3"
            if isinstance(kandidat.get("text"), str) and len(kandidat["text"]) > 100:
                laengen.append(len(kandidat["text"].encode()))
    # 2–6 KB je Kandidat; abgeschnittene Texte (ein Absatz) sind gewollt kürzer
    laengen.sort()
    assert laengen[len(laengen) // 10] >= 2000 and laengen[-len(laengen) // 10] <= 6500
    assert BESTAND[0]["slot"] == "2026-09-01T06:00:00+02:00"
    # die Fehlerbilder kommen vor: Fehler mit Text, ohne Text, leer, fehlend
    klassen = Counter(
        basis.waehle(item["extractions"])["kandidaten"][n]["klasse"] for item in BESTAND for n in EXTRAKTOREN
    )
    assert klassen["nicht_verfuegbar"] > 0 and klassen["beeintraechtigt"] > 0


@pytest.mark.parametrize("seed", [1, 2])
def test_slot_felder_fuer_raw_items(seed):
    """Der Datenbank-Benchmark baut raw_items aus id, slot und haus."""
    items = list(artikel(801, seed=seed))
    slots = [item["slot"] for item in items]
    assert len(set(slots)) == 3  # 400 je Slot
    assert slots == sorted(slots)


def test_teile_der_stufe_rauchtest():
    """bench.teile_stufe läuft als eigener Befehl und nennt jeden Teil; Zeiten werden nicht geprüft."""
    lauf = subprocess.run(
        [sys.executable, "-m", "bench.teile_stufe", "-n", "40", "-r", "1"],
        cwd=PROJEKT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert lauf.returncode == 0, lauf.stdout + lauf.stderr
    for teil in ("UTF-8 dekodieren", "waehle", "bereinigen der Wahl", "Metriken als JSON", "COPY-Zeile"):
        assert f"| {teil} |" in lauf.stdout
    assert "| `stapel_kodieren` ganz |" in lauf.stdout


def test_seitenart_misst_was_extraktion_md_sagt():
    """bench.seitenart: keine der 181 Seiten abgelehnt (auch mit verirrten Steuerbytes), jede
    erzeugte Nicht-Seite mit und ohne magische Zahl erkannt – und die Höchstwerte, die
    docs/extraktion.md nennt, sind die, die der Befehl ausgibt. Zeiten werden nicht geprüft."""
    lauf = subprocess.run(
        [sys.executable, "-m", "bench.seitenart"], cwd=PROJEKT, capture_output=True, text=True, timeout=300
    )
    assert lauf.returncode == 0 and "NICHT abgelehnt" not in lauf.stderr, lauf.stdout + lauf.stderr
    zeilen = [z for z in lauf.stdout.splitlines() if "abgelehnt" in z]
    assert len(zeilen) == 3 and all("abgelehnt   0" in z for z in zeilen), lauf.stdout
    assert lauf.stdout.count("durchgelassen") == 0, lauf.stdout
    doku = (PROJEKT / "docs" / "extraktion.md").read_text(encoding="utf-8")
    for name, steuer in (("wie sie sind", "0,000 %"), ("5 verirrten", "0,024 %"), ("mit 50", "0,235 %")):
        (zeile,) = [z for z in zeilen if name in z]
        assert f"Steuerzeichen höchstens {steuer:>9}" in zeile, zeile
        assert f"| {steuer} |" in doku, steuer
    for anteil in ("9,2 %", "86,9 %", "49,2 %", "80,7 %"):
        assert anteil in lauf.stdout and anteil in doku, anteil
