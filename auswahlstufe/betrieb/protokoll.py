"""Was ein Lauf wohin schreibt – über ``logging``, mit dem Zeilenkopf im cron-Log.

Die Regel für einen Lauf ohne Aufsicht (cron):

* **stdout ist das Protokoll** (``log.info``): die Bilanz je Lauf und je Slot, die Bilanz der
  Extraktion, Hinweise ohne Handlungsbedarf und – ist stderr kein Terminal – alle 10 s eine
  Zeile Fortschritt.
* **stderr ist, was ein Mensch sehen muss** (``log.warning``, ``log.error``): Fehler,
  Warnungen, ein Lauf, der nie endete. Ein Lauf ohne Befund schreibt dort nichts: cron
  mailt nur, wenn es etwas zu tun gibt.

Ist ein Strom kein Terminal, beginnt jede seiner Zeilen mit einem **Zeilenkopf** – die Zeit in
Europe/Berlin mit Offset, Modus, Slot (falls einer) und coder_version –, etwa::

    2026-09-08T08:15:02+02:00 modus=nachholen slot=2026-09-07T08:00+02:00 version=auswahl-2+… | neu 12, …

Der Kopf ist der Kontext des Laufs (``KOPF``, eine ``contextvars.ContextVar``): die
Kommandozeile setzt Modus und Version, ``--nachholen`` je Slot den Slot. ``AUSWAHL_ZEILENKOPF``
stellt es um: ``auto`` (Voreinstellung), ``an`` (auch am Terminal), ``aus`` (nie; etwa unter
systemd, dessen Journal selbst Zeit und Dienst vermerkt).

Die beiden Handler schreiben nach ``sys.stdout`` und ``sys.stderr``, wie sie beim Schreiben
sind (click's CliRunner und pytest tauschen sie aus); ersetzt wird keiner der beiden Ströme.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

from auswahlstufe.anzeige import BERLIN
from auswahlstufe.fehler import KonfigurationsFehler

VARIABLE = "AUSWAHL_ZEILENKOPF"
WERTE = ("auto", "an", "aus")

log = logging.getLogger("auswahlstufe")


@dataclass(frozen=True)
class Kopf:
    """Was der Zeilenkopf nennt, und ob er kommt (``einstellung``: auto, an, aus)."""

    modus: str
    version: str
    slot: str = ""
    einstellung: str = "auto"

    def text(self, zeit: datetime) -> str:
        teile = [zeit.isoformat(timespec="seconds"), f"modus={self.modus}"]
        if self.slot:
            teile.append(f"slot={self.slot}")
        teile.append(f"version={self.version}")
        return " ".join(teile) + " | "


KOPF: ContextVar[Kopf | None] = ContextVar("auswahl_zeilenkopf", default=None)


def einstellung() -> str:
    """``AUSWAHL_ZEILENKOPF``: auto, an oder aus (anderes: Exit 7)."""
    wert = os.environ.get(VARIABLE, "auto").strip().lower() or "auto"
    if wert not in WERTE:
        raise KonfigurationsFehler(
            f"{VARIABLE}={wert!r:.40} ist keiner der Werte {', '.join(WERTE)} (auto: Zeilenkopf, wenn "
            "die Ausgabe kein Terminal ist)."
        )
    return wert


def kopf_setzen(modus: str, version: str) -> None:
    """Ab hier trägt jede Zeile des Laufs den Kopf (wo die Einstellung es will) – bis zum Ende
    des Prozesses, auch die letzte Fehlermeldung, die click nach dem Lauf druckt."""
    KOPF.set(Kopf(modus, version, einstellung=einstellung()))


def slot_setzen(slot: str) -> None:
    """Ein Lauf über einen Slot (--slot): jede Zeile bis zum Ende des Prozesses nennt ihn."""
    kopf = KOPF.get()
    if kopf is not None:
        KOPF.set(dataclasses.replace(kopf, slot=slot))


@contextlib.contextmanager
def mit_slot(slot: str) -> Iterator[None]:
    """Zeilen im Block nennen ``slot``. Endet der Block mit einem Fehler, bleibt der Slot im
    Kopf: die Fehlermeldung danach gehört zu ihm."""
    kopf = KOPF.get()
    if kopf is None:
        yield
        return
    marke = KOPF.set(dataclasses.replace(kopf, slot=slot))
    yield
    KOPF.reset(marke)


def _terminal(strom) -> bool:
    try:
        return strom.isatty()
    except (AttributeError, ValueError):
        return False


class _Strom(logging.StreamHandler):
    """Schreibt nach ``sys.<name>``, wie er beim Schreiben ist."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    @property
    def stream(self):
        return getattr(sys, self.name)

    @stream.setter
    def stream(self, _wert) -> None:
        pass  # StreamHandler.__init__ setzt ihn; gelesen wird er beim Schreiben


class _Zeilen(logging.Formatter):
    """Die Meldung, jede ihrer Zeilen mit dem Zeilenkopf, wo er hingehört."""

    def __init__(self, handler: _Strom) -> None:
        super().__init__()
        self.handler = handler

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        kopf = KOPF.get()
        if kopf is None or kopf.einstellung == "aus":
            return text
        if kopf.einstellung == "auto" and _terminal(self.handler.stream):
            return text
        vorne = kopf.text(datetime.fromtimestamp(record.created, BERLIN))
        return "\n".join(vorne + zeile for zeile in text.split("\n"))


def _einrichten() -> None:
    """Je ein Handler für stdout (unter WARNING: das Protokoll) und stderr (ab WARNING).

    Die Warnungen von db.py (Logger ``db``: etwa ein Passwort in DATABASE_URL) gehen im Lauf
    über denselben Handler auf stderr, mit dem Zeilenkopf."""
    protokoll, mensch = _Strom("stdout"), _Strom("stderr")
    protokoll.addFilter(lambda r: r.levelno < logging.WARNING)
    mensch.setLevel(logging.WARNING)
    for handler in (protokoll, mensch):
        handler.setFormatter(_Zeilen(handler))
        log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    db_warnung = logging.getLogger("db")  # db.WARNUNG; db.py kennt dieses Paket nicht
    db_warnung.addHandler(mensch)
    db_warnung.propagate = False


_einrichten()


class _Fortschrittszeilen:
    """Ein Strom für ``fortschritt``: jede Zeile geht als Protokoll (stdout, mit Kopf)."""

    def write(self, text: str) -> int:
        for zeile in text.splitlines():
            if zeile:
                log.info(zeile)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def fortschritt_datei():
    """Wohin der Fortschritt eines Laufs geht: am Terminal der Balken auf stderr, sonst das
    Protokoll – eine Fortschrittszeile braucht keinen Menschen."""
    return sys.stderr if _terminal(sys.stderr) else _Fortschrittszeilen()
