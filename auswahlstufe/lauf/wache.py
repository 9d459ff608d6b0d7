"""Die Verbindungen eines Laufs wach halten und vor jedem Schreiben die Sperre prüfen.

Ein langer Lauf lässt Verbindungen lange ohne Anfrage: die Schreibverbindung, die
die Sperre hält, während die Extraktion rechnet (Minuten bis Stunden), Lese- und
Schreibverbindung, während die Worker an einem Stapel sitzen. Ein
``idle_session_timeout`` des Servers oder ein NAT, das die TCP-Verbindung vergisst,
beendet sie still – und mit der Schreibverbindung die Sperre: ein zweiter Lauf
derselben coder_version könnte starten.

* TCP-Keepalives (``db.verbinden``) halten NAT-Einträge und merken eine tote
  Gegenstelle.
* ``Wache`` ist ein Thread: jeder angemeldeten Verbindung, die länger als ihr
  Abstand nichts tat, schickt er ``select 1``. Der Abstand ist ein Drittel des
  ``idle_session_timeout``, das der Server der Sitzung gibt (Rolle, Datenbank,
  postgresql.conf), höchstens ``ABSTAND`` Sekunden.
* Wer eine angemeldete Verbindung benutzt, tut es in ``with benutzt(conn)``:
  solange pingt die Wache sie nicht – kein ``select 1`` mitten in einem COPY.
* ``sperre_pruefen()`` vor jedem Schreibstapel (Auswahl wie Extraktion): hält die
  Schreibverbindung ihre Sperre noch? Ist sie weg und der Server antwortet einer
  neuen Verbindung, ist die Sperre verloren: ``LaufGesperrt`` (Exit 5), der Stapel
  ist nicht geschrieben (er ist eine Transaktion). Antwortet der Server nicht,
  bleibt es der Verbindungsfehler (Exit 3).

Die Extraktion (``extraktion.stufe``) meldet ihre Verbindungen über die
Modulfunktionen bei der Wache des laufenden Laufs an; ohne Wache (``--trocken``,
Tests, die sie direkt rufen) tun sie nichts.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg

import db
from auswahlstufe.fehler import LaufGesperrt
from auswahlstufe.lauf import sperren

ABSTAND = 60.0  # Sekunden höchstens zwischen zwei Lebenszeichen einer ruhenden Verbindung
KLEINSTER_ABSTAND = 0.2
SQL_LEBENSZEICHEN = "select 1"
# idle_session_timeout der Sitzung in Sekunden (0 = aus)
SQL_RUHEGRENZE = "select extract(epoch from current_setting('idle_session_timeout')::interval)::float8"

_GRUENDE = {
    "57P05": "der Server beendete sie nach seinem idle_session_timeout",
    "57P01": "der Server beendete sie (pg_terminate_backend oder ein Neustart)",
}


@dataclass
class _Eintrag:
    conn: psycopg.Connection
    sperre: threading.RLock = field(default_factory=threading.RLock)
    zuletzt: float = field(default_factory=time.monotonic)
    tot: bool = False
    fehler: psycopg.Error | None = None  # woran ein Lebenszeichen scheiterte: der wahre Grund


class Wache:
    """Hält die angemeldeten Verbindungen wach; prüft die Sperre der Schreibverbindung."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.abstand = ABSTAND
        self._eintraege: dict[int, _Eintrag] = {}
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self._sperrverbindung: psycopg.Connection | None = None
        self._sperren: list[str] = []

    def __enter__(self) -> Wache:
        global _aktiv
        _aktiv = self
        return self

    def __exit__(self, *_) -> None:
        global _aktiv
        _aktiv = None
        self._halt.set()
        if self._thread is not None:
            self._thread.join()

    def anmelden(self, conn: psycopg.Connection) -> None:
        if self._thread is None:
            # Der Abstand aus der ersten Verbindung: alle gehören derselben Rolle und Datenbank.
            grenze = conn.execute(SQL_RUHEGRENZE).fetchone()[0]
            self.abstand = max(KLEINSTER_ABSTAND, min(ABSTAND, grenze / 3)) if grenze else ABSTAND
            self._thread = threading.Thread(target=self._wachen, name="wache", daemon=True)
            self._thread.start()
        self._eintraege[id(conn)] = _Eintrag(conn)

    @contextlib.contextmanager
    def angemeldet(self, conn: psycopg.Connection) -> Iterator[psycopg.Connection]:
        self.anmelden(conn)
        try:
            yield conn
        finally:
            self.abmelden(conn)

    def abmelden(self, conn: psycopg.Connection) -> None:
        eintrag = self._eintraege.pop(id(conn), None)
        if eintrag is not None:
            with eintrag.sperre:  # ein laufendes Lebenszeichen abwarten
                pass

    @contextlib.contextmanager
    def benutzt(self, conn: psycopg.Connection) -> Iterator[None]:
        eintrag = self._eintraege.get(id(conn))
        if eintrag is None:
            yield
            return
        with eintrag.sperre:
            try:
                yield
            finally:
                eintrag.zuletzt = time.monotonic()

    def sperre_setzen(self, conn: psycopg.Connection, namen: list[str]) -> None:
        """Diese Verbindung hält die Sperren ``namen``; ``sperre_pruefen`` prüft sie."""
        self._sperrverbindung, self._sperren = conn, namen

    def sperre_pruefen(self) -> None:
        """Vor dem Schreiben: hält die Schreibverbindung ihre Sperre noch? Sonst Exit 5 (oder 3)."""
        conn = self._sperrverbindung
        if conn is None:
            return
        with self.benutzt(conn):
            try:
                gehalten = sperren.gehalten(conn, self._sperren)
            except psycopg.OperationalError as fehler:
                self.verloren(fehler, conn)
        if not gehalten:
            raise LaufGesperrt(
                "Die Schreibverbindung hält die Sperre des Laufs nicht mehr – ein anderer Lauf kann sie "
                "inzwischen haben. Dieser Lauf hört auf, bevor er weiter schreibt; was geschrieben ist, "
                "bleibt (ganze Stapel), der nächste Lauf macht den Rest."
            )

    def verloren(self, fehler: psycopg.OperationalError, conn: psycopg.Connection) -> None:
        """Ein Fehler auf der Schreibverbindung ``conn``. Ist sie weg und antwortet der Server einer
        neuen Verbindung, ging nur die Sperre verloren: ``LaufGesperrt`` (Exit 5). Sonst wirft es
        ``fehler`` selbst (Server weg: Exit 3; die Verbindung lebt: etwa die Platte voll)."""
        if not (conn.broken or conn.closed):
            raise fehler
        try:
            with db.verbinden(self.url, "pruefen", autocommit=True):
                pass
        except (db.Fehler, psycopg.Error):
            raise fehler from None
        # Schickte die Wache ihr zuletzt ein Lebenszeichen, sah sie den Grund (der Server sagt ihn
        # nur einmal); die Anfrage danach sieht nur noch eine geschlossene Verbindung.
        eintrag = self._eintraege.get(id(conn))
        erster = eintrag.fehler if eintrag is not None and eintrag.fehler is not None else fehler
        grund = _GRUENDE.get(erster.sqlstate or "", "die Verbindung riss ab")
        raise LaufGesperrt(
            f"Die Verbindung, die die Sperre des Laufs hielt, ist weg: {grund}. Ein anderer Lauf kann "
            "die Sperre inzwischen haben; dieser hört auf, bevor er weiter schreibt. Was geschrieben ist, "
            "bleibt (ganze Stapel), der nächste Lauf macht den Rest."
        ) from None

    def _wachen(self) -> None:
        while not self._halt.wait(min(self.abstand / 2, 1.0)):
            for eintrag in list(self._eintraege.values()):
                if eintrag.tot or time.monotonic() - eintrag.zuletzt < self.abstand:
                    continue
                if not eintrag.sperre.acquire(blocking=False):
                    continue  # in Gebrauch: wach genug
                try:
                    conn = eintrag.conn
                    if not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                        conn.execute(SQL_LEBENSZEICHEN)
                except psycopg.Error as fehler:
                    eintrag.tot, eintrag.fehler = True, fehler  # das merkt, wer sie als Nächstes benutzt
                finally:
                    eintrag.zuletzt = time.monotonic()
                    eintrag.sperre.release()


_aktiv: Wache | None = None


def benutzt(conn: psycopg.Connection):
    """``with benutzt(conn):`` – die Wache des laufenden Laufs pingt ``conn`` solange nicht."""
    return _aktiv.benutzt(conn) if _aktiv is not None else contextlib.nullcontext()


@contextlib.contextmanager
def angemeldet(conn: psycopg.Connection) -> Iterator[psycopg.Connection]:
    """``conn`` für die Dauer des Blocks bei der Wache des laufenden Laufs anmelden."""
    if _aktiv is None:
        yield conn
        return
    with _aktiv.angemeldet(conn):
        yield conn


def sperre_pruefen() -> None:
    """Vor dem Schreiben: hält der laufende Lauf seine Sperre noch? (Ohne Wache: nichts.)"""
    if _aktiv is not None:
        _aktiv.sperre_pruefen()


def durchlaufen(conn: psycopg.Connection, seiten: Iterator) -> Iterator:
    """Die Seiten eines Lesers, jede unter ``benutzt(conn)`` geholt."""
    while True:
        with benutzt(conn):
            try:
                seite = next(seiten)
            except StopIteration:
                return
        yield seite
