-- aw-004: Protokoll der Läufe – wann lief welcher Slot, wie lange, was änderte er, starb er?
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-004-laeufe.sql
-- Jeder Lauf außer --trocken trägt sich beim Start ein (eigene kurze
-- Transaktion) und am Ende mit Zählung, Exit-Code und Meldung. Ein Lauf, der
-- getötet wurde oder dessen Server verschwand, bleibt ohne beendet_am stehen.
-- Die Stufe braucht darauf SELECT, INSERT und UPDATE (RETURNING id und
-- WHERE id = … lesen die Spalte id); die Identitätsspalte braucht kein Recht
-- auf ihre Sequenz.
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-004-laeufe') then
        raise exception 'Migration aw-004-laeufe ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-004-laeufe');

create table auswahl_laeufe (
    id bigint generated always as identity primary key,
    begonnen_am timestamptz not null default now(),
    -- NULL: der Lauf läuft noch – oder starb, ohne sich abzumelden (SIGKILL, Server weg)
    beendet_am timestamptz,
    -- backfill oder slot
    modus text not null check (modus in ('backfill', 'slot')),
    -- der Slot (nur bei modus = 'slot')
    slot timestamptz check ((modus = 'slot') = (slot is not null)),
    -- K/N bei --teil, sonst NULL
    teil text,
    coder_version text not null,
    prozesse integer,
    stichprobe integer,
    -- die Bilanz des Laufs (am Ende; bei einem Fehler: was bis dahin geschrieben war)
    neu integer,
    geaendert integer,
    unveraendert integer,
    entfernt integer,
    ohne_kandidaten integer,
    -- Eingabe geändert, Ergebnis gleich: nur die Eingabe-Summe nachgetragen
    nachgetragen integer,
    -- Exit-Code wie auswahl.py (auswahlstufe/fehler.py): 0 Erfolg, 5 gesperrt, 8 Worker tot …
    exit_code integer,
    meldung text,
    rechner text not null,
    pid integer not null
);

create index auswahl_laeufe_slot on auswahl_laeufe (slot) where slot is not null;

comment on table auswahl_laeufe is
    'Protokoll der Läufe der Volltextauswahl: Start, Ende, Modus, Zählung, Exit-Code (wurzelwerk-auswahl).';

-- Der letzte Slot, für den ein ganzer --slot-Lauf (kein --teil) erfolgreich endete.
create view auswahl_letzter_slot as
select slot, coder_version, begonnen_am, beendet_am, neu, geaendert, unveraendert, entfernt
from auswahl_laeufe
where modus = 'slot' and teil is null and exit_code = 0
order by slot desc, id desc
limit 1;

comment on view auswahl_letzter_slot is
    'Letzter Slot mit erfolgreichem --slot-Lauf (wurzelwerk-auswahl).';

-- Slots mit Items in raw_items, für die kein ganzer --slot-Lauf erfolgreich endete
-- (gleich welche coder_version; ein --backfill zählt hier nicht).
create view auswahl_slots_ohne_lauf as
select distinct r.slot
from raw_items r
where not exists (
    select 1 from auswahl_laeufe l
    where l.modus = 'slot' and l.teil is null and l.exit_code = 0 and l.slot = r.slot
)
order by r.slot;

comment on view auswahl_slots_ohne_lauf is
    'Slots mit Items, aber ohne erfolgreichen --slot-Lauf (wurzelwerk-auswahl).';

commit;
