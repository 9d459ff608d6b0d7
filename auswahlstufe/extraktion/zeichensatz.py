"""Zeichensatz einer Seite (``dekodieren``), eine Regel für alle drei Extraktoren, und was lxml
in Text nicht annimmt (``lesbar``). Die Regel Schritt für Schritt: docs/extraktion.md, „Zeichensatz:
eine Regel für alle drei“.
"""

from __future__ import annotations

import codecs
import re

VORSCHAU_BYTES = 4096
ERKENNUNG_BYTES = 64 * 1024

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # vor UTF-16-LE prüfen: gleicher Anfang
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_CHARSET = re.compile(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
_META = re.compile(rb"<meta\b[^>]*>", re.IGNORECASE)
_XML_DEKLARATION = re.compile(rb"""^\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._:\-]+)""")
_XML_DEKLARATION_TEXT = re.compile(r"^\s*<\?xml[^>]*\?>")
_NICHT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_WIE_WINDOWS_1252 = {"latin-1", "iso8859-1", "ascii"}


def _codec(name: bytes | str | None) -> str | None:
    """Der Python-Name eines Zeichensatzes oder None, wenn es ihn nicht gibt."""
    if not name:
        return None
    if isinstance(name, bytes):
        name = name.decode("ascii", "replace")
    try:
        codec = codecs.lookup(name.strip()).name
    except (LookupError, ValueError):
        return None
    return "cp1252" if codec in _WIE_WINDOWS_1252 else codec


def deklariert_im_dokument(roh: bytes) -> str | None:
    """Der Zeichensatz aus XML-Deklaration oder ``<meta>`` in den ersten 4096 Bytes."""
    vorschau = roh[:VORSCHAU_BYTES]
    treffer = _XML_DEKLARATION.match(vorschau)
    if treffer:
        return _codec(treffer.group(1))
    for meta in _META.finditer(vorschau):
        zeichensatz = _CHARSET.search(meta.group())
        if zeichensatz:
            codec = _codec(zeichensatz.group(1))
            if codec is not None and codec.startswith("utf-16"):
                return "utf-8"  # so lesen es Browser: ein Dokument kann sich nicht in UTF-16 ankündigen
            return codec
    return None


def _streng(roh: bytes, codec: str | None) -> str | None:
    if codec is None:
        return None
    try:
        return roh.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def dekodieren(roh: bytes, content_type: str | None = None) -> tuple[str, str]:
    """Bytes einer Seite → (Text, wie der Zeichensatz bestimmt wurde), nach der Regel oben."""
    text, herkunft = dekodieren_roh(roh, content_type)
    return lesbar(text), herkunft


def dekodieren_roh(roh: bytes, content_type: str | None = None) -> tuple[str, str]:
    """Wie ``dekodieren``, aber ohne ``lesbar``: die Steuerzeichen stehen noch im Text
    (``art.keine_html`` zählt sie)."""
    for bom, codec in _BOMS:
        if roh.startswith(bom):
            return roh[len(bom) :].decode(codec, "replace"), f"{codec} (BOM)"
    if content_type:
        treffer = _CHARSET.search(content_type.encode("latin-1", "replace"))
        codec = _codec(treffer.group(1)) if treffer else None
        text = _streng(roh, codec)
        if text is not None:
            return text, f"{codec} (HTTP)"
    codec = deklariert_im_dokument(roh)
    text = _streng(roh, codec)
    if text is not None:
        return text, f"{codec} (Dokument)"
    text = _streng(roh, "utf-8")
    if text is not None:
        return text, "utf-8 (gültig)"
    codec = _erkennen(roh[:ERKENNUNG_BYTES])
    if codec is not None:
        return roh.decode(codec, "replace"), f"{codec} (erkannt)"
    return roh.decode("utf-8", "replace"), "utf-8 (mit Ersatzzeichen)"


def _erkennen(probe: bytes) -> str | None:
    import charset_normalizer  # kommt mit trafilatura

    bester = charset_normalizer.from_bytes(probe).best()
    return _codec(bester.encoding) if bester is not None else None


def lesbar(html: str) -> str:
    """Was lxml als Text annimmt: ohne XML-Deklaration am Anfang, ohne Steuerzeichen
    (außer Tab, Zeilenumbruch, Wagenrücklauf) und ohne einzelne Surrogate."""
    html = _XML_DEKLARATION_TEXT.sub("", html, count=1)
    return _NICHT_XML.sub("", html)
