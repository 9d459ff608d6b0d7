"""Was ein Lauf wohin schreibt – über ``logging``, mit dem Zeilenkopf im cron-Log.

stdout ist das Protokoll (``log.info``), stderr, was ein Mensch sehen muss (``log.warning``,
``log.error``); ist ein Strom kein Terminal, beginnt jede Zeile mit dem Zeilenkopf aus ``KOPF``
(``AUSWAHL_ZEILENKOPF``: ``auto``, ``an``, ``aus``). Die Regel und die Zeilen: docs/betrieb-lauf.md,
„Was im cron-Log steht“. Eingerichtet vom Einstieg (``einrichten``), nicht beim Import; die
Handler schreiben nach ``sys.stdout``/``sys.stderr``, wie sie beim Schreiben sind (CliRunner und
pytest tauschen sie aus).
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


class _Strom(logging.Handler):
    """Schreibt nach ``sys.stdout`` oder ``sys.stderr`` (``ziel``), wie er beim Schreiben ist –
    jede Zeile der Meldung mit dem Zeilenkopf, wo er hingehört."""

    def __init__(self, ziel: str) -> None:
        super().__init__()
        self.ziel = ziel

    def emit(self, record: logging.LogRecord) -> None:
        try:
            strom = getattr(sys, self.ziel)
            text = record.getMessage()
            kopf = KOPF.get()
            if kopf is not None and (
                kopf.einstellung == "an" or (kopf.einstellung == "auto" and not _terminal(strom))
            ):
                vorne = kopf.text(datetime.fromtimestamp(record.created, BERLIN))
                text = "\n".join(vorne + zeile for zeile in text.split("\n"))
            strom.write(text + "\n")
            strom.flush()
        except Exception:
            self.handleError(record)


def einrichten() -> None:
    """Richtet das Protokoll ein (die Kommandozeile zu Beginn, die Tests in ``conftest``); ein
    zweiter Aufruf ersetzt die Handler. Ohne Einrichtung schreibt Python Warnungen und Fehler auf
    stderr (``logging.lastResort``) – so bei check_db.py und demo.py.

    Logger ``auswahlstufe``: unter WARNING nach stdout (das Protokoll), ab WARNING nach stderr.
    Logger ``db`` (die Warnungen von db.py, etwa ein Passwort in DATABASE_URL): nach stderr, mit
    dem Zeilenkopf. Logger ``psycopg``: still – was es beim Aufräumen nach einem
    Verbindungsverlust meldet („error ignored terminating …“), sagt unsere Meldung schon."""
    protokoll, mensch = _Strom("stdout"), _Strom("stderr")
    protokoll.addFilter(lambda r: r.levelno < logging.WARNING)
    mensch.setLevel(logging.WARNING)
    log.handlers[:] = [protokoll, mensch]
    log.setLevel(logging.INFO)
    log.propagate = False
    db_warnung = logging.getLogger("db")  # db.WARNUNG; db.py kennt dieses Paket nicht
    db_warnung.handlers[:] = [mensch]
    db_warnung.propagate = False
    logging.getLogger("psycopg").disabled = True


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
