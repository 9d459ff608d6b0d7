"""Lesen der Items eines Laufs: in Keyset-Seiten, jede in eigener kurzer Transaktion.

Die Leseverbindung steht im Autocommit: jede Seite ist eine Abfrage
``… and r.id >= %(ab)s order by r.id limit %(seite)s`` und damit eine eigene
Transaktion. Zwischen zwei Seiten – während die Worker rechnen und der
Schreiber schreibt – hält die Stufe keine Transaktion offen: kein Snapshot, der
VACUUM im ganzen Haus aufhält, und nichts, was
``idle_in_transaction_session_timeout`` treffen könnte. Was zwischen zwei
Seiten dazukommt, sieht der Lauf, sobald er dort ankommt; ein Item mit
kleinerer id, das während des Laufs kam, macht der nächste Lauf.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
from psycopg import sql

# Je Item der Auswahl: die Zahl seiner Kandidatenzeilen, die Namen unbekannter
# Extraktoren, die Prüfsumme seiner Eingabe und die seiner bisherigen
# Kodierung. Die Eingabe-Summe ist SHA-256 über die bekannten Kandidaten, je
# „Name:SHA-256 des Texts (hex oder N):Fehler;“ – nur der Fehler bekommt seine
# Länge davor (er ist der einzige freie Text darin; Name und Hex-Summe enthalten
# keinen Doppelpunkt), N steht für NULL. extraktionen.text_sha256 berechnet der Server
# beim Schreiben; die Summe kommt so ohne die Texte aus. Die Texte selbst liest
# die zweite Unterabfrage nur, wenn die Summen sich unterscheiden oder
# %(alle)s gilt – ein erneuter Lauf überträgt so 100 Byte je Item statt der
# Volltexte, und jeder Text wird genau einmal entpackt. Die Texte kommen als
# UTF-8-Bytes (bytea): der Hauptprozess reicht sie nur an die Worker weiter,
# und Bytes gehen ohne Umkodieren durch die Pipe; dekodiert wird einmal, im Worker.
SQL_LESEN = """
select r.id, s.pruefsumme, s.ergebnissumme, k.summe, k.zeilen, k.unbekannt, t.namen, t.texte, t.fehler
from raw_items r
left join lateral (
    select count(*) as zeilen,
           array_agg(e.extraktor order by e.extraktor) filter (where e.extraktor <> all(%(bekannt)s)) as unbekannt,
           sha256(convert_to(coalesce(string_agg(
               e.extraktor || ':' || coalesce(encode(e.text_sha256, 'hex'), 'N') || ':'
               || coalesce(length(e.fehler)::text || ':' || e.fehler, 'N') || ';',
               '' order by e.extraktor) filter (where e.extraktor = any(%(bekannt)s)), ''), 'UTF8')) as summe
    from extraktionen e
    where e.item_id = r.id
) k on true
-- s.item_id >= %(ab)s ist doppelt gemoppelt, aber nicht für den Planer: ohne sie
-- beginnt ein Merge Join auf selected_extractor bei jeder Seite vorn, und ein
-- erneuter Lauf wird quadratisch (300.000 Items: 138 s statt ~60 s).
left join selected_extractor s
    on s.item_id = r.id and s.coder_version = %(version)s and s.item_id >= %(ab)s
left join lateral (
    select array_agg(e.extraktor order by e.extraktor) as namen,
           array_agg(convert_to(e.text, 'UTF8') order by e.extraktor) as texte,
           array_agg(e.fehler order by e.extraktor) as fehler
    from extraktionen e
    where e.item_id = r.id and e.extraktor = any(%(bekannt)s)
      and (%(alle)s or k.summe is distinct from s.pruefsumme)
) t on true
where {bedingung} and r.id >= %(ab)s
order by r.id
limit %(seite)s
"""
# Wie viele Items der Lauf ansieht (für den Fortschritt und „Slot leer“); eine kurze Abfrage.
SQL_ZAHL = "select count(*) from raw_items r where {bedingung}"
# Die Bedingungen der Betriebsarten; werden mit " and " verbunden.
BEDINGUNG_ALLE = sql.SQL("true")
BEDINGUNG_SLOT = sql.SQL("r.slot = %(slot)s")
# mod() ist bei negativen ids negativ; so landet jede id in genau einem Teil.
BEDINGUNG_TEIL = sql.SQL("mod(mod(r.id, %(n)s) + %(n)s, %(n)s) = %(k)s")

KLEINSTE_ID = -(2**63)
GROESSTE_ID = 2**63 - 1


def zahl(conn: psycopg.Connection, bedingung: sql.Composable, params: dict) -> int:
    return conn.execute(sql.SQL(SQL_ZAHL).format(bedingung=bedingung), params).fetchone()[0]


def seiten_lesen(
    conn: psycopg.Connection, bedingung: sql.Composable, params: dict, groesse: int
) -> Iterator[list[tuple]]:
    """Die Items in Seiten von ``groesse``, aufsteigend nach id (binär: schneller zu laden).

    ``conn`` muss im Autocommit stehen: dann ist jede Seite eine eigene Transaktion.
    """
    anfrage = sql.SQL(SQL_LESEN).format(bedingung=bedingung)
    ab = KLEINSTE_ID
    with conn.cursor(binary=True) as cur:
        while True:
            zeilen = cur.execute(anfrage, {**params, "ab": ab, "seite": groesse}).fetchall()
            if not zeilen:
                return
            yield zeilen
            letzte = zeilen[-1][0]
            if len(zeilen) < groesse or letzte == GROESSTE_ID:
                return
            ab = letzte + 1
