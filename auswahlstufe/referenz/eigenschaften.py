"""Eigenschaften für das Fuzzing: Strategien (hypothesis) und Prüfungen.

Gemeinsam genutzt von ``test_fuzz.py`` (CI, wenige Beispiele) und
``bench/fuzzen.py`` (viele Beispiele); keiner importiert den anderen. Jede
Prüfung ist eine einfache Funktion über einem Beispiel, die bei einer
Verletzung mit AssertionError scheitert; ``EIGENSCHAFTEN`` ordnet ihr die
Strategie zu.

Jede Eigenschaft gilt für jede Eingabe: keine Ausnahme (außer EingabeFehler
beim Lader), dasselbe Ergebnis bei derselben Eingabe, und Idempotenz, wo sie gilt.
"""

from __future__ import annotations

import atexit
import copy
import json
import re
import shutil
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from auswahlstufe import stapel
from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.regeln import REGELN, RUECKFALL, waehle
from normalisierung import bereinigen, shingles, tokens, tokens_zeilenweise
from version import PRIORITAET

# --- Strategien ------------------------------------------------------------------------------

# Bausteine, an denen Normalisierung und Zerlegung zu knabbern haben: Markup,
# Entitäten (auch halbe und doppelte), Markdown, jede Art Zeilenende und
# Leerraum, Formatzeichen, NFKC-Fälle, NUL und einzelne Surrogate (gültiges JSON).
BAUSTEINE = [
    "<",
    ">",
    "<p>",
    "</p>",
    "<br/>",
    "<a href='x'>",
    "&",
    "&amp;",
    "&amp;amp;",
    "&lt;b&gt;",
    "&#60;",
    "&#x3C;",
    "&nbsp;",
    "&shy;",
    "&#0;",
    "&#xD800;",
    ";",
    "[",
    "]",
    "(",
    ")",
    "![bild](u)",
    "[anker](http://x)",
    "\n",
    "\r",
    "\r\n",
    "\u2028",
    "\u2029",
    "\u0085",
    "\x0b",
    "\x0c",
    " ",
    "\t",
    "\u00a0",
    "\u202f",
    "\u3000",
    "\u200b",
    "\u200d",
    "\u00ad",
    "\ufeff",
    "\u2060",
    "\x00",
    "\ud800",
    "\udfff",
    "ﬁ",
    "①",
    "İ",
    "ẞ",
    "Σ",
    "ς",
    "ǅ",
    "Straße",
    "Bundes\u00adregierung",
    "e\u0301",
    "Wort",
    "wort",
    "WORT",
    "42",
    "_",
    "😀",
]
texte = st.one_of(
    st.text(),
    st.text(st.characters(codec=None, exclude_categories=())),  # mit Surrogaten
    st.lists(st.sampled_from(BAUSTEINE), max_size=40).map("".join),
    st.lists(st.one_of(st.sampled_from(BAUSTEINE), st.text(max_size=6)), max_size=30).map("".join),
    # wiederholte Zeilen: Futter für die Dublettenentfernung
    st.lists(
        st.lists(st.sampled_from(["a b", " ", "\t", "<i>", "&amp;", "\u00a0", "x"]), max_size=4).map("".join)
    ).map("\n".join),
)

# Kandidatentexte aus wenigen Wörtern, damit sich Shingles überschneiden und
# alle Regeln vorkommen (Konsens, Gleichstand, ohne Konsens).
_WOERTER = ["der", "rat", "hat", "heute", "den", "haushalt", "beschlossen", "und", "vertagt", "Werbung"]
_saetze = st.lists(st.sampled_from(_WOERTER), min_size=0, max_size=30).map(" ".join)
kandidatentexte = st.one_of(_saetze, _saetze.map(lambda s: s + " " + s), texte)
json_werte = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda kinder: st.lists(kinder, max_size=4) | st.dictionaries(st.text(max_size=8), kinder, max_size=4),
    max_leaves=12,
)
fehlerwerte = st.one_of(st.none(), st.just(""), st.text(max_size=8), st.booleans(), st.integers(), json_werte)
kandidaten = st.one_of(
    st.fixed_dictionaries({"text": kandidatentexte, "error": fehlerwerte}),
    st.fixed_dictionaries({"text": kandidatentexte}),
    st.fixed_dictionaries({"text": json_werte, "error": fehlerwerte}),
    json_werte,
)
namen = st.one_of(
    st.sampled_from([*PRIORITAET, "Trafilatura", "READABILITY", "boilerpipe", ""]), st.text(max_size=8)
)
extraktionen = st.one_of(st.dictionaries(namen, kandidaten, max_size=5), json_werte)


# --- bereinigen ------------------------------------------------------------------------------


def bereinigen_pruefen(text):
    """bereinigen wirft nie, ist deterministisch und, wo kein Markup übrig ist, idempotent."""
    ergebnis = bereinigen(text)
    assert isinstance(ergebnis, str)
    assert bereinigen(text) == ergebnis
    # idempotent, wo kein dekodiertes Markup übrig ist (Quelle 003)
    if "&" not in ergebnis and "<" not in ergebnis:
        assert bereinigen(ergebnis) == ergebnis
    assert "\r" not in ergebnis and "\n\n\n" not in ergebnis
    assert ergebnis == ergebnis.strip("\n")


# --- tokens ----------------------------------------------------------------------------------

_WORT = re.compile(r"\w+")


def tokens_pruefen(text):
    """tokens wirft nie, ist deterministisch und zeilenweise (mit Zwischenspeicher) gleich."""
    toks = tokens(text)
    assert tokens(text) == toks
    assert all(_WORT.fullmatch(t) for t in toks)
    # der Zwischenspeicher je Item ändert nichts am Ergebnis
    zeilen: dict = {}
    assert tokens_zeilenweise(text, zeilen) == toks
    assert tokens_zeilenweise(text, zeilen) == toks  # auch beim zweiten Mal, aus dem Speicher
    menge = shingles(toks)
    assert len(menge) <= max(1, len(toks) - 4) and (not toks) == (not menge)


def tokens_idempotent_pruefen(text):
    """Tokens, mit Leerzeichen verbunden und erneut zerlegt, bleiben dieselben –
    die Normalisierung hat an ihrem eigenen Ergebnis nichts mehr zu tun."""
    toks = tokens(text)
    assert tokens(" ".join(toks)) == toks


# --- waehle ----------------------------------------------------------------------------------


def _kern(entscheidung) -> tuple:
    return entscheidung.extraktor, entscheidung.regel, entscheidung.konsens, entscheidung.kandidaten


def waehle_pruefen(eingabe):
    """waehle wirft nie, entscheidet stabil (Kopie, Schlüsselreihenfolge, fremde Namen), JSON-fähig."""
    entscheidung = waehle(eingabe)
    assert entscheidung.extraktor in PRIORITAET and entscheidung.regel in REGELN
    assert entscheidung.konsens >= 0
    if entscheidung.regel != RUECKFALL:
        assert entscheidung.kandidat(entscheidung.extraktor).aktiv
    # deterministisch, auch auf einer Kopie
    assert waehle(copy.deepcopy(eingabe)) == entscheidung
    # so, wie es als jsonb in die Datenbank geht: endliche Zahlen, gültiges JSON
    json.dumps(entscheidung.metriken(), allow_nan=False)
    if isinstance(eingabe, dict):
        # Reihenfolge der Schlüssel und fremde Namen ändern die Wahl nicht
        umgekehrt = dict(reversed(list(eingabe.items())))
        assert _kern(waehle(umgekehrt)) == _kern(entscheidung)
        if "Trafilatura" not in eingabe:
            mit_fremdem = {
                **eingabe,
                "Trafilatura": {"text": "der rat hat heute den haushalt", "error": None},
            }
            assert _kern(waehle(mit_fremdem)) == _kern(entscheidung)


# --- JSON-Lader (stapel.laden) ---------------------------------------------------------------

_ORDNER = Path(tempfile.mkdtemp(prefix="aw-fuzz-"))
atexit.register(shutil.rmtree, _ORDNER, ignore_errors=True)


def _laden(roh: bytes) -> list[dict] | EingabeFehler:
    datei = _ORDNER / "eingabe.json"
    datei.write_bytes(roh)
    try:
        artikel, groesse = stapel.laden(str(datei))
    except EingabeFehler as fehler:
        return fehler
    assert groesse == len(roh)
    return artikel


def _gleich(a: object, b: object) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


artikel_listen = st.lists(
    st.fixed_dictionaries(
        {"item_id": st.integers(), "extractions": extraktionen},
        optional={"titel": texte, "url": st.text(max_size=10)},
    ),
    max_size=4,
)


def _dokument(artikel: list, ensure_ascii: bool) -> bytes:
    return json.dumps(artikel, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")


roh_eingaben = st.one_of(
    st.binary(max_size=200),
    st.builds(_dokument, artikel_listen, st.booleans()),
    # gültige Dokumente, dann verstümmelt: ein Byte ersetzt, eingefügt oder gelöscht
    st.tuples(
        st.builds(_dokument, artikel_listen, st.booleans()),
        st.integers(0, 10**6),
        st.integers(0, 255),
        st.sampled_from("ried"),
    ).map(
        lambda t: (
            t[0][: t[1] % (len(t[0]) + 1)]
            + {"r": bytes([t[2]]), "i": bytes([t[2]]), "e": b"", "d": b""}[t[3]]
            + t[0][t[1] % (len(t[0]) + 1) + (0 if t[3] == "i" else 1) :]
        )
    ),
    st.sampled_from(
        [b"\xef\xbb\xbf[]", b"[" * 5000 + b"]" * 5000, b'[{"a": 1, "a": 2}]', b"[NaN]", b"[{}]" * 2]
    ),
)


def lader_pruefen(roh):
    """stapel.laden gibt Artikel (wie json sie liest) oder einen EingabeFehler mit Ort."""
    ergebnis = _laden(roh)
    if isinstance(ergebnis, EingabeFehler):
        meldung = ergebnis.format_message()
        assert meldung and "Traceback" not in meldung and str(_ORDNER) in meldung
        return
    assert isinstance(ergebnis, list) and all(isinstance(a, dict) for a in ergebnis)
    assert _gleich(_laden(roh), ergebnis)  # deterministisch
    # dasselbe, was json selbst liest (der sparsame Weg ändert keinen Wert)
    try:
        erwartet = json.loads(roh.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        erwartet = None
    if erwartet is not None:
        assert _gleich(ergebnis, erwartet)
    # und jeder geladene Artikel lässt sich entscheiden und schreiben
    for eintrag in ergebnis:
        waehle(eintrag.get("extractions"))
        json.loads(stapel.zeile(eintrag))


# Name -> (Strategie, Prüfung); test_fuzz.py und bench/fuzzen.py gehen diese Liste durch.
EIGENSCHAFTEN = {
    "bereinigen": (texte, bereinigen_pruefen),
    "tokens": (texte, tokens_pruefen),
    "tokens-idempotent": (texte, tokens_idempotent_pruefen),
    "waehle": (extraktionen, waehle_pruefen),
    "lader": (roh_eingaben, lader_pruefen),
}
