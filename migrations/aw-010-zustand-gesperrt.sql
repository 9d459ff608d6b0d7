-- aw-010: Exit 5 heißt gesperrt – im Protokoll für sich, nicht unter fehler.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-010-zustand-gesperrt.sql
-- oder:     .venv/bin/python check_db.py --migrieren
--
-- --nachholen aus cron endet mit Exit 5, wenn ein anderer Lauf die Sperre hält – alle
-- Viertelstunde möglich, kein Fehler. aw-007 zählt diesen Lauf unter fehler; diese
-- Migration nennt ihn gesperrt (auch ein Lauf, der seine Sperre verlor, endet mit
-- Exit 5), und die Abfrage „Hat cron heute gelaufen“ zählt ihn für sich. Die übrigen Zustände wie in aw-007;
-- abgebrochen heißt: der Lauf trug sein Ende nicht ein, ein späterer schloss ihn.
--
-- auswahl_letzter_slot (aw-007) las den Lauf mit „select *“ und hing damit an jeder
-- Spalte, auch an zustand; sie wird mit create or replace ersetzt – gleiche Spalten,
-- gleiche Zeilen, nur die gelesenen Spalten genannt –, so bleiben ihre Rechte
-- (das Rollenrezept muss nicht noch einmal laufen).
--
-- Dauer: die berechnete Spalte wird neu angelegt, auswahl_laeufe einmal neu
-- geschrieben (eine Zeile je Lauf, klein).
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-010-zustand-gesperrt') then
        raise exception 'Migration aw-010-zustand-gesperrt ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-010-zustand-gesperrt');

create or replace view auswahl_letzter_slot as
with aktuell as (
    select a.coder_version from auswahl_laeufe a where a.variante is null order by a.id desc limit 1
), letzter as (
    select r.slot, a.coder_version
    from raw_items r
    cross join aktuell a
    where exists (
        select 1 from selected_extractor s where s.item_id = r.id and s.coder_version = a.coder_version
    )
    order by r.slot desc
    limit 1
)
select l.slot, l.coder_version, k.items, k.kodiert, k.kodiert_am,
       lf.id as lauf_id, lf.begonnen_am, lf.beendet_am, lf.neu, lf.geaendert, lf.unveraendert, lf.entfernt
from letzter l
cross join lateral (
    select count(*) as items, count(s.item_id) as kodiert, max(s.kodiert_am) as kodiert_am
    from raw_items r
    left join selected_extractor s on s.item_id = r.id and s.coder_version = l.coder_version
    where r.slot = l.slot
) k
left join lateral (
    select x.id, x.begonnen_am, x.beendet_am, x.neu, x.geaendert, x.unveraendert, x.entfernt
    from auswahl_laeufe x
    where x.modus = 'slot' and x.slot = l.slot and x.teil is null and x.exit_code = 0
      and x.coder_version = l.coder_version
    order by x.id desc limit 1
) lf on true;

alter table auswahl_laeufe
    drop column zustand,
    -- offen: ohne Ende (läuft noch oder starb, bis ein anderer Lauf es bemerkt);
    -- erfolg: Exit 0; gesperrt: Exit 5 (ein anderer Lauf hielt die Sperre, oder der
    -- Lauf verlor seine); fehler: ein anderer Exit-Code (auch 130, Signal);
    -- abgebrochen: trug sein Ende nicht ein, ein späterer Lauf schloss ihn (beendet_am
    -- ist dann der Augenblick, in dem er es bemerkte; exit_code bleibt NULL)
    add column zustand text generated always as (
        case
            when beendet_am is null then 'offen'
            when exit_code = 0 then 'erfolg'
            when exit_code = 5 then 'gesperrt'
            when exit_code is null then 'abgebrochen'
            else 'fehler'
        end
    ) stored;

commit;
