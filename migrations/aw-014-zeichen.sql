-- aw-014: die Länge des gewählten Textes in Zeichen, beim Schreiben gemerkt.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-014-zeichen.sql
-- oder:     .venv/bin/python check_db.py --migrieren
--
-- Die Kennzahlen der Quellenwache (aw-013: kurz, zeichen) zählten die Zeichen jedes Textes eines
-- (Haus, Slot)-Paars mit char_length(text) – der Server las dafür jeden Text ganz aus TOAST, bei
-- jedem Stapel, der das Paar berührt (docs/messungen.md, „Die Kennzahlen im Backfill“). Jetzt
-- schreibt die Stufe die Länge mit (sie kennt den Text), und ein Trigger hält zeichen bei jedem
-- Einfügen und jeder Änderung von text gleich char_length(text) – gleich, wer schreibt (auch eine
-- ältere Fassung, die während des Updates noch läuft und zeichen nicht kennt). Stimmt zeichen schon,
-- ruft er nichts auf (WHEN). Zeilen von früher behalten NULL; für sie zählt die Stufe weiter
-- char_length(text), dasselbe Ergebnis. Keine Entscheidung ändert sich, keine Zeile wird umgeschrieben.
--
-- Rechte: keine neuen (die Betriebsrolle schreibt selected_extractor als ganze Tabelle; die
-- Triggerfunktion darf jede Rolle ausführen).
-- Dauer: eine Spalte ohne Voreinstellung (nur im Katalog) und ein Trigger – Sekunden, auch auf einem
-- großen Bestand. ALTER TABLE wartet dafür auf offene Transaktionen auf selected_extractor (mit
-- --migrieren höchstens 60 s, dann ändert es nichts und sagt, später erneut zu versuchen).
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

create function aw_zeichen_setzen() returns trigger
language plpgsql as $$
begin
    new.zeichen := char_length(new.text);
    return new;
end
$$;

create trigger aw_zeichen before insert or update of text on selected_extractor
    for each row when (new.zeichen is distinct from char_length(new.text))
    execute function aw_zeichen_setzen();

commit;
