"""Worker-Prozesse eines Laufs: abgeben, abwarten mit Zeitlimit, tote Worker erkennen.

* ``Arbeiter`` startet die Worker (``concurrent.futures.ProcessPoolExecutor``
  mit fork) **vor** den Datenbankverbindungen – kein Worker erbt einen Socket.
  Stirbt ein Worker (SIGKILL, etwa vom OOM-Killer), meldet der Executor das
  als ``BrokenProcessPool``; ``multiprocessing.Pool`` ersetzte ihn stumm, und
  der Lauf wartete ewig auf den verlorenen Stapel.
* ``ergebnis`` wartet in kurzen Schritten: SIGINT/SIGTERM wirken auch beim
  Warten, und ein Stapel, der länger als ``zeitlimit`` Sekunden braucht, endet
  den Lauf mit ``WorkerFehler`` (Exit 8), wie ein toter Worker. Nach jedem Schritt
  sieht es selbst nach den Workern: starb einer mitten im Senden seines Ergebnisses,
  meldet der Executor den Tod nie (sein Verwaltungsthread wartet auf den Rest der
  Nachricht).
* ``beenden`` räumt auf: die Worker rechnen ihren laufenden Stapel zu Ende und
  gehen (höchstens ``AUFRAEUMEN`` Sekunden, nach einem Fehler oder Signal wird
  das Ergebnis verworfen); wer dann noch lebt oder das Zeitlimit riss, bekommt
  SIGKILL. Nicht sofort SIGKILL für alle: ein Worker, der mitten im Senden eines
  Ergebnisses stirbt, hinterließe eine halbe Nachricht in der Ergebnis-Pipe, und
  der Verwaltungsthread des Executors wartete beim Beenden des Programms ewig
  auf ihren Rest.
* SIGINT/SIGTERM merkt sich ``abbruch.Abbruch``; der Lauf hört nach dem
  laufenden Stapel auf (Exit 130).
* Stirbt der Hauptprozess selbst (SIGKILL, OOM-Killer), nimmt der Kernel die Worker
  mit (``PR_SET_PDEATHSIG``). Sonst warteten sie ewig an der Auftragsschlange – ihr
  Schreibende erbten sie selbst –, verwaist, mit stdout und stderr des Laufs offen:
  eine cron-Zeile mit ``| tee`` endete nie.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from auswahlstufe.anzeige import kurz
from auswahlstufe.fehler import WorkerFehler
from auswahlstufe.lauf.abbruch import Abbruch
from auswahlstufe.lauf.kodierung import Stapelergebnis, stapel_kodieren, worker_start

ZEITLIMIT = 300.0  # Sekunden je Stapel (Voreinstellung von --stapel-zeitlimit)
PR_SET_PDEATHSIG = 1  # prctl(2): dieses Signal, wenn der Elternprozess (sein Thread) endet
SCHRITT = 0.2  # so oft sieht der Hauptprozess beim Warten nach Signalen
AUFRAEUMEN = 10.0  # so lange dürfen Worker nach einem normalen Ende zum Gehen brauchen


@dataclass(frozen=True)
class Stapel:
    """Wo ein Stapel im Lauf steht – für Meldungen."""

    nummer: int  # ab 1, in Lesereihenfolge
    erste_id: int
    letzte_id: int
    items: int

    def __str__(self) -> str:
        return f"Stapel {self.nummer} (Items {self.erste_id}–{self.letzte_id}, {self.items} Stück)"


def _worker_beginn(hauptprozess: int) -> None:
    """Anfang jedes Workers: mit dem Hauptprozess sterben, dann ``kodierung.worker_start``.

    Geforkt wird im Hauptthread (``Arbeiter.__init__``), der erst mit dem Prozess endet. Starb
    der Hauptprozess schon vor ``prctl``, kommt kein Signal mehr: dann gleich gehen. Ohne
    ``prctl`` (kein Linux) bleibt es beim alten: die Worker enden mit einem geordneten Lauf."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != hauptprozess:
        os._exit(1)
    worker_start()


class Arbeiter:
    """``prozesse`` Worker für ``kodierung.stapel_kodieren``."""

    def __init__(self, prozesse: int, zeitlimit: float = ZEITLIMIT) -> None:
        self.zeitlimit = zeitlimit
        self.haengt = False  # ein Stapel riss das Zeitlimit: nicht auf die Worker warten
        vorher = set(multiprocessing.active_children())
        vorher_threads = set(threading.enumerate())
        self.pool = ProcessPoolExecutor(
            prozesse,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_worker_beginn,
            initargs=(os.getpid(),),
        )
        # Mit fork startet der Executor alle Worker beim ersten Auftrag, und zwar
        # jetzt – vor den Verbindungen und vor seinem eigenen Verwaltungsthread.
        self.pool.submit(int).result()
        self.prozesse = [p for p in multiprocessing.active_children() if p not in vorher]
        # Der Verwaltungsthread des Executors (nicht daemon: das Programmende wartet auf ihn).
        self.threads = [t for t in threading.enumerate() if t not in vorher_threads and not t.daemon]

    def abgeben(
        self, auftrag: list[tuple], version: str, stichprobe_n: int | None, argumente: dict | None = None
    ) -> Future:
        try:
            return self.pool.submit(stapel_kodieren, auftrag, version, stichprobe_n, argumente)
        except BrokenProcessPool:
            future: Future = Future()
            future.set_exception(BrokenProcessPool("Worker tot"))
            return future

    def ergebnis(
        self, future: Future, stapel: Stapel, seit: float, abbruch: Abbruch, unterwegs: int
    ) -> Stapelergebnis | None:
        """Das Ergebnis des Stapels; None nach SIGINT/SIGTERM. ``seit``: monotone Zeit,
        ab der der Stapel an der Reihe ist (abgegeben, und der vorige war fertig)."""
        frist = seit + self.zeitlimit
        while abbruch.signal is None:
            rest = frist - time.monotonic()
            if rest <= 0 and not future.done():
                self.haengt = True
                raise WorkerFehler(
                    f"Zeitlimit je Stapel ({kurz(self.zeitlimit)} s, --stapel-zeitlimit) überschritten: "
                    f"{stapel} ist nach {kurz(round(time.monotonic() - seit, 1))} s nicht fertig"
                    f"{self._weitere(unterwegs)}. Die Worker werden beendet; nichts von diesem Stapel "
                    "ist geschrieben, ein erneuter Lauf setzt fort."
                )
            fertig, _ = wait([future], timeout=max(0.0, min(SCHRITT, rest)))
            if fertig:
                try:
                    return future.result()
                except BrokenProcessPool:
                    raise self._gestorben(stapel, unterwegs) from None
            if self._einer_tot():
                # Der Executor meldet den Tod sonst selbst (BrokenProcessPool). Starb der Worker
                # aber mitten im Senden eines Ergebnisses, wartet sein Verwaltungsthread ewig auf
                # den Rest der Nachricht und meldet nichts – der Lauf hinge bis zum Zeitlimit.
                self.haengt = True
                raise self._gestorben(stapel, unterwegs)
        return None

    def _einer_tot(self) -> bool:
        """Ist ein Worker gestorben? Während eines Laufs geht keiner von selbst."""
        return bool(multiprocessing.connection.wait([p.sentinel for p in self.prozesse], timeout=0))

    def _gestorben(self, stapel: Stapel, unterwegs: int) -> WorkerFehler:
        return WorkerFehler(
            f"Ein Worker-Prozess ist gestorben (etwa vom OOM-Killer beendet; dmesg zeigt es), "
            f"während {stapel} an der Reihe war{self._weitere(unterwegs)}. Nichts von diesen "
            "Stapeln ist geschrieben; ein erneuter Lauf setzt fort."
        )

    @staticmethod
    def _weitere(unterwegs: int) -> str:
        return f" (dazu {unterwegs} weitere Stapel unterwegs)" if unterwegs else ""

    def beenden(self) -> bool:
        """Worker gehen lassen; wer hängt oder nach ``AUFRAEUMEN`` Sekunden noch lebt: SIGKILL.

        Gibt False zurück, wenn der Executor danach nicht binnen ``AUFRAEUMEN``
        Sekunden zur Ruhe kommt – dann hielte sein Verwaltungsthread das Ende des
        Programms auf (ein Worker starb mitten im Senden), und der Aufrufer
        beendet den Prozess selbst (``os._exit``).
        """
        self.pool.shutdown(wait=False, cancel_futures=True)
        frist = time.monotonic() + (0 if self.haengt else AUFRAEUMEN)
        for prozess in self.prozesse:
            prozess.join(timeout=max(0.0, frist - time.monotonic()))
            if prozess.is_alive():
                prozess.kill()
                prozess.join(timeout=AUFRAEUMEN)
        frist = time.monotonic() + AUFRAEUMEN
        for thread in self.threads:
            thread.join(timeout=max(0.0, frist - time.monotonic()))
        return not any(t.is_alive() for t in self.threads)
