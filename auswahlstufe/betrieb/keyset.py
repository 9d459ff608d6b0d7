"""Große Tabellen in Keyset-Seiten lesen, jede Seite eine eigene kurze Transaktion.

Warum und was das für Items heißt, die zwischen zwei Seiten dazukommen: docs/betrieb-lauf.md,
„Kurze Transaktionen (Keyset-Seiten)“. Ein Backfill liest in Blöcken fester id-Breite
(``bloecke``), jeden nur, wenn er ihn bekommt (``betrieb.sperre``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
from psycopg import sql

KLEINSTE_ID = -(2**63)
GROESSTE_ID = 2**63 - 1


def seiten(
    conn: psycopg.Connection,
    anfrage: sql.Composable,
    params: dict,
    groesse: int,
    *,
    binaer: bool = False,
    ab: int = KLEINSTE_ID,
) -> Iterator[list[tuple]]:
    """Die Zeilen von ``anfrage`` in Seiten von ``groesse``, ab der id ``ab``; die erste Spalte ist
    die id, nach der die Anfrage ordnet, ``%(ab)s``, ``%(bis)s`` und ``%(seite)s`` setzt dieser Leser."""
    with conn.cursor(binary=binaer) as cur:
        while True:
            zeilen = cur.execute(
                anfrage, {**params, "ab": ab, "bis": GROESSTE_ID, "seite": groesse}
            ).fetchall()
            if not zeilen:
                return
            yield zeilen
            letzte = zeilen[-1][0]
            if len(zeilen) < groesse or letzte == GROESSTE_ID:
                return
            ab = letzte + 1


def bloecke(
    conn: psycopg.Connection,
    anfrage: sql.Composable,
    params: dict,
    breite: int,
    nehmen: Callable[[int], bool],
    *,
    binaer: bool = False,
) -> Iterator[tuple[int, list[tuple]]]:
    """Die Zeilen von ``anfrage`` je Block von ``breite`` ids (Block ``b``: ids ``b × breite + 1``
    bis ``(b + 1) × breite`` – ids aus einer Sequenz beginnen bei 1), aufsteigend – nur die Blöcke,
    für die ``nehmen(b)`` wahr ist; leere Strecken überspringt eine Anfrage nach der nächsten Zeile.
    Einen Block, den ``nehmen`` nicht gab, versucht der Leser am Ende noch einmal."""

    def block(cur, nummer: int) -> list[tuple]:
        von, bis = max(nummer * breite + 1, KLEINSTE_ID), min(nummer * breite + breite, GROESSTE_ID)
        return cur.execute(anfrage, {**params, "ab": von, "bis": bis, "seite": breite}).fetchall()

    ab, uebersprungen = KLEINSTE_ID, []
    with conn.cursor(binary=binaer) as cur:
        while ab is not None:
            erste = cur.execute(anfrage, {**params, "ab": ab, "bis": GROESSTE_ID, "seite": 1}).fetchone()
            if erste is None:
                break
            nummer = (erste[0] - 1) // breite
            if nehmen(nummer):
                yield nummer, block(cur, nummer)
            else:
                uebersprungen.append(nummer)
            bis = min(nummer * breite + breite, GROESSTE_ID)
            ab = bis + 1 if bis < GROESSTE_ID else None
        for nummer in uebersprungen:
            if nehmen(nummer):
                yield nummer, block(cur, nummer)
