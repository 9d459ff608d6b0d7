-- Rolle mit geringsten Rechten für den Betrieb der Stufe (wurzelwerk-auswahl).
--
-- ERZEUGT aus auswahlstufe/lauf/rechte.py, im Klon mit
--   .venv/bin/python -m auswahlstufe.lauf.rechte --rezept > rollen/aw-rolle-stufe.sql
-- nicht von Hand ändern – ein Test vergleicht die Datei mit rechte.py.
--
-- Die Rolle bekommt, was die Modi lauf, trocken, stichprobe, check_db brauchen (Tabelle in
-- docs/betrieb.md): raw_items und extraktionen lesen, selected_extractor lesen
-- und schreiben, schema_migrationen lesen, CONNECT und TEMPORARY auf der
-- Datenbank, USAGE auf dem Schema, das Protokoll der Läufe (auswahl_laeufe)
-- lesen und schreiben – sonst nichts. Mit -v einlesen=1 zusätzlich, was
-- --einlesen braucht (extraktionen einfügen, ändern, löschen; seiten lesen,
-- einfügen, ändern); mit
-- -v extrahieren=1, was --extrahieren --backfill/--slot/--nachholen braucht (seiten lesen,
-- extraktionen einfügen und ändern). Die Advisory-Locks eines Laufs brauchen
-- kein Recht. Migrieren darf die Rolle nicht.
--
-- Ausführen als Eigentümer der Tabellen (der Rolle, die die Migrationen
-- angewandt hat) oder als Superuser, in der Datenbank der Stufe:
--
--   psql "$ADMIN_URL" -X -v ON_ERROR_STOP=1 \
--        -v rolle=aw_stufe -v passwort="$(cat ~/.aw_stufe_passwort)" \
--        -f rollen/aw-rolle-stufe.sql
--
-- Mehrfach ausführbar: gibt es die Rolle schon, bekommt sie nur das Passwort
-- und die Rechte neu. Das Passwort geht als scram-sha-256-Hash zum Server
-- (password_encryption), steht aber als psql-Variable in der Kommandozeile –
-- wer das nicht will, lässt -v passwort weg und setzt es danach mit \password.
-- Ohne CREATEROLE/Superuser scheitert das Anlegen der Rolle: dann legt ein
-- Admin sie an, und das Skript vergibt nur noch die Rechte.

\if :{?rolle}
\else
    -- ein Fehler statt \quit: mit ON_ERROR_STOP endet psql dann mit Exit 3
    do $$ begin raise exception 'Rollenname fehlt: psql … -v rolle=aw_stufe -f rollen/aw-rolle-stufe.sql'; end $$;
\endif

begin;

-- Die Rolle: anmelden ja, sonst keine Sonderrechte; erbt nichts von Gruppen.
select format('create role %I login', :'rolle')
where not exists (select 1 from pg_roles where rolname = :'rolle') \gexec
alter role :"rolle" login nosuperuser nocreatedb nocreaterole noinherit noreplication nobypassrls;
\if :{?passwort}
alter role :"rolle" password :'passwort';
\endif

select current_database() as datenbank \gset

-- Betrieb: lauf, trocken, stichprobe, check_db
grant connect, temporary on database :"datenbank" to :"rolle";
grant usage on schema public to :"rolle";
grant select on table schema_migrationen to :"rolle";
grant select on table raw_items to :"rolle";
grant select on table extraktionen to :"rolle";
grant select, insert, update, delete on table selected_extractor to :"rolle";
grant select, insert, update on table auswahl_laeufe to :"rolle";

-- Zusätzlich für --einlesen (nur mit -v einlesen=1)
\if :{?einlesen}
grant insert, update, delete on table extraktionen to :"rolle";
grant select, insert, update on table seiten to :"rolle";
\endif

-- Zusätzlich für --extrahieren (nur mit -v extrahieren=1)
\if :{?extrahieren}
grant select on table seiten to :"rolle";
grant insert, update on table extraktionen to :"rolle";
\endif

commit;
