-- aw-014: die Länge des gewählten Textes in Zeichen, beim Schreiben gemerkt.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-014-zeichen.sql
-- oder:     .venv/bin/python check_db.py --migrieren
--
-- Die Kennzahlen der Quellenwache (aw-013: kurz, zeichen) zählten die Zeichen jedes Textes eines
-- (Haus, Slot)-Paars mit char_length(text) – der Server las dafür jeden Text ganz aus TOAST, bei
-- jedem Stapel, der das Paar berührt: gut ein Achtel eines Backfills (docs/messungen.md, „Die
-- Kennzahlen im Backfill“). Die Stufe kennt die Länge beim Schreiben und legt sie in zeichen ab.
-- Zeilen von früher behalten NULL; für sie zählt die Stufe weiter char_length(text), dasselbe
-- Ergebnis. Keine Entscheidung ändert sich, keine Zeile wird umgeschrieben.
--
-- Rechte: keine neuen (die Betriebsrolle schreibt selected_extractor als ganze Tabelle).
-- Dauer: eine Spalte ohne Voreinstellung, nur im Katalog (Sekunden, auch auf einem großen Bestand).
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-014-zeichen') then
        raise exception 'Migration aw-014-zeichen ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-014-zeichen');

-- char_length(text) des gewählten Textes; NULL ohne Text und in Zeilen von vor aw-014.
alter table selected_extractor add column zeichen integer;

commit;
