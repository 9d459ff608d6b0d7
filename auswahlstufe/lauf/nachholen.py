"""``--nachholen``: welche Slots sind offen?

Ein Slot ist für eine coder_version **offen**, wenn in ihm noch etwas zu tun ist:

* ein Item hat Kandidaten (``extraktionen``), aber keine Entscheidung dieser
  coder_version (``selected_extractor``) – der Slot lief nie, sein Lauf scheiterte
  an der Sperre, starb oder lief mit dem Server weg, oder Ingest fügte das Item
  später ein, oder seine Kandidaten kamen später;
* mit ``--extrahieren``: ein Item hat eine Seite (``seiten``), aber keine
  Kandidaten – die Seite kam nach der Extraktion.

Warum aus den Daten und nicht aus den Läufen: ein erfolgreicher Slot-Lauf sagt
nur, dass der Slot *damals* fertig war. ``raw_items`` gehört Ingest und hat
keine Spalte, die sagt, wann ein Item kam; ein Item, das nach dem Lauf kam (oder
während des Laufs mit einer kleineren id als die Leseposition), bliebe liegen.
Die Daten sagen es genau, gleich wie ein Item kodiert wurde (``--slot``,
``--nachholen``, ``--backfill``): nach einem Backfill ist nichts offen, und
``--nachholen`` kodiert nicht die Geschichte Slot für Slot nach. Ein Slot, dessen
Items weder Kandidaten noch Seiten haben, ist nicht offen – dort ist nichts zu
tun; ob dann die Extraktion steht, zeigt das Alter von ``auswahl_letzter_slot``.

Nicht offen macht einen Slot, was ein Item schon hat, nur anders: geänderte
Kandidaten oder eine neu geholte Seite eines Items, das schon entschieden bzw.
extrahiert ist. Das findet der nächste ``--backfill`` (er vergleicht die
Eingabe-Summen jedes Items); Ingest fügt Items hinzu und löscht sie, ändert sie
aber nicht.

Die Sicht ``auswahl_slots_ohne_lauf`` (Migration aw-007) wendet dieselbe Regel
auf die aktuelle coder_version an, mit Seiten; ein Test hält beide gleich.
"""

from __future__ import annotations

from datetime import datetime

import psycopg
from psycopg import sql

# Höchstens so viele Slots je Aufruf (--hoechstens). 48 Slots sind bei einem Poll je
# Viertelstunde zwölf Stunden: eine Nacht, in der der Rechner aus war, holt ein Aufruf
# nach. Ohne Extraktion dauert ein Slot unter einer Sekunde, mit Extraktion von 400
# Seiten etwa 45 s (docs/extraktion.md) – 48 Slots also gut eine halbe Stunde, in der
# die nächsten Aufrufe die Slots überspringen, die er gerade hat. Die Grenze hält einen
# Aufruf so kurz, dass er nicht stundenlang läuft, wenn etwa eine neue coder_version
# ohne --backfill in Betrieb geht (dann ist jeder Slot offen).
HOECHSTENS = 48

# Die offenen Slots einer coder_version, der neueste zuerst (der frische Poll wartet nicht auf
# eine Nacht, die nachzuholen ist; die älteren nimmt der nächste Aufruf oder ein laufender
# Backfill, der von unten kommt), mit der Zahl aller offenen. Die
# Gründe stehen getrennt (union all), nicht als „… or …“ in einem where: so verbindet der Planer
# raw_items mit extraktionen, selected_extractor und seiten je in einem Hash-Join, statt für
# jedes Item vier Indexsuchen zu machen (1.000.000 Items: bench.nachholen, docs/messungen.md).
SQL_OFFENE_SLOTS = """
with offen as (
    select r.slot
    from raw_items r
    where exists (select 1 from extraktionen e where e.item_id = r.id)
      and not exists (
          select 1 from selected_extractor s where s.item_id = r.id and s.coder_version = %(version)s
      ){seiten}
)
select slot, count(*) over () as offen
from offen
group by slot
order by slot desc
limit %(hoechstens)s
"""
# Mit --extrahieren: auch eine Seite ohne Kandidaten macht den Slot offen.
_SEITEN = sql.SQL("""
    union all
    select r.slot
    from raw_items r
    join seiten p on p.item_id = r.id
    where not exists (select 1 from extraktionen e where e.item_id = r.id)""")


def anfrage(*, mit_seiten: bool) -> sql.Composed:
    """``SQL_OFFENE_SLOTS``, mit ``--extrahieren`` samt Seiten; Parameter: version, hoechstens."""
    return sql.SQL(SQL_OFFENE_SLOTS).format(seiten=_SEITEN if mit_seiten else sql.SQL(""))


def offene_slots(
    conn: psycopg.Connection, version: str, hoechstens: int, *, mit_seiten: bool
) -> tuple[list[datetime], int]:
    """Die offenen Slots (der neueste zuerst, höchstens ``hoechstens``) und wie viele es insgesamt sind."""
    params = {"version": version, "hoechstens": hoechstens}
    zeilen = conn.execute(anfrage(mit_seiten=mit_seiten), params).fetchall()
    return [slot for slot, _ in zeilen], (zeilen[0][1] if zeilen else 0)


# Die Quellenwache (Migration aw-013) am Ende eines Ticks: jeden neuen Befund der Sicht
# auswahl_quellenwache eintragen und nennen, jeden gemeldeten, der nicht mehr auffällt, beenden.
# Ein offener Befund je (Version, Haus, Merkmal) – solange er bleibt, nennt ihn kein Tick wieder;
# zwei Ticks zugleich trägt der eindeutige Index der offenen nur einmal ein.
SQL_QUELLENWACHE = """
with befund as materialized (
    select haus, merkmal, seit, satz from auswahl_quellenwache where coder_version = %(version)s
), neu as (
    insert into auswahl_quellenwache_gemeldet (coder_version, haus, merkmal, seit, satz)
    select %(version)s, haus, merkmal, seit, satz from befund
    on conflict (coder_version, haus, merkmal) where beendet_am is null do nothing
    returning satz
), vorbei as (
    update auswahl_quellenwache_gemeldet g set beendet_am = now()
    where g.coder_version = %(version)s and g.beendet_am is null
      and not exists (select 1 from befund b where (b.haus, b.merkmal) = (g.haus, g.merkmal))
    returning g.haus, g.merkmal, g.seit
)
select true, satz from neu
union all
select false, format('Quellenwache: %%s, %%s – seit %%s auffällig, jetzt nicht mehr.', haus, merkmal,
                     to_char(seit at time zone 'Europe/Berlin', 'FMDD.FMMM. HH24:MI'))
from vorbei
"""


def quellenwache(conn: psycopg.Connection, version: str) -> list[tuple[bool, str]]:
    """(neu?, Satz) je neuem und je beendetem Befund; ``conn`` schreibt (eine Anweisung)."""
    return conn.execute(SQL_QUELLENWACHE, {"version": version}).fetchall()


# Ein Blick auf ein Haus (--haus ohne --seit): ab dem ersten Slot seines frühesten offenen Befunds.
SQL_BEFUND_SEIT = "select min(seit) from auswahl_quellenwache where haus = %(haus)s"


def befund_seit(conn: psycopg.Connection, haus: str) -> datetime | None:
    """Seit wann das Haus auffällt; None ohne offenen Befund."""
    return conn.execute(SQL_BEFUND_SEIT, {"haus": haus}).fetchone()[0]
