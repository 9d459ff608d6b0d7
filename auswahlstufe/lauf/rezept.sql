-- Vorlage des Rollenrezepts rollen/aw-rolle-stufe.sql. Das SQL des Rezepts wird hier
-- geändert, danach im Klon neu erzeugt:
--   .venv/bin/python -m auswahlstufe.lauf.rechte --rezept > rollen/aw-rolle-stufe.sql
--
-- auswahlstufe/lauf/rezept.py setzt zwei Marken ein, jede steht genau einmal da:
--   «betrieb»  die Modi, deren Rechte die Betriebsrolle bekommt (rechte.BETRIEB)
--   «werte»    je Recht eine Zeile der values-Liste in Schritt 4 (teil, art, objekt,
--              recht, wenn_vorhanden), aus den Modi in rechte.py
-- Guillemets kommen in SQL, PL/pgSQL und psql nicht vor; alles andere geht unverändert
-- ins Rezept. Bis einschließlich der nächsten Zeile ist das hier nur der Kopf der Vorlage.
-- «Anfang des Rezepts»
-- Rollen für den Betrieb der Stufe (wurzelwerk-auswahl): die Betriebsrolle und,
-- auf Wunsch, eine Rolle, die nur die Sichten liest.
--
-- ERZEUGT aus auswahlstufe/lauf/rechte.py, im Klon mit
--   .venv/bin/python -m auswahlstufe.lauf.rechte --rezept > rollen/aw-rolle-stufe.sql
-- nicht von Hand ändern – ein Test vergleicht die Datei mit rechte.py.
--
-- Ausführen als Admin der Stufe – die Rolle, die migriert hat und den Tabellen der
-- Stufe gehört, mit CREATEROLE, ohne Superuser (PostgreSQL 15 bis 18) –, im Klon
-- (docs/betrieb.md, Einrichtung, Schritt 4):
--
--   psql -X -v ON_ERROR_STOP=1 -U aw_admin -d wurzelwerk \
--        -v rolle=aw_stufe -v passwort_datei="$HOME/.aw_stufe_passwort" \
--        -v einlesen=1 -v extrahieren=1 -f rollen/aw-rolle-stufe.sql
--
-- Variablen (psql -v):
--   rolle=NAME         die Rolle (Pflicht); gibt es sie nicht, legt das Rezept sie an
--   passwort_datei=P   ihr Passwort: die erste Zeile der Datei P (steht so in keiner
--                      Prozessliste); oder passwort=…; ohne beide bleibt das bisherige
--   einlesen=1         dazu, was auswahl.py --einlesen braucht
--   extrahieren=1      dazu, was auswahl.py --extrahieren braucht
--   nur_blick=1        statt der Betriebsrechte nur lesen: die Sichten,
--                      auswahl_laeufe und die Tabellen der Quellenwache
--                      (eine Rolle zur Überwachung)
--
-- Die Rolle bekommt LOGIN und NOINHERIT, sonst kein Sonderrecht: nach dem Anlegen
-- prüft das Rezept SUPERUSER, CREATEDB, CREATEROLE, REPLICATION und BYPASSRLS und
-- bricht ab, wenn eines gesetzt ist (ein Nicht-Superuser darf diese Attribute ab
-- PostgreSQL 15 nicht einmal verneinen). Die Rechte je Modus stehen in der Tabelle
-- in docs/betrieb.md; die Betriebsrolle bekommt die von «betrieb». Was der Admin nicht
-- weitergeben kann (SELECT auf raw_items ohne Weitergabe von Ingest), nennt das Rezept
-- mit der Anweisung, die der Eigentümer ausführt – dann ändert sich nichts.
--
-- Mehrfach ausführbar: gibt es die Rolle schon, bekommt sie die Rechte (und mit
-- passwort_datei/passwort das Passwort) neu; genommen wird nichts. Ab PostgreSQL 16
-- ändert der Admin nur Rollen, auf die er die ADMIN OPTION hat – die er selbst
-- angelegt hat, hat er sie. Alles läuft in einer Transaktion: scheitert etwas,
-- bleibt nichts. Das Passwort geht im Klartext in ALTER ROLE zum Server (mit
-- log_statement = ddl stünde es im Serverlog; dann lieber \password in psql).

-- Fehler als der eine Satz des Rezepts, ohne psqls „CONTEXT: PL/pgSQL function …“.
\set VERBOSITY terse

\if :{?rolle}
\else
    -- ein Fehler statt \quit: mit ON_ERROR_STOP endet psql dann mit Exit 3
    do $$ begin raise exception 'Rollenname fehlt: psql … -v rolle=aw_stufe -f rollen/aw-rolle-stufe.sql'; end $$;
\endif
\if :{?passwort_datei}
\set passwort `cat :'passwort_datei' 2>/dev/null`
\endif
\if :{?passwort}
select :'passwort' = '' as aw_passwort_leer \gset
\if :aw_passwort_leer
    do $$ begin raise exception 'Das Passwort ist leer (oder passwort_datei ist nicht lesbar) – nichts geändert.'; end $$;
\endif
\endif

begin;

-- Was die Prüfungen unten brauchen (in $$ … $$ setzt psql keine Variablen ein).
set local aw.rolle = :'rolle';
set local aw.blick = 'ja';
\if :{?nur_blick}
\else
set local aw.betrieb = 'ja';
\endif
\if :{?einlesen}
set local aw.einlesen = 'ja';
\endif
\if :{?extrahieren}
set local aw.extrahieren = 'ja';
\endif

-- 1. Läuft das Rezept als Admin der Stufe, und darf er die Rolle anlegen oder ändern?
do $$
declare
    rolle text := current_setting('aw.rolle');
    admin oid := (select relowner from pg_class where oid = to_regclass('selected_extractor'));
    ziel record;
begin
    if rolle = '' then
        raise exception 'Rollenname ist leer: psql … -v rolle=aw_stufe';
    end if;
    -- Die Tabellen gibt es erst nach dem Migrieren; fehlen sie, sagt es Schritt 4 unten.
    if admin is not null and (select rolsuper from pg_roles where rolname = current_user) then
        raise warning 'Das Rezept läuft als Superuser %. Gedacht ist es für den Admin der Stufe (%, Eigentümer der Tabellen der Stufe); nach Schritt 1 braucht die Einrichtung keinen Superuser (docs/betrieb.md, Einrichtung, Schritt 4).',
            current_user, pg_get_userbyid(admin);
    elsif admin is not null and not pg_has_role(current_user, admin, 'USAGE') then
        raise exception 'Das Rezept läuft als Admin der Stufe – der Rolle, die migriert hat und den Tabellen der Stufe gehört: das ist %, nicht %. Als % ausführen: psql -X -v ON_ERROR_STOP=1 -U % -d % -v rolle=% … -f rollen/aw-rolle-stufe.sql (docs/betrieb.md, Einrichtung, Schritt 4). Nichts geändert.',
            pg_get_userbyid(admin), current_user, pg_get_userbyid(admin), quote_ident(pg_get_userbyid(admin)),
            quote_ident(current_database()), quote_ident(rolle);
    end if;
    if not (select rolsuper or rolcreaterole from pg_roles where rolname = current_user) then
        raise exception '% darf keine Rollen anlegen (CREATEROLE fehlt). Ein Superuser gibt es: alter role % createrole;',
            current_user, quote_ident(current_user);
    end if;
    select oid, rolsuper into ziel from pg_roles where rolname = rolle;
    if found and ziel.rolsuper then
        raise exception 'Die Rolle % ist Superuser – als Rolle der Stufe ungeeignet; einen anderen Namen wählen.', rolle;
    end if;
    if found and current_setting('server_version_num')::int >= 160000
       and not (select rolsuper from pg_roles where rolname = current_user)
       and not pg_has_role(current_user, ziel.oid, 'MEMBER WITH ADMIN OPTION') then
        raise exception 'Die Rolle % gibt es schon, aber % darf sie nicht ändern: ab PostgreSQL 16 braucht das die ADMIN OPTION auf der Rolle. Ein Superuser gibt sie: grant % to % with admin option;',
            rolle, current_user, quote_ident(rolle), quote_ident(current_user);
    end if;
end
$$;

-- 2. Die Rolle: anmelden ja, erbt nichts von Gruppen.
select format('create role %I login noinherit', :'rolle')
where not exists (select 1 from pg_roles where rolname = :'rolle') \gexec
alter role :"rolle" login noinherit;
\if :{?passwort}
alter role :"rolle" password :'passwort';
\endif

-- 3. Kein Sonderrecht (prüfen statt verneinen: das darf nur ein Superuser).
do $$
declare
    rolle text := current_setting('aw.rolle');
    zu_viel text[];
begin
    select array_remove(array[
        case when rolsuper then 'superuser' end,
        case when rolcreatedb then 'createdb' end,
        case when rolcreaterole then 'createrole' end,
        case when rolreplication then 'replication' end,
        case when rolbypassrls then 'bypassrls' end
    ], null) into zu_viel
    from pg_roles where rolname = rolle;
    if cardinality(zu_viel) > 0 then
        raise exception 'Die Rolle % hat Sonderrechte, die sie nicht braucht: %. Ein Superuser nimmt sie: alter role % %;',
            rolle, upper(array_to_string(zu_viel, ', ')), quote_ident(rolle),
            (select string_agg('no' || a, ' ') from unnest(zu_viel) as a);
    end if;
end
$$;

-- 4. Die Rechte (aus rechte.py): vergeben, was der Admin vergeben darf; was er nicht
--    darf und die Rolle nicht schon hat (CONNECT, TEMPORARY, USAGE über PUBLIC), nennen.
do $$
declare
    rolle text := current_setting('aw.rolle');
    r record;
    ziel text;
    eigner text;
    kann boolean;
    hat boolean;
    fehlt text[] := '{}';
    abhilfe text[] := '{}';
begin
    for r in
        select * from (values
«werte»
        ) as v(teil, art, objekt, recht, wenn_vorhanden)
        where current_setting('aw.' || teil, true) = 'ja'
    loop
        if r.art = 'datenbank' then
            ziel := format('database %I', current_database());
            kann := has_database_privilege(current_database(), r.recht || ' with grant option');
            hat := has_database_privilege(rolle, current_database(), r.recht);
            select pg_get_userbyid(datdba) into eigner from pg_database where datname = current_database();
        elsif r.art = 'schema' then
            ziel := format('schema %I', r.objekt);
            kann := has_schema_privilege(r.objekt, r.recht || ' with grant option');
            hat := has_schema_privilege(rolle, r.objekt, r.recht);
            select pg_get_userbyid(nspowner) into eigner from pg_namespace where nspname = r.objekt;
        elsif to_regclass(r.objekt) is null then
            if not r.wenn_vorhanden and not r.objekt = any(fehlt) then
                fehlt := fehlt || r.objekt;
                abhilfe := abhilfe || format('%s fehlt – erst migrieren (DATABASE_URL=''user=%s dbname=%s'' .venv/bin/python check_db.py --migrieren).',
                    r.objekt, current_user, current_database());
            end if;
            continue;
        else
            ziel := format('table %I', r.objekt);
            kann := has_table_privilege(r.objekt, r.recht || ' with grant option');
            hat := has_table_privilege(rolle, r.objekt, r.recht);
            select pg_get_userbyid(relowner) into eigner from pg_class where oid = to_regclass(r.objekt);
        end if;
        if kann then
            execute format('grant %s on %s to %I', r.recht, ziel, rolle);
        elsif not hat then
            fehlt := fehlt || format('%s auf %s', upper(r.recht), coalesce(nullif(r.objekt, ''), current_database()));
            abhilfe := abhilfe || format('als %s: grant %s on %s to %I with grant option;',
                eigner, r.recht, ziel, current_user);
        end if;
    end loop;
    if cardinality(fehlt) > 0 then
        raise exception '% kann % nicht alles geben, was sie braucht – es fehlt: %. So zu beheben: % Danach dieses Rezept erneut; nichts geändert.',
            current_user, rolle, array_to_string(fehlt, ', '),
            array_to_string(array(select distinct a from unnest(abhilfe) as a order by 1), ' ');
    end if;
end
$$;

commit;
