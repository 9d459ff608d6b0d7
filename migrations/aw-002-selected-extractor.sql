-- aw-002: die Kodierung – je Item und coder_version die Wahl, ihre Gründe und der Lesetext.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-002-selected-extractor.sql
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-002-selected-extractor') then
        raise exception 'Migration aw-002-selected-extractor ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-002-selected-extractor');

create table selected_extractor (
    item_id bigint not null references raw_items (id) on delete cascade,
    coder_version text not null,
    -- die Wahl: newspaper4k, readability oder trafilatura
    extraktor text not null,
    -- welche Regel entschied (auswahl.REGELN), z. B. bester_score, rueckfall
    regel text not null,
    -- Zahl der Shingles, die in mindestens zwei aktiven Kandidaten stehen
    konsens integer not null check (konsens >= 0),
    -- je bekanntem Extraktor: klasse, aktiv, shingles, abdeckung, stuetzung, score
    metriken jsonb not null,
    -- bereinigter Text der Wahl (normalisierung.bereinigen); NULL, wenn sie keinen Text hat
    text text,
    -- SHA-256 der Eingabe (je bekanntem Extraktor Name, Text, Fehler). Unter
    -- derselben coder_version bestimmt sie die Zeile; ein Lauf vergleicht 32 Byte
    -- statt der Texte und rechnet und schreibt nur, wo sie sich unterscheidet
    pruefsumme bytea not null check (octet_length(pruefsumme) = 32),
    kodiert_am timestamptz not null default now(),
    primary key (item_id, coder_version)
);

-- Backfill und Bestandszählung je Version: „welche Items hat diese Version?“
create index selected_extractor_version_item on selected_extractor (coder_version, item_id);

comment on table selected_extractor is
    'Welcher Extraktor steht je Item und coder_version für den Volltext; Text bereinigt (wurzelwerk-auswahl).';

commit;
