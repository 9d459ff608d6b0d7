"""Das Update eines laufenden Hauses von jedem früheren Stand auf den heutigen – genau so, wie
docs/betrieb.md („Aktualisieren“) und docs/aenderungen.md es dem Betreiber sagen.

Je früherem Stand (``STAENDE``) steht auf PostgreSQL 15 ein Haus mit getrennten Rollen (Ingest, der
Admin ohne Superuser, die Betriebsrolle, ``aw_blick``), eingerichtet und betrieben mit dem Code
jenes Stands, wie dessen Doku es sagte: Ingest pollt drei Slots, der Abholer holt die Seiten (echte
aus dem article-extraction-benchmark, eine leere, ein PDF), die alte Stufe extrahiert und wählt,
zuletzt kodiert der Betreiber eine Variante. Dann geht er die Schritte 2–6 des Updates, ohne
Superuser. Ein Update muss garantieren:

* Zwischen dem Holen des Codes (Schritt 3) und ``pip install -e .`` endet jeder Einstieg – auch der Befehl
  ``wurzelwerk-auswahl`` der alten Installation und ein Tick von cron – mit Exit 4 und dem Satz der
  Doku, ohne Traceback, und schreibt nichts.
* Migrieren und Rechte gehen als Admin mit den Befehlen der Einrichtung; ``check_db.py`` meldet als
  Betriebsrolle „alles erfüllt“ und den Plan der Extraktion über den Bestand.
* Der erste Tick danach (Schritt 7) entscheidet den frischen Slot und nur ihn.
* Die Zeile der Nacht schreibt nichts neu, an dem sich nichts ändert: eine Entscheidung nur, wo sich
  ihre Kandidaten ändern; Text und Fehler eines Kandidaten nur, wo heute anderes herauskommt
  (``Stand.anders``), ``extrahiert_am`` nur dort und bei Extraktoren mit neuer Textfassung; sonst
  stempelt sie nur neu. Die nächste Nacht schreibt gar nichts.
* Die Überwachung sagt die Wahrheit, für ``aw_blick`` wie für die Betriebsrolle: der letzte Slot mit
  der aktuellen coder_version (nicht der Variante, die zuletzt lief), keine offenen Slots, die Läufe
  von früher mit ihrer wirklichen Variante, der frische Slot ohne Verzug; ein Lauf, den der alte Code
  mit Exit 130 eintrug (Strg-C), heißt ``abgebrochen``, nicht ``fehler`` (aw-012).

Fehlt die Geschichte (ein flacher Klon), entsteht der alte Stand aus den heutigen Migrationen bis zu
seiner letzten und den Zeilen, die er geschrieben hätte (``alter_bestand_nachgebaut``); mit
Geschichte prüft der Test, dass ``STAENDE`` genau beschreibt, was der alte Code schrieb.

Jede künftige Migration erweitert diesen Test: der Stand davor wird ein Eintrag in ``STAENDE``.
"""

from __future__ import annotations

import gzip
import json
import re
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from psycopg import sql

from auswahlstufe import VERSION
from auswahlstufe.betrieb import migrationen
from auswahlstufe.extraktion import art, aufrufe
from auswahlstufe.fehler import EXIT_OK, EXIT_VORAUSSETZUNG
from tests.hilfen import PROJEKT, alt
from tests.hilfen.daten import raw_items_anlegen
from tests.hilfen.haus import (
    HAUS_DB,
    Haus,
    abfrage_der_doku,
    aktualisieren,
    code_in,
    cron_zeilen,
    haus_abreissen,
    haus_vorbereiten,
    notizen,
    schritt,
)
from tests.hilfen.prozesse import auswahl_starten
from tests.hilfen.server import PG15
from version import CODER_VERSION, variante_lesen

pytestmark = pytest.mark.datenbank

AEB = json.loads((PROJEKT / "bench" / "aeb" / "candidates.json").read_text(encoding="utf-8"))
LEER, PDF = 6, 8  # die Items mit der leeren Seite und dem PDF
ALTE_ITEMS = {1: 3, 2: 3, 3: 3, 4: 2, 5: 2, LEER: 2, 7: 1, PDF: 1}  # Item → vor wie vielen Tagen gepollt
FRISCHE_ITEMS = (9, 10)
PDF_SEITE = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
VARIANTE = "k4:0.03"
# Eine leere Seite vor der Seitenart Fassung 2: readability warf.
LEER_ALT = {(LEER, "readability"): (None, "Extraktor scheiterte: Unparseable: Document is empty")}


# Die früheren Stände, die älteste zuerst. Jede künftige Migration erweitert diesen Test: der Stand
# vor ihr kommt dazu, mit dem, was er anders schrieb als der heutige Code.
STAENDE = [
    alt.Stand(
        commit="90cfb01",
        notiz="1.0.0, Stand 90cfb01",
        letzte_migration="aw-006-seiten",
        einstieg="cli:cli",
        fassung="1.0.0",
        fassungen=(
            (art.FASSUNG_MUSTER, "", None),
            (r"; Kandidatenordnung fest \(newspaper_fest\); Fassung 2", "; Fassung 1", "newspaper4k"),
        ),
        # vor der Prüfung auf Nicht-HTML lasen die Extraktoren das PDF als Text
        anders={
            **LEER_ALT,
            (PDF, "trafilatura"): ("", None),
            (PDF, "newspaper4k"): ("", None),
            (PDF, "readability"): (PDF_SEITE.decode().strip(), None),
        },
        neu_extrahiert=frozenset({"newspaper4k"}),
        schritte=False,
        cron={"tick": "cd /srv/wurzelwerk-auswahl && .venv/bin/python auswahl.py --extrahieren --backfill"},
    ),
    alt.Stand(
        commit="f2b5c16",
        notiz="1.0.0, Stand f2b5c16",
        letzte_migration="aw-010-zustand-gesperrt",
        einstieg="auswahlstufe.cli:cli",
        fassung="1.0.0",
        fassungen=((art.FASSUNG_MUSTER, "; Seitenart (art.keine_html) Fassung 1", None),),
        anders=LEER_ALT,
    ),
    # 2.0.0 stempelte und extrahierte wie heute: nichts zu extrahieren, nichts nachzuprüfen, nichts neu gewählt
    alt.Stand(
        commit="f3ed43c",
        notiz="2.0.0",
        letzte_migration="aw-011-verlauf-und-fortschritt",
        einstieg="auswahlstufe.cli:cli",
        fassung="2.0.0",
        fassungen=(),
        anders={},
    ),
]

SQL_ITEM = "insert into raw_items (id, slot, haus, titel, url) values (%s, %s, 'Nord', %s, %s)"
SQL_SEITE = "insert into seiten (item_id, html, url, content_type) values (%s, %s, %s, %s)"
SQL_ENTSCHEIDUNGEN = "select item_id, coder_version, xmin::text, text, kodiert_am from selected_extractor"
SQL_KANDIDATEN = (
    "select item_id, extraktor, xmin::text, text, fehler, extrahiert_am, extraktor_fassung from extraktionen"
)
SQL_LAEUFE = "select coder_version, extrahieren, variante from auswahl_laeufe where id <= %s order by id"
SQL_STEMPEL = "update extraktionen set extraktor_fassung = %s where extraktor = %s"
SQL_ERGEBNIS = "update extraktionen set text = %s, fehler = %s where item_id = %s and extraktor = %s"
# Ein Backfill der Variante, den der Betreiber mit Strg-C abbrach, wie der alte Code ihn eintrug: Exit 130 –
# mit dem Namen der Variante, wo die Tabelle ihn hat (ab aw-007: {variante} ist dann ``, variante``).
SQL_ABGEBROCHEN = """
insert into auswahl_laeufe (modus, coder_version, rechner, pid, beendet_am, exit_code, meldung{variante})
select 'backfill', %(version)s, 'alt', 4711, now(), 130, 'Abgebrochen (SIGINT) nach dem laufenden Stapel.'
       {variante_wert}
"""
SQL_ZUSTAND_130 = "select to_jsonb(l) ->> 'zustand' from auswahl_laeufe l where exit_code = 130"


def ohne_traceback(lauf):
    ausgabe = f"{lauf.stdout}{lauf.stderr}" if hasattr(lauf, "stdout") else f"{lauf.out}{lauf.err}"
    assert "Traceback" not in ausgabe, ausgabe
    return lauf


# Der Zeilenkopf eines Satzes ohne Terminal (auswahlstufe.pakete.melden): Zeit und Aufruf.
KOPF = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d aufruf=.*? \| ")


def ohne_kopf(text: str) -> str:
    kopf = KOPF.match(text)
    assert kopf, text
    return text[kopf.end() :]


def schnappschuss(haus: Haus) -> tuple[dict, dict]:
    """(Entscheidungen je Item und coder_version, Kandidaten je Item und Extraktor): xmin und Inhalt."""
    entscheidungen = {(i, v): tuple(rest) for i, v, *rest in haus.sehen(SQL_ENTSCHEIDUNGEN)}
    return entscheidungen, {(i, x): tuple(rest) for i, x, *rest in haus.sehen(SQL_KANDIDATEN)}


def ingest_pollt(haus: Haus, items: dict[int, datetime]) -> None:
    """Ingest trägt die Items ein, der Abholer (als ingest) ihre Seiten."""
    for item, slot in items.items():
        html = {LEER: b"", PDF: PDF_SEITE}.get(item)
        if html is None:
            html = gzip.decompress(
                (PROJEKT / "bench" / "aeb" / "html" / f"{AEB[item]['id']}.html.gz").read_bytes()
            )
        typ = "application/pdf" if item == PDF else "text/html; charset=utf-8"
        haus.sql("ingest", SQL_ITEM, (item, slot, f"Meldung {item}", AEB[item]["url"]))
        haus.sql("ingest", SQL_SEITE, (item, html, AEB[item]["url"], typ))


def einrichten(haus: Haus, stand: alt.Stand, doku: str | None) -> None:
    """Die Einrichtung mit dem Code des Stands, nach ``doku`` (seiner docs/betrieb.md; ``None``: ohne
    Geschichte). Schritt 1, der Superuser, ist die heutige; danach kein Superuser außer wo jener
    Stand ihn verlangte."""
    haus.schritt(1)
    if stand.schritte and doku:
        for nummer in (*range(2, 9), "Als Admin, für den Abholer"):
            ohne_traceback(haus.schritt(nummer, doku)[0])
        return
    ingest = schritt(2).sh()[0]
    if not stand.schritte:  # vor f2b5c16 gab Ingest SELECT ohne Weitergabe (Rechte je Modus)
        ingest = ingest.replace("to aw_admin with grant option;", "to aw_admin;")
    assert haus.ausfuehren(ingest).returncode == 0
    rollen = ["aw_stufe", "aw_blick"] if stand.schritte else ["aw_stufe"]
    if doku:  # 90cfb01: migrieren wie heute; das Rezept „als Eigentümerin der Tabellen oder Superuser“ –
        # als Admin endet es auf 15 mit „must be superuser to … change superuser attribute“ (nosuperuser)
        ohne_traceback(haus.schritt(3)[0])
        rezept = "psql -X -v ON_ERROR_STOP=1 -d wurzelwerk -v rolle=aw_stufe -v einlesen=1 -v extrahieren=1"
        assert haus.ausfuehren(f"{rezept} -f rollen/aw-rolle-stufe.sql", superuser=True).returncode == 0
    else:  # ohne Geschichte: die Migrationen bis zur letzten des Stands von Hand, die Rollen ohne Rechte
        for datei in (d for d in migrationen.migrationsdateien() if d.stem <= stand.letzte_migration):
            befehl = f"psql -X -v ON_ERROR_STOP=1 -U aw_admin -d wurzelwerk -f {datei}"
            assert haus.ausfuehren(befehl).returncode == 0, befehl
    with haus.server.verwalten() as conn:  # das Passwort „danach mit \password“
        for rolle in rollen:
            (haus.home / f".{rolle}_passwort").write_text(f"Alt-{rolle}-{stand.commit}\n")
            name, passwort = sql.Identifier(rolle), sql.Literal(haus.passwort(rolle))
            if not doku:
                conn.execute(sql.SQL("create role {} login noinherit").format(name))
            conn.execute(sql.SQL("alter role {} password {}").format(name, passwort))
    if stand.schritte:
        haus.schritt(5), haus.schritt(7)
    else:  # .env wie .env.example jener Stände: das Passwort in der URL, über TCP
        port = psycopg.conninfo.conninfo_to_dict(haus.server.admin_url)["port"]
        env = haus.klon / ".env"
        env.write_text(
            f"DATABASE_URL=postgresql://aw_stufe:{haus.passwort('aw_stufe')}@localhost:{port}/wurzelwerk\n"
        )
        env.chmod(0o600)
    if doku:  # „Unter der Betriebsrolle prüfen“
        assert ohne_traceback(haus.stufe("check_db.py")).code == EXIT_OK
    haus.schritt("Als Admin, für den Abholer")


def abbruch_eingetragen(conn: psycopg.Connection) -> None:
    """Der Backfill der Variante, den der Betreiber abbrach (``SQL_ABGEBROCHEN``), bevor er ihn neu startete."""
    mit_name = "variante" in {s for (s,) in conn.execute(alt.SQL_SPALTEN, ("auswahl_laeufe",))}
    anweisung = SQL_ABGEBROCHEN.format(
        variante=", variante" if mit_name else "", variante_wert=", %(name)s" if mit_name else ""
    )
    conn.execute(anweisung, {"version": variante_lesen(VARIANTE).coder_version, "name": VARIANTE})


def alte_laeufe(haus: Haus, cron: dict[str, str], jetzt: datetime) -> None:
    """Betrieb mit dem alten Code: Ingest pollt, cron kodiert (ab f2b5c16 ein Tick je Poll und die
    Nacht, davor ein Backfill mit Extraktion); zuletzt kodiert der Betreiber von Hand eine Variante –
    im zweiten Anlauf, den ersten brach er ab."""
    for tage in (3, 2, 1):
        ingest_pollt(haus, {i: jetzt - timedelta(days=tage) for i, t in ALTE_ITEMS.items() if t == tage})
        if "nacht" in cron:
            assert ohne_traceback(haus.wie_cron(cron["tick"])).returncode == 0
    assert ohne_traceback(haus.wie_cron(cron.get("nacht", cron["tick"]))).returncode == 0
    with psycopg.connect(haus.url("aw_stufe", haus.passwort("aw_stufe")), autocommit=True) as conn:
        abbruch_eingetragen(conn)
    assert ohne_traceback(haus.stufe("auswahl.py", "--backfill", "--variante", VARIANTE)).code == EXIT_OK


def alter_bestand_nachgebaut(haus: Haus, stand: alt.Stand, jetzt: datetime, tmp_path) -> None:
    """Ohne Geschichte, was der Stand geschrieben hätte: der heutige Code extrahiert in einer zweiten
    Datenbank dieselben Seiten, die Kandidaten bekommen Stempel und Ergebnisse des Stands, dann wählt
    er und kodiert die Variante; alles kommt mit den Spalten des Stands ins Haus."""
    ingest_pollt(haus, {i: jetzt - timedelta(days=t) for i, t in ALTE_ITEMS.items()})
    with haus.server.verwalten() as conn:
        conn.execute("drop database if exists wurzelwerk_vorher with (force)")
        conn.execute("create database wurzelwerk_vorher")
    url = haus.server.url("wurzelwerk_vorher")
    raw_items_anlegen(url)
    migrationen.migrieren(url, ausgabe=lambda _: None)

    def stufe(*argumente: str) -> None:
        lauf = auswahl_starten(*argumente, url=url, cwd=tmp_path, env={"PYTHONPATH": str(PROJEKT)})
        assert lauf.code == EXIT_OK, str(lauf)

    with (
        psycopg.connect(haus.server.url(HAUS_DB), autocommit=True) as dort,
        psycopg.connect(url, autocommit=True) as hier,
    ):
        alt.zeilen_kopieren(dort, hier, ("raw_items", "seiten"))
        stufe("--extrahieren", "--backfill")
        hier.cursor().executemany(SQL_STEMPEL, [(stand.stempel(x), x) for x in aufrufe.EXTRAKTOREN])
        hier.cursor().executemany(SQL_ERGEBNIS, [(*anders, *k) for k, anders in stand.anders.items()])
        stufe("--backfill")
        abbruch_eingetragen(hier)
        stufe("--backfill", "--variante", VARIANTE)
        alt.zeilen_kopieren(
            hier, dort, ("extraktionen", "selected_extractor", "auswahl_laeufe"), ohne=("id",)
        )
    with haus.server.verwalten() as conn:
        conn.execute("drop database wurzelwerk_vorher with (force)")


@pytest.fixture
def haus15(pg15, tmp_path):
    yield haus_vorbereiten(pg15, PG15, tmp_path / "klon", tmp_path / "home")
    haus_abreissen(pg15)


@pytest.mark.parametrize("stand", STAENDE, ids=[s.commit for s in STAENDE])
def test_update_von_einem_frueheren_stand(stand: alt.Stand, haus15: Haus, tmp_path):
    haus, jetzt = haus15, datetime.now(UTC).replace(second=0, microsecond=0)

    # --- Das alte Haus: sein Code, seine Installation, seine Einrichtung, sein Betrieb. -----------
    doku = alt.alter_klon(stand, haus.klon)
    alte_cron = stand.cron or cron_zeilen(doku)
    einrichten(haus, stand, doku)
    if doku:
        alte_laeufe(haus, alte_cron, jetzt)
    else:
        alter_bestand_nachgebaut(haus, stand, jetzt, tmp_path)
    assert haus.sehen("select max(name) from schema_migrationen") == [(stand.letzte_migration,)]
    vorher = schnappschuss(haus)
    for (item, extraktor), (_, text, fehler, _, fassung) in vorher[1].items():  # die Tabelle stimmt
        assert fassung == stand.stempel(extraktor), (item, extraktor)
        if (item, extraktor) in stand.anders:
            assert (text, fehler) == stand.anders[(item, extraktor)], (item, extraktor)
    ((letzter_lauf,),) = haus.sehen("select max(id) from auswahl_laeufe")
    # vor aw-007 ohne Zustand, danach hieß Exit 130 fehler
    assert haus.sehen(SQL_ZUSTAND_130) == [(None if stand.letzte_migration < "aw-007" else "fehler",)]

    # --- Das Update, Schritt für Schritt nach docs/betrieb.md, ohne Superuser. --------------------
    schritte, neuere = aktualisieren(), list(notizen())
    for notiz in neuere[: neuere.index(stand.notiz)]:  # 2. was andere geben, aus jeder neueren Notiz
        geben = notizen()[notiz].split("**Andere geben vorher:**", 1)[1].split("\n\n", 1)[0]
        for anweisung in (c for c in code_in(geben) if c.startswith("grant ")):
            assert "Ingest" in geben, geben
            haus.sql("ingest", anweisung)
    # 3. erst die Fassung über ihren Tag; hier der neueste Stand (der Arbeitsbaum), noch ohne Tag
    holen = "git fetch origin && git checkout --detach origin/main"  # auf einem Zweig wie losgelöst
    assert code_in(schritte[3])[0] == "git fetch --tags && git checkout vX.Y.Z"
    assert holen in code_in(schritte[3])
    alt.auf_den_neuen_stand(haus.klon)  # 3. der Code
    satz = next(c for c in code_in(schritte[4]) if c.startswith("Fehler: ")).removesuffix(" …")
    satz, ersetzt = re.subn(  # die Doku nennt ein Beispiel; hier die Fassungen dieses Updates
        r"installiert ist [^,]+,\s+der Code ist\s+[^)]+\)",
        f"installiert ist {stand.fassung}, der Code ist {VERSION})",
        satz,
    )
    assert ersetzt == 1, satz
    for befehl in (".venv/bin/python auswahl.py --version", ".venv/bin/python check_db.py",
                   ".venv/bin/wurzelwerk-auswahl --version"):  # fmt: skip
        lauf = ohne_traceback(haus.ausfuehren(befehl))
        gesagt = ohne_kopf(lauf.stderr)  # ohne Terminal mit Zeit und Aufruf davor, wie im cron-Log
        assert lauf.returncode == EXIT_VORAUSSETZUNG and gesagt.startswith(satz), lauf.stderr
        assert gesagt.endswith("(docs/betrieb.md, Aktualisieren).\n") and not lauf.stdout, lauf.stderr
    tick = haus.wie_cron(alte_cron["tick"])  # ein Tick dazwischen (alte crontab): die Mail ist der Satz
    assert ohne_kopf(tick.stdout + tick.stderr) == gesagt, tick.stdout + tick.stderr
    assert "|" in alte_cron["tick"] or tick.returncode == EXIT_VORAUSSETZUNG  # ohne tee: sein Exit
    assert schnappschuss(haus) == vorher  # nichts geschrieben, kein Lauf eingetragen
    assert haus.sehen("select max(id) from auswahl_laeufe") == [(letzter_lauf,)]
    lauf = alt.im_klon(haus.klon, code_in(schritte[4])[0])  # 4. pip (holt setuptools für den Bau)
    assert lauf.returncode == 0 and "Traceback" not in lauf.stderr, lauf.stdout + lauf.stderr
    assert all(f"[Schritt {n}]" in schritte[5] for n in (3, 4, 8))  # 5. als Admin
    migriert = ohne_traceback(haus.schritt(3)[0])
    assert "Alle Voraussetzungen erfüllt (migrieren, check_db)." in migriert.stdout, migriert.stdout
    ohne_traceback(haus.schritt(4)[0]), ohne_traceback(haus.schritt(8)[0])
    pruefen = ohne_traceback(haus.ausfuehren(code_in(schritte[6])[0]))  # 6. als Betriebsrolle
    assert pruefen.returncode == EXIT_OK and "Alle Voraussetzungen erfüllt" in pruefen.stdout, pruefen.stdout
    # Plan: an jede Seite ein Extraktor mit neuer Textfassung, sonst jede nachprüfen, wenn der Stand anders
    # stempelte, sonst nichts
    seiten = len(ALTE_ITEMS)
    zu_extrahieren = seiten if stand.neu_extrahiert else 0
    nachzupruefen = seiten if stand.veraltet and not zu_extrahieren else 0
    je = ", ".join(f"{x} {seiten}" for x in sorted(stand.neu_extrahiert))
    plan = f"{zu_extrahieren} Seiten zu extrahieren" + (f" ({je})" if je else "")
    plan += f", {nachzupruefen} nur nachzuprüfen (Seitenart, ohne Extraktor)" if nachzupruefen else ""
    (zeile,) = [z for z in pruefen.stdout.splitlines() if "(--extrahieren --backfill): " in z]
    gesagt = zeile.split("(--extrahieren --backfill): ", 1)[1]
    mit_dauer = zu_extrahieren and gesagt.startswith(f"{plan}; ")  # nur wer extrahiert, hört eine Dauer
    assert gesagt == plan or mit_dauer, pruefen.stdout
    supers = {r for (r,) in haus.sehen("select rolname from pg_roles where rolsuper")}
    assert not supers & {"ingest", "aw_admin", "aw_stufe", "aw_blick"}

    # --- Danach: Ingest pollt, der erste Tick, die Nacht, die nächste Nacht. ----------------------
    haus.schritt(7)  # das Log der Zeilen aus Schritt 7 (wer von 90cfb01 kommt: Notiz f2b5c16)
    frisch = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=2)
    ingest_pollt(haus, dict.fromkeys(FRISCHE_ITEMS, frisch))
    log = haus.klon / "log" / "auswahl.log"
    gelesen = log.stat().st_size if log.exists() else 0

    def neu_im_log() -> str:
        nonlocal gelesen
        daten = log.read_bytes()
        neu, gelesen = daten[gelesen:].decode(), len(daten)
        assert "Traceback" not in neu, neu
        return neu

    tick = haus.wie_cron(cron_zeilen()["tick"])
    mail, warnung = tick.stdout + tick.stderr, "Warnung: DATABASE_URL enthält ein Passwort"
    passwort_in_env = f":{haus.passwort('aw_stufe')}@" in (haus.klon / ".env").read_text()  # Notiz: warnt
    assert all(warnung in z for z in mail.splitlines()) and (warnung in mail) == passwort_in_env, mail
    assert f"neu {len(FRISCHE_ITEMS)}, geändert 0, unverändert 0," in neu_im_log()
    nach_tick = schnappschuss(haus)
    for teil in (0, 1):  # der Tick schrieb nur den frischen Slot
        assert {k: nach_tick[teil][k] for k in vorher[teil]} == vorher[teil]
    assert {(i, CODER_VERSION) for i in FRISCHE_ITEMS} <= nach_tick[0].keys()

    assert ohne_traceback(haus.wie_cron(cron_zeilen()["nacht"])).returncode == 0
    nacht = neu_im_log()
    veraltet = seiten if stand.veraltet else 0
    assert f"Extraktion: {veraltet} Seiten neu oder veraltet, {zu_extrahieren} extrahiert" in nacht, nacht
    assert (f", {seiten} nachgeprüft (Seitenart, ohne Extraktor;" in nacht) == stand.veraltet, nacht
    assert ("nachgeprüft" in nacht) == stand.veraltet and "neu 0, " in nacht, nacht
    nachher = schnappschuss(haus)
    for (item, extraktor), (xmin, text, fehler, am, fassung_alt) in vorher[1].items():
        xmin_neu, text_neu, fehler_neu, am_neu, fassung = nachher[1][(item, extraktor)]
        ergebnis_anders = (item, extraktor) in stand.anders
        assert fassung == alt.stempel(extraktor), (item, extraktor)
        assert (xmin_neu != xmin) == (ergebnis_anders or fassung != fassung_alt), (item, extraktor)
        assert ((text_neu, fehler_neu) != (text, fehler)) == ergebnis_anders, (item, extraktor)
        assert (am_neu != am) == (ergebnis_anders or extraktor in stand.neu_extrahiert), (item, extraktor)
    assert nachher[1][(LEER, "readability")][1:3] == ("", None)  # das Urteil über die leere Seite
    neu_gewaehlt = {k for k, (xmin, *_) in vorher[0].items() if nachher[0][k][0] != xmin}
    assert neu_gewaehlt == {(item, CODER_VERSION) for item, _ in stand.anders}
    assert nachher[0].keys() == nach_tick[0].keys()

    assert ohne_traceback(haus.wie_cron(cron_zeilen()["nacht"])).returncode == 0
    zweite = neu_im_log()
    assert "Extraktion: 0 Seiten neu oder veraltet, 0 extrahiert" in zweite and "neu 0, geändert 0," in zweite
    assert schnappschuss(haus) == nachher
    # aw-014 (2.2.0): die frischen Zeilen tragen die Zeichen ihres Texts; was das Update nicht
    # anfasste, behält NULL (auch eine nur nachgetragene Eingabe-Summe schreibt zeichen nicht).
    unberuehrt = {item for item, version in vorher[0].keys() - neu_gewaehlt if version == CODER_VERSION}
    zeichen = haus.sehen(
        "select item_id, zeichen, char_length(text) from selected_extractor "
        "where coder_version = %s and text is not null",
        (CODER_VERSION,),
    )
    mit_text = {i for i, _, _ in zeichen}
    assert set(FRISCHE_ITEMS) <= mit_text and unberuehrt & mit_text, zeichen
    assert all(
        (z is None) == (i in unberuehrt) for i, z, _ in zeichen if i in unberuehrt | set(FRISCHE_ITEMS)
    ), zeichen
    assert all(z == laenge for _, z, laenge in zeichen if z is not None), zeichen

    # --- Die Überwachung, als aw_blick und als Betriebsrolle. -------------------------------------
    variante = variante_lesen(VARIANTE).coder_version
    for rolle in ("aw_blick", "aw_stufe"):
        letzter = haus.sql(rolle, "select slot, coder_version from auswahl_letzter_slot")
        assert letzter == [(frisch, CODER_VERSION)], letzter
        assert haus.sql(rolle, "select slot from auswahl_slots_ohne_lauf") == []
        laeufe = haus.sql(rolle, SQL_LAEUFE, (letzter_lauf,))
        assert laeufe[-1][0] == variante  # der letzte Lauf vor dem Update war die Variante
        for version, extrahieren, name in laeufe:  # vor aw-007: extrahieren unbekannt, Variante abgeleitet
            assert name == (VARIANTE if version == variante else None), laeufe
            assert (extrahieren is None) == (stand.letzte_migration < "aw-007"), laeufe
        abgebrochen = haus.sql(rolle, "select zustand from auswahl_laeufe where exit_code = 130")
        assert abgebrochen == [("abgebrochen",)], abgebrochen  # aw-012
        (verzug,) = haus.sql(rolle, "select verzug from auswahl_slots where slot = %s", (frisch,))
        assert verzug[0] < timedelta(minutes=15), verzug
        tage = haus.sql(rolle, abfrage_der_doku("Hat cron heute gelaufen?"))
        erfolgreich = (
            sum(t[1] for t in tage) == sum(t[2] or 0 for t in tage) >= 1
        )  # jeder Aufruf von --nachholen
        assert erfolgreich and not any(t[4] for t in tage), tage
