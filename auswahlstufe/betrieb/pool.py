"""Worker-Prozesse für Auswahl und Extraktion: ein Pool, je Worker eine eigene Leitung.

Beide Wege geben Aufträge ab und brauchen die Ergebnisse **in der Reihenfolge der Aufträge**
(``reihe``: geschrieben wird in Lesereihenfolge), mit höchstens ``fenster`` Aufträgen unterwegs –
der Speicher bleibt flach. Dazu:

* **Zeitlimit je Auftrag**, gezählt ab seinem Beginn im Worker: wer es reißt, wird getötet; sein
  Auftrag bekommt einen ``Fehlschlag("zeitlimit")``. Je Worker sind höchstens ``TIEFE`` Aufträge
  abgegeben – einer läuft, der nächste liegt schon in seiner Leitung.
* **Ein toter Worker** (OOM-Killer, ``kill -9``, Absturz in C) gibt seinem Auftrag einen
  ``Fehlschlag("tot", exitcode)``. Jeder Worker hat seine eigene Leitung: was einer mitten im
  Senden hinterlässt, stört keinen anderen, und wer starb, steht fest.
* ``neustart`` (die Extraktion): ein getöteter oder toter Worker wird ersetzt, die anderen
  Aufträge laufen weiter; ein Kandidat bekommt seinen Fehler. Ohne ``neustart`` (die Auswahl)
  beendet der Pool dann jeden Worker, und jeder offene Auftrag ist ein Fehlschlag – der Lauf
  endet mit Exit 8. Jeder trägt dabei seine eigene Ursache: ``zeitlimit`` oder ``tot``, wenn es
  für ihn selbst so ist (gleich, welchen Worker der Pool zuerst bemerkte), sonst
  ``mitgerissen`` mit der ``ursache`` – dem Auftrag, an dem der Pool scheiterte.
* ``auftraege_je_worker``: ein Worker geht nach so vielen Aufträgen, ein neuer kommt (was
  Bibliotheken liegen lassen, wächst nicht über einen Lauf).
* ``vorbereitung(*argumente)`` am Anfang jedes Workers (Extraktion: Extraktoren laden, Netz
  sperren, Speichergrenze); was sie zurückgibt, steht danach in ``vorbereitet`` (der Wert des
  ersten Workers); scheitert sie, sagt ``WorkerStartetNicht`` warum.
* Jeder Worker steht in einer **eigenen Prozessgruppe** und überhört SIGINT/SIGTERM: Strg-C und ein
  ``kill`` an die Gruppe treffen nur den Hauptprozess, er entscheidet, wann Schluss ist. Stirbt
  er, enden die Worker: ein wartender sieht seine Leitung zu, einem rechnenden schickt der Kern
  SIGKILL (``PR_SET_PDEATHSIG`` auf Linux; bei ``forkserver`` endet der forkserver mit dem
  Hauptprozess).
* ``Auftrag.schranke``: nach ihr zieht ``reihe`` keinen neuen Auftrag, bis sie zurück ist – alles
  davor ist dann fertig (ein langer Lauf gibt dort seine Sperre her).

``fork`` (Voreinstellung) startet die Worker der Auswahl sofort und billig, vor den
Datenbankverbindungen; die Extraktion nimmt ``forkserver`` mit ``vorladen``: ein neuer Worker erbt
nichts vom Hauptprozess und hat die Extraktoren schon geladen.

Warum ein eigener Pool und nicht ``pebble``: pebble teilt eine Leitung unter allen Workern und
sperrt sie beim Abholen eines Auftrags für Lesen und Schreiben zugleich; mit den großen Aufträgen
der Auswahl (ein Stapel: 200 Items samt Texten) wartet ein fertiger Worker auf den, der gerade
abholt – der Backfill über 20.000 Items braucht damit 1,7× so lange (docs/messungen.md, „Pool der
Worker: pebble gegen eigene Leitungen“).
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing import forkserver
from multiprocessing.reduction import ForkingPickler
from typing import Any, Generic, TypeVar

K = TypeVar("K")

# So oft sieht das Warten nach ``halt`` (einem Signal).
SCHRITT = 0.2
# So lange darf ein neuer Worker brauchen, bis er bereit ist.
START_S = 120.0
# So oft versucht der Pool, einen Worker zu starten, wenn der forkserver eben starb.
FORKSERVER_VERSUCHE = 5
BEREIT = "bereit"
# Exit-Code eines Workers, der einen Auftrag an der Speichergrenze nicht lesen konnte.
EXIT_SPEICHER = 75


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
    """``funktion(*argumente)`` in einem Worker – oder, ohne Funktion, ``ergebnis`` sofort.

    ``schranke``: nach diesem Auftrag zieht ``reihe`` keinen neuen, bis er zurück ist – alles davor
    ist dann fertig und beim Aufrufer."""

    schluessel: K
    funktion: Callable[..., Any] | None = None
    argumente: tuple = ()
    ergebnis: Any = None
    schranke: bool = False


@dataclass(frozen=True)
class Ursache:
    """Die Ausnahme, an der die Vorbereitung im Worker scheiterte, als Daten (sie kommt über die
    Leitung): ihre Klasse, ihr Text und, bei einem ``ModuleNotFoundError``, das fehlende Modul."""

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


def _mit_den_eltern_enden() -> None:
    """Stirbt der Elternprozess, schickt der Kern diesem Worker SIGKILL – auch mitten in einem
    Auftrag, in dem er seine Leitung nicht liest. Ohne ``prctl`` (kein Linux) bleibt das Ende der
    Leitung.

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


def _worker(
    verbindung, vorbereitung: Callable[..., None] | None, argumente: tuple, fremde: Sequence[int]
) -> None:
    """Schleife eines Workers: (funktion, argumente) rein, (ok, ergebnis) raus; None beendet.

    ``fremde``: die Enden des Hauptprozesses, die ``fork`` mitgab – zu, damit der Worker das Ende
    des Hauptprozesses an seiner Leitung sieht (``recv`` meldet EOF erst, wenn keiner sie mehr hält)."""
    for fd in fremde:
        with contextlib.suppress(OSError):
            os.close(fd)
    _mit_den_eltern_enden()
    os.setpgrp()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        wert = vorbereitung(*argumente) if vorbereitung is not None else None
    except Exception as fehler:  # ein Paket fehlt o. ä.: dem Hauptprozess sagen, warum
        verbindung.send(Ursache.aus(fehler))
        return
    verbindung.send((BEREIT, wert))
    while True:
        try:
            auftrag = verbindung.recv()
        except (EOFError, OSError):  # der Hauptprozess ist fort
            return
        except MemoryError:  # halb gelesen: der Rest steckt in der Leitung
            os._exit(EXIT_SPEICHER)
        if auftrag is None:
            return
        funktion, args = auftrag
        del auftrag
        try:
            ergebnis = (True, funktion(*args))
        except Exception as fehler:
            ergebnis = (False, "".join(traceback.format_exception(fehler)))
        del args
        try:
            verbindung.send(ergebnis)
        except (BrokenPipeError, ConnectionResetError):
            return


# --- im Hauptprozess ------------------------------------------------------------------------


@dataclass
class _Unterwegs:
    auftrag: Auftrag
    fertig: bool = False
    ergebnis: Any = None


# So viele Aufträge hat ein Worker höchstens: einer läuft, einer liegt schon in seiner Leitung –
# der Worker wartet nicht, während der Hauptprozess ein Ergebnis abholt und den nächsten schickt.
TIEFE = 2
# Das Wort an den Worker, zu gehen (nach seinen Aufträgen).
_GEHEN = ForkingPickler.dumps(None)


@dataclass
class _Platz:
    """Ein Worker, seine Aufträge (der erste läuft) und sein **Sender**: ein Faden, der ihm der Reihe
    nach schickt, was im Postfach liegt. Ein Auftrag ist größer als der Puffer der Leitung, und ein
    hängender Worker liest ihn nie – im Hauptprozess bliebe das Senden stecken, statt das Zeitlimit
    durchzusetzen; und schickte der Hauptprozess selbst, während der Worker ein großes Ergebnis
    schickt, warteten beide aufeinander."""

    prozess: multiprocessing.process.BaseProcess
    verbindung: multiprocessing.connection.Connection
    auftraege: collections.deque[_Unterwegs] = field(default_factory=collections.deque)
    frist: float = 0.0  # für den ersten Auftrag
    erledigt: int = 0
    postfach: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)
    sender: threading.Thread | None = None

    def senden_lassen(self) -> None:
        """Den Sender starten – erst, wenn alle Worker da sind: ``fork`` kopiert keinen Faden mit."""
        self.sender = threading.Thread(target=_senden, args=(self.verbindung, self.postfach), daemon=True)
        self.sender.start()

    def abgeben(self, u: _Unterwegs, frist: float) -> None:
        if not self.auftraege:
            self.frist = frist
        self.auftraege.append(u)
        self.postfach.put(ForkingPickler.dumps((u.auftrag.funktion, u.auftrag.argumente)))

    def beenden(self, *, hart: bool) -> None:
        """Der Worker geht: getötet, wenn ``hart`` oder er noch Aufträge hat; sonst auf Bitte."""
        if hart or self.auftraege:
            _toeten(self.prozess)
        else:
            self.postfach.put(_GEHEN)
        self.postfach.put(None)  # der Sender endet; sein Senden an einen toten Worker scheitert
        self.prozess.join(timeout=5)
        _toeten(self.prozess)
        if self.sender is not None:
            self.sender.join(timeout=5)
        self.verbindung.close()


def _senden(verbindung: multiprocessing.connection.Connection, postfach: queue.SimpleQueue) -> None:
    """Der Sender eines Workers: schickt, was kommt, bis None; ist der Worker tot, nichts mehr (das
    sieht ``_warten`` an seinem Prozess)."""
    while (daten := postfach.get()) is not None:
        try:
            verbindung.send_bytes(daten)
        except OSError:
            return


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
        self._start = start
        self._kontext = multiprocessing.get_context(start)
        if vorladen:
            self._kontext.set_forkserver_preload(list(vorladen))
        self._vorbereitung, self._argumente = vorbereitung, argumente
        self._auftraege_je_worker = auftraege_je_worker
        self._plaetze: list[_Platz] = []
        self.vorbereitet: Any = None  # was die Vorbereitung des ersten Workers zurückgab
        self._kaputt: Fehlschlag | None = None  # ohne neustart: woran der Pool scheiterte

    def __enter__(self) -> Pool:
        try:
            for _ in range(self.prozesse):
                self._plaetze.append(self._starten())
            for platz in self._plaetze:
                platz.senden_lassen()
        except BaseException:
            self._beenden(hart=True)
            raise
        return self

    def __exit__(self, typ, *_) -> None:
        self._beenden(hart=typ is not None)

    def worker_pids(self) -> list[int]:
        """Die Prozessnummern der Worker (für Überwachung und Tests)."""
        return [platz.prozess.pid for platz in self._plaetze]

    def _starten(self) -> _Platz:
        """Ein neuer Worker; erst zurück, wenn er vorbereitet ist (sonst ``WorkerStartetNicht``)."""
        hier, dort = self._kontext.Pipe()
        # Die Enden des Hauptprozesses – dieses und die der anderen Worker –, die ``fork`` mitgibt.
        fremde = [hier.fileno()] + [p.verbindung.fileno() for p in self._plaetze if not p.verbindung.closed]
        if self._start != "fork":
            fremde = []
        prozess = self._kontext.Process(
            target=_worker,
            args=(dort, self._vorbereitung, self._argumente, fremde),
            daemon=True,
            name="worker",
        )
        try:
            self._prozess_starten(prozess)
        except (EOFError, OSError) as fehler:
            hier.close()
            raise WorkerStartetNicht(f"der forkserver antwortet nicht ({type(fehler).__name__})") from None
        finally:
            dort.close()
        grund, ursache = f"nach {START_S:g} s nicht bereit", None
        if hier.poll(START_S):
            try:
                antwort = hier.recv()
                grund = str(antwort)
                if isinstance(antwort, Ursache):
                    ursache = antwort
                if isinstance(antwort, tuple) and antwort[0] == BEREIT:
                    grund = None
                    if not self._plaetze:
                        self.vorbereitet = antwort[1]
            except (EOFError, OSError):
                prozess.join(timeout=5)
                grund = f"beendet mit Exit-Code {prozess.exitcode}"
        if grund is not None:
            _toeten(prozess)
            hier.close()
            raise WorkerStartetNicht(grund, ursache)
        return _Platz(prozess, hier)

    @staticmethod
    def _prozess_starten(prozess: multiprocessing.process.BaseProcess) -> None:
        """``start``; starb der forkserver eben (ein kill von außen), sieht multiprocessing es erst,
        wenn sein Ende eingetragen ist – bis dahin scheitert das Gespräch mit ihm. Dann noch
        einmal, kurz danach: dann startet es einen neuen."""
        for versuch in range(FORKSERVER_VERSUCHE):
            try:
                prozess.start()
                return
            except (EOFError, OSError):
                if versuch == FORKSERVER_VERSUCHE - 1:
                    raise
                time.sleep(0.1)

    def _beenden(self, *, hart: bool) -> None:
        for platz in self._plaetze:
            platz.beenden(hart=hart)
        self._plaetze = []

    def _ersetzen(self, platz: _Platz, *, hart: bool) -> None:
        """Den Worker dieses Platzes beenden und einen neuen starten."""
        index = self._plaetze.index(platz)
        platz.beenden(hart=hart)
        self._plaetze[index] = self._starten()
        self._plaetze[index].senden_lassen()
        self.neustarts += 1

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
        quelle = iter(auftraege)
        unterwegs: collections.deque[_Unterwegs] = collections.deque()
        wartend: collections.deque[_Unterwegs] = collections.deque()  # noch keinem Worker gegeben
        erschoepft = False
        while True:
            while (
                not erschoepft and len(unterwegs) < fenster and not any(u.auftrag.schranke for u in unterwegs)
            ):
                auftrag = next(quelle, None)
                if auftrag is None:
                    erschoepft = True
                    break
                u = _Unterwegs(auftrag)
                unterwegs.append(u)
                if auftrag.funktion is None:
                    u.fertig, u.ergebnis = True, auftrag.ergebnis
                elif self._kaputt is not None:
                    u.fertig, u.ergebnis = True, self._kaputt
                else:
                    wartend.append(u)
            self._abgeben(wartend)
            if not unterwegs or (halt is not None and halt()):
                return
            if unterwegs[0].fertig:
                erster = unterwegs.popleft()
                yield erster.auftrag.schluessel, _ergebnis(erster.ergebnis)
                continue
            self._warten(wartend)

    def _abgeben(self, wartend: collections.deque[_Unterwegs]) -> None:
        """Wartende Aufträge an Worker mit Platz, zuerst an die freien; das Zeitlimit des ersten
        zählt ab hier. Ein Worker, der nach ``auftraege_je_worker`` geht, bekommt nicht mehr."""
        for tiefe in range(TIEFE):
            for platz in self._plaetze:
                if not wartend:
                    return
                voll = (
                    self._auftraege_je_worker
                    and platz.erledigt + len(platz.auftraege) >= self._auftraege_je_worker
                )
                if len(platz.auftraege) == tiefe and not voll:
                    platz.abgeben(wartend.popleft(), self._frist())

    def _frist(self) -> float:
        return time.monotonic() + self.zeitlimit if self.zeitlimit else float("inf")

    def _warten(self, wartend: collections.deque[_Unterwegs]) -> None:
        """Bis ein Worker fertig ist, stirbt oder sein Zeitlimit reißt (höchstens ``SCHRITT``)."""
        belegt = [p for p in self._plaetze if p.auftraege]
        if not belegt:
            return
        frist = min(p.frist for p in belegt)
        bereit = multiprocessing.connection.wait(
            [p.verbindung for p in belegt] + [p.prozess.sentinel for p in belegt],
            timeout=max(0.0, min(SCHRITT, frist - time.monotonic())),
        )
        jetzt = time.monotonic()
        for platz in belegt:
            if not platz.auftraege:  # ein anderer Worker starb eben, der Pool ist kaputt
                continue
            if platz.verbindung in bereit or platz.prozess.sentinel in bereit:
                try:
                    ok, wert = platz.verbindung.recv()
                except (EOFError, OSError):
                    platz.prozess.join(timeout=5)
                    self._gescheitert(platz, Fehlschlag("tot", platz.prozess.exitcode), wartend)
                    continue
                u = platz.auftraege.popleft()
                u.fertig, u.ergebnis = True, wert if ok else WorkerAusnahme(wert)
                platz.frist = self._frist()  # der nächste in seiner Leitung beginnt jetzt
                platz.erledigt += 1
                if self._auftraege_je_worker and platz.erledigt >= self._auftraege_je_worker:
                    self._ersetzen(platz, hart=False)
            elif jetzt >= platz.frist:
                self._gescheitert(platz, Fehlschlag("zeitlimit"), wartend)

    def _gescheitert(
        self, platz: _Platz, fehlschlag: Fehlschlag, wartend: collections.deque[_Unterwegs]
    ) -> None:
        """Der laufende Auftrag dieses Platzes scheiterte an seinem Worker. Mit ``neustart`` kommt ein
        neuer Worker, und was in der Leitung des alten lag, wartet wieder; ohne ist der Pool kaputt:
        jeder Worker wird beendet, jeder offene Auftrag ist ein Fehlschlag mit seiner eigenen
        Ursache (``_mitgerissen``)."""
        u = platz.auftraege.popleft()
        u.fertig, u.ergebnis = True, fehlschlag
        if self.neustart:
            wartend.extendleft(reversed(platz.auftraege))
            platz.auftraege.clear()
            self._ersetzen(platz, hart=True)
            return
        self._kaputt = Fehlschlag("mitgerissen", ursache=(u.auftrag.schluessel, fehlschlag))
        jetzt = time.monotonic()
        for anderer in self._plaetze:
            if anderer is not platz and anderer.auftraege:  # sein laufender Auftrag
                laufend = anderer.auftraege.popleft()
                laufend.fertig, laufend.ergebnis = True, self._mitgerissen(anderer, jetzt)
            _toeten(anderer.prozess)
            for w in anderer.auftraege:
                w.fertig, w.ergebnis = True, self._kaputt
            anderer.auftraege.clear()
        while wartend:
            w = wartend.popleft()
            w.fertig, w.ergebnis = True, self._kaputt

    def _mitgerissen(self, platz: _Platz, jetzt: float) -> Fehlschlag:
        """Was dem laufenden Auftrag eines Workers geschah, den der Pool gleich beendet: war der
        Worker schon tot oder über seinem Zeitlimit, ist das seine Ursache – nicht der Worker, den
        der Pool zufällig zuerst bemerkte."""
        if not platz.prozess.is_alive():
            return Fehlschlag("tot", platz.prozess.exitcode)
        if jetzt >= platz.frist:
            return Fehlschlag("zeitlimit")
        return self._kaputt


def _ergebnis(wert: Any) -> Any:
    """Das Ergebnis oder ein ``Fehlschlag`` – die Ausnahme der Aufgabe selbst geht weiter."""
    if isinstance(wert, WorkerAusnahme):
        raise wert
    return wert


def _toeten(prozess: multiprocessing.process.BaseProcess) -> None:
    if prozess.is_alive():
        prozess.kill()
    prozess.join(timeout=5)
