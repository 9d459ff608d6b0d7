"""Ist das eine HTML-Seite, und ist etwas darin? Vor den Extraktoren, an den Bytes (``keine_html``,
``leer``; ``Urteil``).

Drei Prüfungen, ohne E/A: bekannte Anfänge (``MAGIE``), Steuerzeichen (``STEUER_ANTEIL``),
Ersatzzeichen der Zeichensatzregel (``ERSATZ_ANTEIL``), je mindestens ``MINDESTENS`` Zeichen; der
Content-Type entscheidet nicht. Warum und wie die Grenzen gemessen sind (``python -m bench.seitenart``):
docs/extraktion.md, „Keine HTML-Seite: PDF, Bild, Archiv, Binärdaten“.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from auswahlstufe.anzeige import zahl

# So beginnt der Fehler, den alle drei Kandidaten einer solchen Seite bekommen.
FEHLER = "keine HTML-Seite: "
# Die Fassung dieser Regeln; sie steht am Ende jeder gespeicherten Fassung eines Extraktors
# (aufrufe.extraktor_fassung). Wer hier etwas ändert, was ein Urteil ändern kann, zählt sie hoch:
# dann prüft die Stufe jede Seite nach (ohne Extraktor) und schreibt nur, wo das Urteil sich ändert.
FASSUNG = "Seitenart (art.keine_html) Fassung 2"
# So steht die Fassung der Seitenart in einer gespeicherten Fassung (regexp für PostgreSQL).
FASSUNG_MUSTER = "; (Seitenart .*)$"

# (Anfang, Name); ``…`` steht für beliebige Bytes an dieser Stelle (RIFF-Größe, ftyp-Länge).
MAGIE: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "PDF"),
    (b"%!PS", "PostScript"),
    (b"{\\rtf", "RTF-Dokument"),
    (b"\x89PNG\r\n\x1a\n", "PNG-Bild"),
    (b"\xff\xd8\xff", "JPEG-Bild"),
    (b"GIF87a", "GIF-Bild"),
    (b"GIF89a", "GIF-Bild"),
    (b"RIFF....WEBP", "WebP-Bild"),
    (b"RIFF....WAVE", "WAV-Ton"),
    (b"RIFF....AVI ", "AVI-Film"),
    (b"BM....\x00\x00\x00\x00", "BMP-Bild"),
    (b"II*\x00", "TIFF-Bild"),
    (b"MM\x00*", "TIFF-Bild"),
    (b"\x00\x00\x01\x00", "ICO-Bild"),
    (b"....ftypavif", "AVIF-Bild"),
    (b"....ftypheic", "HEIC-Bild"),
    (b"....ftypmif1", "HEIC-Bild"),
    (b"....ftypM4A ", "M4A-Ton"),
    (b"....ftyp", "MP4-Film"),
    (b"\x1a\x45\xdf\xa3", "WebM/Matroska-Film"),
    (b"ID3\x02\x00", "MP3-Ton"),
    (b"ID3\x03\x00", "MP3-Ton"),
    (b"ID3\x04\x00", "MP3-Ton"),
    (b"OggS", "Ogg-Ton oder -Film"),
    (b"fLaC", "FLAC-Ton"),
    (b"PK\x03\x04", "ZIP-Archiv (auch docx, xlsx, odt, epub)"),
    (b"PK\x05\x06", "ZIP-Archiv (leer)"),
    (b"PK\x07\x08", "ZIP-Archiv"),
    (b"\x1f\x8b", "gzip-komprimiert (Content-Encoding nicht aufgelöst?)"),
    (b"\x28\xb5\x2f\xfd", "zstd-komprimiert"),
    (b"\xfd7zXZ\x00", "xz-komprimiert"),
    (b"7z\xbc\xaf\x27\x1c", "7z-Archiv"),
    (b"Rar!\x1a\x07", "RAR-Archiv"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "Office-Dokument (doc, xls, ppt)"),
    (b"\x7fELF", "ELF-Programm"),
    (b"\x00asm", "WebAssembly"),
    (b"\xca\xfe\xba\xbe", "Java-Klasse"),
    (b"SQLite format 3\x00", "SQLite-Datenbank"),
    (b"wOFF", "Schrift (WOFF)"),
    (b"wOF2", "Schrift (WOFF2)"),
    (b"OTTO", "Schrift (OpenType)"),
    (b"\x00\x01\x00\x00\x00", "Schrift (TrueType)"),
)
_MAGIE = tuple(
    (re.compile(re.escape(anfang).replace(rb"\.", rb"(?s:.)"), re.DOTALL), name) for anfang, name in MAGIE
)
KOPF_BYTES = max(len(anfang) for anfang, _ in MAGIE)

# NUL und die C0-Steuerzeichen außer Tab (09), Zeilenumbruch (0A), Seitenvorschub (0C),
# Wagenrücklauf (0D) und ESC (1B): 27 der 256 Bytewerte.
STEUERZEICHEN = bytes(b for b in range(32) if b not in (0x09, 0x0A, 0x0C, 0x0D, 0x1B))
_KEIN_STEUERZEICHEN = bytes(b for b in range(256) if b not in STEUERZEICHEN)

# Ab so viel gilt eine Seite als Binärdaten (gemessen: docs/extraktion.md, bench/seitenart.py).
STEUER_ANTEIL = 0.01  # 1 % Steuerzeichen; echte Seiten 0 %, Zufallsbytes 10,5 %
ERSATZ_ANTEIL = 0.10  # 10 % Ersatzzeichen; echte Seiten 0 %, Zufallsbytes ohne Steuerzeichen 48 %
MINDESTENS = 8  # und so viele Zeichen: ein paar verirrte Bytes in einer kleinen Seite sind kein Befund
ERSATZ = "\ufffd"
_ERSATZ_UTF8 = ERSATZ.encode()


def format_am_anfang(kopf: bytes) -> str | None:
    """Der Name des Formats, wenn ``kopf`` mit einer bekannten magischen Zahl beginnt."""
    for muster, name in _MAGIE:
        if muster.match(kopf):
            return name
    return None


def steuerzeichen(daten: bytes) -> int:
    """Wie viele Bytes von ``daten`` Steuerzeichen im Sinn dieses Moduls sind."""
    return len(daten.translate(None, _KEIN_STEUERZEICHEN))


@dataclass(frozen=True)
class Mass:
    """Was ``keine_html`` an einer Seite zählt."""

    steuer: int  # Steuerzeichen
    zeichen: int  # … unter so vielen Bytes (oder Zeichen, wenn der Text nicht ASCII-kompatibel ist)
    ersatz: int  # Ersatzzeichen, die die Zeichensatzregel einsetzte
    laenge: int  # Zeichen des Texts

    @property
    def steuer_anteil(self) -> float:
        return self.steuer / self.zeichen if self.zeichen else 0.0

    @property
    def ersatz_anteil(self) -> float:
        return self.ersatz / self.laenge if self.laenge else 0.0


def messen(text: str, roh: bytes | None = None, zeichensatz: str | None = None) -> Mass:
    """Steuer- und Ersatzzeichen einer Seite (Argumente wie ``keine_html``)."""
    if roh is not None and not (zeichensatz or "").startswith(("utf-16", "utf-32")):
        steuer, zeichen = steuerzeichen(roh), len(roh)
    else:
        steuer, zeichen = steuerzeichen(text.encode("utf-8", "surrogatepass")), len(text)
    ersatz = text.count(ERSATZ)
    if ersatz and roh is not None:
        ersatz = max(0, ersatz - roh.count(_ERSATZ_UTF8))  # stand schon als U+FFFD in der Seite
    return Mass(steuer, zeichen, ersatz, len(text))


def keine_html(text: str, roh: bytes | None = None, zeichensatz: str | None = None) -> str | None:
    """None, wenn die Seite als HTML durchgeht; sonst der Grund, etwa ``"PDF"``.

    ``text``: die Seite, wie die Zeichensatzregel sie las (Steuerzeichen noch drin) oder wie sie
    als Text kam; ``roh`` die Bytes, falls es sie gibt, gelesen mit ``zeichensatz`` – ist er
    ASCII-kompatibel, zählt die Prüfung an den Bytes.
    """
    kopf = roh[:KOPF_BYTES] if roh is not None else text[:KOPF_BYTES].encode("latin-1", "replace")
    name = format_am_anfang(kopf)
    if name is not None:
        return name
    mass = messen(text, roh, zeichensatz)
    if mass.steuer >= MINDESTENS and mass.steuer_anteil >= STEUER_ANTEIL:
        return f"Binärdaten ({zahl(100 * mass.steuer_anteil)} % Steuerzeichen)"
    if mass.ersatz >= MINDESTENS and mass.ersatz_anteil >= ERSATZ_ANTEIL:
        return f"Binärdaten ({zahl(100 * mass.ersatz_anteil)} % der Zeichen in keinem Zeichensatz lesbar)"
    return None


def leer(text: str) -> bool:
    """Eine leere Seite (nichts oder nur Leerraum): drei leere Texte, ohne Extraktor – readability
    hielte sie für einen Fehler („Document is empty“), die beiden anderen geben ohnehin nichts."""
    return not text.strip()


@dataclass(frozen=True)
class Urteil:
    """Was eine Seite für die Extraktoren ist: keine HTML-Seite (``grund``), leer, oder Arbeit für sie."""

    grund: str | None = None
    leer: bool = False

    def kandidat(self) -> tuple[str | None, str | None] | None:
        """(Text, Fehler) jedes Extraktors, ohne dass einer die Seite sieht; None: sie entscheiden."""
        if self.grund is not None:
            return None, fehler(self.grund)
        if self.leer:
            return "", None
        return None


def fehler(grund: str) -> str:
    """Der Fehler, den alle drei Kandidaten einer solchen Seite bekommen: ``keine HTML-Seite: PDF``."""
    return FEHLER + grund


def ist_keine_html(fehler: str | None) -> bool:
    return fehler is not None and fehler.startswith(FEHLER)
