"""Große Tabellen in Keyset-Seiten lesen, jede Seite eine eigene kurze Transaktion.

Die Leseverbindung steht im Autocommit: jede Seite ist eine Abfrage
``… and r.id >= %(ab)s order by r.id limit %(seite)s`` und damit eine eigene Transaktion.
Zwischen zwei Seiten – während die Worker rechnen und geschrieben wird – hält der Lauf keine
Transaktion offen: kein Snapshot, der VACUUM im ganzen Haus aufhält, nichts, was
``idle_in_transaction_session_timeout`` treffen könnte. Was zwischen zwei Seiten dazukommt,
sieht der Lauf, sobald er dort ankommt; ein Item mit kleinerer id macht der nächste Lauf.
"""

from __future__ import annotations

from collections.abc import Iterator

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
    die id, nach der die Anfrage ordnet, ``%(ab)s`` und ``%(seite)s`` setzt dieser Leser."""
    with conn.cursor(binary=binaer) as cur:
        while True:
            zeilen = cur.execute(anfrage, {**params, "ab": ab, "seite": groesse}).fetchall()
            if not zeilen:
                return
            yield zeilen
            letzte = zeilen[-1][0]
            if len(zeilen) < groesse or letzte == GROESSTE_ID:
                return
            ab = letzte + 1
