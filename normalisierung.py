"""Die zwei Normalisierungen der Stufe und die Shingles.

* ``bereinigen`` macht aus einem Kandidaten Text, den Menschen lesen: neun
  Schritte in fester Reihenfolge (Quelle 003). Das Ergebnis wird gespeichert.
* ``tokens`` ist der Vergleichsschlüssel der Auswahl (Quelle 000): flach,
  kleingeschrieben, nur ``\\w+``. Es wird nie gespeichert.

Beide sind reine Funktionen ohne Zustand; ihre Fassungen stehen in version.py.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence

# Formatzeichen ohne Breite: Trennhinweise, Verbinder, Byte-Order-Mark, weiches
# Trennzeichen. Keine Leerraum-Regex erkennt sie alle, also werden sie
# ausdrücklich gelöscht (Quelle 003, Abschnitt über unsichtbare Zeichen).
FORMATZEICHEN = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
# Exotische Leerzeichen, die zu einem gewöhnlichen Leerzeichen werden.
EXOTISCHE_LEERZEICHEN = "\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"

# Zeilenenden außer CR und CRLF (die behandelt Schritt 1 vorab, CRLF zuerst).
_ANDERE_ZEILENENDEN = "\u2028\u2029\u0085"
_TAG = re.compile(r"<[^>]+>")
# Nur, was sich ändert: zwei und mehr Leerraumzeichen oder ein einzelnes, das
# kein Leerzeichen ist. Dasselbe Ergebnis wie ``[^\S\n]+`` zu " ", aber ohne
# jedes einzelne Leerzeichen durch ein Leerzeichen zu ersetzen.
_WAAGRECHTER_LEERRAUM = re.compile(r"[^\S\n]{2,}|[^\S\n ]")
# Alle Zeichen außer " " und "\n", die ``\s`` in Python trifft (test_bench.py
# prüft die Liste gegen alle Codepunkte). Fehlen sie und doppelte Leerzeichen,
# hat Schritt 7 nichts zu tun.
_ANDERER_LEERRAUM = (
    "\t\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)
# Was davon nach den Schritten 1–6 noch stehen kann: Schritt 5 hat die
# exotischen Leerzeichen ersetzt, Schritt 1 die Zeilenenden. Aber Schritt 3
# bringt CR (&#13;), U+2028 und U+2029 (&#8232;, &#8233;) neu hinein, und
# ASCII-Steuerzeichen bleiben, wie sie sind. U+0085 nicht: als Entität wird es
# nach HTML5 zu „…“.
_ANDERER_LEERRAUM_NACH_SCHRITT_6 = "\t\x0b\x0c\r\x1c\x1d\x1e\x1f\u2028\u2029"
_DREI_UMBRUECHE = re.compile(r"\n{3,}")
_MARKDOWN_BILD = re.compile(r"!\s*\[[^\]]*\]\([^)]*\)")
_MARKDOWN_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")
_WORT = re.compile(r"\w+")


# --- bereinigen: neun Schritte, jeder eine Funktion ---------------------------


def zeilenenden_angleichen(text: str) -> str:
    """1. CRLF, einzelnes CR, U+2028, U+2029 und U+0085 werden zu LF."""
    if "\r" in text:
        # erst CRLF, dann die einzelnen CR: "\r\r\n" wird so zu zwei Umbrüchen
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _ersetzen(text, _ANDERE_ZEILENENDEN, "\n")


def tags_entfernen(text: str) -> str:
    """2. HTML-Tags löschen – vor dem Dekodieren, sonst fiele ``&lt;b&gt;`` mit."""
    return _TAG.sub("", text)


def entitaeten_dekodieren(text: str) -> str:
    """3. HTML-Entitäten genau einmal dekodieren."""
    return html.unescape(text)


def _ersetzen(text: str, zeichen: str, durch: str) -> str:
    """Jedes der ``zeichen`` durch ``durch``. Alle Zeichenersetzungen laufen hierüber: ``replace``
    je vorkommendem Zeichen statt ``str.translate`` – das schlägt bei Text außerhalb von ASCII jedes
    Zeichen im Wörterbuch nach (gut 40 ns je Zeichen) und war der größte Posten der ganzen Stufe
    (bench/README.md)."""
    if text.isascii():
        return text
    for z in zeichen:
        if z in text:
            text = text.replace(z, durch)
    return text


def formatzeichen_loeschen(text: str) -> str:
    """4. Unsichtbare Formatzeichen (U+200B … U+00AD) löschen."""
    return _ersetzen(text, FORMATZEICHEN, "")


def leerzeichen_angleichen(text: str) -> str:
    """5. Exotische Leerzeichen (U+00A0, U+2000–U+200A …) zu U+0020."""
    return _ersetzen(text, EXOTISCHE_LEERZEICHEN, " ")


def zeilen_trimmen(text: str) -> str:
    """6. Jede Zeile trimmen – vor jeder Absatzentscheidung, damit eine Zeile
    mit nur einem Leerzeichen als Leerzeile zählt."""
    return "\n".join(map(str.strip, text.split("\n")))


def leerraum_zusammenfassen(text: str) -> str:
    """7. Waagrechten Leerraum zu einem Leerzeichen, nie über Zeilen hinweg."""
    return _leerraum(text, _ANDERER_LEERRAUM)


def _leerraum_nach_schritt_6(text: str) -> str:
    """Schritt 7 in ``bereinigen``: sucht nur, was nach 1–6 noch vorkommen kann.

    Gleiches Ergebnis wie ``leerraum_zusammenfassen`` auf allem, was die
    Schritte 1–6 liefern (test_normalisierung.py prüft jedes Leerraumzeichen,
    roh und als Entität), mit 11 statt 28 Suchläufen über den Text.
    """
    return _leerraum(text, _ANDERER_LEERRAUM_NACH_SCHRITT_6)


def _leerraum(text: str, moeglich: str) -> str:
    if "  " not in text and not any(zeichen in text for zeichen in moeglich):
        return text
    return _WAAGRECHTER_LEERRAUM.sub(" ", text)


def umbrueche_begrenzen(text: str) -> str:
    """8. Drei oder mehr Zeilenumbrüche zu einer Leerzeile."""
    if "\n\n\n" not in text:
        return text
    return _DREI_UMBRUECHE.sub("\n\n", text)


def doppelte_zeilen_entfernen(text: str) -> str:
    """9. Exakt gleiche Zeilen nur beim ersten Auftreten behalten.

    Leerzeilen gelten nie als Dubletten. Fällt aber eine Zeile zwischen zwei
    Leerzeilen weg, bleibt nur eine der beiden stehen – sonst stünden dort drei
    Umbrüche, und ein zweiter Durchlauf änderte das Ergebnis (Schritt 8).
    Am Anfang und am Ende stehen keine Leerzeilen.
    """
    gesehen: set[str] = set()
    zeilen: list[str] = []
    seit_leerzeile_entfernt = False
    for zeile in text.split("\n"):
        if zeile in gesehen:
            seit_leerzeile_entfernt = True
            continue
        if zeile:
            gesehen.add(zeile)
        elif not zeilen or (not zeilen[-1] and seit_leerzeile_entfernt):
            continue
        zeilen.append(zeile)
        seit_leerzeile_entfernt = False
    while zeilen and not zeilen[-1]:
        zeilen.pop()
    return "\n".join(zeilen)


# Die Reihenfolge ist der Kern von Quelle 003: die Schritte kommutieren nicht.
SCHRITTE = (
    zeilenenden_angleichen,
    tags_entfernen,
    entitaeten_dekodieren,
    formatzeichen_loeschen,
    leerzeichen_angleichen,
    zeilen_trimmen,
    leerraum_zusammenfassen,
    umbrueche_begrenzen,
    doppelte_zeilen_entfernen,
)


# Dieselben Schritte; nur Schritt 7 weiß, was vor ihm geschah.
_ABLAUF = (*SCHRITTE[:6], _leerraum_nach_schritt_6, *SCHRITTE[7:])


def bereinigen(text: str) -> str:
    """Lesetext: alle neun Schritte in ihrer Reihenfolge."""
    for schritt in _ABLAUF:
        text = schritt(text)
    return text


# --- tokens: der Vergleichsschlüssel -------------------------------------------


def vergleichstext(text: str, *, formatzeichen: bool = True) -> str:
    """Alles vor Kleinschreibung und Zerlegen, in der Reihenfolge von Quelle 000.

    Entitäten dekodieren; Markdown-Bilder zu Leerzeichen; Markdown-Links zu
    ihrem Ankertext; Tags zu Leerzeichen; Formatzeichen löschen (Abweichung:
    sonst zerfiele „Bundes\\u00adregierung“ in zwei Tokens); NFKC. Das Zusammenfassen von Leerraum aus Quelle 000 entfällt,
    weil es die ``\\w+``-Tokens nicht ändert.

    Jede Abkürzung hier lässt das Ergebnis unverändert: ein Muster, das ein
    Zeichen verlangt, das im Text fehlt, kann nicht treffen, und reines ASCII
    ist immer schon NFKC (Formatzeichen: ``_ersetzen``).

    ``formatzeichen=False`` lässt die Formatzeichen stehen, wie Quelle 000
    wörtlich: sie sind kein ``\\w`` und trennen dann Wörter (die Variante
    ``quelle000``, version.Variante).
    """
    if "&" in text:
        text = html.unescape(text)
    if "[" in text:
        text = _MARKDOWN_BILD.sub(" ", text)
        text = _MARKDOWN_LINK.sub(r"\1", text)
    if "<" in text:
        text = _TAG.sub(" ", text)
    if not text.isascii():
        if formatzeichen:
            text = formatzeichen_loeschen(text)
        # NFKC macht aus U+00A0 ohnehin U+0020 (ein Starter, der mit nichts
        # verschmilzt); vorab ersetzt, ist der häufigste Grund für den teuren
        # Aufruf von normalize in deutschem Text weg.
        if "\u00a0" in text:
            text = text.replace("\u00a0", " ")
        if not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)
    return text


def tokens(text: str, *, formatzeichen: bool = True) -> list[str]:
    """Tokens für den Vergleich: ``\\w+`` im kleingeschriebenen Vergleichstext."""
    return _WORT.findall(vergleichstext(text, formatzeichen=formatzeichen).lower())


def tokens_zeilenweise(text: str, zeilen: dict[str, list[str]], *, formatzeichen: bool = True) -> list[str]:
    """Wie ``tokens``, aber jede Zeile wird nur einmal je Zwischenspeicher zerlegt.

    Die Kandidaten eines Items teilen meist die meisten Absätze; ``zeilen``
    (Zeile -> ihre Tokens) lebt für ein Item. Genau dasselbe Ergebnis, weil
    ``\\w+`` nie über einen Zeilenumbruch reicht und auch ``lower`` nicht:
    der einzige Fall, in dem es auf Nachbarn schaut (Schluss-Sigma), endet an
    einem Zeichen, das weder Groß-/Kleinschreibung trägt noch übergangen wird,
    wie ``\\n``. Nebenbei sind die Tokens geteilter Zeilen dieselben Objekte,
    und gleiche Shingles vergleichen sich dann über die Identität.
    """
    ergebnis: list[str] = []
    for zeile in vergleichstext(text, formatzeichen=formatzeichen).split("\n"):
        teil = zeilen.get(zeile)
        if teil is None:
            teil = zeilen[zeile] = _WORT.findall(zeile.lower())
        ergebnis += teil
    return ergebnis


def shingles(toks: Sequence[str], k: int = 5) -> set[tuple[str, ...]]:
    """Die Menge der k-Token-Fenster.

    1 bis k-1 Tokens ergeben ein einziges Tupel aus allen, keine Tokens die
    leere Menge. ``zip`` über versetzte Scheiben baut die Tupel in C.
    """
    if len(toks) < k:
        return {tuple(toks)} if toks else set()
    return set(zip(*(toks[i:] for i in range(k)), strict=False))
