"""Tests für normalisierung.py: bereinigen (Quelle 003), tokens (Quelle 000), shingles.

Die Listen der Sonderzeichen stehen hier absichtlich noch einmal wörtlich aus
der Spezifikation (docs/regeln.md), statt sie aus dem Modul zu importieren: ein Test, der die Konstanten
des Moduls gegen sich selbst prüft, könnte nie fehlschlagen.
"""

from __future__ import annotations

import html
import html.entities
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalisierung import SCHRITTE, bereinigen, shingles, tokens

# Die neun Schritte in ihrer Reihenfolge, nach Position benannt (nicht nach
# Funktionsnamen), damit die Tests die Reihenfolge selbst festnageln.
(
    ZEILENENDEN,
    TAGS,
    ENTITAETEN,
    FORMAT,
    LEERZEICHEN,
    TRIMMEN,
    LEERRAUM,
    UMBRUECHE,
    DUBLETTEN,
) = SCHRITTE

# Schritt 4 (docs/regeln.md): Formatzeichen, die gelöscht werden.
FORMATZEICHEN = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
# Schritt 5: exotische Leerzeichen, die zu U+0020 werden.
EXOTISCHE_LEERZEICHEN = ["\u00a0", "\u1680", *map(chr, range(0x2000, 0x200B)), "\u202f", "\u205f", "\u3000"]
# Schritt 1: alle Arten von Zeilenende.
ZEILENENDEN_ARTEN = ["\r\n", "\r", "\n", "\u2028", "\u2029", "\u0085"]


def nicht_leere_zeilen(text: str) -> list[str]:
    return [zeile for zeile in text.split("\n") if zeile]


def durchlaufen(text: str, schritte) -> str:
    for schritt in schritte:
        text = schritt(text)
    return text


# Jedes Leerraumzeichen außer \n und " " (was Schritt 7 trifft), dazu jede
# Form, in der es durch Schritt 3 erst entstehen kann.
ANDERER_LEERRAUM = [c for c in map(chr, range(0x110000)) if c.isspace() and c not in "\n "]


def formen(zeichen: str) -> list[str]:
    nummer = ord(zeichen)
    namen = [f"&{name}" for name, wert in html.entities.html5.items() if wert == zeichen]
    return [zeichen, f"&#{nummer};", f"&#x{nummer:x};", f"&#X{nummer:X}", f"&#{nummer}", *namen]


# --- bereinigen: das Beispiel aus Quelle 003 ----------------------------------


@pytest.mark.parametrize("zeichen", ANDERER_LEERRAUM, ids=lambda z: f"U+{ord(z):04X}")
def test_bereinigen_ist_die_verkettung_fuer_jedes_leerraumzeichen(zeichen):
    """bereinigen sucht in Schritt 7 nur, was nach 1–6 noch stehen kann – das muss
    für jedes Leerraumzeichen stimmen, roh und aus jeder Entität, die es ergibt."""
    for form in formen(zeichen):
        for text in (f"a{form}b", f"a {form} b", form, f"x\n{form}\ny", f"a{form}{form}b", f" {form}"):
            assert bereinigen(text) == durchlaufen(text, SCHRITTE), (form, text)


@given(
    st.lists(
        st.sampled_from([*(f for z in ANDERER_LEERRAUM for f in formen(z)), "a", " ", "\n"]), max_size=12
    )
)
@settings(max_examples=300)
def test_bereinigen_ist_die_verkettung_fuer_leerraum_gemische(teile):
    text = "".join(teile)
    assert bereinigen(text) == durchlaufen(text, SCHRITTE)


# --- bereinigen: jeder Schritt für sich ---------------------------------------


@pytest.mark.parametrize("ende", ZEILENENDEN_ARTEN, ids=lambda e: f"U+{ord(e[0]):04X}x{len(e)}")
def test_schritt1_jedes_zeilenende_wird_lf(ende):
    assert ZEILENENDEN(f"eins{ende}zwei{ende}") == "eins\nzwei\n"
    assert bereinigen(f"eins{ende}zwei") == "eins\nzwei"


def test_schritt1_crlf_ist_ein_umbruch_einzelnes_cr_vor_crlf_zwei():
    assert ZEILENENDEN("a\r\nb") == "a\nb"
    assert ZEILENENDEN("a\r\r\nb") == "a\n\nb"
    assert ZEILENENDEN("a\n\rb") == "a\n\nb"
    assert ZEILENENDEN("a\u2028\u2029\u0085b") == "a\n\n\nb"


@pytest.mark.parametrize("zeichen", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e"])
def test_schritt1_andere_steuerzeichen_sind_kein_zeilenende(zeichen):
    """Nur die sechs Arten der Spezifikation trennen Zeilen; \\v, \\f usw. sind
    waagrechter Leerraum und werden in Schritt 7 zu einem Leerzeichen."""
    assert ZEILENENDEN(f"a{zeichen}b") == f"a{zeichen}b"
    assert bereinigen(f"a{zeichen}b") == "a b"


def test_schritt2_tags_werden_geloescht_nicht_ersetzt():
    assert TAGS("<p>eins</p><p>zwei</p>") == "einszwei"
    assert TAGS('a<br/>b<img src="x.png" alt="y">c') == "abc"
    assert TAGS("x <y z> w") == "x  w"
    # "<>" ist kein Tag: das Muster verlangt mindestens ein Zeichen dazwischen.
    assert TAGS("a <> b") == "a <> b"
    # Entitäten sind noch nicht dekodiert, also kein Tag.
    assert TAGS("&lt;b&gt;") == "&lt;b&gt;"


def test_schritt3_entitaeten_genau_einmal():
    assert ENTITAETEN("&amp;amp;") == "&amp;"
    assert ENTITAETEN("&lt;b&gt;") == "<b>"
    assert ENTITAETEN("Caf&eacute; &#252; &#x2014;") == "Café ü —"
    assert ENTITAETEN("a&nbsp;b") == "a\u00a0b"


@pytest.mark.parametrize("zeichen", FORMATZEICHEN, ids=lambda z: f"U+{ord(z):04X}")
def test_schritt4_jedes_formatzeichen_wird_geloescht(zeichen):
    assert FORMAT(f"ab{zeichen}cd{zeichen}") == "abcd"
    assert bereinigen(f"{zeichen}Wort{zeichen}ende{zeichen}") == "Wortende"


@pytest.mark.parametrize("zeichen", FORMATZEICHEN, ids=lambda z: f"U+{ord(z):04X}")
def test_schritt4_formatzeichen_auch_aus_entitaeten(zeichen):
    """Die Entität wird in Schritt 3 dekodiert, das Zeichen in Schritt 4 gelöscht."""
    assert bereinigen(f"ab&#x{ord(zeichen):x};cd") == "abcd"


@pytest.mark.parametrize("zeichen", EXOTISCHE_LEERZEICHEN, ids=lambda z: f"U+{ord(z):04X}")
def test_schritt5_jedes_exotische_leerzeichen_wird_u0020(zeichen):
    assert LEERZEICHEN(f"a{zeichen}b{zeichen}") == "a b "
    assert bereinigen(f"{zeichen}a{zeichen}{zeichen}b{zeichen}") == "a b"


def test_schritt5_nullbreites_leerzeichen_ist_kein_leerzeichen():
    """U+200B ist ein Formatzeichen: es wird gelöscht, nicht zu einem Leerzeichen."""
    assert LEERZEICHEN("a\u200bb") == "a\u200bb"
    assert bereinigen("a\u200bb") == "ab"


def test_schritt6_jede_zeile_getrimmt():
    assert TRIMMEN("  a  \n\tb\t\n \nc") == "a\nb\n\nc"
    # innen bleibt alles stehen, das ist Schritt 7
    assert TRIMMEN(" a  b ") == "a  b"


def test_schritt7_waagrechter_leerraum_nie_ueber_zeilen():
    assert LEERRAUM("a \t  b") == "a b"
    assert LEERRAUM("a  \n  b") == "a \n b"
    assert LEERRAUM("a\n\n\nb") == "a\n\n\nb"


def test_schritt8_drei_und_mehr_umbrueche_zu_einer_leerzeile():
    assert UMBRUECHE("a\nb") == "a\nb"
    assert UMBRUECHE("a\n\nb") == "a\n\nb"
    assert UMBRUECHE("a\n\n\nb") == "a\n\nb"
    assert UMBRUECHE("a" + "\n" * 9 + "b") == "a\n\nb"


def test_schritt9_erstes_auftreten_bleibt_reihenfolge_bleibt():
    assert DUBLETTEN("c\na\nb\na\nc\nd\nb") == "c\na\nb\nd"


def test_schritt9_exakter_vergleich():
    """Groß/klein und Leerraum sind nicht seine Sache."""
    assert DUBLETTEN("Total\ntotal") == "Total\ntotal"
    assert DUBLETTEN("a\na ") == "a\na "


def test_schritt9_leerzeilen_nie_als_dubletten():
    text = "a\n\nb\n\nc\n\nd"
    assert DUBLETTEN(text) == text
    assert bereinigen(text) == text


def test_schritt9_keine_leerzeilen_am_anfang_und_ende():
    assert DUBLETTEN("\n\na\n\nb\n\n") == "a\n\nb"
    assert bereinigen("\n \n\t\nText\n \n\u00a0\n") == "Text"


def test_schritt9_entfernte_dublette_zwischen_leerzeilen_laesst_eine_leerzeile():
    assert DUBLETTEN("a\n\nb\n\na\n\nc") == "a\n\nb\n\nc"
    assert DUBLETTEN("a\n\na\n\nb") == "a\n\nb"
    assert bereinigen("Kopf\n\nText\n\nKopf\n\nEnde") == "Kopf\n\nText\n\nEnde"


def test_schritt9_dublette_am_ende_hinterlaesst_keine_leerzeile():
    assert DUBLETTEN("a\n\nb\n\na") == "a\n\nb"
    assert bereinigen("a\n\nb\n\na\n\nb") == "a\n\nb"


def test_leere_und_reine_leerraum_eingaben():
    assert bereinigen("") == ""
    assert bereinigen(" \r\n\t\u00a0\u200b\ufeff\n\n") == ""
    assert bereinigen("<p></p><br>") == ""


# --- bereinigen: Eigenschaften ------------------------------------------------

# Bausteine, die alle Fallen der Spezifikation enthalten: Markup, einfache und doppelte
# Entitäten, jede Art von Zeilenende, Formatzeichen, exotische Leerzeichen.
_BAUSTEINE = [
    "<p>",
    "</p>",
    "<h2>",
    "<br/>",
    '<a href="x">',
    "<",
    ">",
    "&",
    ";",
    "&amp;",
    "&amp;amp;",
    "&lt;b&gt;",
    "&lt;",
    "&gt;",
    "&nbsp;",
    "&shy;",
    "&#13;",
    "&#10;",
    "&#x2028;",
    "&#133;",
    "&#x200b;",
    "&#x3000;",
    "alpha",
    "beta",
    "Revenue rose 12%.",
    "Straße",
    " ",
    "  ",
    "\t",
    "\x0b",
    "\x0c",
    *ZEILENENDEN_ARTEN,
    *FORMATZEICHEN,
    *EXOTISCHE_LEERZEICHEN,
]
reiche_texte = st.one_of(
    st.lists(st.sampled_from(_BAUSTEINE), max_size=40).map("".join),
    st.lists(st.one_of(st.sampled_from(_BAUSTEINE), st.text(max_size=5)), max_size=30).map("".join),
    # ganze Zeilen, die sich wiederholen: Futter für die Dublettenentfernung
    st.lists(
        st.lists(
            st.sampled_from(["alpha", "beta", " ", "\t", "\u00a0", "\u200b", "<b>", "&amp;"]), max_size=4
        ).map("".join),
        max_size=12,
    ).map("\n".join),
    st.text(),
)


@given(reiche_texte)
@settings(max_examples=400)
def test_idempotent_wo_kein_und_kein_kleiner_als(text):
    """Zweiter Durchlauf ändert nichts, außer wo dekodiertes Markup steht (Quelle 003)."""
    einmal = bereinigen(text)
    if "&" not in einmal and "<" not in einmal:
        assert bereinigen(einmal) == einmal


@given(reiche_texte)
@settings(max_examples=400)
def test_ausgabe_ist_sauber(text):
    ergebnis = bereinigen(text)
    assert "\r" not in ergebnis
    assert not set(ergebnis) & set(FORMATZEICHEN)
    assert not set(ergebnis) & set(EXOTISCHE_LEERZEICHEN)
    assert "\n\n\n" not in ergebnis
    assert not ergebnis.startswith("\n")
    assert not ergebnis.endswith("\n")
    # einziger Leerraum: Leerzeichen und LF; keine Zeile mit Rand, kein Doppelleerzeichen
    assert all(z in " \n" or not z.isspace() for z in ergebnis)
    assert all(zeile == zeile.strip() for zeile in ergebnis.split("\n"))
    assert "  " not in ergebnis
    # keine doppelten nicht-leeren Zeilen
    zeilen = nicht_leere_zeilen(ergebnis)
    assert len(zeilen) == len(set(zeilen))


# --- tokens: jeder Schritt von Quelle 000 -------------------------------------


def test_tokens_entitaeten_genau_einmal():
    assert tokens("Caf&eacute; &amp; Bar") == ["café", "bar"]
    assert tokens("a&nbsp;b") == ["a", "b"]
    # einmal dekodiert bleibt &lt;b&gt; Text; zweimal dekodiert wäre es ein Tag
    assert tokens("&amp;lt;b&amp;gt;x") == ["lt", "b", "gt", "x"]


def test_tokens_entitaeten_vor_markdown_und_tags():
    assert tokens("&#91;Text&#93;(https://example.org/seite)") == ["text"]
    assert tokens("&lt;script&gt;alert&lt;/script&gt;") == ["alert"]


def test_tokens_markdown_bilder_werden_leerzeichen():
    assert tokens("vor ![Ein Diagramm](bild.png) nach") == ["vor", "nach"]
    assert tokens("vor! [Alt](b.png)nach") == ["vor", "nach"]
    assert tokens("a![x](y)b") == ["a", "b"]
    assert tokens("![](leer.png)") == []


def test_tokens_bilder_vor_links():
    """Andersherum bliebe vom Bild der Alternativtext als Ankertext stehen."""
    assert tokens("![Foto vom Gipfel](g.jpg) Text") == ["text"]


def test_tokens_markdown_links_werden_ankertext():
    assert tokens("Laut [Bundestag](https://bundestag.de/a/b?c=d) heute") == ["laut", "bundestag", "heute"]
    # \\1 ohne Leerzeichen: der Ankertext verschmilzt mit seinen Nachbarn
    assert tokens("vor[an](u)nach") == ["vorannach"]
    # leerer Ankertext ist kein Link im Sinne des Musters
    assert tokens("[](http://a.b)") == ["http", "a", "b"]


def test_tokens_tags_werden_leerzeichen_woerter_verschmelzen_nicht():
    assert tokens("<p>eins</p><p>zwei</p>") == ["eins", "zwei"]
    assert tokens("drei<br>vier") == ["drei", "vier"]
    # anders als bereinigen, das Tags löscht
    assert bereinigen("<p>eins</p><p>zwei</p>") == "einszwei"


def test_tokens_abweichung_weiches_trennzeichen():
    """Abweichung von Quelle 000: Formatzeichen werden vor NFKC gelöscht."""
    assert tokens("Bundes\u00adregierung") == ["bundesregierung"]
    assert tokens("Bundes&shy;regierung") == ["bundesregierung"]
    # Quelle 000 wörtlich zerlegt das Wort
    assert re.findall(r"\w+", unicodedata.normalize("NFKC", "Bundes\u00adregierung").lower()) == [
        "bundes",
        "regierung",
    ]


@pytest.mark.parametrize("zeichen", FORMATZEICHEN, ids=lambda z: f"U+{ord(z):04X}")
def test_tokens_formatzeichen_trennen_keine_woerter(zeichen):
    assert tokens(f"Wort{zeichen}teil") == ["wortteil"]


def test_tokens_nfkc():
    assert tokens("\ufb01nanzen") == ["finanzen"]  # Ligatur fi
    assert tokens("\uff11\uff12\uff13 \uff22\uff45\uff52\uff4c\uff49\uff4e") == [
        "123",
        "berlin",
    ]  # Vollbreite
    assert tokens("x\u00b2 \u2460") == ["x2", "1"]
    # NFKC setzt e + Kombinationsakzent zu é zusammen; sonst endete das Wort beim Akzent
    assert tokens("Caf" + "e\u0301 ol\u00e9") == ["café", "olé"]
    assert tokens("a\u00a0b\u3000c") == ["a", "b", "c"]


def test_tokens_kleinschreibung_nicht_casefold():
    assert tokens("ÄRGER über Öl") == ["ärger", "über", "öl"]
    assert tokens("Straße STRASSE STRA\u1e9eE") == ["straße", "strasse", "straße"]


def test_tokens_unicode_wortzeichen():
    assert tokens("Grüße, Köln! 12,5 % E-Mail snake_case") == [
        "grüße",
        "köln",
        "12",
        "5",
        "e",
        "mail",
        "snake_case",
    ]
    assert tokens("Москва — 東京.") == ["москва", "東京"]


def test_tokens_ohne_wortzeichen_leer():
    for text in [
        "",
        "   ",
        "!!! ... ---",
        "<p></p><br/>",
        "&amp; &lt;&gt;",
        "![Bild](b.png)",
        "\u200b\u00ad",
    ]:
        assert tokens(text) == [], text


# --- tokens gegen eine wörtliche Referenz -------------------------------------


def tokens_referenz(text: str) -> list[str]:
    """Quelle 000 Schritt für Schritt, immer, ohne Abkürzung – plus die
    Abweichung des Projekts (Formatzeichen vor NFKC löschen, docs/regeln.md)."""
    text = html.unescape(text)
    text = re.sub(r"!\s*\[[^\]]*\]\([^)]*\)", " ", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = "".join(z for z in text if z not in FORMATZEICHEN)
    text = unicodedata.normalize("NFKC", text)
    text = text.lower()
    text = re.sub(r"\s+", " ", text).strip()
    return re.findall(r"[\w]+", text, flags=re.UNICODE)


_TOKEN_BAUSTEINE = [
    "&amp;",
    "&amp;amp;",
    "&lt;",
    "&gt;",
    "&#91;",
    "&#93;",
    "&#40;",
    "&#41;",
    "&nbsp;",
    "&shy;",
    "&#x200b;",
    "&",
    "#",
    ";",
    "[",
    "]",
    "(",
    ")",
    "!",
    "<",
    ">",
    "<b>",
    "</p>",
    "![",
    "](",
    "http://x.de/a",
    " ",
    "\n",
    "\t",
    "Bundes",
    "regierung",
    "\ufb01",
    "\uff11\uff12",
    "Straße",
    "\u1e9e",
    "İ",
    "Ǆ",
    "\u212a",
    "e\u0301",
    "é",
    "\u2460",
    "²",
    "東京",
    "ΟΔΟΣ",
    "Σ",
    "wort",
    "Wort",
    "_",
    *FORMATZEICHEN,
    *EXOTISCHE_LEERZEICHEN,
]
token_texte = st.one_of(
    st.lists(st.sampled_from(_TOKEN_BAUSTEINE), max_size=40).map("".join),
    st.lists(st.one_of(st.sampled_from(_TOKEN_BAUSTEINE), st.text(max_size=4)), max_size=30).map("".join),
    st.text(),
    # reines ASCII: der schnelle Weg ohne NFKC
    st.lists(st.sampled_from([z for z in _TOKEN_BAUSTEINE if z.isascii()]), max_size=40).map("".join),
)


@given(token_texte)
@settings(max_examples=600)
def test_tokens_wie_referenz(text):
    assert tokens(text) == tokens_referenz(text)


# --- shingles -----------------------------------------------------------------


def test_shingles_fuenfer_fenster():
    assert shingles(["a", "b", "c", "d", "e", "f"]) == {("a", "b", "c", "d", "e"), ("b", "c", "d", "e", "f")}
    assert shingles(["a", "b", "c", "d", "e"]) == {("a", "b", "c", "d", "e")}


@pytest.mark.parametrize("anzahl", [1, 2, 3, 4])
def test_shingles_weniger_als_k_ein_tupel_aus_allen(anzahl):
    toks = ["t0", "t1", "t2", "t3"][:anzahl]
    assert shingles(toks) == {tuple(toks)}


def test_shingles_keine_tokens_leere_menge():
    assert shingles([]) == set()
    assert shingles([], k=1) == set()


def test_shingles_dubletten_fallen_zusammen():
    assert shingles(["a"] * 12) == {("a",) * 5}
    assert shingles(["a", "b"] * 6) == {("a", "b", "a", "b", "a"), ("b", "a", "b", "a", "b")}


def test_shingles_anderes_k():
    toks = ["a", "b", "c", "a"]
    assert shingles(toks, k=1) == {("a",), ("b",), ("c",)}
    assert shingles(toks, k=2) == {("a", "b"), ("b", "c"), ("c", "a")}
    assert shingles(toks, k=4) == {("a", "b", "c", "a")}
    assert shingles(toks, k=7) == {("a", "b", "c", "a")}


def test_shingles_m_verschiedene_woerter_m_minus_4():
    for m in range(5, 40):
        assert len(shingles([f"w{i}" for i in range(m)])) == m - 4


@given(st.lists(st.sampled_from("abcd"), max_size=30), st.integers(1, 8))
def test_shingles_wie_referenz(toks, k):
    if not toks:
        erwartet = set()
    elif len(toks) < k:
        erwartet = {tuple(toks)}
    else:
        erwartet = {tuple(toks[i : i + k]) for i in range(len(toks) - k + 1)}
    assert shingles(toks, k) == erwartet
    assert shingles(tuple(toks), k) == erwartet


def test_modul_hat_keinen_zustand():
    """Zweimal dieselbe Eingabe, dasselbe Ergebnis – auch nach anderen Aufrufen."""
    text = "  <h2>Q3 &amp;amp;  Q4</h2>\r\n<p>Kosten\u200b  fielen.</p>\ufeff "
    erst = (bereinigen(text), tokens(text))
    bereinigen("<p>x</p>" * 50)
    tokens("&amp;" * 50)
    assert (bereinigen(text), tokens(text)) == erst
