-- aw-001: Migrationsbuch (geteilt mit den anderen Modulen) und die Kandidaten.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-001-extraktionen.sql
-- oder:     .venv/bin/python check_db.py --migrieren
-- Ein zweiter Lauf bricht mit „schon angewandt“ ab und ändert nichts.
begin;

-- Das Buch teilen sich alle Module dieser Datenbank; es entsteht nur, wo es fehlt.
create table if not exists schema_migrationen (
    name text primary key,
    angewandt_am timestamptz not null default now()
);

-- Zuerst prüfen und eintragen: wer zweimal anwendet, scheitert hier mit einer
-- klaren Meldung statt an einem „relation already exists“ weiter unten.
do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-001-extraktionen') then
        raise exception 'Migration aw-001-extraktionen ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-001-extraktionen');

-- Die Kandidaten: je Item und Extraktor ein Volltext oder ein Fehler.
-- Geschrieben vom Extraktionsschritt (oder von auswahl.py --einlesen).
create table extraktionen (
    item_id bigint not null references raw_items (id) on delete cascade,
    extraktor text not null,
    text text,
    fehler text,
    extrahiert_am timestamptz not null default now(),
    -- MD5 des Texts, vom Server beim Schreiben berechnet. Die Auswahl erkennt
    -- daran unveränderte Kandidaten, ohne die Texte zu lesen und zu entpacken:
    -- ein erneuter Lauf über 20.000 Items liest so 2 MB statt 230 MB.
    text_md5 bytea generated always as (decode(md5(text), 'hex')) stored,
    primary key (item_id, extraktor)
);

comment on table extraktionen is
    'Kandidaten der Volltextauswahl: je Item und Extraktor Text oder Fehler (wurzelwerk-auswahl).';

commit;
