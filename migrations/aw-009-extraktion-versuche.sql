-- aw-009: eine schlechte Nacht wird kein bleibendes Ergebnis – Versuche der Extraktion.
--
-- Anwenden: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f migrations/aw-009-extraktion-versuche.sql
-- oder:     .venv/bin/python check_db.py --migrieren
--
-- Ein Zeitlimit, ein abgestürzter Worker oder die Speichergrenze sagen nichts über
-- die Seite, sondern über die Nacht. Solche Kandidaten sind vorläufig: der nächste
-- Lauf über die Seite (--extrahieren --slot desselben Slots oder --backfill)
-- extrahiert sie wieder, bis zu drei Versuche je Seite und Fassung; danach bleibt
-- der Fehler mit „… nach 3 Versuchen aufgegeben“ (auswahlstufe/extraktion/stufe.py,
-- docs/extraktion.md). Ein Fehler des Extraktors selbst bleibt endgültig.
--
-- Dauer: die neuen Spalten haben konstante Voreinstellungen – keine Tabelle wird neu
-- geschrieben; die Prüfungen und das update lesen extraktionen je einmal ganz (unter
-- der Sperre der Migration) und schreiben nur die Zeilen mit einem solchen Fehler.
begin;

do $$
begin
    if exists (select 1 from schema_migrationen where name = 'aw-009-extraktion-versuche') then
        raise exception 'Migration aw-009-extraktion-versuche ist schon angewandt'
            using errcode = 'duplicate_object';
    end if;
end
$$;
insert into schema_migrationen (name) values ('aw-009-extraktion-versuche');

alter table extraktionen
    -- Wie oft dieser Extraktor an dieser Seite (seite_sha256) in dieser Fassung
    -- (extraktor_fassung) an der Umgebung scheiterte: Zeitlimit, Absturz, Speichergrenze.
    -- 0: das erste Ergebnis war sein eigenes (Text oder Fehler des Extraktors).
    add column versuche smallint not null default 0 check (versuche >= 0),
    -- true: der Fehler kam von der Umgebung, der nächste Lauf versucht es wieder
    add column vorlaeufig boolean not null default false,
    add constraint extraktionen_vorlaeufig_mit_fehler check (not vorlaeufig or fehler is not null);

comment on column extraktionen.versuche is
    'Gescheiterte Versuche an der Umgebung (Zeitlimit, Absturz, Speichergrenze) für diese Seite und Fassung (wurzelwerk-auswahl).';
comment on column extraktionen.vorlaeufig is
    'Fehler der Umgebung; der nächste Lauf über die Seite extrahiert neu (wurzelwerk-auswahl).';

-- Was vor dieser Migration mit einem solchen Fehler gespeichert ist, wird ein erster
-- Versuch. Die Anfänge sind die von extraktion.seiten.VORUEBERGEHEND.
update extraktionen
set versuche = 1, vorlaeufig = true
where extraktor_fassung is not null
  and (fehler like 'Zeitlimit %' or fehler like 'Worker abgestürzt%'
       or fehler like 'Worker unerwartet beendet%' or fehler like 'Speichergrenze %');

-- Im Protokoll der Läufe: was die Extraktion davor tat (nur mit --extrahieren, sonst NULL),
-- etwa {"veraltet": 400, "extrahiert": 400, "geschrieben": 1200, "fehler": 3,
-- "vorlaeufig": 2, "aufgegeben": 0, "wiederholt": 0, "keine_html": 1}.
alter table auswahl_laeufe add column extraktion jsonb;

comment on column auswahl_laeufe.extraktion is
    'Zählung der Extraktion vor der Auswahl (--extrahieren), wie in ihrer Bilanzzeile (wurzelwerk-auswahl).';

commit;
