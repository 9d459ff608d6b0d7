"""Fortschritt eines langen Laufs auf stderr – am Terminal wie ohne.

Am Terminal zeichnet click seinen Balken. Ist stderr kein Terminal (cron,
systemd, eine Umleitung in eine Datei), schreibt ``fortschritt`` alle
``abstand`` Sekunden eine schlichte Zeile, etwa::

    Kodieren: 120000 von 1000000 Items (12 %), 2345 Items/s, noch etwa 6 min 15 s (Ende gegen 03:12:40)

Ein Lauf, der schneller fertig ist als ``abstand``, schreibt keine Zeile.
Benutzt von der Datenbankstufe; der Stapelbetrieb und --einlesen können
dasselbe nehmen::

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

ABSTAND = 10.0  # Sekunden zwischen zwei Zeilen ohne Terminal


def dauer_text(sekunden: float) -> str:
    """``45 s``, ``6 min 15 s``, ``2 h 05 min``."""
    s = max(0, round(sekunden))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Zeilenfortschritt:
    """Eine Fortschrittszeile je ``abstand`` Sekunden (ohne Terminal)."""

    def __init__(
        self,
        gesamt: int,
        titel: str,
        datei: TextIO,
        abstand: float = ABSTAND,
        uhr: Callable[[], float] = time.monotonic,
    ) -> None:
        self.gesamt, self.titel, self.datei, self.abstand, self.uhr = gesamt, titel, datei, abstand, uhr
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
        prozent = 100 * self.fertig // self.gesamt
        teile = [f"{self.titel}: {self.fertig} von {self.gesamt} Items ({prozent} %)", f"{rate:.0f} Items/s"]
        if rate > 0:
            rest = (self.gesamt - self.fertig) / rate
            ende = datetime.now().astimezone() + timedelta(seconds=rest)
            teile.append(f"noch etwa {dauer_text(rest)} (Ende gegen {ende:%H:%M:%S})")
        return ", ".join(teile)


@contextlib.contextmanager
def fortschritt(
    gesamt: int,
    titel: str = "Kodieren",
    datei: TextIO | None = None,
    abstand: float = ABSTAND,
    uhr: Callable[[], float] = time.monotonic,
) -> Iterator[Callable[[int], None]]:
    """Gibt ``weiter(n)`` zurück: n weitere Items fertig."""
    datei = datei if datei is not None else sys.stderr
    if not gesamt:
        yield lambda _n: None
    elif datei.isatty():
        with click.progressbar(length=gesamt, label=titel, file=datei, show_pos=True) as balken:
            yield balken.update
    else:
        yield Zeilenfortschritt(gesamt, titel, datei, abstand, uhr).weiter
