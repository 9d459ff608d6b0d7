"""Was die Auswahl je Item liest: Prüfsummen immer, Texte nur, wo sich die Eingabe änderte.

Gelesen wird in Keyset-Seiten (``betrieb.keyset``), jede eine eigene kurze Transaktion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
from psycopg import sql

from auswahlstufe.betrieb import keyset
from auswahlstufe.betrieb.bereich import Bereich
from version import PRIORITAET

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
-- s.item_id >= %(ab)s für den Planer (docs/betrieb-lauf.md, „Kurze Transaktionen“)
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
where {bedingung} and r.id >= %(ab)s and r.id <= %(bis)s
order by r.id
limit %(seite)s
"""
# Wie viele Items der Lauf ansieht (für den Fortschritt und „Slot leer“); eine kurze Abfrage.
SQL_ZAHL = "select count(*) from raw_items r where {bedingung}"


def parameter(bereich: Bereich, version: str, alle: bool) -> dict[str, object]:
    return {**bereich.parameter(), "version": version, "bekannt": list(PRIORITAET), "alle": alle}


def zahl(conn: psycopg.Connection, bereich: Bereich, params: dict) -> int:
    return conn.execute(sql.SQL(SQL_ZAHL).format(bedingung=bereich.bedingung()), params).fetchone()[0]


def seiten_lesen(
    conn: psycopg.Connection, bereich: Bereich, params: dict, groesse: int
) -> Iterator[list[tuple]]:
    """Die Items in Seiten von ``groesse``, aufsteigend nach id (binär: schneller zu laden); jede
    Seite erst, wenn sie gebraucht wird."""
    anfrage = sql.SQL(SQL_LESEN).format(bedingung=bereich.bedingung())
    return keyset.seiten(conn, anfrage, params, groesse, binaer=True)


def bloecke_lesen(
    conn: psycopg.Connection, bereich: Bereich, params: dict, breite: int, nehmen: Callable[[int], bool]
) -> Iterator[tuple[int, list[tuple]]]:
    """Die Items je Block von ``breite`` ids, nur die Blöcke, die ``nehmen`` gibt (ein Backfill)."""
    anfrage = sql.SQL(SQL_LESEN).format(bedingung=bereich.bedingung())
    return keyset.bloecke(conn, anfrage, params, breite, nehmen, binaer=True)
