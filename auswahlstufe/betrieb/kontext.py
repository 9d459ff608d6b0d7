"""Der Kontext eines Laufs: was er besitzt, an einer Stelle, ausdrücklich weitergereicht.

Leseverbindung, Schreibverbindung (hält die Sperren, über sie geht alles Geschriebene;
``--trocken`` hat keine), Abbruch und Worker: docs/aufbau.md, „Ein Lauf“.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager as ContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

import psycopg

import db
from auswahlstufe.betrieb import laeufe, sperre
from auswahlstufe.betrieb.abbruch import Abbruch
from auswahlstufe.betrieb.pool import Pool

T = TypeVar("T")


@dataclass
class Laufkontext:
    url: str
    abbruch: Abbruch
    leser: psycopg.Connection
    schreiber: psycopg.Connection | None  # hält die Sperre; None bei --trocken
    auswahlpool: Pool | None = None
    lauf_id: int | None = None  # der Eintrag in auswahl_laeufe, für den gerade gearbeitet wird
    _pools: dict[str, object] = field(default_factory=dict)
    _aufraeumen: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    @property
    def trocken(self) -> bool:
        return self.schreiber is None

    @property
    def abgebrochen(self) -> bool:
        """Kam ein Signal? Dann hört der Lauf nach dem laufenden Stapel (der laufenden Seite) auf."""
        return self.abbruch.gesetzt

    @contextlib.contextmanager
    def schreiben(self) -> Iterator[psycopg.Connection]:
        """Eine Transaktion auf der Verbindung, die die Sperre hält."""
        with self.verbindung_der_sperre() as conn, conn.transaction():
            yield conn

    @contextlib.contextmanager
    def verbindung_der_sperre(self) -> Iterator[psycopg.Connection]:
        """Die Schreibverbindung für Anweisungen im Autocommit (Protokoll, Sperre); ein Fehler der
        Verbindung wird zu ``LaufGesperrt`` (nur die Sperre weg) oder bleibt, was er ist."""
        conn = self.schreiber
        if conn is None:
            raise RuntimeError("ein trockener Lauf schreibt nicht")
        try:
            yield conn
        except psycopg.OperationalError as fehler:
            sperre.verloren(fehler, conn, self.url)

    def pool(self, name: str, fabrik: Callable[[], ContextManager[T]]) -> T:
        """Der Pool ``name`` des Laufs (etwa die Worker der Extraktion): beim ersten Mal
        gestartet, am Ende des Laufs beendet – nach einem Fehler sofort."""
        if name not in self._pools:
            self._pools[name] = self._aufraeumen.enter_context(fabrik())
        return self._pools[name]

    def melder(self, phase: str) -> Callable[[int, int], None] | None:
        """``melden(fertig, gesamt)`` für ``fortschritt``: trägt den Stand der Phase in den Eintrag
        des Laufs (``auswahl_fortschritt``). None, wenn es keinen Eintrag gibt (``--trocken``)."""
        if self.trocken or self.lauf_id is None:
            return None
        lauf_id, seit = self.lauf_id, datetime.now(UTC)

        def melden(fertig: int, gesamt: int) -> None:
            with self.verbindung_der_sperre() as conn:
                laeufe.fortschritt_eintragen(conn, lauf_id, phase, fertig, gesamt, seit)

        return melden

    def nehmen(self, name: str) -> bool:
        """Die Sperre ``name`` (ein Block, ein Slot) nehmen, ohne zu warten (``betrieb.sperre``);
        False, wenn ein anderer sie hält."""
        with self.verbindung_der_sperre() as conn:
            return sperre.nehmen(conn, name)

    def loesen(self, name: str) -> None:
        with self.verbindung_der_sperre() as conn:
            sperre.loesen(conn, name)


@contextlib.contextmanager
def oeffnen(
    url: str, *, schreibend: bool, auswahlpool: Callable[[], Pool] | None = None
) -> Iterator[Laufkontext]:
    """Abbruch, der Pool der Auswahl (vor den Verbindungen: kein Worker erbt einen Socket), Lese-
    und (``schreibend``) Schreibverbindung; am Ende in umgekehrter Folge: erst die Pools des
    Laufs, dann Sperren lösen und Verbindungen schließen, zuletzt die Worker der Auswahl."""
    with contextlib.ExitStack() as stapel:
        abbruch = stapel.enter_context(Abbruch())
        pool = stapel.enter_context(auswahlpool()) if auswahlpool is not None else None
        leser = stapel.enter_context(db.verbinden(url, "lesen", autocommit=True))
        schreiber = None
        if schreibend:
            schreiber = db.verbinden(url, "schreiben", autocommit=True)
            stapel.callback(sperre.freigeben, schreiber)
        kontext = Laufkontext(url, abbruch, leser, schreiber, pool)
        with kontext._aufraeumen:
            yield kontext
