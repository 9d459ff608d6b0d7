"""Was Menschen auf der Kommandozeile sehen: Zahlen mit Komma, Dateifehler, Namensvorschläge.

Eine Stelle für die deutsche Dezimalschreibweise (``zahl``, ``kurz``, ``prozent``),
Dateifehler auf Deutsch (``os_fehler``), „gemeint: trafilatura?“ für
vertippte Extraktornamen und die Zone jeder Zeit, die die Stufe zeigt (``BERLIN``, ``berlin``).
Den Fortschritt zeigt ``fortschritt.py``.
"""

from __future__ import annotations

import difflib
import errno
from datetime import datetime
from zoneinfo import ZoneInfo

from version import PRIORITAET

# Jede Zeit, die die Stufe zeigt oder ohne Offset liest (--slot, Zeilenkopf, „Ende gegen“).
BERLIN = ZoneInfo("Europe/Berlin")


def berlin(zeitpunkt: datetime | None = None) -> datetime:
    """Jetzt in Europe/Berlin, gleich welche Zone der Prozess hat (unter cron meist UTC), oder
    ``zeitpunkt`` dorthin umgerechnet; ohne Zone gilt er als Berliner Zeit (wie ``--slot``)."""
    if zeitpunkt is None:
        return datetime.now(BERLIN)
    return zeitpunkt.replace(tzinfo=BERLIN) if zeitpunkt.tzinfo is None else zeitpunkt.astimezone(BERLIN)


def zeit_text(zeitpunkt: datetime) -> str:
    """``2026-12-02 07:42:00 +01:00 (Europe/Berlin)``: die Zeit mit Offset und Zone, für Seiten."""
    z = berlin(zeitpunkt)
    return f"{z:%Y-%m-%d %H:%M:%S} {z.isoformat()[-6:]} (Europe/Berlin)"


def zahl(wert: float, stellen: int = 1, *, vorzeichen: bool = False) -> str:
    """``3,14`` statt ``3.14``: feste Nachkommastellen, Dezimalkomma; ``+0,012`` mit Vorzeichen."""
    return f"{wert:{'+' if vorzeichen else ''}.{stellen}f}".replace(".", ",")


def kurz(wert: float) -> str:
    """``2,5`` oder ``30``: so kurz wie möglich (Format ``g``), Dezimalkomma."""
    return f"{wert:g}".replace(".", ",")


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
