-- aw-005: die Prüfsumme der Kandidatentexte mit SHA-256 statt MD5.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-005-sha256.sql
-- oder:     .venv/bin/python check_db.py --migrieren
--
-- md5() ist auf Servern im FIPS-Modus gesperrt: dort scheiterte jedes Schreiben
-- in extraktionen an der berechneten Spalte text_md5. sha256() geht überall.
-- (aw-001 legt text_md5 noch an; auf einer leeren Tabelle ist das auch im
-- FIPS-Modus harmlos, weil md5() erst beim Schreiben liefe.)
--
-- Dauer: die neue berechnete Spalte schreibt extraktionen einmal neu (unter
-- einer exklusiven Sperre; check_db.py --migrieren läuft ohne statement_timeout).
--
-- Die Stufe vergleicht je Item eine Prüfsumme der Eingabe, die aus diesen
-- Spaltenwerten gebildet ist. Damit der nächste Lauf nicht alles neu rechnet,
-- rechnet diese Migration die gespeicherten Prüfsummen um – aber nur, wo sie
-- zur heutigen Eingabe passen (wo nicht, rechnet der Lauf ohnehin neu). Die
-- Formel ist die von SQL_LESEN in auswahlstufe/lauf/lesen.py (Name, Prüfsumme des Texts als Hex,
-- Fehler mit Länge davor; nur die bekannten Extraktoren), einmal mit der alten
-- und einmal mit der neuen Spalte. Ergebnisse und ergebnissumme ändern sich nicht.
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-005-sha256') then
        raise exception 'Migration aw-005-sha256 ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-005-sha256');

-- SHA-256 der UTF-8-Bytes des Texts: decode(…, 'escape') liefert die Bytes des
-- Texts (verdoppelte Backslashes zurück zu einem) und ist, anders als
-- convert_to(), als unveränderlich markiert – das verlangt eine berechnete Spalte.
alter table extraktionen
    add column text_sha256 bytea generated always as (sha256(decode(replace(text, '\', '\\'), 'escape'))) stored;

with summen as (
    select e.item_id,
           sha256(convert_to(coalesce(string_agg(
               e.extraktor || ':' || coalesce(encode(e.text_md5, 'hex'), 'N') || ':'
               || coalesce(length(e.fehler)::text || ':' || e.fehler, 'N') || ';',
               '' order by e.extraktor) filter (where e.extraktor = any(k.bekannt)), ''), 'UTF8')) as alt,
           sha256(convert_to(coalesce(string_agg(
               e.extraktor || ':' || coalesce(encode(e.text_sha256, 'hex'), 'N') || ':'
               || coalesce(length(e.fehler)::text || ':' || e.fehler, 'N') || ';',
               '' order by e.extraktor) filter (where e.extraktor = any(k.bekannt)), ''), 'UTF8')) as neu
    from extraktionen e,
         (select array['newspaper4k', 'readability', 'trafilatura'] as bekannt) k
    group by e.item_id
)
update selected_extractor s
set pruefsumme = summen.neu
from summen
where s.item_id = summen.item_id and s.pruefsumme = summen.alt;

alter table extraktionen drop column text_md5;

comment on column extraktionen.text_sha256 is
    'SHA-256 des Texts (UTF-8), vom Server beim Schreiben berechnet; daran erkennt die Auswahl unveränderte Kandidaten.';

commit;
