-- aw-003: eine Sicht für psql: Item, Entscheidung und Text in einer Zeile.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-003-sicht.sql
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-003-sicht') then
        raise exception 'Migration aw-003-sicht ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-003-sicht');

create view auswahl_uebersicht as
select
    r.id as item_id,
    r.slot,
    r.haus,
    r.titel,
    r.url,
    r.veroeffentlicht_am,
    s.coder_version,
    s.extraktor,
    s.regel,
    s.konsens,
    s.kodiert_am,
    length(s.text) as text_zeichen,
    s.text
from selected_extractor s
join raw_items r on r.id = s.item_id;

comment on view auswahl_uebersicht is
    'Item (raw_items), Entscheidung und bereinigter Text je coder_version (wurzelwerk-auswahl).';

commit;
