-- aw-006: die rohen Seiten je Item und woher eine gespeicherte Extraktion kam.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-006-seiten.sql
-- oder:     .venv/bin/python check_db.py --migrieren
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-006-seiten') then
        raise exception 'Migration aw-006-seiten ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-006-seiten');

-- Die Seite je Item, wie sie geholt wurde. Geschrieben vom Abholer außerhalb
-- dieser Stufe; gelesen von auswahl.py --extrahieren --backfill/--slot.
create table seiten (
    item_id bigint primary key references raw_items (id) on delete cascade,
    -- die Bytes wie geholt, ohne Umkodierung (den Zeichensatz bestimmt extraktion.dekodieren)
    html bytea not null,
    url text,
    -- Content-Type aus der HTTP-Antwort, falls bekannt (mit charset=…)
    content_type text,
    geholt_am timestamptz not null default now(),
    -- SHA-256 der Bytes, vom Server berechnet. Eine Extraktion ist veraltet, wenn ihre
    -- seite_sha256 nicht sha256(html_sha256 || Content-Type) ist (auswahlstufe/extraktion/stufe.py):
    -- ein erneuter Lauf liest so Prüfsummen, nicht die Seiten
    html_sha256 bytea generated always as (sha256(html)) stored
);

comment on table seiten is
    'Rohe HTML-Seite je Item (Bytes wie geholt, URL, geholt_am) als Quelle der Extraktion (wurzelwerk-auswahl).';

-- Woher eine Extraktion kam: Fassung des Extraktors (Paketversion, Einstellungen,
-- Zeichensatzregel) und SHA-256 der Seite. NULL bei Kandidaten, die von außen
-- kamen (--einlesen): die überschreibt --extrahieren erst, wenn es eine Seite gibt.
alter table extraktionen
    add column extraktor_fassung text,
    add column seite_sha256 bytea check (octet_length(seite_sha256) = 32);

commit;
