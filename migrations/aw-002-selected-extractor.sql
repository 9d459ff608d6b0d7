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
    -- welche Regel entschied (REGELN in auswahlstufe/regeln.py), z. B. bester_score, rueckfall
    regel text not null,
    -- Zahl der Shingles, die in mindestens zwei aktiven Kandidaten stehen
    konsens integer not null check (konsens >= 0),
    -- je bekanntem Extraktor: klasse, aktiv, shingles, abdeckung, stuetzung, score
    metriken jsonb not null,
    -- bereinigter Text der Wahl (normalisierung.bereinigen); NULL, wenn sie keinen Text hat.
    -- Unkomprimiert (storage external, unten per alter table – „storage“ in der
    -- Spaltendefinition versteht erst PostgreSQL 16): pglz kostete beim Schreiben
    -- mehr als die Hälfte der Server-CPU (20.000 Items: 1,38 s gegen 0,61 s), der
    -- Platz wächst um 2 KB je Item (python -m bench.speicher_db; README, Abweichungen).
    text text,
    -- SHA-256 der Eingabe (je bekanntem Extraktor Name, MD5 des Texts, Fehler),
    -- aus der die Zeile zuletzt berechnet wurde. Ist sie gleich, rechnet ein Lauf
    -- das Item gar nicht erst (unter derselben coder_version folgt die Zeile
    -- allein aus der Eingabe) und liest seine Texte nicht
    pruefsumme bytea not null check (octet_length(pruefsumme) = 32),
    -- SHA-256 des Ergebnisses (extraktor, regel, konsens, metriken, text): ein
    -- Lauf schreibt nur, wo sie sich unterscheidet – 32 Byte vergleichen statt
    -- der Texte; eine unveränderte Zeile behält Zeilenversion und kodiert_am
    ergebnissumme bytea not null check (octet_length(ergebnissumme) = 32),
    kodiert_am timestamptz not null default now(),
    primary key (item_id, coder_version)
);

alter table selected_extractor alter column text set storage external;

-- Backfill und Bestandszählung je Version: „welche Items hat diese Version?“
create index selected_extractor_version_item on selected_extractor (coder_version, item_id);

comment on table selected_extractor is
    'Welcher Extraktor steht je Item und coder_version für den Volltext; Text bereinigt (wurzelwerk-auswahl).';

commit;
