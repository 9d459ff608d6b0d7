-- Rolle mit geringsten Rechten für den Betrieb der Stufe (wurzelwerk-auswahl).
--
-- Sie darf raw_items und extraktionen lesen und selected_extractor lesen und
-- schreiben (einfügen, ändern, löschen) – sonst nichts: keine Tabelle anlegen,
-- ändern oder löschen, nichts in raw_items, extraktionen oder
-- schema_migrationen schreiben. Dazu kommt, was ein Lauf nebenbei braucht:
-- CONNECT und TEMP auf der Datenbank (jeder Stapel geht per COPY durch eine
-- temporäre Tabelle), USAGE auf dem Schema und SELECT auf schema_migrationen
-- (die Stufe prüft vor dem Lauf, ob alle Migrationen angewandt sind). Die
-- Advisory-Locks eines Laufs brauchen kein Recht.
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
--
-- --einlesen (Kandidaten aus einer Datei laden) schreibt extraktionen und
-- gehört nicht zum Betrieb der Stufe; wer es unter dieser Rolle braucht,
-- vergibt zusätzlich: grant insert, update on extraktionen to aw_stufe;

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

-- Die Datenbank: verbinden und temporäre Tabellen (für die Stapel).
select current_database() as datenbank \gset
grant connect, temporary on database :"datenbank" to :"rolle";
grant usage on schema public to :"rolle";

-- Lesen, was die Stufe liest.
grant select on table raw_items, extraktionen, schema_migrationen to :"rolle";

-- Schreiben, was die Stufe schreibt.
grant select, insert, update, delete on table selected_extractor to :"rolle";

commit;
