"""Schreiben eines Stapels nach selected_extractor – je Stapel eine Transaktion.

Items ohne bisherige Kodierung gehen per COPY direkt in die Tabelle, geänderte
per COPY in die temporäre Tabelle ``aw_stapel`` und von dort über einen Upsert,
der nur schreibt, was sich im Ergebnis unterscheidet. Items, deren Eingabe sich
änderte, deren Ergebnis aber gleich blieb, bekommen nur ihre Eingabe-Summe
nachgetragen. Kodierungen, deren Item keine Kandidaten mehr hat, gehen. Ein
abgebrochener Lauf hinterlässt so jede Zeile alt oder neu.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

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
    ergebnissumme bytea not null
) on commit delete rows;
-- wie in selected_extractor: nicht zweimal komprimieren (als eigene Anweisung: PostgreSQL 15)
alter table aw_stapel alter column text set storage external
"""
# Die Zeilen eines Stapels, wie die Worker sie als COPY-Daten bauen. Items, die
# beim Lesen keine Kodierung dieser Version hatten, gehen ohne Umweg direkt in
# selected_extractor: die Sperre des Laufs (oder seines Teils) schließt aus,
# dass jemand anders sie inzwischen schrieb – außer einem --teil mit anderem N,
# den die Sperren nicht sehen. Ein Backfill in eine neue coder_version schreibt
# so jede Zeile nur einmal. Geänderte gehen über aw_stapel und den Upsert,
# ebenso neue, falls doch jemand zuvorkam (stapel_schreiben).
SQL_COPY = """
copy {tabelle}
    (item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme)
from stdin
"""
ZIEL = sql.Identifier("selected_extractor")
ZWISCHENABLAGE = sql.Identifier("aw_stapel")
# Schreibt nur, was sich im Ergebnis unterscheidet: eine gleiche Ergebnissumme
# lässt die Zeile unberührt (keine neue Zeilenversion, kodiert_am bleibt).
# Neu oder geändert sagt der Vergleich mit dem Stand zu Beginn der Anweisung
# (bisher; alle Teile einer Anweisung sehen denselben Snapshot) – kein Blick auf
# Interna wie xmax. Nur eine Zeile, die ein gleichzeitiger --teil mit anderem N
# nach diesem Snapshot einfügte, zählte hier als neu statt als geändert.
SQL_UPSERT = """
with bisher as materialized (
    select s.item_id
    from selected_extractor s join aw_stapel a using (item_id, coder_version)
)
insert into selected_extractor as s
    (item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme)
select item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme
from aw_stapel
on conflict (item_id, coder_version) do update set
    extraktor = excluded.extraktor,
    regel = excluded.regel,
    konsens = excluded.konsens,
    metriken = excluded.metriken,
    text = excluded.text,
    pruefsumme = excluded.pruefsumme,
    ergebnissumme = excluded.ergebnissumme,
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
# Entfernt Kodierungen dieser Version, deren Item keine Kandidaten mehr hat –
# mit erneuter Prüfung, falls inzwischen wieder Kandidaten kamen.
SQL_ENTFERNEN = """
delete from selected_extractor s
where s.coder_version = %(version)s and s.item_id = any(%(ids)s)
  and not exists (select 1 from extraktionen e where e.item_id = s.item_id)
"""


def _copy(cur: psycopg.Cursor, tabelle: sql.Identifier, daten: bytes) -> None:
    with cur.copy(sql.SQL(SQL_COPY).format(tabelle=tabelle)) as copy:
        copy.write(daten)


def stapel_schreiben(
    conn: psycopg.Connection, version: str, ergebnis: Stapelergebnis
) -> tuple[int, int, int, int]:
    """Schreibt einen Stapel in einer Transaktion; gibt (neu, geändert, entfernt, nachgetragen) zurück."""
    neu = geaendert = entfernt = nachgetragen = 0
    ueber_upsert = [ergebnis.geaendert_daten] if ergebnis.geaendert_daten else []
    with conn.transaction(), conn.cursor() as cur:
        if ergebnis.neu_daten:
            try:
                with conn.transaction():  # Savepoint: bei Konflikt nur dies zurück
                    _copy(cur, ZIEL, ergebnis.neu_daten)
                neu = cur.rowcount
            except psycopg.errors.UniqueViolation:
                # Jemand schrieb eines dieser Items, seit wir lasen – etwa ein
                # --teil mit anderem N (die Sperren trennen nur gleiche N).
                ueber_upsert.append(ergebnis.neu_daten)
        if ueber_upsert:
            for daten in ueber_upsert:
                _copy(cur, ZWISCHENABLAGE, daten)
            cur.execute(SQL_UPSERT)
            for (ist_neu,) in cur.fetchall():
                if ist_neu:
                    neu += 1
                else:
                    geaendert += 1
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
            nachgetragen = cur.rowcount
        if ergebnis.entfernen:
            cur.execute(SQL_ENTFERNEN, {"version": version, "ids": ergebnis.entfernen})
            entfernt = cur.rowcount
    return neu, geaendert, entfernt, nachgetragen
