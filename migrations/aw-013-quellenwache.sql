-- aw-013: Quellenwache – merken, wenn ein Haus seine Seiten umbaut.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-013-quellenwache.sql
-- oder:     .venv/bin/python check_db.py --migrieren
--
-- * auswahl_kennzahlen: je (coder_version, haus, slot) Kennzahlen der Entscheidungen. Die Stufe
--   berechnet die Zeilen der (Haus, Slot)-Paare jedes geschriebenen Stapels neu
--   (auswahlstufe/lauf/schreiben.py); der nächste Backfill füllt sie für den ganzen Bestand.
-- * auswahl_quellenwache: je Haus und Merkmal, was jetzt auffällt – die letzten 24 Stunden vor
--   dem neuesten Slot gegen die 28 Tage davor, mit einem Zwei-Anteile-z-Test
--   (docs/quellenwache.md). Keine Zeile: nichts fällt auf.
-- * auswahl_quellenwache_gemeldet: welche Befunde ein Tick schon nannte und wann sie endeten.
--
-- Rechte: die Betriebsrolle schreibt beide Tabellen und liest die Sicht, aw_blick liest alle drei
-- (das Rezept rollen/aw-rolle-stufe.sql gibt es, docs/betrieb.md, Schritt 4 und 8). Die Stufe
-- liest dazu raw_items.haus – das gibt Ingest (docs/aenderungen.md, 2.1.0).
-- Dauer: legt leere Tabellen an, schreibt nichts um (Sekunden).
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-013-quellenwache') then
        raise exception 'Migration aw-013-quellenwache ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-013-quellenwache');

-- Zählungen über die Entscheidungen der Items eines Hauses in einem Slot. unbrauchbar: die
-- Klasse des Kandidaten ist nicht „nutzbar“ (leer, ohne Shingle, mit Fehler); abweichend: sein
-- Score (F1 gegen den Konsens, metriken) liegt unter 0,95; score_*: die Summe der Scores;
-- kurz: der gewählte Text hat weniger als 1.000 Zeichen; zeichen: ihre Summe.
create table auswahl_kennzahlen (
    coder_version text not null,
    haus text not null,
    slot timestamptz not null,
    items integer not null,
    unbrauchbar_newspaper4k integer not null,
    unbrauchbar_readability integer not null,
    unbrauchbar_trafilatura integer not null,
    gewaehlt_newspaper4k integer not null,
    gewaehlt_readability integer not null,
    gewaehlt_trafilatura integer not null,
    abweichend_newspaper4k integer not null,
    abweichend_readability integer not null,
    abweichend_trafilatura integer not null,
    score_newspaper4k double precision not null,
    score_readability double precision not null,
    score_trafilatura double precision not null,
    ohne_konsens integer not null,
    rueckfall integer not null,
    kurz integer not null,
    zeichen bigint not null,
    primary key (coder_version, haus, slot)
);
-- die Sicht liest die letzten 29 Tage einer Version
create index auswahl_kennzahlen_slot on auswahl_kennzahlen (coder_version, slot);

-- Was ein Tick schon nannte: ein offener Befund je (Version, Haus, Merkmal).
create table auswahl_quellenwache_gemeldet (
    coder_version text not null,
    haus text not null,
    merkmal text not null,
    seit timestamptz not null,
    satz text not null,
    gemeldet_am timestamptz not null default now(),
    beendet_am timestamptz
);
create unique index auswahl_quellenwache_offen
    on auswahl_quellenwache_gemeldet (coder_version, haus, merkmal) where beendet_am is null;

-- Je Haus und Merkmal: Anteil k/n der Items „jetzt“ (24 Stunden bis zum neuesten Slot der
-- aktuellen coder_version) gegen „vorher“ (die 28 Tage davor). Auffällig, wenn beide Fenster
-- genug Items haben (jetzt ≥ 8, vorher ≥ 50), |z| ≥ 5 im Zwei-Anteile-z-Test (gepoolt) und die
-- Anteile um mindestens 25 Prozentpunkte auseinanderliegen. seit: der Slot, ab dem der Wert kippt
-- (CUSUM über die Slots von jetzt gegen eine Schwelle drei Viertel des Wegs von vorher nach
-- jetzt; unter den Slots bis ein Item unter dem Maximum der späteste – ein zufälliger Treffer
-- kurz vor der Verschiebung zieht seit nicht vor sie). jetzt und
-- items zählen ab seit. Alles relativ zum neuesten Slot, nicht zur Uhr: dieselbe Geschichte
-- gibt dieselbe Antwort.
create view auswahl_quellenwache as
with aktuell as (
    select a.coder_version from auswahl_laeufe a where a.variante is null order by a.id desc limit 1
), grenze as (
    select a.coder_version,
           (select max(k.slot) from auswahl_kennzahlen k where k.coder_version = a.coder_version) as bis
    from aktuell a
), teile as (
    -- vorher als eine Zeile je Haus (slot NULL), jetzt je Slot
    select k.coder_version, k.haus, null::timestamptz as slot, sum(k.items) as items,
           sum(k.unbrauchbar_newspaper4k) as unbrauchbar_newspaper4k,
           sum(k.unbrauchbar_readability) as unbrauchbar_readability,
           sum(k.unbrauchbar_trafilatura) as unbrauchbar_trafilatura,
           sum(k.gewaehlt_newspaper4k) as gewaehlt_newspaper4k,
           sum(k.gewaehlt_readability) as gewaehlt_readability,
           sum(k.gewaehlt_trafilatura) as gewaehlt_trafilatura,
           sum(k.abweichend_newspaper4k) as abweichend_newspaper4k,
           sum(k.abweichend_readability) as abweichend_readability,
           sum(k.abweichend_trafilatura) as abweichend_trafilatura,
           sum(k.ohne_konsens) as ohne_konsens, sum(k.rueckfall) as rueckfall, sum(k.kurz) as kurz
    from grenze g join auswahl_kennzahlen k using (coder_version)
    where k.slot > g.bis - interval '29 days' and k.slot <= g.bis - interval '24 hours'
    group by k.coder_version, k.haus
    union all
    select k.coder_version, k.haus, k.slot, k.items,
           k.unbrauchbar_newspaper4k, k.unbrauchbar_readability, k.unbrauchbar_trafilatura,
           k.gewaehlt_newspaper4k, k.gewaehlt_readability, k.gewaehlt_trafilatura,
           k.abweichend_newspaper4k, k.abweichend_readability, k.abweichend_trafilatura,
           k.ohne_konsens, k.rueckfall, k.kurz
    from grenze g join auswahl_kennzahlen k using (coder_version)
    where k.slot > g.bis - interval '24 hours'
), lang as (
    -- je Merkmal die Zahl k der Items und der Satz (%1$s Zeitpunkt, %2$s Anteil in Prozent)
    select t.coder_version, t.haus, t.slot, t.items, m.merkmal, m.k, m.satz
    from teile t
    cross join lateral (values
        ('unbrauchbar newspaper4k', t.unbrauchbar_newspaper4k, 'newspaper4k liefert seit %1$s bei %2$s %% der Items keinen Text'),
        ('unbrauchbar readability', t.unbrauchbar_readability, 'readability liefert seit %1$s bei %2$s %% der Items keinen Text'),
        ('unbrauchbar trafilatura', t.unbrauchbar_trafilatura, 'trafilatura liefert seit %1$s bei %2$s %% der Items keinen Text'),
        ('gewählt newspaper4k', t.gewaehlt_newspaper4k, 'newspaper4k wird seit %1$s bei %2$s %% der Items gewählt'),
        ('gewählt readability', t.gewaehlt_readability, 'readability wird seit %1$s bei %2$s %% der Items gewählt'),
        ('gewählt trafilatura', t.gewaehlt_trafilatura, 'trafilatura wird seit %1$s bei %2$s %% der Items gewählt'),
        ('abweichend newspaper4k', t.abweichend_newspaper4k, 'newspaper4k weicht seit %1$s bei %2$s %% der Items vom Konsens ab'),
        ('abweichend readability', t.abweichend_readability, 'readability weicht seit %1$s bei %2$s %% der Items vom Konsens ab'),
        ('abweichend trafilatura', t.abweichend_trafilatura, 'trafilatura weicht seit %1$s bei %2$s %% der Items vom Konsens ab'),
        ('ohne Konsens', t.ohne_konsens, 'seit %1$s haben %2$s %% der Items keinen Konsens'),
        ('Rückfall', t.rueckfall, 'seit %1$s hat bei %2$s %% der Items kein Extraktor Text'),
        ('kurz', t.kurz, 'seit %1$s ist der gewählte Text bei %2$s %% der Items kürzer als 1.000 Zeichen')
    ) as m (merkmal, k, satz)
), anteile as (
    -- je Zeile die Anteile des ganzen (Haus, Merkmal): p0 vorher, p1 jetzt; ohne Selbstverbund
    select l.*,
           (sum(l.k) filter (where l.slot is null) over g)::float8
               / (sum(l.items) filter (where l.slot is null) over g) as p0,
           (sum(l.k) filter (where l.slot is not null) over g)::float8
               / (sum(l.items) filter (where l.slot is not null) over g) as p1,
           sum(l.items) filter (where l.slot is null) over g as n0,
           sum(l.items) filter (where l.slot is not null) over g as n1
    from lang l
    window g as (partition by l.coder_version, l.haus, l.merkmal)
), auffaellig as (
    -- Zwei-Anteile-z-Test mit gepooltem Anteil p
    select * from (
        select *, (p1 - p0) / nullif(sqrt(p * (1 - p) * (1.0 / n1 + 1.0 / n0)), 0) as z
        from (select *, (p0 * n0 + p1 * n1) / (n0 + n1) as p from anteile) as mit_p
    ) as mit_z
    where slot is not null and n1 >= 8 and n0 >= 50 and abs(z) >= 5 and abs(p1 - p0) >= 0.25
), kippen as (
    -- je Slot von jetzt: die Summe ab ihm (bis zum neuesten) über die Abweichung von der Schwelle
    select a.coder_version, a.haus, a.merkmal, a.satz, a.p0, a.slot,
           sum(sign(a.p1 - a.p0) * (a.k - a.items * (a.p0 + 0.75 * (a.p1 - a.p0)))) over ab as rest,
           -- was ein Item in Richtung der Verschiebung beiträgt
           case when a.p1 > a.p0 then 1 - (a.p0 + 0.75 * (a.p1 - a.p0)) else a.p0 + 0.75 * (a.p1 - a.p0) end
               as ein_item,
           sum(a.items) over ab as items, sum(a.k) over ab as k
    from auffaellig a
    window ab as (partition by a.coder_version, a.haus, a.merkmal order by a.slot desc)
), seit as (
    select distinct on (coder_version, haus, merkmal) *
    from (select *, max(rest) over (partition by coder_version, haus, merkmal) as hoechst from kippen) x
    where rest >= hoechst - ein_item
    order by coder_version, haus, merkmal, slot desc
)
select s.haus, s.merkmal, s.slot as seit,
       round(100 * s.p0::numeric, 1) as vorher, round(100.0 * s.k / s.items, 1) as jetzt, s.items::bigint as items,
       s.haus || ': ' || format(s.satz, to_char(s.slot at time zone 'Europe/Berlin', 'FMDD.FMMM. HH24:MI'),
                                round(100.0 * s.k / s.items))
           || format(' (vorher %s %%)', round(100 * s.p0::numeric)) as satz,
       s.coder_version
from seit s
order by s.haus, s.merkmal;

comment on view auswahl_quellenwache is
    'Je Haus und Merkmal, was jetzt auffällt: 24 h gegen die 28 Tage davor (docs/quellenwache.md; wurzelwerk-auswahl).';

commit;
