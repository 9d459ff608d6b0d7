-- aw-011: ein Protokoll, das stimmt, und eine Überwachung, die auch verpasste Ticks sieht.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-011-verlauf-und-fortschritt.sql
-- oder:     .venv/bin/python check_db.py --migrieren
--
-- * Läufe, die vor aw-007 begannen, kannten die Spalten extrahieren und variante nicht;
--   aw-007 trug dort false und NULL ein. extrahieren ist für sie unbekannt (NULL), variante
--   steht in ihrer coder_version (k, Toleranz, Vergleichsschlüssel) und wird daraus abgeleitet.
--   So nimmt keine Sicht die Version einer Variante für die aktuelle.
-- * auswahl_laeufe.fortschritt: ein langer Lauf trägt alle 10 s ein, wie weit er ist; die
--   Sicht auswahl_fortschritt rechnet Rate und Ende daraus.
-- * auswahl_slots: je Slot der letzten acht Tage, wann die erste Entscheidung kam (verzug).
--   Ein Tick, der die Datenbank nie erreichte (Passwort falsch, Server aus), hinterlässt keinen
--   Lauf – aber einen Slot, der zu spät oder gar nicht entschieden wurde.
-- * auswahl_extraktion_fassungen: wie viele Kandidaten welche Fassung eines Extraktors tragen
--   (nach einem Update der Extraktoren: wie weit die neue Extraktion ist).
-- * auswahl_slots_ohne_lauf: der neueste Slot zuerst, wie --nachholen sie nimmt.
--
-- Rechte: aw_blick und die Betriebsrolle lesen die drei neuen Sichten (das Rezept
-- rollen/aw-rolle-stufe.sql gibt es, docs/betrieb.md, Schritt 4 und 8).
-- Dauer: schreibt nur die Zeilen von auswahl_laeufe, die vor aw-007 begannen (eine je Lauf).
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-011-verlauf-und-fortschritt') then
        raise exception 'Migration aw-011-verlauf-und-fortschritt ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-011-verlauf-und-fortschritt');

alter table auswahl_laeufe
    -- NULL: unbekannt (ein Lauf, der vor aw-007 begann)
    alter column extrahieren drop not null,
    -- {"phase": "Extrahieren"|"Kodieren", "fertig": n, "gesamt": m, "seit": Beginn der Phase,
    --  "am": Zeitpunkt des Eintrags}; nur solange der Lauf arbeitet von Belang
    add column fortschritt jsonb;

comment on column auswahl_laeufe.extrahieren is
    'Lauf mit --extrahieren; NULL: unbekannt (begann vor aw-007) (wurzelwerk-auswahl).';

-- Die Läufe vor aw-007: die Variante steht in der coder_version (version.py: k5 und t0.03 sind
-- die Voreinstellung, norm-0 der Vergleichsschlüssel nach Quelle 000); ob extrahiert wurde,
-- sagt nichts mehr.
with vorher as (
    select l.id,
           substring(l.coder_version from '\+k(\d+)\+') as k,
           substring(l.coder_version from '\+t([0-9.]+)\+') as t,
           l.coder_version like '%+norm-0+%' as quelle000
    from auswahl_laeufe l
    where l.begonnen_am < (select angewandt_am from schema_migrationen where name = 'aw-007-laeufe-betrieb')
)
update auswahl_laeufe l
set extrahieren = null,
    variante = nullif(concat_ws('+',
        case when (v.k, v.t) is distinct from ('5', '0.03') then 'k' || v.k || ':' || v.t end,
        case when v.quelle000 then 'quelle000' end), '')
from vorher v
where l.id = v.id;

create or replace view auswahl_slots_ohne_lauf as
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
order by o.slot desc;

-- Je Slot der letzten acht Tage: Items, davon mit Arbeit (Kandidaten oder Seite), davon
-- kodiert (aktuelle coder_version), die erste Entscheidung und ihr Verzug nach dem Poll (der
-- Slot ist der Zeitpunkt des Polls). Fehlt sie noch, zählt der Verzug bis jetzt. cron ruft fünf
-- Minuten nach dem Poll; ein Verzug über 15 Minuten heißt: mindestens ein Tick kam nicht durch
-- (docs/betrieb.md, Abfragen). Ein Slot ohne Arbeit hat keinen Verzug. Die erste Entscheidung
-- ist die früheste in jeder coder_version – oder das Ende des ersten gelungenen Slot-Laufs:
-- kodiert_am trägt die letzte Änderung einer Zeile, und ein späterer Backfill (einer neuen
-- Fassung, nach einer neuen Extraktion) macht einen rechtzeitigen Tick nicht verspätet.
create view auswahl_slots as
with aktuell as (
    select a.coder_version from auswahl_laeufe a where a.variante is null order by a.id desc limit 1
), je_slot as (
    select r.slot, count(*) as items,
           count(*) filter (
               where exists (select 1 from extraktionen e where e.item_id = r.id)
                  or exists (select 1 from seiten p where p.item_id = r.id)
           ) as mit_arbeit,
           count(*) filter (
               where exists (
                   select 1 from selected_extractor s
                   where s.item_id = r.id and s.coder_version = (select coder_version from aktuell)
               )
           ) as kodiert,
           min((select min(s.kodiert_am) from selected_extractor s where s.item_id = r.id)) as erste_zeile
    from raw_items r
    where r.slot > now() - interval '8 days'
    group by r.slot
), slot_laeufe as (
    select l.slot, min(l.beendet_am) as erster
    from auswahl_laeufe l
    where l.modus = 'slot' and l.exit_code = 0 and l.slot > now() - interval '8 days'
    group by l.slot
)
select j.slot, (select coder_version from aktuell) as coder_version, j.items, j.mit_arbeit, j.kodiert,
       least(j.erste_zeile, sl.erster) as erste_entscheidung,
       case when j.mit_arbeit > 0 then coalesce(least(j.erste_zeile, sl.erster), now()) - j.slot end as verzug
from je_slot j
left join slot_laeufe sl on sl.slot = j.slot
order by j.slot desc;

comment on view auswahl_slots is
    'Slots der letzten acht Tage: wann die erste Entscheidung kam, wie lange nach dem Poll (wurzelwerk-auswahl).';

-- Wie weit ein laufender Lauf ist (aus auswahl_laeufe.fortschritt, alle 10 s eingetragen): Phase,
-- fertig von gesamt, Rate seit Beginn der Phase und das erwartete Ende der Phase.
create view auswahl_fortschritt as
select l.id, l.modus, l.slot, l.teil, l.coder_version, l.extrahieren, l.begonnen_am,
       f.phase, f.fertig, f.gesamt,
       -- gerundet wie die Zeile des Laufs (fortschritt.py): 100 erst, wenn alles fertig ist
       case when f.fertig >= f.gesamt then 100 else least(round(100.0 * f.fertig / nullif(f.gesamt, 0)), 99) end
           as prozent,
       round((f.fertig / nullif(extract(epoch from f.am - f.seit), 0))::numeric, 1) as je_sekunde,
       f.am as stand_am,
       case when f.fertig > 0 then f.am + (f.am - f.seit) * ((f.gesamt - f.fertig)::float8 / f.fertig) end
           as ende_gegen
from auswahl_laeufe l
cross join lateral jsonb_to_record(l.fortschritt)
    as f (phase text, fertig bigint, gesamt bigint, seit timestamptz, am timestamptz)
where l.beendet_am is null
order by l.id;

comment on view auswahl_fortschritt is
    'Laufende Läufe: Phase, fertig von gesamt, Rate und erwartetes Ende (wurzelwerk-auswahl).';

-- Welche Fassung eines Extraktors wie viele Kandidaten tragen; nach einem Update der
-- Extraktoren wächst die neue, die alte schrumpft (auswahl.py --version nennt die neue).
create view auswahl_extraktion_fassungen as
select e.extraktor, e.extraktor_fassung, count(*) as kandidaten,
       count(*) filter (where e.fehler is not null) as mit_fehler,
       min(e.extrahiert_am) as erste, max(e.extrahiert_am) as letzte
from extraktionen e
group by e.extraktor, e.extraktor_fassung
order by e.extraktor, max(e.extrahiert_am) desc;

comment on view auswahl_extraktion_fassungen is
    'Kandidaten je Extraktor und Fassung: wie weit eine neue Extraktion ist (wurzelwerk-auswahl).';

commit;
