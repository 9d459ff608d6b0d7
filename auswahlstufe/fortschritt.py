"""Fortschritt eines langen Laufs auf stderr – am Terminal wie ohne.

Am Terminal zeichnet click seinen Balken; sonst schreibt ``fortschritt`` alle ``ABSTAND``
Sekunden eine schlichte Zeile (Ende in Europe/Berlin; docs/betrieb-lauf.md, „Was im cron-Log
steht“). Die eine Stelle für jeden Fortschritt::

    with fortschritt(gesamt, "Kodieren") as weiter:
        for stapel in …:
            weiter(len(stapel))
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import TextIO

import click

from auswahlstufe.anzeige import BERLIN

ABSTAND = 10.0  # Sekunden zwischen zwei Zeilen ohne Terminal
# Ab dieser Eingabegröße lohnt am Terminal ein Balken (grob eine Sekunde Rechenzeit).
BALKEN_AB_BYTES = 4 * 2**20
MB = 2**20


def dauer_text(sekunden: float) -> str:
    """``45 s``, ``6 min 15 s``, ``2 h 05 min``."""
    s = max(0, round(sekunden))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def ganze_prozent(fertig: int, gesamt: int) -> int:
    """Ganze Prozent, kaufmännisch gerundet (80 von 120: 67); 100 erst, wenn alles fertig ist."""
    gerundet = (200 * fertig + gesamt) // (2 * gesamt)
    return min(gerundet, 99) if fertig < gesamt else gerundet


class Zeilenfortschritt:
    """Eine Fortschrittszeile je ``abstand`` Sekunden (ohne Terminal)."""

    def __init__(
        self,
        gesamt: int,
        titel: str,
        datei: TextIO,
        abstand: float = ABSTAND,
        uhr: Callable[[], float] = time.monotonic,
        einheit: str = "Items",
        teiler: int = 1,
    ) -> None:
        self.gesamt, self.titel, self.datei, self.abstand, self.uhr = gesamt, titel, datei, abstand, uhr
        self.einheit, self.teiler = einheit, teiler
        self.fertig = 0
        self.start = uhr()
        self.naechste = self.start + abstand

    def weiter(self, n: int) -> None:
        self.fertig += n
        jetzt = self.uhr()
        if jetzt >= self.naechste and self.fertig < self.gesamt:
            self.datei.write(self.zeile(jetzt) + "\n")
            self.datei.flush()
            # nicht aufholen: nach einer langen Pause eine Zeile, nicht viele
            self.naechste = jetzt + self.abstand

    def zeile(self, jetzt: float) -> str:
        vergangen = max(jetzt - self.start, 1e-9)
        rate = self.fertig / vergangen
        prozent = ganze_prozent(self.fertig, self.gesamt)
        fertig, gesamt, einheit = self.fertig // self.teiler, self.gesamt // self.teiler, self.einheit
        teile = [
            f"{self.titel}: {fertig} von {gesamt} {einheit} ({prozent} %)",
            f"{rate / self.teiler:.0f} {einheit}/s",
        ]
        if rate > 0:
            rest = (self.gesamt - self.fertig) / rate
            ende = datetime.now(BERLIN) + timedelta(seconds=rest)  # wie der Zeilenkopf, auch unter cron
            teile.append(f"noch etwa {dauer_text(rest)} (Ende gegen {ende:%H:%M:%S})")
        return ", ".join(teile)


@contextlib.contextmanager
def fortschritt(
    gesamt: int,
    titel: str = "Kodieren",
    datei: TextIO | None = None,
    abstand: float | None = None,
    uhr: Callable[[], float] = time.monotonic,
    *,
    einheit: str = "Items",
    teiler: int = 1,
    balken: bool = True,
    melden: Callable[[int, int], None] | None = None,
) -> Iterator[Callable[[int], None]]:
    """Gibt ``weiter(n)`` zurück: n weitere Einheiten fertig.

    ``einheit``/``teiler`` für die Zeile (``"MB"``, ``MB``: gezählt in Bytes); ``balken=False``
    lässt am Terminal den Balken weg. ``melden(fertig, gesamt)`` bekommt den Stand am Anfang und
    danach höchstens alle ``abstand`` Sekunden (ein Lauf trägt ihn in die Datenbank ein).
    """
    datei = datei if datei is not None else sys.stderr
    abstand = ABSTAND if abstand is None else abstand
    if not gesamt:
        yield lambda _n: None
        return
    with contextlib.ExitStack() as stapel:
        if datei.isatty():
            anzeige = stapel.enter_context(
                click.progressbar(length=gesamt, label=titel, file=datei, show_pos=True, hidden=not balken)
            ).update
        else:
            anzeige = Zeilenfortschritt(gesamt, titel, datei, abstand, uhr, einheit, teiler).weiter
        yield anzeige if melden is None else _Melder(gesamt, melden, abstand, uhr, anzeige).weiter


class _Melder:
    """Gibt jedes ``weiter`` an die Anzeige und den Stand höchstens alle ``abstand`` s an ``melden``."""

    def __init__(self, gesamt: int, melden, abstand: float, uhr, anzeige) -> None:
        self.gesamt, self.melden, self.abstand, self.uhr, self.anzeige = gesamt, melden, abstand, uhr, anzeige
        self.fertig = 0
        self.naechste = uhr() + abstand
        melden(0, gesamt)

    def weiter(self, n: int) -> None:
        self.anzeige(n)
        self.fertig += n
        jetzt = self.uhr()
        if jetzt >= self.naechste:
            self.melden(self.fertig, self.gesamt)
            self.naechste = jetzt + self.abstand
