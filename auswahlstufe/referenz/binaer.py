"""Dateien, die keine HTML-Seiten sind – für Tests und ``bench.seitenart``, nie im Betrieb.

Was ein Abholer statt einer Seite speichern kann: ein PDF, Bilder, ein ZIP (docx),
gzip-Bytes, ein MP4, ein altes Office-Dokument, ein Programm, Zufallsbytes. Jede
Datei trägt ihre echte magische Zahl und ist, wo es ohne großen Aufwand geht,
gültig (PNG mit IHDR, IDAT und Prüfsummen; das ZIP aus ``zipfile``; JPEG, GIF, WebP
und BMP aus Pillow, das mit newspaper4k kommt). Alles hängt nur am Startwert.
Dazu ``verirrte_steuerzeichen``: eine echte Seite mit ein paar Steuerbytes darin.
"""

from __future__ import annotations

import gzip
import io
import random
import struct
import sys
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

GROESSE = 60_000  # etwa so groß wie ein kleines PDF (60 KB)


def zufall(n: int = GROESSE, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(n)


def ohne_steuerzeichen(n: int = GROESSE, seed: int = 1) -> bytes:
    """Zufallsbytes ohne ein einziges C0-Steuerzeichen (nur 0x20–0xFF)."""
    zufallsquelle = random.Random(seed)
    return bytes(zufallsquelle.randrange(0x20, 0x100) for _ in range(n))


def hohe_bytes(n: int = GROESSE, seed: int = 1) -> bytes:
    """Zufallsbytes nur aus 0x80–0xFF: kein Steuerzeichen, kaum gültiges UTF-8."""
    zufallsquelle = random.Random(seed)
    return bytes(zufallsquelle.randrange(0x80, 0x100) for _ in range(n))


def _text(seed: int, woerter: int) -> bytes:
    zufallsquelle = random.Random(seed)
    wortschatz = ["Stadtrat", "Haushalt", "Schule", "Sanierung", "beschlossen", "vertagt", "die", "und"]
    return " ".join(zufallsquelle.choice(wortschatz) for _ in range(woerter)).encode()


def pdf(seed: int = 1) -> bytes:
    """Ein kleines gültiges PDF (Katalog, Seite, Inhaltsstrom mit FlateDecode) und ein
    eingebettetes Bild aus 60 KB Zufallsbytes, wie ein gescanntes Dokument."""
    inhalt = zlib.compress(b"BT /F1 12 Tf 72 720 Td (" + _text(seed, 200) + b") Tj ET")
    bild = zufall(GROESSE, seed)
    objekte = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /XObject << /Im1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(inhalt) + inhalt + b"\nendstream",
        b"<< /Type /XObject /Subtype /Image /Width 200 /Height 100 /ColorSpace /DeviceRGB "
        b"/BitsPerComponent 8 /Length %d >>\nstream\n" % len(bild) + bild + b"\nendstream",
    ]
    aus = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    stellen = []
    for nr, objekt in enumerate(objekte, 1):
        stellen.append(len(aus))
        aus += b"%d 0 obj\n" % nr + objekt + b"\nendobj\n"
    xref = len(aus)
    aus += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objekte) + 1)
    aus += b"".join(b"%010d 00000 n \n" % stelle for stelle in stellen)
    aus += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objekte) + 1, xref)
    return bytes(aus)


def _chunk(art: bytes, daten: bytes) -> bytes:
    return struct.pack(">I", len(daten)) + art + daten + struct.pack(">I", zlib.crc32(art + daten))


def png(breite: int = 200, hoehe: int = 100, seed: int = 1) -> bytes:
    """Ein gültiges PNG (RGB, 8 Bit) mit verrauschten Pixeln: Signatur, IHDR, IDAT, IEND."""
    zufallsquelle = random.Random(seed)
    zeilen = b"".join(b"\x00" + zufallsquelle.randbytes(3 * breite) for _ in range(hoehe))
    kopf = struct.pack(">IIBBBBB", breite, hoehe, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", kopf)
        + _chunk(b"IDAT", zlib.compress(zeilen, 9))
        + _chunk(b"IEND", b"")
    )


def _pillow(format: str, seed: int) -> bytes:
    from PIL import Image  # kommt mit newspaper4k (Extra extraktion)

    zufallsquelle = random.Random(seed)
    bild = Image.frombytes("RGB", (200, 100), zufallsquelle.randbytes(3 * 200 * 100))
    puffer = io.BytesIO()
    bild.save(puffer, format=format)
    return puffer.getvalue()


def jpeg(seed: int = 1) -> bytes:
    return _pillow("JPEG", seed)


def gif(seed: int = 1) -> bytes:
    return _pillow("GIF", seed)


def webp(seed: int = 1) -> bytes:
    return _pillow("WEBP", seed)


def bmp(seed: int = 1) -> bytes:
    return _pillow("BMP", seed)


def docx(seed: int = 1) -> bytes:
    """Ein ZIP wie ein Word-Dokument (docx), geschrieben mit ``zipfile``."""
    puffer = io.BytesIO()
    with zipfile.ZipFile(puffer, "w", zipfile.ZIP_DEFLATED) as archiv:
        archiv.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        archiv.writestr("word/document.xml", b"<w:document><w:body>" + _text(seed, 5000) + b"</w:body>")
        archiv.writestr("word/media/bild.bin", zufall(GROESSE, seed), zipfile.ZIP_STORED)
    return puffer.getvalue()


def gzip_html(html: bytes) -> bytes:
    """Eine Seite, deren Content-Encoding der Abholer nicht auflöste."""
    return gzip.compress(html, mtime=0)


def mp4(seed: int = 1) -> bytes:
    """Ein ftyp-Kasten (isom) und ein mdat mit Zufallsbytes."""
    ftyp = struct.pack(">I", 24) + b"ftypisom" + struct.pack(">I", 512) + b"isomiso2"
    daten = zufall(GROESSE, seed)
    return ftyp + struct.pack(">I", 8 + len(daten)) + b"mdat" + daten


def office(seed: int = 1) -> bytes:
    """Der Kopf einer Compound-File-Datei (doc, xls, ppt) und Zufallsbytes."""
    kopf = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(16) + struct.pack("<HHH", 0x3E, 3, 0xFFFE)
    return kopf + bytes(512 - len(kopf)) + zufall(GROESSE, seed)


def elf() -> bytes:
    """Die ersten 60 KB des laufenden Python: ein echtes Programm."""
    return Path(sys.executable).resolve().read_bytes()[:GROESSE]


# Name → Erzeuger, und welcher Grund in „keine HTML-Seite: …“ zu erwarten ist (Anfang).
DATEIEN: dict[str, tuple[Callable[[], bytes], str]] = {
    "pdf": (pdf, "PDF"),
    "png": (png, "PNG-Bild"),
    "jpeg": (jpeg, "JPEG-Bild"),
    "gif": (gif, "GIF-Bild"),
    "webp": (webp, "WebP-Bild"),
    "bmp": (bmp, "BMP-Bild"),
    "docx": (docx, "ZIP-Archiv"),
    "gzip": (lambda: gzip_html(b"<html><body><p>" + _text(1, 5000) + b"</p></body></html>"), "gzip"),
    "mp4": (mp4, "MP4-Film"),
    "office": (office, "Office-Dokument"),
    "elf": (elf, "ELF-Programm"),
    "zufall": (zufall, "Binärdaten"),
    "zufall_ohne_steuerzeichen": (ohne_steuerzeichen, "Binärdaten"),
    "hohe_bytes": (hohe_bytes, "Binärdaten"),
}


def ohne_anfang(roh: bytes, weg: int = 64) -> bytes:
    """Die Datei ohne ihre ersten Bytes: was bleibt, wenn die magische Zahl fehlt."""
    return roh[weg:]


def verirrte_steuerzeichen(roh: bytes, anzahl: int = 5, seed: int = 1) -> bytes:
    """``anzahl`` Steuerbytes (NUL, BEL, BS, VT, SUB …) an zufälligen Stellen vor einem
    ASCII-Byte – nie mitten in einem UTF-8-Zeichen –, hinter den ersten 4096 Bytes, in
    denen die Zeichensatzregel nach der Deklaration sucht."""
    zufallsquelle = random.Random(seed)
    stellen = [i for i in range(4096, len(roh)) if roh[i] < 0x80]
    aus = bytearray(roh)
    for stelle in sorted(zufallsquelle.sample(stellen, anzahl), reverse=True):
        aus[stelle:stelle] = bytes([zufallsquelle.choice(b"\x00\x07\x08\x0b\x1a\x1f")])
    return bytes(aus)
