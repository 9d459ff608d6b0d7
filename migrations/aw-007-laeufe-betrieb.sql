-- aw-007: Läufe im Betrieb – wie ein Lauf lief, wer die Sperre hält, tote Läufe, offene Slots.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-007-laeufe-betrieb.sql
-- oder:     .venv/bin/python check_db.py --migrieren
--
-- Damit cron keine Slots still verliert, die Sperrmeldung den Lauf nennt (nicht den
-- Serverprozess), abgebrochene Läufe nicht für immer offen bleiben und „lief, 0 Items“
-- nicht wie „kodiert“ aussieht, gibt diese Migration dem Protokoll (auswahl_laeufe,
-- aw-004), was dafür fehlt, und den Sichten der Überwachung die Regel, nach der
-- --nachholen findet, was noch zu tun ist.
--
-- Dauer: die berechnete Spalte zustand schreibt auswahl_laeufe einmal neu (eine
-- Zeile je Lauf, klein).
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-007-laeufe-betrieb') then
        raise exception 'Migration aw-007-laeufe-betrieb ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-007-laeufe-betrieb');

alter table auswahl_laeufe
    -- nachholen: ein Aufruf von --nachholen; jeden Slot, den er kodiert, trägt er als
    -- eigenen Lauf mit modus 'slot' ein (Spalte aufruf zeigt auf ihn)
    drop constraint auswahl_laeufe_modus_check,
    add constraint auswahl_laeufe_modus_check check (modus in ('backfill', 'slot', 'nachholen')),
    -- pg_backend_pid() der Schreibverbindung, die die Sperre des Laufs hält: daran
    -- erkennt ein anderer Lauf, wer die Sperre hält (pg_locks.pid) und ob ein offener
    -- Lauf noch lebt (pg_stat_activity.pid); beides sieht jede Rolle
    add column backend_pid integer,
    -- wie der Lauf lief: mit --extrahieren, mit --variante (ihr Name, NULL für die
    -- Voreinstellung), aus einem Aufruf von --nachholen (dessen id)
    add column extrahieren boolean not null default false,
    add column variante text,
    add column aufruf bigint references auswahl_laeufe (id) on delete set null,
    -- so viele Items hatte der Bereich des Laufs, als die Auswahl begann; 0 heißt
    -- „lief, aber nichts da“ (ein leerer Slot), nicht „kodiert“
    add column items integer,
    -- Items, die zwischen Lesen und Schreiben verschwanden (Ingest löschte sie,
    -- etwa nach seiner Aufbewahrungsfrist): übergangen und gezählt
    add column entfallen integer,
    -- offen: ohne Ende (läuft noch oder starb, bis ein anderer Lauf es bemerkt);
    -- erfolg: Exit 0; fehler: ein anderer Exit-Code (auch 130, Signal);
    -- abgebrochen: starb ohne Ende, ein späterer Lauf schloss ihn (beendet_am ist
    -- dann der Augenblick, in dem er es bemerkte; exit_code bleibt NULL)
    add column zustand text generated always as (
        case
            when beendet_am is null then 'offen'
            when exit_code = 0 then 'erfolg'
            when exit_code is null then 'abgebrochen'
            else 'fehler'
        end
    ) stored;

create index auswahl_laeufe_offen on auswahl_laeufe (id) where beendet_am is null;

-- Sichten kennen die Version des Codes nicht: „aktuell“ ist hier die coder_version des
-- jüngsten Laufs der Voreinstellung (ohne --variante). Jede Sicht nennt sie als Spalte.

-- Der späteste Slot, in dem die aktuelle coder_version ein Item kodiert hat – aus den
-- Daten, nicht aus den Läufen: ein Lauf über einen leeren Slot („lief, 0 Items“) zählt
-- nicht, ein Backfill schon. Dazu der letzte erfolgreiche ganze Lauf dieses Slots (falls
-- ihn ein Slot-Lauf kodierte; ein Backfill steht dort nicht). Mit einem Index auf
-- der Spalte slot von raw_items liest die Sicht nur die jüngsten Slots.
drop view auswahl_letzter_slot;
create view auswahl_letzter_slot as
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
    select * from auswahl_laeufe x
    where x.modus = 'slot' and x.slot = l.slot and x.teil is null and x.exit_code = 0
      and x.coder_version = l.coder_version
    order by x.id desc limit 1
) lf on true;

comment on view auswahl_letzter_slot is
    'Letzter Slot, in dem die aktuelle coder_version Items kodiert hat (wurzelwerk-auswahl).';

-- Slots, in denen noch etwas zu tun ist – genau die, die --extrahieren --nachholen nähme
-- (auswahlstufe/lauf/nachholen.py, SQL_OFFENE_SLOTS): ein Item mit Kandidaten hat keine
-- Entscheidung der aktuellen coder_version (der Slot lief nie, scheiterte, oder Items oder
-- Kandidaten kamen später), oder ein Item hat eine Seite, aber keine Kandidaten (sie
-- kam nach der Extraktion). Ein Slot, dessen Items weder Kandidaten noch Seiten haben,
-- steht hier nicht: dort ist nichts zu tun (ob dann die Extraktoren stehen, zeigt das Alter
-- von auswahl_letzter_slot).
drop view auswahl_slots_ohne_lauf;
create view auswahl_slots_ohne_lauf as
with aktuell as (
    select a.coder_version from auswahl_laeufe a where a.variante is null order by a.id desc limit 1
), ohne_entscheidung as (
    -- vor dem ersten Lauf gibt es keine aktuelle Version: dann fehlt jedem Item die Entscheidung
    select r.slot, count(*) as n
    from raw_items r
    where exists (select 1 from extraktionen e where e.item_id = r.id)
      and not exists (
          select 1 from selected_extractor s
          where s.item_id = r.id and s.coder_version = (select coder_version from aktuell)
      )
    group by r.slot
), seite_ohne_kandidaten as (
    select r.slot, count(*) as n
    from raw_items r
    join seiten p on p.item_id = r.id
    where not exists (select 1 from extraktionen e where e.item_id = r.id)
    group by r.slot
), offen as (
    select slot from ohne_entscheidung
    union
    select slot from seite_ohne_kandidaten
)
select o.slot, (select coder_version from aktuell) as coder_version, i.n as items,
       coalesce(oe.n, 0) as ohne_entscheidung, coalesce(sk.n, 0) as seite_ohne_kandidaten
from offen o
join (select r.slot, count(*) as n from raw_items r group by r.slot) i on i.slot = o.slot
left join ohne_entscheidung oe on oe.slot = o.slot
left join seite_ohne_kandidaten sk on sk.slot = o.slot
order by o.slot;

comment on view auswahl_slots_ohne_lauf is
    'Slots, in denen Items der aktuellen coder_version noch eine Entscheidung oder Kandidaten fehlen (wurzelwerk-auswahl).';

-- Läufe ohne Ende: läuft er noch (seine Sitzung lebt) oder starb er, und der nächste
-- schreibende Lauf schließt ihn als abgebrochen?
create view auswahl_offene_laeufe as
select l.id, l.modus, l.slot, l.teil, l.coder_version, l.extrahieren, l.variante, l.begonnen_am,
       now() - l.begonnen_am as dauer, l.rechner, l.pid, l.backend_pid,
       exists (select 1 from pg_stat_activity a where a.pid = l.backend_pid) as sitzung_lebt
from auswahl_laeufe l
where l.beendet_am is null
order by l.id;

comment on view auswahl_offene_laeufe is
    'Läufe ohne Ende und ob ihre Datenbanksitzung noch lebt (wurzelwerk-auswahl).';

commit;
