"""Worker-Prozesse für Auswahl und Extraktion: ``pebble`` hinter einer dünnen Schicht.

``pebble.ProcessPool`` gibt, was beide Wege brauchen: ein Zeitlimit je Aufgabe, nach dem der
Worker beendet und ersetzt wird (``TimeoutError``), einen gestorbenen Worker als Fehler seiner
Aufgabe (``ProcessExpired``), ``max_tasks`` (ein Worker geht nach so vielen Aufgaben) und einen
Initialisierer je Worker (Extraktion: Speichergrenze, kein Netz, Extraktoren laden). Diese
Schicht fügt hinzu:

* ``reihe``: Ergebnisse **in der Reihenfolge der Aufträge**, mit höchstens ``fenster``
  Aufträgen unterwegs – der Speicher bleibt flach, geschrieben wird in Lesereihenfolge. Ein
  Zeitlimit oder ein gestorbener Worker kommt als ``Fehlschlag`` an der Stelle seines Auftrags;
  was der Aufrufer daraus macht (Auswahl: Exit 8; Extraktion: ein Fehler des Kandidaten),
  entscheidet er.
* **Nach einem Tod**: pebble teilt eine Leitung unter allen Workern. Stirbt einer mitten im
  Senden (OOM-Killer), bliebe eine halbe Nachricht darin, und die anderen kämen nie mehr an;
  stirbt einer ohne Auftrag, gibt pebble alle auf. Darum startet die Schicht nach jedem toten
  Worker alle neu und gibt die offenen Aufträge noch einmal ab (``neustart``, die Extraktion:
  ein Kandidat bekommt seinen Fehler, der Rest geht weiter) – oder, ohne ``neustart`` (die
  Auswahl), ist jeder offene Auftrag ein Fehlschlag: der Lauf endet mit Exit 8.
* **Worker ohne Abbruchsignale**: jeder Worker steht in einer eigenen Prozessgruppe. Strg-C am
  Terminal und ein ``kill`` an die Gruppe treffen nur den Hauptprozess; er entscheidet, wann
  Schluss ist, und beendet die Worker selbst. Stirbt der Hauptprozess (``kill -9``), enden die
  Worker mit ihm: ihre Auftragsleitung ist dann zu.
* **Fehler beim Start als Satz**: was der Initialisierer eines Workers nicht kann (ein Modul
  fehlt), meldet ``WorkerStartet nicht`` mit dem Grund – kein Traceback von pebble.

``fork`` (Voreinstellung) startet die Worker der Auswahl sofort und billig; die Extraktion
nimmt ``forkserver`` mit ``vorladen``: ein neuer Worker erbt nichts vom Hauptprozess und hat die
Extraktoren schon geladen.
"""

from __future__ import annotations

import collections
import multiprocessing
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, wait
from concurrent.futures import TimeoutError as ZeitUeberschritten
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pebble

K = TypeVar("K")

# So oft sieht das Warten nach ``halt`` (einem Signal) und nach gestorbenen Workern.
SCHRITT = 0.2
# So lange nach seinem Zeitlimit darf ein Auftrag, der an der Reihe ist, noch fertig werden
# (pebble prüft sein Zeitlimit selbst in Schritten von 0,1 s).
GNADE = 2.0
# So lange darf ein neuer Worker brauchen, bis er bereit ist.
START_S = 120.0


@dataclass(frozen=True)
class Fehlschlag:
    """Ein Auftrag ohne Ergebnis: ``zeitlimit`` überschritten, oder sein Worker ist ``tot``."""

    art: str  # "zeitlimit" oder "tot"
    exitcode: int | None = None


@dataclass
class Auftrag(Generic[K]):
    """``funktion(*argumente)`` in einem Worker – oder, ohne Funktion, ``ergebnis`` sofort."""

    schluessel: K
    funktion: Callable[..., Any] | None = None
    argumente: tuple = ()
    ergebnis: Any = None


class WorkerStartetNicht(Exception):
    """Der Initialisierer eines Workers scheiterte; ``args[0]`` sagt warum."""


# --- im Worker ------------------------------------------------------------------------------

_startfehler: str | None = None  # je Worker-Prozess: woran sein Initialisierer scheiterte


def _anfang(vorbereitung: Callable[..., None] | None, argumente: tuple) -> None:
    """Anfang jedes Workers: eigene Prozessgruppe, dann ``vorbereitung(*argumente)``. Scheitert
    sie, merkt der Worker sich den Grund und meldet ihn bei der ersten Aufgabe (pebble druckte
    sonst einen Traceback)."""
    global _startfehler
    os.setpgrp()
    if vorbereitung is None:
        return
    try:
        vorbereitung(*argumente)
    except Exception as fehler:
        _startfehler = f"{type(fehler).__name__}: {fehler}"


def _bereit() -> str | None:
    return _startfehler


# --- im Hauptprozess ------------------------------------------------------------------------


def _buchhalter_ohne_stderr() -> None:
    """Startet den resource_tracker von multiprocessing (falls er noch nicht läuft) mit
    /dev/null als stderr. Er führt Buch über die benannten Semaphoren der Worker (forkserver)
    und schreibt, wird der Hauptprozess getötet, eine englische Warnung („leaked semaphore
    objects“) auf das stderr, das er erbte – in die Mail von cron, neben die deutsche Meldung
    des nächsten Laufs. Aufräumen tut er trotzdem."""
    from multiprocessing import resource_tracker

    vorher, leer = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(leer, 2)
        resource_tracker.ensure_running()
    finally:
        os.dup2(vorher, 2)
        os.close(vorher)
        os.close(leer)


class Pool:
    """``prozesse`` Worker; ``with Pool(…) as pool: for schluessel, ergebnis in pool.reihe(…)``."""

    def __init__(
        self,
        prozesse: int,
        *,
        zeitlimit: float | None = None,
        start: str = "fork",
        vorladen: Sequence[str] = (),
        vorbereitung: Callable[..., None] | None = None,
        argumente: tuple = (),
        auftraege_je_worker: int = 0,
        neustart: bool = True,
    ) -> None:
        self.prozesse = prozesse
        self.zeitlimit = zeitlimit
        self.neustart = neustart
        self.neustarts = 0
        self._kontext = multiprocessing.get_context(start)
        if vorladen:
            self._kontext.set_forkserver_preload(list(vorladen))
        self._vorbereitung, self._argumente = vorbereitung, argumente
        self._auftraege_je_worker = auftraege_je_worker
        self._pebble: pebble.ProcessPool | None = None

    def __enter__(self) -> Pool:
        self._starten()
        return self

    def __exit__(self, typ, *_) -> None:
        self._beenden(hart=typ is not None)

    def _starten(self) -> None:
        """Startet die Worker jetzt (nicht erst beim ersten Auftrag) und wartet, bis einer bereit
        ist; ``WorkerStartetNicht`` mit dem Grund, wenn sein Initialisierer scheiterte."""
        if self._kontext.get_start_method() != "fork":
            _buchhalter_ohne_stderr()
        self._pebble = pebble.ProcessPool(
            self.prozesse,
            max_tasks=self._auftraege_je_worker,
            initializer=_anfang,
            initargs=(self._vorbereitung, self._argumente),
            context=self._kontext,
        )
        try:
            grund = self._pebble.schedule(_bereit).result(timeout=START_S)
        except ZeitUeberschritten:
            grund = f"nach {START_S:g} s nicht bereit"
        except Exception as fehler:  # pebble.ProcessExpired, BrokenProcessPool
            grund = f"beendet ({type(fehler).__name__})"
        if grund is not None:
            self._beenden(hart=True)
            raise WorkerStartetNicht(grund)

    def _beenden(self, *, hart: bool) -> None:
        if self._pebble is None:
            return
        pool, self._pebble = self._pebble, None
        if hart:
            pool.stop()
        else:
            pool.close()
        pool.join()

    def worker_pids(self) -> list[int]:
        """Die Prozessnummern der Worker (für Überwachung und Tests)."""
        return [p.pid for p in multiprocessing.active_children() if p.name == "pebble_pool_worker"]

    def _abgeben(self, auftrag: Auftrag) -> Future:
        if not self._pebble.active:  # pebble gab die Worker auf (einer starb ohne Auftrag)
            if not self.neustart:
                return _fertig(Fehlschlag("tot"))
            self._neustarten()
        return self._pebble.schedule(auftrag.funktion, auftrag.argumente, timeout=self.zeitlimit)

    def _neustarten(self) -> None:
        alt, self._pebble = self._pebble, None
        alt.stop()
        alt.join()
        self._starten()
        self.neustarts += 1

    def reihe(
        self,
        auftraege: Iterable[Auftrag[K]],
        fenster: int,
        *,
        halt: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[K, Any]]:
        """(Schlüssel, Ergebnis oder ``Fehlschlag``) je Auftrag, in der Reihenfolge der Aufträge.

        Höchstens ``fenster`` Aufträge sind unterwegs; ein neuer wird erst gezogen, wenn der
        älteste zurück ist. Gibt ``halt()`` True zurück, endet die Reihe sofort: Ergebnisse, die
        noch unterwegs waren, verfallen (der Aufrufer beendet den Pool dann mit einem Fehler).
        """
        quelle = iter(auftraege)
        unterwegs: collections.deque[_Unterwegs] = collections.deque()
        erschoepft = False
        while True:
            while not erschoepft and len(unterwegs) < fenster:
                auftrag = next(quelle, None)
                if auftrag is None:
                    erschoepft = True
                    break
                unterwegs.append(_Unterwegs(auftrag, self._abgeben(auftrag) if auftrag.funktion else None))
            if not unterwegs:
                return
            if unterwegs[0].future is not None and not self._warten(unterwegs, halt):
                return
            erster = unterwegs.popleft()
            if erster.future is None:
                yield erster.auftrag.schluessel, erster.auftrag.ergebnis
            else:
                yield erster.auftrag.schluessel, _ergebnis(erster.future)

    def _warten(self, unterwegs: collections.deque[_Unterwegs], halt: Callable[[], bool] | None) -> bool:
        """Bis der älteste Auftrag fertig ist; False nach ``halt``.

        Stirbt dabei ein Worker (oder gibt pebble die Worker auf), oder wird der älteste nicht
        binnen seines Zeitlimits fertig, obwohl er an der Reihe ist – hängen alle Worker, fängt
        keiner ihn an, und pebbles Zeitlimit zählt erst ab dem Anfang –, ist das eine Störung
        (``_stoerung``)."""
        frist = time.monotonic() + (self.zeitlimit + GNADE if self.zeitlimit else START_S)
        while True:
            if halt is not None and halt():
                return False
            offen = [u.future for u in unterwegs if u.future is not None and not u.future.done()]
            if offen:
                wait(offen, timeout=SCHRITT, return_when=FIRST_COMPLETED)
            kopf = unterwegs[0]
            if not kopf.future.done() and time.monotonic() > frist:
                kopf.future = _fertig(Fehlschlag("zeitlimit"))
                self._stoerung(unterwegs)
            elif any(u.gestoert() for u in unterwegs) or not self._pebble.active:
                self._stoerung(unterwegs)
            if kopf.future.done():
                return True

    def _stoerung(self, unterwegs: collections.deque[_Unterwegs]) -> None:
        if self.neustart:
            self._neu_abgeben(unterwegs)
        else:
            _aufgeben(unterwegs)

    def _neu_abgeben(self, unterwegs: collections.deque[_Unterwegs]) -> None:
        """Alle Worker neu, jeder offene Auftrag noch einmal. Was fertig ist, bleibt; ein Auftrag,
        dessen Worker starb, behält seinen Fehlschlag – ebenso einer, der schon ``ABGABEN`` Mal
        mit aufgegebenen Workern endete (er tötet sie vielleicht selbst)."""
        self._neustarten()
        for u in unterwegs:
            if u.future is None:
                continue
            if isinstance(fehler := u.fehler(), pebble.ProcessExpired):
                u.future = _fertig(Fehlschlag("tot", fehler.exitcode))
            elif not u.future.done() or u.aufgegeben():
                if u.abgaben >= ABGABEN:
                    u.future = _fertig(Fehlschlag("tot"))
                else:
                    u.future, u.abgaben = self._abgeben(u.auftrag), u.abgaben + 1


def _aufgeben(unterwegs: collections.deque[_Unterwegs]) -> None:
    """Ohne Neustart: was nicht fertig ist, ist ein Fehlschlag wie sein toter Worker."""
    for u in unterwegs:
        if u.future is None:
            continue
        if isinstance(fehler := u.fehler(), pebble.ProcessExpired):
            u.future = _fertig(Fehlschlag("tot", fehler.exitcode))
        elif not u.future.done() or u.aufgegeben():
            u.future = _fertig(Fehlschlag("tot"))


# So oft höchstens gibt ``reihe`` einen Auftrag ab, dessen Worker pebble aufgab.
ABGABEN = 3


@dataclass
class _Unterwegs:
    auftrag: Auftrag
    future: Future | None
    abgaben: int = 1

    def fehler(self) -> BaseException | None:
        if self.future is None or not self.future.done():
            return None
        return CancelledError() if self.future.cancelled() else self.future.exception()

    def aufgegeben(self) -> bool:
        """Endete der Auftrag nicht durch sich selbst, sondern weil pebble seine Worker aufgab
        oder beendete (ein eigener Fehler der Aufgabe trägt ``traceback``, wie pebble ihn
        mitschickt)?"""
        fehler = self.fehler()
        return (
            fehler is not None
            and not isinstance(fehler, pebble.ProcessExpired | ZeitUeberschritten)
            and getattr(fehler, "traceback", None) is None
        )

    def gestoert(self) -> bool:
        """Starb sein Worker, oder gab pebble die Worker auf? Dann müssen alle neu starten."""
        return isinstance(self.fehler(), pebble.ProcessExpired) or self.aufgegeben()


def _fertig(wert: Any) -> Future:
    future: Future = Future()
    future.set_result(wert)
    return future


def _ergebnis(future: Future) -> Any:
    """Das Ergebnis, ein ``Fehlschlag`` – oder die Ausnahme der Aufgabe selbst (ein Fehler im
    Code, kein Fehler der Umgebung) geht weiter."""
    fehler = future.exception()
    if isinstance(fehler, pebble.ProcessExpired):
        return Fehlschlag("tot", fehler.exitcode)
    if isinstance(fehler, ZeitUeberschritten):
        return Fehlschlag("zeitlimit")
    return future.result()
