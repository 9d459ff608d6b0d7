"""Geringste Rechte und Geheimnisse.

* ``auswahlstufe/lauf/rechte.py`` sagt je Betriebsart, welche Rechte sie braucht. Eine frische
  Rolle mit genau diesen Rechten fährt den Modus durch, und ``check_db.py
  --modus …`` sagt vorher „fehlt“ und nachher „alles da“. Das Rollenrezept und
  die Tabelle in docs/betrieb.md sind aus rechte.py erzeugt (rezept.py, verglichen).

* ``rollen/aw-rolle-stufe.sql`` legt mit psql eine Rolle an, die raw_items und
  extraktionen nur liest und selected_extractor schreibt. Unter ihr (Anmeldung
  mit Passwort, scram-sha-256) laufen Backfill, Slot, Teil und --trocken; alles
  andere scheitert mit „permission denied“, und die Eingabetabellen bleiben
  Byte für Byte gleich.
* Kein Passwort in irgendeiner Ausgabe: erfolgreiche Läufe, falsches
  Passwort, Server weg, Sperre belegt, Zeitlimit – stdout, stderr und die
  Dateien der Stichprobe enthalten das Passwort nie.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from psycopg import errors, sql

import db
from auswahlstufe.betrieb import sperre
from auswahlstufe.fehler import EXIT_DATENBANK, EXIT_GESPERRT, EXIT_OK, EXIT_VORAUSSETZUNG, EXIT_ZEITLIMIT
from auswahlstufe.lauf import rechte, rezept
from tests.hilfen import PROJEKT
from tests.hilfen import rechte as rechte_vergeben
from tests.hilfen.daten import (
    SLOT,
    SLOT_TEXT,
    basistext,
    bestand_anlegen,
    fingerabdruck,
    raw_items_anlegen,
    slotsperre,
    zustand_setzen,
)
from tests.hilfen.prozesse import auswahl_starten, bilanzzeile, check_db_starten
from tests.hilfen.server import psql_pfad

pytestmark = pytest.mark.datenbank

REZEPT = PROJEKT / "rollen" / "aw-rolle-stufe.sql"
DOKU = PROJEKT / "docs" / "betrieb.md"


def laufen(url: str, *args: str, cwd: Path | None = None, **env: str):
    return auswahl_starten(*args, url=url, cwd=cwd or Path(tempfile.gettempdir()), env=env)


# Die Rolle hier meldet sich mit Passwort in der URL an; jeder Aufruf warnt davor genau einmal,
# in der ersten Zeile auf stderr (tests/test_db.py). Was danach kommt, prüfen die Tests hier.
PASSWORT_WARNUNG = f"Warnung: {db.PASSWORT_IN_URL}\n"


def nach_der_warnung(err: str) -> str:
    assert err.startswith(PASSWORT_WARNUNG) and err.count(PASSWORT_WARNUNG) == 1, err
    return err.removeprefix(PASSWORT_WARNUNG)


def rezept_anwenden(url: str, *variablen: str) -> subprocess.CompletedProcess:
    argumente = [a for v in variablen for a in ("-v", v)]
    return subprocess.run(
        [psql_pfad(), url, "-X", "-q", "-v", "ON_ERROR_STOP=1", *argumente, "-f", str(REZEPT)],
        capture_output=True,
        text=True,
    )


def url_mit_passwort(admin_url: str, datenbank: str, rolle: str, passwort: str) -> str:
    """postgresql://rolle:passwort@…/datenbank zum Server der Tests (Socket oder TCP)."""
    teile = psycopg.conninfo.conninfo_to_dict(admin_url)
    host, port = teile.get("host", "localhost"), teile.get("port")
    geheim = quote(passwort, safe="")
    if host.startswith("/"):
        return f"postgresql://{rolle}:{geheim}@/{datenbank}?host={host}" + (f"&port={port}" if port else "")
    return f"postgresql://{rolle}:{geheim}@{host}:{port or 5432}/{datenbank}"


@pytest.fixture
def stufen_url(pg, db_name, db_url, passwort_rolle):
    """Die Rolle mit Passwort aus conftest bekommt in der frischen Datenbank die Rechte des Rezepts."""
    rolle, passwort = passwort_rolle
    lauf = rezept_anwenden(db_url, f"rolle={rolle}", f"passwort={passwort}")
    assert lauf.returncode == 0, lauf.stderr
    return url_mit_passwort(pg.admin_url, db_name, rolle, passwort)


# Was die Rolle nicht darf – je Anweisung eine eigene Transaktion.
VERBOTEN = [
    "insert into raw_items (id, slot) values (999999, now())",
    "update raw_items set haus = 'fremd'",
    "delete from raw_items",
    "insert into extraktionen (item_id, extraktor, text) values (1, 'fremd', 'x')",
    "update extraktionen set text = 'überschrieben'",
    "delete from extraktionen",
    "truncate selected_extractor",
    "drop table selected_extractor",
    "drop table raw_items",
    "alter table selected_extractor add column fremd integer",
    "create index on selected_extractor (extraktor)",
    "create table public.fremd (x integer)",
    "create table fremd (x integer)",
    "create schema fremd",
    "insert into schema_migrationen (name) values ('aw-999-fremd')",
    "delete from schema_migrationen",
    "drop view auswahl_uebersicht",
    "create or replace view auswahl_uebersicht as select 1 as x",
]


def test_stufe_laeuft_unter_der_rolle_und_darf_sonst_nichts(db_url, stufen_url, tmp_path):
    n = 300
    bestand_anlegen(db_url, n)
    zustand_setzen(db_url, n, "A")
    abdruck = fingerabdruck(db_url)

    e = laufen(stufen_url, "--backfill")
    assert e.code == EXIT_OK and bilanzzeile(e.out).startswith(f"neu {n}, "), str(e)
    for args in (
        ["--slot", "2026-09-07T08:00"],
        ["--backfill", "--teil", "1/2"],
        ["--backfill", "--trocken"],
    ):
        e = laufen(stufen_url, *args)
        assert e.code == EXIT_OK, str(e)
    # Stand B ändert und nimmt Kandidaten: die Rolle ändert und löscht auch
    zustand_setzen(db_url, n, "B")
    abdruck = fingerabdruck(db_url)
    e = laufen(stufen_url, "--backfill")
    assert e.code == EXIT_OK, str(e)
    neu, geaendert, _, entfernt = (int(w.split()[-1]) for w in e.out.split(" in ")[0].split(", ")[:4])
    assert neu == 0 and geaendert > 0 and entfernt == n // 7, str(e)
    assert fingerabdruck(db_url) == abdruck

    # Der Rauchtest sieht alles, was ein Lauf braucht; --einlesen fehlt nur als Hinweis,
    # und zwar mit allem, was es braucht (auch DELETE).
    check = subprocess.run(
        [sys.executable, str(PROJEKT / "check_db.py")],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "DATABASE_URL": stufen_url},
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert (
        "Hinweis: für einlesen fehlt: Recht INSERT, UPDATE, DELETE auf Tabelle extraktionen" in check.stdout
    ), check.stdout
    # --einlesen schreibt extraktionen: unter dieser Rolle eine klare Absage, nichts geschrieben
    datei = tmp_path / "k.json"
    datei.write_text('[{"item_id": 1, "extractions": {"trafilatura": {"text": "neu"}}}]', encoding="utf-8")
    # (ein deutscher Satz mit dem Recht und dem nächsten Schritt, nicht „permission denied …“)
    e = laufen(stufen_url, "--einlesen", str(datei))
    assert e.code == EXIT_VORAUSSETZUNG, str(e)
    assert nach_der_warnung(e.err).startswith(
        "Fehler: Der Rolle aw_passwort fehlt ein Recht auf die Tabelle extraktionen. "
    ), str(e)
    assert ".venv/bin/python check_db.py --modus einlesen" in e.err and "-v einlesen=1" in e.err, str(e)
    assert "permission denied" not in e.err and "Traceback" not in e.err

    with psycopg.connect(stufen_url, autocommit=True) as conn:
        for anweisung in VERBOTEN:
            with pytest.raises(errors.InsufficientPrivilege, match=r"permission denied|must be owner"):
                conn.execute(anweisung)
        # was ein Lauf braucht, darf sie: temporäre Tabellen und die Sperre
        conn.execute("create temp table aw_probe (x integer)")
        assert conn.execute(sperre.SQL_SPERRE, (slotsperre(),)).fetchone()[0]
    assert fingerabdruck(db_url) == abdruck


def test_rezept_legt_die_rolle_an_und_ist_wiederholbar(pg, db_name, db_url):
    rolle = f"aw_rezept_{db_name[-12:]}"
    try:
        for _ in range(2):  # anlegen, dann nur Passwort und Rechte erneuern
            lauf = rezept_anwenden(db_url, f"rolle={rolle}", "passwort=Rezept-Geheim-55")
            assert lauf.returncode == 0, lauf.stderr
            assert "Rezept-Geheim-55" not in lauf.stdout + lauf.stderr
        with pg.verwalten() as conn:
            attribute = conn.execute(
                "select rolcanlogin, rolsuper, rolcreatedb, rolcreaterole, rolinherit, rolreplication, "
                "rolbypassrls, rolpassword like 'SCRAM-SHA-256$%%' from pg_authid where rolname = %s",
                (rolle,),
            ).fetchone()
        assert attribute == (True, False, False, False, False, False, False, True)
        with psycopg.connect(db_url) as conn:
            rechte = conn.execute(
                "select table_name, string_agg(privilege_type, ',' order by privilege_type) "
                "from information_schema.role_table_grants where grantee = %s group by 1 order by 1",
                (rolle,),
            ).fetchall()
            temp = conn.execute("select has_database_privilege(%s, current_database(), 'TEMP')", (rolle,))
            assert temp.fetchone()[0]
        assert rechte == [
            # die Sichten, die ein Betreiber am Morgen liest
            ("auswahl_extraktion_fassungen", "SELECT"),
            ("auswahl_fortschritt", "SELECT"),
            ("auswahl_kennzahlen", "DELETE,INSERT,SELECT,UPDATE"),  # die Quellenwache pflegen
            ("auswahl_laeufe", "INSERT,SELECT,UPDATE"),
            ("auswahl_letzter_slot", "SELECT"),
            ("auswahl_offene_laeufe", "SELECT"),
            ("auswahl_quellenwache", "SELECT"),
            ("auswahl_quellenwache_gemeldet", "INSERT,SELECT,UPDATE"),  # was ein Tick schon meldete
            ("auswahl_slots", "SELECT"),
            ("auswahl_slots_ohne_lauf", "SELECT"),
            ("auswahl_uebersicht", "SELECT"),
            ("extraktionen", "SELECT"),
            ("raw_items", "SELECT"),
            ("schema_migrationen", "SELECT"),
            ("selected_extractor", "DELETE,INSERT,SELECT,UPDATE"),
        ]
        # ohne Rollennamen: ein Fehler, nichts angelegt
        ohne = rezept_anwenden(db_url)
        assert ohne.returncode != 0 and "Rollenname fehlt" in ohne.stderr
        # nur der deutsche Satz, ohne psqls englisches „CONTEXT: PL/pgSQL function inline_code_block
        # line … at RAISE“ (das Rezept setzt VERBOSITY terse)
        assert "CONTEXT" not in ohne.stderr and "PL/pgSQL" not in ohne.stderr, ohne.stderr
    finally:
        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute(sql.SQL("drop owned by {}").format(sql.Identifier(rolle)))
        with pg.verwalten() as conn:
            conn.execute(sql.SQL("drop role if exists {}").format(sql.Identifier(rolle)))


# --- Rechte je Modus (rechte.py) -------------------------------------------------------------


def test_rezept_und_doku_sind_aus_rechte_erzeugt():
    assert REZEPT.read_text(encoding="utf-8") == rezept.rezept(), (
        "python -m auswahlstufe.lauf.rechte --rezept > " + str(REZEPT)
    )
    assert rezept.tabelle() in DOKU.read_text(encoding="utf-8"), (
        "Tabelle aus python -m auswahlstufe.lauf.rechte --tabelle"
    )


def test_jeder_modus_ist_in_der_liste():
    assert set(rechte.MODI) == {
        "lauf",
        "trocken",
        "stichprobe",
        "einlesen",
        "extrahieren",
        "check_db",
        "migrieren",
        "blick",
    }
    # wer liest oder schreibt, prüft vorher das Migrationsbuch (blick ist psql, nicht die Stufe)
    for name, modus in rechte.MODI.items():
        tabellen = {r.objekt for r in modus.rechte if r.art == "tabelle"}
        assert "schema_migrationen" in tabellen or name == "blick", name
    # --modus alle: jede Betriebsart außer migrieren
    assert set(rechte.BETRIEBSARTEN) == set(rechte.MODI) - {"migrieren"}


@pytest.fixture
def frische_rolle(pg, db_name):
    """Eine Rolle ohne jedes Recht (nur Anmeldung mit Passwort); danach wieder weg."""
    rolle, passwort = f"aw_modus_{db_name[-10:]}", "Modus-Geheim-31"
    with pg.verwalten() as conn:
        conn.execute(
            sql.SQL("create role {} login password {}").format(sql.Identifier(rolle), sql.Literal(passwort))
        )
        # CONNECT hat jede Rolle über PUBLIC; die Rolle soll es nur haben, wenn der Modus es sagt.
        conn.execute(sql.SQL("revoke connect on database {} from public").format(sql.Identifier(db_name)))
        conn.execute(sql.SQL("revoke temporary on database {} from public").format(sql.Identifier(db_name)))
    yield rolle, pg.url(db_name, user=rolle, password=passwort)
    with psycopg.connect(pg.url(db_name), autocommit=True) as conn:
        conn.execute(sql.SQL("drop owned by {}").format(sql.Identifier(rolle)))
    with pg.verwalten() as conn:
        conn.execute(sql.SQL("drop role {}").format(sql.Identifier(rolle)))


def rechte_geben(admin_url: str, db_name: str, modus: str, rolle: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for anweisung in rechte_vergeben.vergeben(modus, rolle, db_name, conn):
            conn.execute(anweisung)


def kandidatendatei(pfad: Path, ohne: str | None = None) -> Path:
    artikel = [
        {
            "item_id": i,
            "extractions": {n: {"text": f"Text {i} von {n} " * 20} for n in rechte_namen() if n != ohne},
        }
        for i in (1, 2)
    ]
    # Item 1 bringt auch seine Seite mit; sie ändert sich mit ``ohne`` (INSERT, dann UPDATE auf seiten)
    artikel[0]["html"] = f"<html><body><p>Seite ohne {ohne}</p></body></html>"
    pfad.write_text(json.dumps(artikel), encoding="utf-8")
    return pfad


def rechte_namen() -> tuple[str, ...]:
    return ("newspaper4k", "readability", "trafilatura")


def seiten_anlegen(admin_url: str, item_ids: range) -> None:
    """Rohe Seiten für --extrahieren (Tabelle seiten, aw-006), geschrieben wie vom Abholer."""
    with psycopg.connect(admin_url) as conn:
        for i in item_ids:
            absaetze = "".join(f"<p>Absatz {k} der Seite {i}: {basistext(i)}</p>" for k in range(4))
            html = f"<html><head><title>Seite {i}</title></head><body><article><h1>Seite {i}</h1>"
            html += absaetze + "</article></body></html>"
            conn.execute(
                "insert into seiten (item_id, html, url, content_type) values (%s, %s, %s, %s) "
                "on conflict (item_id) do update set html = excluded.html",
                (i, html.encode(), f"https://beispiel.test/{i}", "text/html; charset=utf-8"),
            )


LAEUFE = {
    "lauf": [["--backfill"], ["--slot", SLOT_TEXT], ["--backfill", "--teil", "1/2"]],
    "trocken": [["--backfill", "--trocken"], ["--slot", SLOT_TEXT, "--trocken", "--stichprobe", "2"]],
    "stichprobe": [["--backfill", "--stichprobe", "3"]],
}


@pytest.mark.parametrize(
    "modus", ["lauf", "trocken", "stichprobe", "einlesen", "extrahieren", "check_db", "blick"]
)
def test_frische_rolle_mit_genau_den_rechten_des_modus_faehrt_ihn(
    pg, db_name, db_url, frische_rolle, modus, tmp_path
):
    rolle, url = frische_rolle
    bestand_anlegen(db_url, 40)
    zustand_setzen(db_url, 40, "A")
    vorher = check_db_starten("--modus", modus, url=url, cwd=tmp_path)
    assert vorher.code != EXIT_OK, str(vorher)

    rechte_geben(pg.url(db_name), db_name, modus, rolle)
    check = check_db_starten("--modus", modus, url=url, cwd=tmp_path)
    assert check.code == EXIT_OK and "Alle Voraussetzungen erfüllt" in check.out, str(check)

    if modus in LAEUFE:
        for args in LAEUFE[modus]:
            e = laufen(url, *args, cwd=tmp_path)
            assert e.code == EXIT_OK, f"{args}: {e}"
        if modus == "lauf":  # Stand B ändert Kodierungen und entfernt welche
            zustand_setzen(db_url, 40, "B")
            e = laufen(url, "--backfill", cwd=tmp_path)
            assert e.code == EXIT_OK and ", entfernt 5," in e.out, str(e)
    elif modus == "einlesen":
        e = laufen(url, "--einlesen", str(kandidatendatei(tmp_path / "a.json")), cwd=tmp_path)
        assert e.code == EXIT_OK and "6 Kandidaten" in e.out, str(e)
        # die Datei nennt trafilatura nicht mehr: die Zeile geht (DELETE)
        e = laufen(
            url, "--einlesen", str(kandidatendatei(tmp_path / "b.json", ohne="trafilatura")), cwd=tmp_path
        )
        assert e.code == EXIT_OK and "entfernt 2" in e.out, str(e)
    elif modus == "extrahieren":
        # drei Seiten: Items 1 und 2 haben schon Kandidaten (UPDATE), Item 41 noch keine (INSERT)
        with psycopg.connect(db_url) as conn:
            conn.execute("insert into raw_items (id, slot, haus) values (41, %s, 'haus')", (SLOT,))
        seiten_anlegen(db_url, range(1, 3))
        seiten_anlegen(db_url, range(41, 42))
        e = laufen(url, "--extrahieren", "--backfill", "--trocken", cwd=tmp_path)
        assert e.code == EXIT_OK and "Extraktion (trocken): 3 Seiten zu extrahieren (" in e.out, str(e)
        e = laufen(url, "--extrahieren", "--backfill", "--prozesse", "1", cwd=tmp_path)
        assert (
            e.code == EXIT_OK and "Extraktion: 3 Seiten neu oder veraltet, 3 extrahiert, 9 Zeilen" in e.out
        ), str(e)
        assert bilanzzeile(e.out).startswith("neu 41, "), str(e)
        # eine Seite ändert sich: nur sie wird neu extrahiert und ihre Zeilen geändert
        with psycopg.connect(db_url) as conn:
            conn.execute("update seiten set html = html || '<p>Nachtrag</p>'::bytea where item_id = 2")
        e = laufen(url, "--extrahieren", "--slot", SLOT_TEXT, "--prozesse", "1", cwd=tmp_path)
        assert e.code == EXIT_OK and "Extraktion: 1 Seiten neu oder veraltet, 1 extrahiert" in e.out, str(e)
    elif modus == "blick":  # kein Exit 4 an schema_migrationen, das blick nie liest
        assert (
            check.out.endswith("Alle Voraussetzungen erfüllt (blick).\n") and "Hinweis: für" not in check.out
        )
    else:
        assert "Items: 40" in check.out, str(check)


def test_spaltenrechte_auf_raw_items_genuegen_wo_die_stufe_nur_diese_spalten_liest(
    pg, db_name, db_url, frische_rolle, tmp_path
):
    """Ein Haus gibt der Betriebsrolle SELECT nicht auf die ganze raw_items, nur auf einzelne
    Spalten. Die Prüfung zählt das, wenn es die Spalten sind, die der Modus liest (lauf: id und
    slot, einlesen: id und url); fehlt eine, nennt sie das Recht auf raw_items wie bisher."""
    rolle, url = frische_rolle
    bestand_anlegen(db_url, 40)
    zustand_setzen(db_url, 40, "A")
    for modus in ("lauf", "einlesen"):
        rechte_geben(db_url, db_name, modus, rolle)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(sql.SQL("revoke select on raw_items from {}").format(sql.Identifier(rolle)))

    def spalten_geben(*spalten: str) -> None:
        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("grant select ({}) on raw_items to {}").format(
                    sql.SQL(", ").join(map(sql.Identifier, spalten)), sql.Identifier(rolle)
                )
            )

    spalten_geben("id", "haus")  # ohne slot und url: zu wenig
    check = check_db_starten("--modus", "lauf", "--modus", "einlesen", url=url, cwd=tmp_path)
    assert check.code == EXIT_VORAUSSETZUNG, str(check)
    assert "  - Recht SELECT auf Tabelle raw_items (für lauf, einlesen)\n" in check.out, str(check)

    spalten_geben("slot")  # dazu: id, haus, slot – was ein Lauf liest, nicht url
    check = check_db_starten("--modus", "lauf", "--modus", "einlesen", url=url, cwd=tmp_path)
    assert check.code == EXIT_VORAUSSETZUNG, str(check)
    assert "  - Recht SELECT auf Tabelle raw_items (für einlesen)\n" in check.out, str(check)
    assert "für lauf" not in check.out, str(check)
    for args in LAEUFE["lauf"]:
        e = laufen(url, *args, cwd=tmp_path)
        assert e.code == EXIT_OK, f"{args}: {e}"

    spalten_geben("url")
    check = check_db_starten("--modus", "lauf", "--modus", "einlesen", url=url, cwd=tmp_path)
    assert check.code == EXIT_OK and "Alle Voraussetzungen erfüllt (lauf, einlesen)" in check.out, str(check)
    e = laufen(url, "--einlesen", str(kandidatendatei(tmp_path / "a.json")), cwd=tmp_path)
    assert e.code == EXIT_OK and "6 Kandidaten" in e.out, str(e)
    with psycopg.connect(db_url) as conn:  # die Rolle hat nie ein Recht auf die ganze Tabelle
        ganz = conn.execute("select has_table_privilege(%s, 'raw_items', 'SELECT')", (rolle,))
        assert not ganz.fetchone()[0]


def test_frische_rolle_mit_den_rechten_fuers_migrieren_migriert(pg, leere_db_url, tmp_path):
    raw_items_anlegen(leere_db_url)
    db_name = psycopg.conninfo.conninfo_to_dict(leere_db_url)["dbname"]
    rolle, passwort = f"aw_migrierer_{db_name[-10:]}", "Migrieren-Geheim-8"
    with pg.verwalten() as conn:
        conn.execute(
            sql.SQL("create role {} login password {}").format(sql.Identifier(rolle), sql.Literal(passwort))
        )
    url = pg.url(db_name, user=rolle, password=passwort)
    try:
        ohne = check_db_starten("--migrieren", url=url, cwd=tmp_path)
        assert ohne.code == EXIT_VORAUSSETZUNG, str(ohne)  # permission denied for schema public
        rechte_geben(leere_db_url, db_name, "migrieren", rolle)
        mit = check_db_starten("--migrieren", url=url, cwd=tmp_path)
        assert mit.code == EXIT_OK and mit.out.count("angewandt: aw-") >= 3, str(mit)
        # danach ist die Rolle Eigentümerin; ein zweiter Lauf findet alles angewandt
        wieder = check_db_starten("--migrieren", url=url, cwd=tmp_path)
        assert wieder.code == EXIT_OK and "Alle Migrationen sind schon angewandt." in wieder.out, str(wieder)
    finally:
        with psycopg.connect(leere_db_url, autocommit=True) as conn:
            conn.execute(sql.SQL("drop owned by {}").format(sql.Identifier(rolle)))
        with pg.verwalten() as conn:
            conn.execute(sql.SQL("drop role {}").format(sql.Identifier(rolle)))


def test_fehlende_migration_nennt_den_admin_und_seinen_aufruf(db_url, db_name, stufen_url, tmp_path):
    """Die cron-Mail der Betriebsrolle, wenn der Klon eine neue Migration mitbringt: wer migriert
    (der Admin, Eigentümer der Tabellen – die Betriebsrolle darf es nicht), mit welchem Aufruf im
    Klon (.venv/bin/python; ein „python“ gibt es auf Debian 12 nicht)."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        admin = conn.execute("select current_user").fetchone()[0]
        letzte = conn.execute("select max(name) from schema_migrationen").fetchone()[0]
        conn.execute("delete from schema_migrationen where name = %s", (letzte,))
    e = laufen(stufen_url, "--nachholen", cwd=tmp_path)
    assert e.code == EXIT_VORAUSSETZUNG, str(e)
    assert (
        f"Fehler: Migration(en) fehlen: {letzte}. Anzuwenden als {admin} (Eigentümer der Tabellen der "
        f"Stufe), im Klon: DATABASE_URL='user={admin} dbname={db_name}' .venv/bin/python check_db.py "
        "--migrieren (docs/betrieb.md, Einrichtung, Schritt 3; danach Schritt 4 für die Rechte der "
        "Betriebsrolle).\n"
    ) in e.err, str(e)


@pytest.mark.parametrize("rolle", ["blick", "ingest"])
def test_eine_rolle_ohne_betriebsrechte_hoert_welche_rolle_laeuft(
    rolle, pg, db_name, db_url, frische_rolle, tmp_path
):
    """DATABASE_URL nennt aw_blick (das Rezept mit -v nur_blick=1) oder Ingest (liest raw_items und das
    Buch): ein Lauf endet mit Exit 4 und dem Satz, dass Läufe der Betriebsrolle gehören – kein Rat, ihr
    mit dem Rezept Schreibrechte zu geben."""
    name, url = frische_rolle
    if rolle == "blick":
        assert rezept_anwenden(db_url, f"rolle={name}", "nur_blick=1").returncode == 0
    else:
        rechte_geben(db_url, db_name, "trocken", name)
    e = laufen(url, "--extrahieren", "--nachholen", cwd=tmp_path)
    assert e.code == EXIT_VORAUSSETZUNG, str(e)
    assert nach_der_warnung(e.err) == (
        f"Fehler: Die Rolle {name} darf keine Entscheidungen schreiben (kein INSERT auf selected_extractor): Läufe "
        "macht die Betriebsrolle der Stufe (im Rezept aw_stufe); eine Rolle nur zum Lesen (aw_blick) und Ingest "
        "bekommen dieses Recht nicht. DATABASE_URL in .env nennt die Betriebsrolle (docs/betrieb.md, Einrichtung, Schritt "
        f"5); ist {name} die Betriebsrolle, nennt .venv/bin/python check_db.py --modus extrahieren, was ihr "
        "fehlt.\n"
    ), str(e)
    assert "Rollenrezept" not in e.err
    if rolle == "blick":  # auch trocken: aw_blick liest selected_extractor nicht
        e = laufen(url, "--backfill", "--trocken", cwd=tmp_path)
        assert e.code == EXIT_VORAUSSETZUNG, str(e)
        assert (
            nach_der_warnung(e.err).startswith(
                f"Fehler: Die Rolle {name} darf keine Entscheidungen lesen (kein SELECT auf selected_extractor)"
            )
            and "--modus trocken, was ihr fehlt." in e.err
        ), str(e)


def test_ein_lauf_als_admin_bekommt_eine_warnung(pg, db_name, db_url, frische_rolle, tmp_path):
    """Der Admin (Eigentümer der Tabellen, kein Superuser) darf alles, was ein Lauf braucht; er läuft,
    hört aber, dass Läufe der Betriebsrolle gehören."""
    name, url = frische_rolle
    bestand_anlegen(db_url, 3)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("grant connect, temporary on database {} to {}").format(
                sql.Identifier(db_name), sql.Identifier(name)
            )
        )
        conn.execute(
            sql.SQL(
                "grant usage on schema public to {0}; grant select on raw_items, schema_migrationen to {0}"
            ).format(sql.Identifier(name))
        )
        for tabelle in rechte.TABELLEN:
            conn.execute(
                sql.SQL("alter table {} owner to {}").format(sql.Identifier(tabelle), sql.Identifier(name))
            )
    e = laufen(url, "--backfill", cwd=tmp_path)
    with psycopg.connect(db_url, autocommit=True) as conn:  # zurück: die Rolle geht nach dem Test
        for tabelle in rechte.TABELLEN:
            conn.execute(sql.SQL("alter table {} owner to current_user").format(sql.Identifier(tabelle)))
    assert e.code == EXIT_OK, str(e)
    assert nach_der_warnung(e.err) == (
        f"Warnung: Dieser Lauf läuft als {name}, dem Admin der Stufe (Eigentümer ihrer Tabellen): er darf "
        "mehr, als ein Lauf braucht. Läufe und cron gehören der Betriebsrolle (im Rezept aw_stufe) – "
        "DATABASE_URL in .env nennt sie (docs/betrieb.md, Einrichtung, Schritt 5).\n"
    ), str(e)


def test_modus_alle_unter_der_betriebsrolle_nennt_nur_ihre_luecken(stufen_url, passwort_rolle, tmp_path):
    """Rezept ohne -v einlesen/extrahieren: --modus alle nennt genau das, mit dem Aufruf des
    Rezepts, der es gibt – keine Eigentümer-Zeilen fürs Migrieren."""
    rolle, _ = passwort_rolle
    check = check_db_starten("--modus", "alle", url=stufen_url, cwd=tmp_path)
    assert check.code == EXIT_VORAUSSETZUNG, str(check)
    assert "Eigentümer von" not in check.out and "für migrieren" not in check.out, str(check)
    fehlt = check.out.split("Es fehlt:\n", 1)[1].split("So zu beheben", 1)[0]
    assert fehlt.splitlines() == [
        "  - Recht INSERT, UPDATE, DELETE auf Tabelle extraktionen (für einlesen)",
        "  - Recht SELECT, INSERT, UPDATE auf Tabelle seiten (für einlesen)",
        "  - Recht SELECT auf Tabelle seiten (für extrahieren)",
        "  - Recht INSERT, UPDATE auf Tabelle extraktionen (für extrahieren)",
    ], check.out
    assert f"-v rolle={rolle} -v einlesen=1 -v extrahieren=1 -f rollen/aw-rolle-stufe.sql" in check.out
    assert nach_der_warnung(check.err).startswith("Fehler: 4 Voraussetzung(en) fehlen"), check.err


def test_rezept_mit_einlesen_erlaubt_einlesen(pg, db_name, db_url, tmp_path):
    rolle = f"aw_einlesen_{db_name[-10:]}"
    try:
        lauf = rezept_anwenden(db_url, f"rolle={rolle}", "passwort=Einlesen-Geheim-4", "einlesen=1")
        assert lauf.returncode == 0, lauf.stderr
        bestand_anlegen(db_url, 2)
        url = pg.url(db_name, user=rolle, password="Einlesen-Geheim-4")
        e = laufen(url, "--einlesen", str(kandidatendatei(tmp_path / "a.json")), cwd=tmp_path)
        assert e.code == EXIT_OK, str(e)
        e = laufen(
            url, "--einlesen", str(kandidatendatei(tmp_path / "b.json", ohne="trafilatura")), cwd=tmp_path
        )
        assert e.code == EXIT_OK and "entfernt 2" in e.out, str(e)
        # --modus alle prüft jede Betriebsart der Betriebsrolle, nicht das Migrieren (sonst endete
        # es unter ihr immer mit Exit 4 und Zeilen „Eigentümer von …“)
        check = check_db_starten("--modus", "alle", url=url, cwd=tmp_path)
        assert check.code == EXIT_OK and "Eigentümer von" not in check.out, str(check)
        assert "Alle Voraussetzungen erfüllt (lauf, trocken, stichprobe, einlesen, extrahieren" in check.out
    finally:
        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute(sql.SQL("drop owned by {}").format(sql.Identifier(rolle)))
        with pg.verwalten() as conn:
            conn.execute(sql.SQL("drop role if exists {}").format(sql.Identifier(rolle)))


def test_rezept_mit_extrahieren_erlaubt_extrahieren_ohne_nur_die_auswahl(pg, db_name, db_url, tmp_path):
    rolle, passwort = f"aw_extrahieren_{db_name[-10:]}", "Extrahieren-Geheim-6"
    try:
        bestand_anlegen(db_url, 3)
        seiten_anlegen(db_url, range(1, 3))
        url = pg.url(db_name, user=rolle, password=passwort)
        # ohne -v extrahieren=1: die Betriebsrolle wählt, extrahiert aber nicht
        lauf = rezept_anwenden(db_url, f"rolle={rolle}", f"passwort={passwort}")
        assert lauf.returncode == 0, lauf.stderr
        e = laufen(url, "--extrahieren", "--backfill", cwd=tmp_path)
        assert (
            e.code == EXIT_VORAUSSETZUNG
            and f"Der Rolle {rolle} fehlt ein Recht auf die Tabelle seiten" in e.err
        )
        assert "check_db.py --modus extrahieren" in e.err and "-v extrahieren=1" in e.err, str(e)
        # mit -v extrahieren=1 (das Rezept ist wiederholbar): extrahieren und wählen
        lauf = rezept_anwenden(db_url, f"rolle={rolle}", f"passwort={passwort}", "extrahieren=1")
        assert lauf.returncode == 0, lauf.stderr
        e = laufen(url, "--extrahieren", "--backfill", "--prozesse", "1", cwd=tmp_path)
        assert (
            e.code == EXIT_OK and "Extraktion: 2 Seiten neu oder veraltet, 2 extrahiert, 6 Zeilen" in e.out
        ), str(e)
        check = check_db_starten("--modus", "extrahieren", url=url, cwd=tmp_path)
        assert check.code == EXIT_OK, str(check)
        # löschen darf sie trotzdem nicht (das braucht nur --einlesen)
        with psycopg.connect(url, autocommit=True) as conn, pytest.raises(errors.InsufficientPrivilege):
            conn.execute("delete from extraktionen")
    finally:
        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute(sql.SQL("drop owned by {}").format(sql.Identifier(rolle)))
        with pg.verwalten() as conn:
            conn.execute(sql.SQL("drop role if exists {}").format(sql.Identifier(rolle)))


# --- Kein Passwort in einer Ausgabe ------------------------------------------------------------


def dateien_ohne(verzeichnis: Path, geheim: str) -> None:
    for datei in verzeichnis.rglob("*"):
        if datei.is_file():
            assert geheim not in datei.read_text("utf-8", "replace"), datei


def test_kein_passwort_in_irgendeiner_ausgabe(pg, db_name, db_url, stufen_url, passwort_rolle, tmp_path):
    rolle, passwort = passwort_rolle
    bestand_anlegen(db_url, 40)
    zustand_setzen(db_url, 40, "A")
    falsch = "Falsch-Geheim-9931"
    faelle: list[tuple[str, object, int]] = []

    def pruefen(name: str, url: str, *args: str, erwartet: int, **env: str) -> None:
        e = laufen(url, *args, cwd=tmp_path, **env)
        faelle.append((name, e, erwartet))

    pruefen("backfill", stufen_url, "--backfill", erwartet=EXIT_OK)
    pruefen("slot", stufen_url, "--slot", "2026-09-07T08:00", erwartet=EXIT_OK)
    pruefen("stichprobe", stufen_url, "--backfill", "--trocken", "--stichprobe", "3", erwartet=EXIT_OK)
    pruefen(
        "falsches Passwort", url_mit_passwort(pg.admin_url, db_name, rolle, falsch), "--backfill", erwartet=3
    )
    pruefen(
        "Server weg (Socket)",
        f"postgresql://{rolle}:{passwort}@/{db_name}?host=/nirgends",
        "--backfill",
        erwartet=EXIT_DATENBANK,
    )
    pruefen(
        "Server weg (TCP)",
        f"postgresql://{rolle}:{passwort}@127.0.0.1:1/{db_name}",
        "--slot",
        "2026-09-07T08:00",
        erwartet=EXIT_DATENBANK,
    )
    pruefen(
        "Passwort als key=value",
        f"user={rolle} password={passwort} dbname={db_name} host=/nirgends",
        "--backfill",
        erwartet=EXIT_DATENBANK,
    )
    with psycopg.connect(db_url, autocommit=True) as halter:
        assert halter.execute(sperre.SQL_SPERRE, (slotsperre(),)).fetchone()[0]
        pruefen("Sperre belegt", stufen_url, "--slot", SLOT_TEXT, erwartet=EXIT_GESPERRT)
        halter.execute(sperre.SQL_FREIGEBEN)
        with halter.transaction():
            halter.execute("lock table selected_extractor in access exclusive mode")
            pruefen(
                "Zeitlimit",
                stufen_url,
                "--backfill",
                erwartet=EXIT_ZEITLIMIT,
                AUSWAHL_STATEMENT_TIMEOUT="200ms",
                AUSWAHL_LOCK_TIMEOUT="0",
            )

    for name, e, erwartet in faelle:
        assert e.code == erwartet, f"{name}: {e}"
        alles = e.out + e.err
        assert passwort not in alles and quote(passwort) not in alles, f"{name}: {e}"
        assert falsch not in alles, f"{name}: {e}"
        assert "Traceback" not in e.err, f"{name}: {e}"
        assert e.err.count(PASSWORT_WARNUNG) == 1, f"{name}: {e}"  # das Passwort in der URL: einmal gewarnt
        if e.code != EXIT_OK:
            assert e.err.splitlines()[-1].startswith("Fehler: "), f"{name}: {e}"
    # Die Sperre hält eine Sitzung einer anderen Rolle ohne Lauf im Protokoll: ihre PID (pg_locks).
    belegt = dict((n, e) for n, e, _ in faelle)["Sperre belegt"]
    assert "Datenbanksitzung mit PID" in belegt.err and "kein offener Lauf" in belegt.err, str(belegt)
    # die Meldungen zeigen das Ziel maskiert
    server_weg = dict((n, e) for n, e, _ in faelle)["Server weg (TCP)"]
    assert f"postgresql://{rolle}:***@127.0.0.1:1/{db_name}" in server_weg.err, str(server_weg)
    # Die Stichprobe (CSV und HTML) liegt im Arbeitsverzeichnis der Läufe; auch dort steht es nicht.
    assert list(tmp_path.glob("stichprobe-*.csv"))
    dateien_ohne(tmp_path, passwort)
    # Sie trägt volle Texte: nur der Eigentümer liest sie, wie .env
    for datei in tmp_path.glob("stichprobe-*"):
        assert datei.stat().st_mode & 0o777 == 0o600, datei
