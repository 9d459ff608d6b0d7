-- aw-012: Exit 130 heißt abgebrochen – ein Signal (Strg-C, SIGTERM) ist kein Fehler.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-012-zustand-abgebrochen.sql
-- oder:     .venv/bin/python check_db.py --migrieren
--
-- Ein Lauf, den der Betreiber mit Strg-C oder ein Herunterfahren mit SIGTERM beendet, trägt
-- Exit 130 ein; aw-010 zählte ihn unter fehler. Er heißt jetzt abgebrochen, wie ein Lauf, der
-- sein Ende nicht eintrug und den ein späterer schloss; beide unterscheidet exit_code (130 oder
-- NULL). Die übrigen Zustände wie in aw-010. Keine Sicht liest zustand.
--
-- Dauer: die berechnete Spalte wird neu angelegt, auswahl_laeufe einmal neu geschrieben (eine
-- Zeile je Lauf, klein).
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-012-zustand-abgebrochen') then
        raise exception 'Migration aw-012-zustand-abgebrochen ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-012-zustand-abgebrochen');

alter table auswahl_laeufe
    drop column zustand,
    -- offen: ohne Ende (läuft noch oder starb, bis ein anderer Lauf es bemerkt);
    -- erfolg: Exit 0; gesperrt: Exit 5 (ein anderer Lauf hielt die Sperre, oder der
    -- Lauf verlor seine); abgebrochen: Exit 130 (ein Signal: Strg-C, SIGTERM) – oder der
    -- Lauf trug sein Ende nicht ein und ein späterer schloss ihn (exit_code bleibt NULL,
    -- beendet_am ist der Augenblick, in dem er es bemerkte); fehler: jeder andere Exit-Code
    add column zustand text generated always as (
        case
            when beendet_am is null then 'offen'
            when exit_code = 0 then 'erfolg'
            when exit_code = 5 then 'gesperrt'
            when exit_code is null or exit_code = 130 then 'abgebrochen'
            else 'fehler'
        end
    ) stored;

commit;
