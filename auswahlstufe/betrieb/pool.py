"""Worker-Prozesse für Auswahl und Extraktion: ``concurrent.futures.ProcessPoolExecutor``.

``reihe`` gibt die Ergebnisse in der Reihenfolge der Aufträge, höchstens ``fenster`` unterwegs;
Argumente und Ergebnis liegen als Datei in ``/dev/shm`` (ohne Platz dort: durch die Leitung). Jeder
gescheiterte Auftrag trägt seine eigene Ursache (``Fehlschlag``); mit ``neustart`` übernimmt ein neuer
Executor die übrigen. ``auftraege_je_worker`` statt ``max_tasks_per_child``: damit hängt der Executor
bis Python 3.13 (https://github.com/python/cpython/issues/115634). Das Ganze: docs/betrieb-lauf.md,
„Ein Worker stirbt oder hängt (Exit 8)“.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import itertools
import multiprocessing
import multiprocessing.connection
import os
import pickle
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import wait as warten
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import forkserver, resource_tracker
from typing import Any, Generic, TypeVar

K = TypeVar("K")

# So oft sieht das Warten nach ``halt`` (einem Signal) und den Zeitlimits.
SCHRITT = 0.2
# So lange darf ein neuer Worker brauchen, bis er bereit ist.
START_S = 120.0
# So oft versucht der Pool, Worker zu starten, wenn der forkserver eben starb.
FORKSERVER_VERSUCHE = 5
# So viele Aufträge höchstens unterwegs (Plätze der Tafel).
PLAETZE = 1024
# So viele Brüche in Folge, die kein Auftrag erklärt, gibt der Pool mit Neustart dieselben Aufträge neu.
OHNE_URSACHE = 3
# Exit-Code eines Workers, der einen Auftrag an der Speichergrenze nicht lesen konnte.
EXIT_SPEICHER = 75
# Stirbt der Hauptprozess (kill -9), räumt der resource_tracker die Semaphoren des Executors ab und
# warnt sonst darüber auf stderr – in die Mail von cron. Er bekommt die Warnfilter seines Elternprozesses.
STILL = "ignore:resource_tracker:UserWarning"
ORDNER = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


@dataclass(frozen=True)
class Fehlschlag:
    """Ein Auftrag ohne Ergebnis: ``zeitlimit`` überschritten, sein Worker ist ``tot``
    (``exitcode`` wie bei ``Process``: negativ das Signal), oder – ohne ``neustart`` – sein
    Worker wurde beendet, weil ein anderer scheiterte: ``mitgerissen``, mit ``ursache``
    (Schlüssel und Fehlschlag jenes Auftrags)."""

    art: str  # "zeitlimit", "tot" oder "mitgerissen"
    exitcode: int | None = None
    ursache: tuple[Any, Fehlschlag] | None = field(default=None, repr=False, compare=False)

    @property
    def signalname(self) -> str | None:
        """Das Signal, an dem der Worker starb (``SIGKILL``; ein unbekanntes als Nummer), sonst None."""
        if self.exitcode is None or self.exitcode >= 0:
            return None
        try:
            return signal.Signals(-self.exitcode).name
        except ValueError:
            return str(-self.exitcode)


@dataclass
class Auftrag(Generic[K]):
    """``funktion(*argumente)`` in einem Worker – oder, ohne Funktion, ``ergebnis`` sofort."""

    schluessel: K
    funktion: Callable[..., Any] | None = None
    argumente: tuple = ()
    ergebnis: Any = None


@dataclass(frozen=True)
class Ursache:
    """Die Ausnahme, an der die Vorbereitung im Worker scheiterte, als Daten: ihre Klasse, ihr Text
    und, bei einem ``ModuleNotFoundError``, das fehlende Modul."""

    art: str
    text: str
    modul: str | None = None

    @classmethod
    def aus(cls, fehler: Exception) -> Ursache:
        modul = fehler.name if isinstance(fehler, ModuleNotFoundError) else None
        return cls(type(fehler).__name__, str(fehler), modul)

    def __str__(self) -> str:
        return f"{self.art}: {self.text}"


class WorkerStartetNicht(Exception):
    """Die Vorbereitung eines Workers scheiterte; ``args[0]`` sagt warum, ``ursache`` ist die
    Ausnahme im Worker (None: er kam nicht so weit, etwa weil der forkserver nicht antwortet)."""

    def __init__(self, grund: str, ursache: Ursache | None = None) -> None:
        super().__init__(grund)
        self.ursache = ursache


class WorkerAusnahme(Exception):
    """Die Funktion eines Auftrags warf eine Ausnahme (ein Fehler im Code, keiner der Umgebung)."""


# --- im Worker ------------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1  # linux/prctl.h
_tafel: Any = None  # je Platz: Beginn (monotonic) und Prozessnummer des Workers
_bereit: tuple[str, Any] | Ursache | None = None
_grenze, _erledigt = 0, 0


def _mit_den_eltern_enden() -> None:
    """Stirbt der Elternprozess, schickt der Kern diesem Worker SIGKILL – auch mitten in einem
    Auftrag. Ohne ``prctl`` (kein Linux) nicht.

    Der Elternprozess eines Workers des forkservers ist der forkserver; er endet, sobald niemand
    mehr das Schreibende seiner Lebensleitung hält – das hält der Hauptprozess, aber multiprocessing
    gibt es auch jedem Worker mit. Der Worker schließt es darum (er startet keine Prozesse)."""
    ader = getattr(forkserver._forkserver, "_forkserver_alive_fd", None)
    if ader is not None:
        with contextlib.suppress(OSError):
            os.close(ader)
        forkserver._forkserver._forkserver_alive_fd = None
    eltern = os.getppid()
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != eltern:  # starb er vor dem Aufruf, käme das Signal nie
        os._exit(0)


def _anfang(tafel: Any, grenze: int, vorbereitung: Callable[..., Any] | None, argumente: tuple) -> None:
    """Der ``initializer`` jedes Workers; wie die Vorbereitung ausging, sagt ``_melden``."""
    global _tafel, _grenze, _bereit
    _mit_den_eltern_enden()
    os.setpgrp()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _tafel, _grenze = tafel, grenze
    try:
        _bereit = ("bereit", vorbereitung(*argumente) if vorbereitung is not None else None)
    except Exception as fehler:  # ein Paket fehlt o. ä.: dem Hauptprozess sagen, warum
        _bereit = Ursache.aus(fehler)


def _melden() -> tuple[str, Any] | Ursache | None:
    return _bereit


def _ablegen(pfad: str | None, inhalt: tuple) -> str | bytes:
    """``inhalt`` als Datei ``pfad``; ohne Pfad oder ohne Platz dort (``/dev/shm`` voll) als pickle-Bytes
    für die Leitung – ausgepackt erst im Auftrag, wie aus der Datei."""
    if pfad is not None:
        try:
            with open(pfad, "wb") as datei:
                pickle.dump(inhalt, datei, pickle.HIGHEST_PROTOCOL)
            return pfad
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(pfad)
    return pickle.dumps(inhalt, pickle.HIGHEST_PROTOCOL)


def _holen(abgelegt: str | bytes) -> Any:
    """Was ``_ablegen`` ablegte; die Datei ist danach fort."""
    if isinstance(abgelegt, bytes):
        return pickle.loads(abgelegt)
    with open(abgelegt, "rb") as datei:
        inhalt = pickle.load(datei)
    os.unlink(abgelegt)
    return inhalt


def _ausfuehren(platz: int, auftrag: str | bytes) -> Ursache | bytes | None:
    """Ein Auftrag im Worker: Beginn eintragen, ``(funktion, argumente)`` holen, ``(ok, ergebnis)``
    nach ``<datei>.aus`` schreiben – oder zurückgeben, wenn der Auftrag durch die Leitung kam oder
    die Datei keinen Platz hat. Hat er ``_grenze`` Aufträge hinter sich, geht er, bevor er den
    nächsten beginnt: der Pool gibt ihn einem neuen Executor."""
    global _erledigt
    if _grenze and _erledigt >= _grenze:
        os._exit(0)
    _erledigt += 1
    _tafel[2 * platz] = time.monotonic()
    _tafel[2 * platz + 1] = os.getpid()
    if isinstance(_bereit, Ursache):
        return _bereit
    try:
        funktion, argumente = _holen(auftrag)
    except MemoryError:
        os._exit(EXIT_SPEICHER)
    ablage = auftrag + ".aus" if isinstance(auftrag, str) else None
    del auftrag
    try:
        ergebnis = (True, funktion(*argumente))
    except Exception as fehler:
        ergebnis = (False, "".join(traceback.format_exception(fehler)))
    del argumente
    try:
        abgelegt = _ablegen(ablage, ergebnis)
    except MemoryError:
        os._exit(EXIT_SPEICHER)
    except Exception as fehler:  # das Ergebnis lässt sich nicht einpacken: ein Fehler im Code
        abgelegt = _ablegen(ablage, (False, "".join(traceback.format_exception(fehler))))
    return abgelegt if isinstance(abgelegt, bytes) else None


# --- im Hauptprozess ------------------------------------------------------------------------


def _tracker_still_starten() -> None:
    """Den resource_tracker starten, allein mit ``STILL`` (er nimmt die Warnfilter beim Start mit);
    der forkserver und die Worker bekommen ihn nicht."""
    sys.warnoptions.append(STILL)
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions.remove(STILL)


@dataclass
class _Unterwegs:
    auftrag: Auftrag
    fertig: bool = False
    ergebnis: Any = None
    platz: int = -1
    pfad: str = ""
    zukunft: Future | None = None


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
        self._kontext = multiprocessing.get_context(start)
        if start != "fork":  # mit fork hat der Executor keine benannten Semaphoren und keinen Tracker
            _tracker_still_starten()
        if vorladen:
            self._kontext.set_forkserver_preload(list(vorladen))
        self._vorbereitung, self._argumente = vorbereitung, argumente
        self._grenze = auftraege_je_worker if neustart else 0
        self._tafel = multiprocessing.RawArray("d", 2 * PLAETZE)
        self._nummern = itertools.count()
        self._ordner = ""
        self._executor: ProcessPoolExecutor | None = None
        self._gesehen: set[int] = set()  # Prozessnummern aller Worker bisher
        self._zeitlimits: set[int] = set()  # Worker, die der Pool nach ihrem Zeitlimit tötete
        self.vorbereitet: Any = None  # was die Vorbereitung des ersten Workers zurückgab
        self._kaputt: Fehlschlag | None = None  # ohne neustart: woran der Pool scheiterte
        self._ohne_dateien = False  # einmal kein Platz in ORDNER: Aufträge nur noch durch die Leitung
        self._ohne_ursache = 0  # Brüche in Folge, die keinem Auftrag zuzuordnen waren

    @property
    def neustarts(self) -> int:
        """Wie viele Worker nach den ersten kamen (Ersatz und Wechsel nach ``auftraege_je_worker``)."""
        return max(0, len(self._gesehen) - self.prozesse)

    def __enter__(self) -> Pool:
        self._ordner = tempfile.mkdtemp(prefix="auswahl-pool-", dir=ORDNER)
        try:
            self._starten()
            self.vorbereitet = self._vorbereitet
        except BaseException:
            self.__exit__(None)
            raise
        return self

    def __exit__(self, *_) -> None:
        self._beenden()
        shutil.rmtree(self._ordner, ignore_errors=True)

    def worker_pids(self) -> list[int]:
        """Die Prozessnummern der Worker (für Überwachung und Tests)."""
        return sorted(self._prozesse())

    def _prozesse(self) -> dict[int, multiprocessing.process.BaseProcess]:
        return self._executor._processes if self._executor is not None else {}

    def _starten(self) -> None:
        """Ein neuer Executor; erst zurück, wenn seine Worker vorbereitet sind (sonst
        ``WorkerStartetNicht``). Starb der forkserver eben (ein kill von außen), sieht
        multiprocessing es erst, wenn sein Ende eingetragen ist: dann kurz danach noch einmal."""
        for versuch in range(FORKSERVER_VERSUCHE):
            self._executor = ProcessPoolExecutor(
                self.prozesse,
                mp_context=self._kontext,
                initializer=_anfang,
                initargs=(self._tafel, self._grenze, self._vorbereitung, self._argumente),
            )
            try:
                proben = [self._executor.submit(_melden) for _ in range(self.prozesse)]
                antworten = [probe.result(timeout=START_S) for probe in proben]
                break
            except (EOFError, OSError) as fehler:
                self._beenden()
                if versuch == FORKSERVER_VERSUCHE - 1:
                    raise WorkerStartetNicht(
                        f"der forkserver antwortet nicht ({type(fehler).__name__})"
                    ) from None
                time.sleep(0.1)
            except BrokenProcessPool:
                codes = [p.exitcode for p in self._beenden()]
                raise WorkerStartetNicht(
                    f"beendet mit Exit-Code {max(codes, key=bool, default=None)}"
                ) from None
            except TimeoutError:
                self._beenden()
                raise WorkerStartetNicht(f"nach {START_S:g} s nicht bereit") from None
        for antwort in antworten:
            if isinstance(antwort, Ursache):
                self._beenden()
                raise WorkerStartetNicht(str(antwort), antwort)
        self._vorbereitet = antworten[0][1]
        self._gesehen.update(self._prozesse())

    def _beenden(self) -> list[multiprocessing.process.BaseProcess]:
        """Jeden Worker töten (ein wartender hält nichts, ein rechnender gehört niemandem mehr) und
        den Executor schließen; zurück kommen die beendeten Worker."""
        prozesse = list(self._prozesse().values())
        for prozess in prozesse:
            prozess.kill()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
        self._executor = None
        return prozesse

    def reihe(
        self,
        auftraege: Iterable[Auftrag[K]],
        fenster: int,
        *,
        halt: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[K, Any]]:
        """(Schlüssel, Ergebnis oder ``Fehlschlag``) je Auftrag, in der Reihenfolge der Aufträge.

        Höchstens ``fenster`` Aufträge sind unterwegs; ein neuer wird erst gezogen, wenn Platz ist.
        Gibt ``halt()`` True zurück, endet die Reihe sofort: Ergebnisse, die noch unterwegs waren,
        verfallen (der Aufrufer beendet den Pool dann mit einem Fehler).
        """
        if fenster > PLAETZE:
            raise ValueError(f"höchstens {PLAETZE} Aufträge unterwegs, nicht {fenster}")
        quelle = iter(auftraege)
        unterwegs: collections.deque[_Unterwegs] = collections.deque()
        while True:
            while len(unterwegs) < fenster and (auftrag := next(quelle, None)) is not None:
                u = _Unterwegs(auftrag)
                unterwegs.append(u)
                if auftrag.funktion is None:
                    u.fertig, u.ergebnis = True, auftrag.ergebnis
                elif self._kaputt is not None:
                    u.fertig, u.ergebnis = True, self._kaputt
                else:
                    self._abgeben(u)
            if not unterwegs or (halt is not None and halt()):
                return
            erster = unterwegs[0]
            if not erster.fertig:
                self._warten(erster, unterwegs)
                continue
            unterwegs.popleft()
            yield erster.auftrag.schluessel, _ergebnis(erster.ergebnis)

    def _abgeben(self, u: _Unterwegs) -> None:
        nummer = next(self._nummern)
        u.platz, u.pfad = nummer % PLAETZE, os.path.join(self._ordner, str(nummer))
        self._tafel[2 * u.platz : 2 * u.platz + 2] = [0.0, 0.0]
        auftrag = _ablegen(None if self._ohne_dateien else u.pfad, (u.auftrag.funktion, u.auftrag.argumente))
        self._ohne_dateien = isinstance(auftrag, bytes)  # kein Platz: nicht bei jedem Auftrag wieder füllen
        try:
            u.zukunft = self._executor.submit(_ausfuehren, u.platz, auftrag)
        except BrokenProcessPool:  # ein Worker starb, während keiner einen Auftrag hatte
            u.zukunft = Future()
            u.zukunft.set_exception(BrokenProcessPool())

    def _warten(self, erster: _Unterwegs, unterwegs: collections.deque[_Unterwegs]) -> None:
        """Bis der erste Auftrag fertig ist oder der Executor zerbricht (höchstens ``SCHRITT``);
        wer sein Zeitlimit riss, wird getötet – das zerbricht den Executor."""
        warten([erster.zukunft], timeout=SCHRITT)
        if _erfolgreich(erster.zukunft):
            self._abholen(erster)
            return
        if erster.zukunft.done():
            if not self._eigener_fehler(erster):
                self._zerbrochen(unterwegs)
            return
        if self.zeitlimit is not None:
            jetzt = time.monotonic()
            for u in unterwegs:
                if not u.fertig and not u.zukunft.done() and self._ueber_der_frist(u, jetzt):
                    self._zeitlimits.add(pid := self._pid(u))
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)

    def _ueber_der_frist(self, u: _Unterwegs, jetzt: float) -> bool:
        beginn = self._tafel[2 * u.platz]
        return self.zeitlimit is not None and self._pid(u) != 0 and jetzt >= beginn + self.zeitlimit

    def _pid(self, u: _Unterwegs) -> int:
        return int(self._tafel[2 * u.platz + 1])

    def _abholen(self, u: _Unterwegs) -> None:
        antwort = u.zukunft.result()
        if isinstance(antwort, Ursache):  # ein neuer Worker startet nicht
            raise WorkerStartetNicht(str(antwort), antwort)
        self._gesehen.add(self._pid(u))
        self._ohne_ursache = 0
        self._ohne_dateien |= isinstance(antwort, bytes)  # auch der Worker fand keinen Platz
        ok, wert = _holen(antwort if isinstance(antwort, bytes) else u.pfad + ".aus")
        u.fertig, u.ergebnis = True, wert if ok else WorkerAusnahme(wert)

    def _eigener_fehler(self, u: _Unterwegs) -> bool:
        """Scheiterte der Auftrag für sich (der Executor konnte sein Ergebnis nicht zurückschicken),
        nicht der Executor? Dann trägt er es selbst: zu wenig Speicher wie an der Speichergrenze, sonst
        ein Fehler im Code."""
        if not u.zukunft.done() or u.zukunft.cancelled():  # exception() wartete oder würfe selbst
            return False
        fehler = u.zukunft.exception()
        if fehler is None or isinstance(fehler, BrokenProcessPool):
            return False
        u.fertig = True
        if isinstance(fehler, MemoryError):
            u.ergebnis = Fehlschlag("tot", EXIT_SPEICHER)
        else:
            u.ergebnis = WorkerAusnahme("".join(traceback.format_exception(fehler)))
        return True

    def _zerbrochen(self, unterwegs: collections.deque[_Unterwegs]) -> None:
        """Ein Worker starb (oder wurde nach seinem Zeitlimit getötet): jeder andere wird beendet.
        Jeder offene Auftrag, dessen Worker schon tot war, trägt seine eigene Ursache – über seiner
        Frist ``zeitlimit``, sonst ``tot`` –; mit ``neustart`` übernimmt ein neuer Executor die
        übrigen, ohne sind sie ``mitgerissen`` mit der Ursache des ersten gescheiterten."""
        # Tot ist, wer schon endete, und nicht mit 0: mit 0 geht ein Worker, dem der Executor nach
        # dem Bruch sagt, er solle aufhören – er ist keine Ursache. Die Sentinel allein reicht nicht:
        # hat der Executor den Exit-Code schon gelesen, ist sie leer, bis der forkserver sie schließt.
        # Ohne sie reicht der Exit-Code nicht: holt der Executor ein Kind von fork eben ab, ist er
        # kurz None. Fest steht er nach dem Beenden.
        schon_tot = [
            p
            for p in self._prozesse().values()
            if multiprocessing.connection.wait([p.sentinel], 0) or p.exitcode is not None
        ]
        self._beenden()
        tote = {p.pid: p.exitcode for p in schon_tot if p.exitcode != 0}
        jetzt = time.monotonic()
        offen, gescheitert = [u for u in unterwegs if not u.fertig], []
        for u in offen:
            if _erfolgreich(u.zukunft):
                self._abholen(u)
                continue
            if self._eigener_fehler(u):
                continue
            pid = self._pid(u)
            if pid in tote and pid not in self._zeitlimits:
                u.fertig, u.ergebnis = True, Fehlschlag("tot", tote[pid])
            elif self._ueber_der_frist(u, jetzt):
                u.fertig, u.ergebnis = True, Fehlschlag("zeitlimit")
            else:
                continue
            self._gesehen.add(pid)
            gescheitert.append(u)
        offen = [u for u in offen if not u.fertig]
        for u in [*gescheitert, *offen]:  # was Hauptprozess und Worker für sie ablegten
            for pfad in (u.pfad, u.pfad + ".aus"):
                with contextlib.suppress(OSError):
                    os.unlink(pfad)
        self._ohne_ursache = 0 if gescheitert else self._ohne_ursache + 1
        if not gescheitert and (not self.neustart or self._ohne_ursache >= OHNE_URSACHE):
            # Kein Auftrag erklärt den Tod (der Worker starb ohne oder beim Empfang eines): ihn trägt
            # der erste, der nie begann, sonst der nächste an der Reihe – mit Neustart erst beim
            # OHNE_URSACHE-ten Mal in Folge.
            schuld = next((u for u in offen if self._pid(u) == 0), offen[0])
            schuld.fertig, schuld.ergebnis = True, Fehlschlag("tot", next(iter(tote.values()), None))
            gescheitert, offen = [schuld], [u for u in offen if u is not schuld]
            self._ohne_ursache = 0
        if self.neustart:
            self._starten()
            for u in offen:
                self._abgeben(u)
            return
        erster = gescheitert[0]
        self._kaputt = Fehlschlag("mitgerissen", ursache=(erster.auftrag.schluessel, erster.ergebnis))
        for u in offen:
            u.fertig, u.ergebnis = True, self._kaputt


def _erfolgreich(zukunft: Future) -> bool:
    """Fertig, ohne Ausnahme – und nicht abgesagt: ``shutdown(cancel_futures=True)`` sagt ab, was der
    Executor noch nicht an einen Worker gab, und ``exception()`` würfe dann selbst."""
    return zukunft.done() and not zukunft.cancelled() and zukunft.exception() is None


def _ergebnis(wert: Any) -> Any:
    """Das Ergebnis oder ein ``Fehlschlag`` – die Ausnahme der Aufgabe selbst geht weiter."""
    if isinstance(wert, WorkerAusnahme):
        raise wert
    return wert
