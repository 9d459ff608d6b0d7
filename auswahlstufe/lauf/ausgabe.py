"""Was ein Datenbanklauf wohin schreibt, und der Zeilenkopf im cron-Log.

Die Regel des Hauses für einen Lauf ohne Aufsicht (cron):

* **stdout ist das Protokoll**: die Bilanz je Lauf (und je Slot), die Bilanz der
  Extraktion, Hinweise ohne Handlungsbedarf (übergangene Kandidatenzeilen
  unbekannter Extraktoren, ein Slot ohne Items, was ``--nachholen`` noch offen
  lässt) und – ist stderr kein Terminal – alle 10 s eine Zeile Fortschritt.
* **stderr ist, was ein Mensch sehen muss**: Fehler, Warnungen (Rechte, ``.env``
  lesbar), ein Lauf, der nie endete und jetzt als abgebrochen geschlossen ist.
  Ein Lauf ohne Befund schreibt dort nichts: wer stdout in eine Datei leitet,
  bekommt von cron nur dann eine Mail, wenn es etwas zu tun gibt.

Am Terminal bleibt es, wie es war: der Fortschrittsbalken auf stderr, Zeilen
ohne Kopf. Ist ein Strom kein Terminal, beginnt jede seiner Zeilen mit einem
**Zeilenkopf** – die Zeit in Europe/Berlin mit Offset (wie jede Zeit, die die Stufe
nennt: Slots, „begonnen …“; gleich, in welcher Zone der Rechner läuft), Modus, Slot
(falls einer) und coder_version –, etwa::

    2026-09-08T08:15:02+02:00 modus=nachholen slot=2026-09-07T08:00+02:00 version=auswahl-2+… | neu 12, …

So bleibt ein angehängtes Log am nächsten Morgen lesbar, und ``grep`` findet
einen Slot. ``AUSWAHL_ZEILENKOPF`` stellt es um: ``auto`` (Voreinstellung),
``an`` (auch am Terminal), ``aus`` (nie; etwa unter systemd, dessen Journal
selbst Zeit und Dienst vermerkt).
"""

from __future__ import annotations

import io
import os
import sys
from datetime import datetime
from typing import TextIO

from auswahlstufe.anzeige import BERLIN
from auswahlstufe.fehler import KonfigurationsFehler

VARIABLE = "AUSWAHL_ZEILENKOPF"
WERTE = ("auto", "an", "aus")


class _Kontext:
    """Was der Zeilenkopf nennt; der Lauf setzt es, sobald er es weiß."""

    modus: str = ""
    slot: str = ""
    version: str = ""

    def kopf(self) -> str:
        teile = [datetime.now(BERLIN).isoformat(timespec="seconds")]
        if self.modus:
            teile.append(f"modus={self.modus}")
        if self.slot:
            teile.append(f"slot={self.slot}")
        if self.version:
            teile.append(f"version={self.version}")
        return " ".join(teile) + " | "


kontext = _Kontext()


class Zeilenkopf(io.TextIOBase):
    """Ein Textstrom, der jeder Zeile den Kopf aus ``kontext`` voranstellt."""

    def __init__(self, strom: TextIO) -> None:
        self.strom = strom
        self._zeilenanfang = True

    def write(self, text: str) -> int:
        # nur an \n trennen: ein \r (Balken am Terminal) beginnt keine neue Zeile im Log
        for teil in text.split("\n")[:-1]:
            self._stueck(teil + "\n")
        self._stueck(text.rsplit("\n", 1)[-1])
        return len(text)

    def _stueck(self, teil: str) -> None:
        if not teil:
            return
        if self._zeilenanfang:
            self.strom.write(kontext.kopf())
        self.strom.write(teil)
        self._zeilenanfang = teil.endswith("\n")

    def flush(self) -> None:
        self.strom.flush()

    def isatty(self) -> bool:
        return self.strom.isatty()

    def fileno(self) -> int:
        return self.strom.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return getattr(self.strom, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:
        return getattr(self.strom, "errors", None)


def einstellung() -> str:
    """``AUSWAHL_ZEILENKOPF``: auto, an oder aus (anderes: Exit 7)."""
    wert = os.environ.get(VARIABLE, "auto").strip().lower() or "auto"
    if wert not in WERTE:
        raise KonfigurationsFehler(
            f"{VARIABLE}={wert!r:.40} ist keiner der Werte {', '.join(WERTE)} (auto: Zeilenkopf, wenn "
            "die Ausgabe kein Terminal ist)."
        )
    return wert


def einrichten(modus: str, version: str) -> None:
    """Für den Rest des Prozesses: stdout und stderr bekommen den Zeilenkopf, wo die Einstellung
    es will. Bleibt bis zum Ende – auch die letzte Fehlermeldung (von click nach dem Lauf
    gedruckt) trägt ihn."""
    kontext.modus, kontext.version = modus, version
    wert = einstellung()
    for name in ("stdout", "stderr"):
        strom = getattr(sys, name)
        if isinstance(strom, Zeilenkopf):
            continue
        if wert == "an" or (wert == "auto" and not _terminal(strom)):
            setattr(sys, name, Zeilenkopf(strom))


def slot_setzen(slot: str | None) -> None:
    kontext.slot = slot or ""


def _terminal(strom: TextIO) -> bool:
    try:
        return strom.isatty()
    except (AttributeError, ValueError):
        return False


def fortschritt_datei() -> TextIO:
    """Wohin der Fortschritt eines Laufs geht: am Terminal der Balken auf stderr, sonst das
    Protokoll (stdout) – eine Fortschrittszeile braucht keinen Menschen."""
    return sys.stderr if _terminal(sys.stderr) else sys.stdout
