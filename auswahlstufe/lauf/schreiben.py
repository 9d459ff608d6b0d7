"""Schreiben eines Stapels nach selected_extractor – je Stapel eine Transaktion.

Items ohne bisherige Kodierung gehen per COPY direkt in die Tabelle, geänderte
per COPY in die temporäre Tabelle ``aw_stapel`` und von dort über einen Upsert,
der nur schreibt, was sich im Ergebnis unterscheidet. Items, deren Eingabe sich
änderte, deren Ergebnis aber gleich blieb, bekommen nur ihre Eingabe-Summe
nachgetragen. Kodierungen, deren Item keine Kandidaten mehr hat, gehen. Ein
abgebrochener Lauf hinterlässt so jede Zeile alt oder neu.

Ein Item, das Ingest zwischen Lesen und Schreiben löschte, ließe das Schreiben seines
Stapels am Fremdschlüssel scheitern: der Stapel geht dann über ``aw_stapel``, und der Upsert
läuft ohne die verschwundenen Items noch einmal (``betrieb.ingest``); sie zählen als
*entfallen*.

Die Transaktion öffnet der Lauf auf der Verbindung, die seine Sperre hält
(``Laufkontext.schreiben``).
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

from auswahlstufe.betrieb.ingest import ohne_geloeschte
from auswahlstufe.lauf.kodierung import Stapelergebnis

# Zwischenablage eines Stapels auf der Schreibverbindung; leert sich bei jedem Commit.
SQL_TEMP = """
create temp table if not exists aw_stapel (
    item_id bigint primary key,
    coder_version text not null,
    extraktor text not null,
    regel text not null,
    konsens integer not null,
    metriken jsonb not null,
    text text,
    pruefsumme bytea not null,
    ergebnissumme bytea not null,
    zeichen integer
) on commit delete rows;
-- wie in selected_extractor: nicht zweimal komprimieren (als eigene Anweisung: PostgreSQL 15)
alter table aw_stapel alter column text set storage external
"""
# Die Zeilen eines Stapels, wie die Worker sie als COPY-Daten bauen. Items, die
# beim Lesen keine Kodierung dieser Version hatten, gehen ohne Umweg direkt in
# selected_extractor: ein Backfill in eine neue coder_version schreibt so jede
# Zeile nur einmal. Geänderte gehen über aw_stapel und den Upsert, ebenso neue,
# falls doch ein anderer Lauf zuvorkam (stapel_schreiben).
SQL_COPY = """
copy {tabelle}
    (item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme, zeichen)
from stdin
"""
ZIEL = sql.Identifier("selected_extractor")
ZWISCHENABLAGE = sql.Identifier("aw_stapel")
# Schreibt nur, was sich im Ergebnis unterscheidet: eine gleiche Ergebnissumme
# lässt die Zeile unberührt (keine neue Zeilenversion, kodiert_am bleibt).
# Neu oder geändert sagt der Vergleich mit dem Stand zu Beginn der Anweisung
# (bisher; alle Teile einer Anweisung sehen denselben Snapshot) – kein Blick auf
# Interna wie xmax. Nur eine Zeile, die ein gleichzeitiger Lauf nach diesem Snapshot
# einfügte, zählte hier als neu statt als geändert. In item_id-Reihenfolge: zwei Läufe,
# die dieselben Zeilen ändern, sperren sie in derselben Folge (kein Deadlock).
SQL_UPSERT = """
with bisher as materialized (
    select s.item_id
    from selected_extractor s join aw_stapel a using (item_id, coder_version)
)
insert into selected_extractor as s
    (item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme, zeichen)
select item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme, zeichen
from aw_stapel
order by item_id
on conflict (item_id, coder_version) do update set
    extraktor = excluded.extraktor,
    regel = excluded.regel,
    konsens = excluded.konsens,
    metriken = excluded.metriken,
    text = excluded.text,
    pruefsumme = excluded.pruefsumme,
    ergebnissumme = excluded.ergebnissumme,
    zeichen = excluded.zeichen,
    kodiert_am = now()
where s.ergebnissumme is distinct from excluded.ergebnissumme
returning s.item_id not in (select item_id from bisher) as neu
"""
# Eingabe geändert, Ergebnis gleich: nur die Eingabe-Summe nachtragen, damit
# der nächste Lauf das Item nicht wieder rechnet. Inhalt und kodiert_am bleiben;
# die Zeile bekommt eine neue Zeilenversion. Nur wo das Ergebnis noch dasselbe ist.
SQL_NACHTRAGEN = """
update selected_extractor s set pruefsumme = n.pruefsumme
from unnest(%(ids)s::bigint[], %(summen)s::bytea[], %(ergebnisse)s::bytea[])
    as n(item_id, pruefsumme, ergebnissumme)
where s.coder_version = %(version)s and s.item_id = n.item_id
  and s.ergebnissumme = n.ergebnissumme and s.pruefsumme is distinct from n.pruefsumme
"""
# Items, die es in raw_items nicht mehr gibt, aus der Zwischenablage nehmen (betrieb.ingest).
SQL_OHNE = "delete from aw_stapel where item_id = any(%s)"
SQL_IDS = "select item_id from aw_stapel"
# Entfernt Kodierungen dieser Version, deren Item keine Kandidaten mehr hat –
# mit erneuter Prüfung, falls inzwischen wieder Kandidaten kamen.
SQL_ENTFERNEN = """
delete from selected_extractor s
where s.coder_version = %(version)s and s.item_id = any(%(ids)s)
  and not exists (select 1 from extraktionen e where e.item_id = s.item_id)
"""


# Kennzahlen je (Haus, Slot) für die Quellenwache (Migration aw-013): die Paare der Items eines
# Stapels werden aus selected_extractor neu berechnet, nicht fortgeschrieben. Erst die Paare
# sperren (sortiert, bis zum Commit), dann rechnen: die Rechnung sieht als eigene Anweisung
# alles, was ein anderer Lauf an diesen Paaren vor ihr festschrieb; wer nach ihr schreibt,
# wartet auf die Sperre und rechnet danach selbst. Items ohne Haus zählen nirgends; zeichen fehlt
# nur in Zeilen von vor aw-014. Je Paar über den Index auf slot, je Item über den Primärschlüssel
# (offset 0: fest, gleich was die Statistik weiß; docs/messungen.md, „Die Kennzahlen im Backfill“).
PAARE = "select distinct haus, slot from raw_items where id = any(%(ids)s) and haus is not null"
SQL_PAARE_SPERREN = f"""
select pg_advisory_xact_lock(hashtextextended('aw-kennzahlen ' || %(version)s || haus || slot::text, 0))
from ({PAARE} order by haus, slot) as p
"""
# Ein Stapel, der nichts schrieb, rechnet nur, wenn einem seiner Paare die Kennzahlen fehlen –
# so füllt der erste Backfill nach dem Update sie für den Bestand, und jeder weitere kostet nichts.
SQL_KENNZAHLEN_FEHLEN = f"""
select exists (
    select 1 from ({PAARE}) as p
    where not exists (
        select 1 from auswahl_kennzahlen k
        where k.coder_version = %(version)s and (k.haus, k.slot) = (p.haus, p.slot)))
"""
SQL_KENNZAHLEN = f"""
with paare as ({PAARE}), neu as (
    select p.haus, p.slot, count(*) as items,
        count(*) filter (where s.metriken->'newspaper4k'->>'klasse' <> 'nutzbar'),
        count(*) filter (where s.metriken->'readability'->>'klasse' <> 'nutzbar'),
        count(*) filter (where s.metriken->'trafilatura'->>'klasse' <> 'nutzbar'),
        count(*) filter (where s.extraktor = 'newspaper4k'),
        count(*) filter (where s.extraktor = 'readability'),
        count(*) filter (where s.extraktor = 'trafilatura'),
        count(*) filter (where (s.metriken->'newspaper4k'->>'score')::float8 < 0.95),
        count(*) filter (where (s.metriken->'readability'->>'score')::float8 < 0.95),
        count(*) filter (where (s.metriken->'trafilatura'->>'score')::float8 < 0.95),
        coalesce(sum((s.metriken->'newspaper4k'->>'score')::float8), 0),
        coalesce(sum((s.metriken->'readability'->>'score')::float8), 0),
        coalesce(sum((s.metriken->'trafilatura'->>'score')::float8), 0),
        count(*) filter (where s.regel like 'ohne_konsens%%'),
        count(*) filter (where s.regel = 'rueckfall'),
        count(*) filter (where coalesce(s.zeichen, char_length(s.text), 0) < 1000),
        coalesce(sum(coalesce(s.zeichen, char_length(s.text))), 0)
    from paare p
    cross join lateral (select id from raw_items where slot = p.slot and haus = p.haus offset 0) r
    cross join lateral (
        select extraktor, regel, metriken, text, zeichen from selected_extractor
        where item_id = r.id and coder_version = %(version)s offset 0
    ) s
    group by p.haus, p.slot
), weg as (
    delete from auswahl_kennzahlen k using paare p
    where k.coder_version = %(version)s and (k.haus, k.slot) = (p.haus, p.slot)
      and not exists (select 1 from neu n where (n.haus, n.slot) = (p.haus, p.slot))
)
insert into auswahl_kennzahlen as k
select %(version)s, neu.* from neu
on conflict (coder_version, haus, slot) do update set
    (items, unbrauchbar_newspaper4k, unbrauchbar_readability, unbrauchbar_trafilatura,
     gewaehlt_newspaper4k, gewaehlt_readability, gewaehlt_trafilatura,
     abweichend_newspaper4k, abweichend_readability, abweichend_trafilatura,
     score_newspaper4k, score_readability, score_trafilatura, ohne_konsens, rueckfall, kurz, zeichen)
    = (excluded.items, excluded.unbrauchbar_newspaper4k, excluded.unbrauchbar_readability,
       excluded.unbrauchbar_trafilatura, excluded.gewaehlt_newspaper4k, excluded.gewaehlt_readability,
       excluded.gewaehlt_trafilatura, excluded.abweichend_newspaper4k, excluded.abweichend_readability,
       excluded.abweichend_trafilatura, excluded.score_newspaper4k, excluded.score_readability,
       excluded.score_trafilatura, excluded.ohne_konsens, excluded.rueckfall, excluded.kurz,
       excluded.zeichen)
"""


def _copy(cur: psycopg.Cursor, tabelle: sql.Identifier, daten: bytes) -> None:
    with cur.copy(sql.SQL(SQL_COPY).format(tabelle=tabelle)) as copy:
        copy.write(daten)


@dataclass
class Geschrieben:
    """Was ein Stapel in der Datenbank bewirkte."""

    neu: int = 0
    geaendert: int = 0
    entfernt: int = 0
    nachgetragen: int = 0
    entfallen: int = 0  # Items, die Ingest löschte, seit der Lauf sie las


def _upsert(cur: psycopg.Cursor, geschrieben: Geschrieben) -> None:
    """aw_stapel → selected_extractor, ohne Items, die es nicht mehr gibt."""

    def upsert(weg: frozenset[int]) -> list[tuple]:
        if weg:
            cur.execute(SQL_OHNE, (list(weg),))
        return cur.execute(SQL_UPSERT).fetchall()

    zeilen, weg = ohne_geloeschte(
        cur.connection, lambda: [i for (i,) in cur.execute(SQL_IDS).fetchall()], upsert
    )
    geschrieben.entfallen += len(weg)
    for (ist_neu,) in zeilen:
        if ist_neu:
            geschrieben.neu += 1
        else:
            geschrieben.geaendert += 1


def stapel_schreiben(conn: psycopg.Connection, version: str, ergebnis: Stapelergebnis) -> Geschrieben:
    """Schreibt einen Stapel (``conn`` in der Transaktion des Stapels)."""
    geschrieben = Geschrieben()
    ueber_upsert = [ergebnis.geaendert_daten] if ergebnis.geaendert_daten else []
    with conn.cursor() as cur:
        if ergebnis.neu_daten:
            try:
                with conn.transaction():  # Savepoint: bei Konflikt nur dies zurück
                    _copy(cur, ZIEL, ergebnis.neu_daten)
                geschrieben.neu = cur.rowcount
            except (psycopg.errors.UniqueViolation, psycopg.errors.ForeignKeyViolation):
                # Ein anderer Lauf schrieb eines dieser Items, seit wir lasen (etwa ein Tick
                # im Block eines Backfills), oder Ingest löschte eines.
                ueber_upsert.append(ergebnis.neu_daten)
        if ueber_upsert:
            for daten in ueber_upsert:
                _copy(cur, ZWISCHENABLAGE, daten)
            _upsert(cur, geschrieben)
        if ergebnis.nachtragen:
            ids, summen, ergebnisse = zip(*ergebnis.nachtragen, strict=True)
            cur.execute(
                SQL_NACHTRAGEN,
                {
                    "version": version,
                    "ids": list(ids),
                    "summen": list(summen),
                    "ergebnisse": list(ergebnisse),
                },
            )
            geschrieben.nachgetragen = cur.rowcount
        if ergebnis.entfernen:
            cur.execute(SQL_ENTFERNEN, {"version": version, "ids": ergebnis.entfernen})
            geschrieben.entfernt = cur.rowcount
        kennzahlen = {"version": version, "ids": ergebnis.ids}
        if ergebnis.ids and (
            geschrieben.neu
            or geschrieben.geaendert
            or geschrieben.entfernt
            or geschrieben.entfallen
            or cur.execute(SQL_KENNZAHLEN_FEHLEN, kennzahlen).fetchone()[0]
        ):
            cur.execute(SQL_PAARE_SPERREN, kennzahlen)
            cur.execute(SQL_KENNZAHLEN, kennzahlen)
    return geschrieben
