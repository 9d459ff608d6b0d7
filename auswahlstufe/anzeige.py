"""Was Menschen auf der Kommandozeile sehen: Zahlen mit Komma, Dateifehler, Namensvorschläge.

Eine Stelle für die deutsche Dezimalschreibweise (``zahl``, ``prozent``),
Dateifehler auf Deutsch (``os_fehler``) und „gemeint: trafilatura?“ für
vertippte Extraktornamen. Den Fortschritt zeigt ``fortschritt.py``.
"""

from __future__ import annotations

import difflib
import errno

from version import PRIORITAET


def zahl(wert: float, stellen: int = 1) -> str:
    """``3,14`` statt ``3.14``: feste Nachkommastellen, Dezimalkomma."""
    return f"{wert:.{stellen}f}".replace(".", ",")


def prozent(teil: int, ganzes: int) -> str:
    """`` 33,3 %`` (fünf Zeichen breit für Tabellen); leer, wenn es nichts zu teilen gibt."""
    return f"{zahl(100 * teil / ganzes, 1):>5} %" if ganzes else ""


def os_fehler(fehler: OSError) -> str:
    """Ein Dateifehler des Betriebssystems als deutscher Satzteil (strerror ist englisch)."""
    if isinstance(fehler, FileNotFoundError):
        return "gibt es nicht"
    if isinstance(fehler, PermissionError):
        return "keine Leserechte"
    if isinstance(fehler, IsADirectoryError):
        return "ist ein Verzeichnis"
    return f"Fehler {fehler.errno} des Betriebssystems ({errno.errorcode.get(fehler.errno or 0, '?')})"


def hinweis(name: str) -> str:
    """„gemeint: trafilatura?“ für anders geschriebene oder vertippte bekannte Namen."""
    aehnlich = difflib.get_close_matches(name.strip().lower(), PRIORITAET, n=1, cutoff=0.8)
    return f" (gemeint: {aehnlich[0]}?)" if aehnlich else ""
