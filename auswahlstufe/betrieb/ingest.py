"""Items, die Ingest mitten im Lauf löscht: sie entfallen, der Rest wird geschrieben.

Der Stapel geht in einem Savepoint und, scheitert er am Fremdschlüssel, noch einmal ohne die
Items, die es nicht mehr gibt (gezählt als *entfallen*); warum so: docs/betrieb-lauf.md,
„Ingest nebenan“.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TypeVar

import psycopg

T = TypeVar("T")

# Welche dieser Items gibt es in raw_items nicht mehr?
SQL_VERSCHWUNDEN = """
select i from unnest(%s::bigint[]) as i
where not exists (select 1 from raw_items r where r.id = i)
"""
# So oft höchstens: jeder weitere Versuch braucht ein Löschen genau zwischen zwei Anweisungen.
VERSUCHE = 5


def ohne_geloeschte(
    conn: psycopg.Connection,
    ids: Callable[[], Collection[int]],
    schreiben: Callable[[frozenset[int]], T],
) -> tuple[T, frozenset[int]]:
    """``schreiben(weg)`` in einem Savepoint (``conn`` in einer Transaktion); scheitert es am
    Fremdschlüssel, noch einmal ohne die verschwundenen unter den Items ``ids()``. Gibt das
    Ergebnis und die entfallenen Items zurück; ein Fremdschlüsselfehler ohne verschwundenes
    Item geht weiter."""
    weg: frozenset[int] = frozenset()
    for versuch in range(VERSUCHE):
        try:
            with conn.transaction():
                return schreiben(weg), weg
        except psycopg.errors.ForeignKeyViolation:
            neu = {i for (i,) in conn.execute(SQL_VERSCHWUNDEN, (list(ids()),))} - weg
            if not neu or versuch == VERSUCHE - 1:
                raise
            weg |= neu
    raise AssertionError("unerreichbar")
