"""Das echte Haus (Issue 19): getrennte Rollen, cron, Ingest nebenan – nach docs/betrieb.md.

Jeder Test baut auf PostgreSQL 18 und 15 (Debian-Paket) das Haus der Doku, indem er die
sh-Blöcke der Einrichtung ausführt, wie sie dastehen (``testhilfen.Haus``): der Superuser legt
nur die Datenbank und die Rollen ``ingest`` und ``aw_admin`` an (Schritt 1; kein späterer Block
darf ihn benutzen), Ingest legt ``raw_items`` an und gibt dem Admin, was Schritt 2 sagt, der
Admin (CREATEROLE, kein Superuser) migriert und legt mit dem Rezept die Betriebsrolle an, die
sich mit dem Passwort aus ``.env`` anmeldet (scram-sha-256).

* Das Rezept läuft als Admin ohne Superuser auf 15 und 18, zweimal, und gibt genau die Rechte
  aus rechte.py; was der Admin nicht weitergeben kann, nennt es mit der Anweisung von Ingest.
* ``check_db.py`` nennt jedes fehlende Recht mit der Anweisung und wer sie ausführt – und die
  genannten Anweisungen, ausgeführt, beheben es.
* Die Betriebsrolle liest die Sichten; ``--modus alle`` endet unter ihr mit Exit 0.
* Eine falsche Anmeldung sagt, woher DATABASE_URL kam.
* Die cron-Zeile läuft, wie cron sie ausführt (``env -i``, ``PATH=/usr/bin:/bin``).
"""

from __future__ import annotations

import re

import psycopg
import pytest

from auswahlstufe.fehler import EXIT_DATENBANK, EXIT_OK, EXIT_VORAUSSETZUNG
from auswahlstufe.lauf import rechte
from auswahlstufe.lauf.ingest import RAW_ITEMS
from tests.testhilfen import (
    PROJEKT,
    SLOT,
    SLOT_TEXT,
    Haus,
    abfragen_der_doku,
    cron_zeilen,
    einrichtung,
    schritt,
)

pytestmark = pytest.mark.datenbank


def _items_von_ingest(haus: Haus) -> None:
    """Ingest schreibt drei Items in den Slot 2026-09-07T08:00 (beispiele/seiten.json hat ihre Seiten)."""
    for i in (1, 2, 3):
        haus.sql(
            "ingest",
            "insert into raw_items (id, slot, haus, titel, url) values (%s, %s, 'Nord', %s, %s)",
            (i, SLOT, f"Meldung {i}", f"https://beispiel.test/{i}"),
        )


def _erwartete_rechte(*teile: str) -> dict[str, str]:
    """Tabelle/Sicht → „DELETE,INSERT,…“, wie information_schema sie zeigt, aus rechte.py."""
    je_objekt: dict[str, set[str]] = {}
    for teil, recht in rechte._teile():
        if teil in teile and recht.art in ("tabelle", "sicht"):
            je_objekt.setdefault(recht.objekt, set()).update(recht.rechte)
    return {objekt: ",".join(sorted(r)) for objekt, r in sorted(je_objekt.items())}


def _rechte_von(haus: Haus, rolle: str) -> dict[str, str]:
    with psycopg.connect(haus.server.url("wurzelwerk"), autocommit=True) as conn:
        return dict(
            conn.execute(
                "select table_name, string_agg(privilege_type, ',' order by privilege_type) "
                "from information_schema.role_table_grants where grantee = %s group by 1 order by 1",
                (rolle,),
            ).fetchall()
        )


def _attribute(haus: Haus, rolle: str) -> tuple:
    with haus.server.verwalten() as conn:
        return conn.execute(
            "select rolcanlogin, rolsuper, rolcreatedb, rolcreaterole, rolinherit, rolreplication, "
            "rolbypassrls, rolpassword like 'SCRAM-SHA-256$%%' from pg_authid where rolname = %s",
            (rolle,),
        ).fetchone()


def _nach_schritt(ausgabe: str) -> list[str]:
    """Die Zeilen unter „So zu beheben“: je Zeile „als ROLLE (…): ANWEISUNG“."""
    if "So zu beheben" not in ausgabe:
        return []
    return [z.removeprefix("  - ") for z in ausgabe.split("So zu beheben", 1)[1].splitlines()[1:] if z]


def _ausfuehren_wie_genannt(haus: Haus, zeile: str) -> None:
    """Eine Zeile von „So zu beheben“ so ausführen, wie sie dasteht: SQL als die genannte Rolle,
    den Aufruf des Rezepts als Block im Klon."""
    treffer = re.match(r"als (\w+) \([^)]*\)(?:, im Klon)?: (.*)$", zeile)
    assert treffer, zeile
    rolle, anweisung = treffer.groups()
    if anweisung.startswith("psql "):
        lauf = haus.ausfuehren(anweisung)
        assert lauf.returncode == 0, lauf.stdout + lauf.stderr
    else:
        haus.sql(rolle, anweisung)


# --- Das Haus, wie die Doku es baut ------------------------------------------------------------


def test_die_doku_hat_ihre_schritte_und_ingest_gibt_was_rechte_sagt():
    titel = [s.titel for s in einrichtung()]
    nummeriert = [t for t in titel if t[0].isdigit()]
    assert [int(t.split(".")[0]) for t in nummeriert] == list(range(1, 9)), titel
    # Jeder nummerierte Schritt nennt im Titel, als wer er läuft.
    for t in nummeriert:
        assert re.match(r"\d\. Als (Superuser|Ingest|Admin|Betreiber|Betriebsrolle)\b", t), t
    # Die grants von Ingest sind genau die aus rechte.py, das Schema von raw_items das von ingest.py.
    block = schritt(2).sh()[0]
    grants = [z for z in block.splitlines() if z.startswith("grant ")]
    assert grants == rechte.ingest_gibt("aw_admin"), grants
    create = re.search(r"create table if not exists raw_items \((.*?)\);", block, re.S).group(1)
    assert create.split() == RAW_ITEMS.split("(", 1)[1].rsplit(")", 1)[0].split()
    # Nur Schritt 1 läuft als Superuser; jeder andere Block nennt seine Rolle.
    for s in einrichtung():
        for b in s.sh():
            if "psql" in b and not s.titel.startswith("1."):
                assert re.search(r"-U \w+|\$DATABASE_URL", b), (s.titel, b)


def test_das_haus_nach_der_doku(haus: Haus):
    haus.bauen(6)  # Superuser, Ingest, migrieren, Rezept, .env, check_db --modus alle
    pruefen = haus.schritt(6)[0]
    assert (
        "Alle Voraussetzungen erfüllt (lauf, trocken, stichprobe, einlesen, extrahieren, check_db, blick)"
        in (pruefen.stdout)
    ), pruefen.stdout
    assert "Eigentümer" not in pruefen.stdout and "Traceback" not in pruefen.stderr
    # Der Admin ist kein Superuser, die Betriebsrolle hat kein Sonderrecht und ein Passwort.
    assert _attribute(haus, "aw_admin")[1:4] == (False, False, True)
    assert _attribute(haus, "aw_stufe") == (True, False, False, False, False, False, False, True)
    assert (haus.klon / ".env").stat().st_mode & 0o777 == 0o600

    # Ingest schreibt Items; die Betriebsrolle liest ihre Seiten ein, extrahiert und wählt
    # (.env im Klon, keine DATABASE_URL in der Umgebung).
    _items_von_ingest(haus)
    e = haus.stufe("auswahl.py", "--einlesen", str(PROJEKT / "beispiele" / "seiten.json"))
    assert e.code == EXIT_OK, str(e)

    # Von Hand: welche Slots fehlen, dann einer davon – wie die Doku es sagt.
    offen, von_hand = schritt("Von Hand").sh()
    liste = haus.ausfuehren(offen)
    assert liste.returncode == 0 and SLOT_TEXT in liste.stdout, liste.stdout + liste.stderr
    assert SLOT_TEXT in von_hand
    lauf = haus.ausfuehren(von_hand)
    assert lauf.returncode == 0 and "neu 3, " in lauf.stdout, lauf.stdout + lauf.stderr
    assert "Extraktion: 3 Seiten neu oder veraltet, 3 extrahiert" in lauf.stdout, lauf.stdout
    liste = haus.ausfuehren(offen)
    assert liste.returncode == 0 and SLOT_TEXT not in liste.stdout, liste.stdout

    # Die Abfragen für psql unter der Betriebsrolle (die Sichten eingeschlossen) …
    abfragen = abfragen_der_doku()
    lauf = haus.psql("aw_stufe", "-v", "version=" + _version(), "-v", "item=1", eingabe=abfragen)
    assert lauf.returncode == 0 and not lauf.stderr, lauf.stderr
    assert "2026-09-07 | Nord" in lauf.stdout and "| slot " in lauf.stdout, lauf.stdout

    # … und die Rolle nur zum Lesen (Schritt 8): Sichten und Läufe ja, sonst nichts.
    haus.schritt(8)
    assert _rechte_von(haus, "aw_blick") == _erwartete_rechte("blick")
    sichten = [z for z in abfragen.split(";") if "auswahl_" in z and "selected_extractor" not in z]
    assert len(sichten) == 6, (
        sichten
    )  # letzter Slot, offene Slots, Läufe ohne Ende, die letzten Läufe, cron je Tag, abgebrochene
    lauf = haus.psql("aw_blick", eingabe=";\n".join(sichten) + ";")
    assert lauf.returncode == 0 and not lauf.stderr, lauf.stderr
    lauf = haus.psql("aw_blick", "-c", "select count(*) from selected_extractor")
    assert lauf.returncode != 0 and "permission denied" in lauf.stderr

    # Kein Block nach Schritt 1 brauchte den Superuser: nur postgres ist einer.
    with haus.server.verwalten() as conn:
        supers = conn.execute("select rolname from pg_roles where rolsuper order by 1").fetchall()
    assert all(r not in {(n,) for n in ("ingest", "aw_admin", "aw_stufe", "aw_blick")} for r in supers)


def _version() -> str:
    from version import CODER_VERSION

    return CODER_VERSION


# --- Das Rezept als Admin ohne Superuser (15 und 18) ------------------------------------------


def test_rezept_als_admin_ohne_superuser_zweimal_genau_die_rechte(haus: Haus):
    haus.bauen(4)
    assert _rechte_von(haus, "aw_stufe") == _erwartete_rechte("betrieb", "blick", "einlesen", "extrahieren")
    haus.schritt(4)  # noch einmal: dasselbe, kein Fehler
    assert _rechte_von(haus, "aw_stufe") == _erwartete_rechte("betrieb", "blick", "einlesen", "extrahieren")
    assert _attribute(haus, "aw_stufe") == (True, False, False, False, False, False, False, True)
    # das Passwort aus der Datei gilt (scram-sha-256), und es stand in keiner Ausgabe
    with psycopg.connect(haus.url("aw_stufe", haus.passwort("aw_stufe"))) as conn:
        assert conn.execute("select has_table_privilege('auswahl_letzter_slot', 'SELECT')").fetchone()[0]
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(haus.url("aw_stufe", "falsch")).close()


def test_rezept_nennt_was_ingest_dem_admin_geben_muss_und_aendert_nichts(haus: Haus):
    haus.bauen(3)
    # Ingest gab SELECT ohne Weitergabe: der Admin migriert, kann es aber nicht weitergeben.
    haus.sql("ingest", "revoke grant option for select on table raw_items from aw_admin")
    lauf = haus.ausfuehren(schritt(4).sh()[0])
    assert lauf.returncode == 3, lauf.stdout + lauf.stderr
    assert "aw_admin kann aw_stufe nicht alles geben" in lauf.stderr, lauf.stderr
    assert "als ingest: grant select on table raw_items to aw_admin with grant option;" in lauf.stderr
    with haus.server.verwalten() as conn:  # alles in einer Transaktion: keine halbe Rolle
        assert not conn.execute("select 1 from pg_roles where rolname = 'aw_stufe'").fetchone()
    haus.sql("ingest", "grant select on table raw_items to aw_admin with grant option")
    haus.schritt(4)
    assert _rechte_von(haus, "aw_stufe")["raw_items"] == "SELECT"


def test_rezept_verneint_keine_sonderrechte_sondern_prueft_sie(haus: Haus):
    """Issue 19.2: vorher scheiterte das Rezept als Admin an „alter role … nosuperuser …“ – auch,
    wenn ein Superuser die Rolle vorher anlegte. Jetzt prüft es und sagt, was ein Superuser tut."""
    haus.bauen(3)
    with haus.server.verwalten() as conn:  # eine Rolle, die ein Superuser mit CREATEDB anlegte
        conn.execute("create role aw_stufe login createdb")
    lauf = haus.ausfuehren(schritt(4).sh()[0])
    if haus.version >= 16:  # ab 16 ändert der Admin nur Rollen, auf die er die ADMIN OPTION hat
        assert lauf.returncode == 3, lauf.stdout + lauf.stderr
        assert "braucht das die ADMIN OPTION auf der Rolle" in lauf.stderr, lauf.stderr
        assert "grant aw_stufe to aw_admin with admin option;" in lauf.stderr
        with haus.server.verwalten() as conn:
            conn.execute("grant aw_stufe to aw_admin with admin option")
        lauf = haus.ausfuehren(schritt(4).sh()[0])
    assert lauf.returncode == 3, lauf.stdout + lauf.stderr
    assert "Die Rolle aw_stufe hat Sonderrechte, die sie nicht braucht: CREATEDB." in lauf.stderr, lauf.stderr
    assert "alter role aw_stufe nocreatedb;" in lauf.stderr
    with haus.server.verwalten() as conn:
        conn.execute("alter role aw_stufe nocreatedb")
    haus.schritt(4)


# --- check_db.py nennt, wer was ausführt ---------------------------------------------------------


def test_migrieren_nennt_das_fehlende_recht_von_ingest_mit_der_anweisung(haus: Haus):
    haus.bauen(2)
    haus.sql("ingest", "revoke references on table raw_items from aw_admin")
    lauf = haus.ausfuehren(schritt(3).sh()[0])
    assert lauf.returncode == EXIT_VORAUSSETZUNG, lauf.stdout + lauf.stderr
    assert "Recht REFERENCES auf Tabelle raw_items (für migrieren)" in lauf.stdout, lauf.stdout
    schritte = _nach_schritt(lauf.stdout)
    assert schritte == [
        "als ingest (Eigentümer von raw_items): grant references on table raw_items to aw_admin;"
    ]
    assert "nichts angewandt" in lauf.stderr and "Traceback" not in lauf.stderr
    with psycopg.connect(haus.server.url("wurzelwerk")) as conn:  # nichts migriert
        assert conn.execute("select to_regclass('schema_migrationen')").fetchone()[0] is None
    for zeile in schritte:
        _ausfuehren_wie_genannt(haus, zeile)
    haus.schritt(3)


def test_check_db_unter_der_betriebsrolle_nennt_ingest_und_das_rezept(haus: Haus):
    haus.bauen(5)
    # Ingest nimmt dem Admin die Weitergabe – und damit der Betriebsrolle SELECT auf raw_items.
    haus.sql("ingest", "revoke grant option for select on table raw_items from aw_admin cascade")
    e = haus.stufe("check_db.py")
    assert e.code == EXIT_VORAUSSETZUNG, str(e)
    assert "Recht SELECT auf Tabelle raw_items (für lauf, check_db)" in e.out, e.out
    schritte = _nach_schritt(e.out)
    assert schritte == [
        "als ingest (Eigentümer von raw_items): grant select on table raw_items to aw_admin with grant option;",
        "als aw_admin (Eigentümer der Tabellen der Stufe), im Klon: psql -X -v ON_ERROR_STOP=1 -U aw_admin "
        "-d wurzelwerk -v rolle=aw_stufe -f rollen/aw-rolle-stufe.sql",
    ], e.out
    for zeile in schritte:  # was dasteht, behebt es
        _ausfuehren_wie_genannt(haus, zeile)
    e = haus.stufe("check_db.py", "--modus", "alle")
    assert e.code == EXIT_OK, str(e)


def _textblock(schritt_titel: str, beginn: str) -> str:
    return next(
        text
        for sprache, text in schritt(schritt_titel).bloecke
        if sprache == "text" and text.startswith(beginn)
    )


def test_ohne_einlesen_und_extrahieren_sagen_check_db_und_der_lauf_was_die_doku_zeigt(haus: Haus):
    """Rezept ohne -v einlesen=1 -v extrahieren=1: --modus alle und --einlesen sagen wörtlich,
    was in Schritt 6 und unter „Was sonst gilt“ steht (Issue 19.11: vorher halb englisch, ohne
    nächsten Schritt; --modus alle endete mit zehn Eigentümer-Zeilen)."""
    haus.bauen(3)
    rezept = schritt(4).sh()[0]
    assert " -v einlesen=1 -v extrahieren=1" in rezept
    lauf = haus.ausfuehren(rezept.replace(" -v einlesen=1 -v extrahieren=1", ""))
    assert lauf.returncode == 0, lauf.stderr
    haus.schritt(5)
    e = haus.stufe("check_db.py", "--modus", "alle")
    assert e.code == EXIT_VORAUSSETZUNG, str(e)
    assert _textblock("6.", "Es fehlt:") in e.out, e.out
    assert "Eigentümer von" not in e.out
    haus.sql("ingest", "insert into raw_items (id, slot) values (1, %s)", (SLOT,))
    datei = haus.home / "k.json"
    datei.write_text('[{"item_id": 1, "extractions": {"trafilatura": {"text": "Ein Text."}}}]')
    e = haus.stufe("auswahl.py", "--einlesen", str(datei))
    assert e.code == EXIT_VORAUSSETZUNG, str(e)
    assert e.err == _textblock("Was sonst gilt", "Fehler: "), e.err


def test_falsches_passwort_sagt_woher_die_url_kam(haus: Haus):
    haus.bauen(5)
    env_datei = haus.klon / ".env"
    richtig = env_datei.read_text()
    env_datei.write_text(richtig.replace(haus.passwort("aw_stufe"), "Falsch-Geheim-1"))
    e = haus.stufe("auswahl.py", "--backfill")
    assert e.code == EXIT_DATENBANK, str(e)
    assert "Rolle oder Passwort falsch." in e.err and f"DATABASE_URL kommt aus {env_datei}." in e.err, e.err
    assert "Falsch-Geheim-1" not in e.err + e.out and "Traceback" not in e.err
    # aus der Umgebung: das sagt sie, und dass die .env daneben dann nicht zählt
    env_datei.write_text(richtig)
    url = haus.url("aw_stufe", "Falsch-Geheim-2")
    e = haus.stufe("check_db.py", env={"DATABASE_URL": url})
    assert e.code == EXIT_DATENBANK, str(e)
    assert f"DATABASE_URL kommt aus der Umgebung (die Datei {env_datei} wird dann nicht gelesen)." in e.err, (
        e.err
    )


# --- cron ------------------------------------------------------------------------------------------


def test_cron_zeile_aus_der_doku_wie_cron_sie_ausfuehrt(haus: Haus):
    haus.bauen(7)
    _items_von_ingest(haus)
    assert haus.stufe("auswahl.py", "--einlesen", str(PROJEKT / "beispiele" / "seiten.json")).code == 0
    lauf = haus.wie_cron(cron_zeilen()["tick"])
    # Erfolg: keine Ausgabe (also keine Mail), die Bilanz steht im Log, kein Slot offen.
    assert lauf.returncode == 0 and lauf.stdout == lauf.stderr == "", lauf.stdout + lauf.stderr
    log = (haus.klon / "log" / "auswahl.log").read_text()
    assert "neu 3, " in log and "Traceback" not in log, log
    assert haus.sql("aw_stufe", "select count(*) from auswahl_slots_ohne_lauf") == [(0,)]
    # nichts mehr offen: still, Exit 0
    lauf = haus.wie_cron(cron_zeilen()["tick"])
    assert lauf.returncode == 0 and lauf.stdout == lauf.stderr == "", lauf.stdout + lauf.stderr
    # die Nacht: ein Backfill mit Extraktion über alles, ebenso still
    lauf = haus.wie_cron(cron_zeilen()["nacht"])
    assert lauf.returncode == 0 and lauf.stdout == lauf.stderr == "", lauf.stdout + lauf.stderr
    assert "Traceback" not in (haus.klon / "log" / "auswahl.log").read_text()
