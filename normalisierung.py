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

_FORMATZEICHEN_LOESCHEN = str.maketrans(dict.fromkeys(FORMATZEICHEN))
_LEERZEICHEN_ANGLEICHEN = str.maketrans(dict.fromkeys(EXOTISCHE_LEERZEICHEN, " "))
_ZEILENENDE = re.compile("\r\n?|[\u2028\u2029\u0085]")
_TAG = re.compile(r"<[^>]+>")
_WAAGRECHTER_LEERRAUM = re.compile(r"[^\S\n]+")
_DREI_UMBRUECHE = re.compile(r"\n{3,}")
_MARKDOWN_BILD = re.compile(r"!\s*\[[^\]]*\]\([^)]*\)")
_MARKDOWN_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")
_WORT = re.compile(r"\w+")


# --- bereinigen: neun Schritte, jeder eine Funktion ---------------------------


def zeilenenden_angleichen(text: str) -> str:
    """1. CRLF, einzelnes CR, U+2028, U+2029 und U+0085 werden zu LF."""
    return _ZEILENENDE.sub("\n", text)


def tags_entfernen(text: str) -> str:
    """2. HTML-Tags löschen – vor dem Dekodieren, sonst fiele ``&lt;b&gt;`` mit."""
    return _TAG.sub("", text)


def entitaeten_dekodieren(text: str) -> str:
    """3. HTML-Entitäten genau einmal dekodieren."""
    return html.unescape(text)


def formatzeichen_loeschen(text: str) -> str:
    """4. Unsichtbare Formatzeichen (U+200B … U+00AD) löschen."""
    return text.translate(_FORMATZEICHEN_LOESCHEN)


def leerzeichen_angleichen(text: str) -> str:
    """5. Exotische Leerzeichen (U+00A0, U+2000–U+200A …) zu U+0020."""
    return text.translate(_LEERZEICHEN_ANGLEICHEN)


def zeilen_trimmen(text: str) -> str:
    """6. Jede Zeile trimmen – vor jeder Absatzentscheidung, damit eine Zeile
    mit nur einem Leerzeichen als Leerzeile zählt."""
    return "\n".join(zeile.strip() for zeile in text.split("\n"))


def leerraum_zusammenfassen(text: str) -> str:
    """7. Waagrechten Leerraum zu einem Leerzeichen, nie über Zeilen hinweg."""
    return _WAAGRECHTER_LEERRAUM.sub(" ", text)


def umbrueche_begrenzen(text: str) -> str:
    """8. Drei oder mehr Zeilenumbrüche zu einer Leerzeile."""
    return _DREI_UMBRUECHE.sub("\n\n", text)


def doppelte_zeilen_entfernen(text: str) -> str:
    """9. Exakt gleiche Zeilen nur beim ersten Auftreten behalten.

    Leerzeilen gelten nie als Dubletten. Fällt eine Zeile zwischen zwei
    Leerzeilen weg, bleibt nur eine davon stehen – sonst stünden dort drei
    Umbrüche, und ein zweiter Durchlauf änderte das Ergebnis (Schritt 8).
    Am Anfang und am Ende stehen keine Leerzeilen.
    """
    gesehen: set[str] = set()
    zeilen: list[str] = []
    for zeile in text.split("\n"):
        if not zeile:
            if zeilen and zeilen[-1]:
                zeilen.append(zeile)
        elif zeile not in gesehen:
            gesehen.add(zeile)
            zeilen.append(zeile)
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


def bereinigen(text: str) -> str:
    """Lesetext: alle neun Schritte in ihrer Reihenfolge."""
    for schritt in SCHRITTE:
        text = schritt(text)
    return text


# --- tokens: der Vergleichsschlüssel -------------------------------------------


def tokens(text: str) -> list[str]:
    """Tokens für den Vergleich, in der Reihenfolge von Quelle 000.

    Entitäten dekodieren; Markdown-Bilder zu Leerzeichen; Markdown-Links zu
    ihrem Ankertext; Tags zu Leerzeichen; Formatzeichen löschen (Abweichung:
    sonst zerfiele „Bundes\\u00adregierung“ in zwei Tokens); NFKC;
    Kleinschreibung; ``\\w+``. Das Zusammenfassen von Leerraum aus Quelle 000
    entfällt, weil es die ``\\w+``-Tokens nicht ändert.

    Jede Abkürzung hier lässt die Tokens unverändert: ein Muster, das ein
    Zeichen verlangt, das im Text fehlt, kann nicht treffen, und reines ASCII
    ist immer schon NFKC.
    """
    if "&" in text:
        text = html.unescape(text)
    if "[" in text:
        text = _MARKDOWN_BILD.sub(" ", text)
        text = _MARKDOWN_LINK.sub(r"\1", text)
    if "<" in text:
        text = _TAG.sub(" ", text)
    if not text.isascii():
        text = text.translate(_FORMATZEICHEN_LOESCHEN)
        if not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)
    return _WORT.findall(text.lower())


def shingles(toks: Sequence[str], k: int = 5) -> set[tuple[str, ...]]:
    """Die Menge der k-Token-Fenster.

    1 bis k-1 Tokens ergeben ein einziges Tupel aus allen, keine Tokens die
    leere Menge. ``zip`` über versetzte Scheiben baut die Tupel in C.
    """
    if len(toks) < k:
        return {tuple(toks)} if toks else set()
    return set(zip(*(toks[i:] for i in range(k)), strict=False))
