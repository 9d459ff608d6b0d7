"""Das echte Haus: getrennte Rollen, cron, Ingest nebenan – nach docs/betrieb.md.

Jeder Test baut auf PostgreSQL 18 und 15 (Debian-Paket) das Haus der Doku, indem er die
sh-Blöcke der Einrichtung ausführt, wie sie dastehen (``hilfen.haus.Haus``): der Superuser legt
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

import gzip
import re
import subprocess

import psycopg
import pytest

from auswahlstufe.fehler import EXIT_DATENBANK, EXIT_KONFIGURATION, EXIT_OK, EXIT_VORAUSSETZUNG
from auswahlstufe.lauf import rechte
from auswahlstufe.lauf.rezept import rechte_je_teil
from auswahlstufe.server import RAW_ITEMS
from tests.hilfen import PROJEKT
from tests.hilfen import rechte as rechte_vergeben
from tests.hilfen.daten import SLOT, SLOT_TEXT
from tests.hilfen.haus import (
    Haus,
    abfragen_der_doku,
    cron_zeilen,
    einrichtung,
    haus_hba,
    haus_ident,
    hba_der_doku,
    ident_der_doku,
    psql_aufrufe,
    schritt,
    ueberwachung_der_doku,
)
from tests.hilfen.server import hba_datei, hba_zeilen_voran, ident_datei, ident_zeilen_dazu

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
    for teil, recht in rechte_je_teil():
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
    # Die grants von Ingest sind genau die aus rechte.py, das Schema von raw_items das von server.RAW_ITEMS.
    block = schritt(2).sh()[0]
    grants = [z for z in block.splitlines() if z.startswith("grant ")]
    assert grants == rechte_vergeben.ingest_gibt("aw_admin"), grants
    # Dieselbe DDL wie der Helfer von Ingest, mit dem Index auf slot – wörtlich.
    assert block.startswith(
        "psql -X -v ON_ERROR_STOP=1 -U ingest -d wurzelwerk <<'SQL'\n" + RAW_ITEMS + "grant "
    )
    assert "create index if not exists raw_items_slot on raw_items (slot);" in RAW_ITEMS
    # Schritt 8 nennt jede Sicht, die aw_blick liest.
    for sicht in rechte.SICHTEN:
        assert f"`{sicht}`" in schritt(8).text, sicht
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

    # Die Abfragen für psql unter der Betriebsrolle (die Sichten eingeschlossen), mit dem Aufruf
    # der Doku: DATABASE_URL aus .env, das Passwort aus ~/.pgpass – nicht in der Prozessliste
    # (haus.ausfuehren prüft jedes psql). Ein Server in UTC: psql zeigte jede Zeit in der Zone des
    # Servers, --slot liest sie ohne Offset als Europe/Berlin; der Aufruf der Doku zeigt Europe/Berlin.
    with haus.server.verwalten() as conn:
        conn.execute("alter database wurzelwerk set timezone = 'UTC'")
    abfragen = abfragen_der_doku()
    lauf = haus.ausfuehren(_abfragen_aufruf(), eingabe=abfragen)
    assert lauf.returncode == 0 and not lauf.stderr, lauf.stderr
    assert "2026-09-07 | Nord" in lauf.stdout and "| slot " in lauf.stdout, lauf.stdout
    assert f" {SLOT_TEXT.replace('T', ' ')}:00+02 " in lauf.stdout, lauf.stdout
    assert "+00 " not in lauf.stdout, lauf.stdout
    aufrufe = psql_aufrufe(haus.home.parent)
    assert any(a and a[0].startswith("postgresql://aw_stufe@/wurzelwerk?") for a in aufrufe), aufrufe

    # … und die Rolle nur zum Lesen (Schritt 8): Sichten und Läufe ja, sonst nichts.
    blick = haus.schritt(8)[-1]
    assert f" {SLOT_TEXT.replace('T', ' ')}:00+02 " in blick.stdout, blick.stdout
    assert _rechte_von(haus, "aw_blick") == _erwartete_rechte("blick")
    # Der Block der Überwachung läuft unter aw_blick, wie er dasteht
    lauf = haus.psql("aw_blick", eingabe=ueberwachung_der_doku())
    assert lauf.returncode == 0 and not lauf.stderr, lauf.stderr
    lauf = haus.psql("aw_blick", "-c", "select count(*) from selected_extractor")
    assert lauf.returncode != 0 and "permission denied" in lauf.stderr

    # Kein Block nach Schritt 1 brauchte den Superuser: nur postgres ist einer.
    with haus.server.verwalten() as conn:
        supers = conn.execute("select rolname from pg_roles where rolsuper order by 1").fetchall()
    assert all(r not in {(n,) for n in ("ingest", "aw_admin", "aw_stufe", "aw_blick")} for r in supers)


def test_schritt_1_laesst_jede_rolle_an_wie_die_doku_sagt_und_ohne_das_sagt_es_die_anmeldung(haus: Haus):
    """Auf Debian („local all all peer“) enden Schritt 5 ohne eine Zeile für aw_stufe und die
    Schritte 2–4 und 8 ohne eine Zuordnung für ingest und aw_admin mit „Peer authentication
    failed“. Schritt 1 regelt darum jede Rolle (peer mit Zuordnung für ingest und aw_admin,
    scram-sha-256 für die Stufe), das Haus nimmt genau diese Zeilen (``haus_hba``, ``haus_ident``),
    und ohne sie sagt die Anmeldung deutsch, was fehlt – einer Rolle ohne Passwort keine Zeile
    scram-sha-256."""
    zeilen = hba_der_doku()
    regeln = [z.split() for z in zeilen.splitlines()]
    assert regeln[0] == ["local", "wurzelwerk", "ingest,aw_admin", "peer", "map=wurzelwerk"], regeln
    assert regeln[1] == ["local", "wurzelwerk", "aw_stufe,aw_blick", "scram-sha-256"], regeln
    assert all(r[1:3] == ["wurzelwerk", "aw_stufe,aw_blick"] and r[-1] == "scram-sha-256" for r in regeln[1:])
    assert [z.split() for z in ident_der_doku().splitlines()] == [
        ["wurzelwerk", "aw", "ingest"],
        ["wurzelwerk", "aw", "aw_admin"],
    ]
    assert "pg_reload_conf()" in schritt(1).sh()[-1] and "pg_ident_file_mappings" in schritt(1).sh()[-1]
    haus.bauen(5)
    hba, ident = hba_datei(haus.server), ident_datei(haus.server)
    assert hba.read_text().startswith(zeilen)  # wie der Admin des Servers: vor allen anderen
    assert ident.read_text().endswith(haus_ident())
    assert haus.stufe("check_db.py").code == EXIT_OK
    # Ohne die Zuordnung: der Admin kommt nicht an (Schritt 3), und die Meldung nennt den Weg.
    ident.write_text(ident.read_text().replace(haus_ident(), ""))
    try:
        with haus.server.verwalten() as conn:
            conn.execute("select pg_reload_conf()")
        lauf = haus.ausfuehren(schritt(3).sh()[0])
        assert lauf.returncode == EXIT_DATENBANK, lauf.stdout + lauf.stderr
        assert "der Server prüft aw_admin mit peer (pg_hba.conf)" in lauf.stderr, lauf.stderr
        assert (
            "kommt aw_admin so nur an, wenn der Aufruf unter dem Benutzer des Systems aw_admin läuft oder "
            "pg_ident.conf ihn zuordnet" in lauf.stderr
        ), lauf.stderr
        assert "Traceback" not in lauf.stderr
    finally:
        ident_zeilen_dazu(haus.server, haus_ident())
    # Ohne die Zeilen für pg_hba.conf: peer wie auf Debian – die Meldung nennt die Zeile aus Schritt 1.
    hba.write_text(hba.read_text().replace(zeilen, ""))
    try:
        with haus.server.verwalten() as conn:
            conn.execute("select pg_reload_conf()")
        e = haus.stufe("check_db.py")
        assert e.code == EXIT_DATENBANK, str(e)
        assert "der Server prüft aw_stufe mit peer (pg_hba.conf)" in e.err, e.err
        assert "local wurzelwerk aw_stufe scram-sha-256" in e.err and "Schritt 1" in e.err, e.err
        assert "authentication failed" not in e.err and "Traceback" not in e.err, e.err
    finally:
        hba_zeilen_voran(haus.server, haus_hba(haus.server))


def test_eine_rolle_der_stufe_entfernen_wie_die_doku_sagt(haus: Haus):
    """Eine Rolle des Rezepts wieder loswerden: der Block der Doku läuft als Admin ohne Superuser,
    auf 15 und 18, für aw_blick und aw_stufe."""
    haus.bauen(8)
    (block,) = schritt("Eine Rolle der Stufe entfernen").sh()
    for rolle in ("aw_blick", "aw_stufe"):
        lauf = haus.ausfuehren(block.replace("aw_blick", rolle))
        assert lauf.returncode == 0, lauf.stdout + lauf.stderr
        with haus.server.verwalten() as conn:
            assert not conn.execute("select 1 from pg_roles where rolname = %s", (rolle,)).fetchone()
        assert f":{rolle}:" not in (haus.home / ".pgpass").read_text()
        assert not (haus.home / f".{rolle}_passwort").exists()
    assert _rechte_von(haus, "aw_stufe") == {} and _attribute(haus, "aw_admin")[1] is False
    haus.schritt(4)  # und wieder anlegen geht
    assert _rechte_von(haus, "aw_stufe") == _erwartete_rechte("betrieb", "blick", "einlesen", "extrahieren")


def test_readme_und_env_example_sind_die_einrichtung(tmp_path):
    """Die Kurzform im README ist die Einrichtung: sie migriert wie Schritt 3 (als Admin), und
    .env.example ist die .env aus Schritt 5 (die Betriebsrolle über den Socket, ohne PGHOST/PGPORT,
    wie auf Debian)."""
    from dotenv import dotenv_values

    readme = (PROJEKT / "README.md").read_text(encoding="utf-8")
    abschnitt = readme.split("\n## Gegen die eigene Datenbank\n", 1)[1].split("\n## ", 1)[0]
    kurz = re.findall(r"^```sh\n(.*?)^```", abschnitt, re.S | re.M)[0]
    migrieren = [z for z in kurz.splitlines() if "check_db.py --migrieren" in z]
    assert len(migrieren) == 1 and migrieren[0].startswith(schritt(3).sh()[0].strip()), kurz
    assert "Schritt 3, 5 und 6 der [Einrichtung" in abschnitt and "(Schritt 4)" in abschnitt, abschnitt
    (tmp_path / ".aw_stufe_passwort").write_text("Vorlage-Geheim-1\n")
    umgebung = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    lauf = subprocess.run(["bash", "-e", "-c", schritt(5).sh()[0]], cwd=tmp_path, env=umgebung)
    assert lauf.returncode == 0
    assert (
        dotenv_values(tmp_path / ".env")["DATABASE_URL"]
        == dotenv_values(PROJEKT / ".env.example")["DATABASE_URL"]
    )
    assert (tmp_path / ".pgpass").read_text() == "*:*:wurzelwerk:aw_stufe:Vorlage-Geheim-1\n"
    assert "*:*:wurzelwerk:aw_stufe:PASSWORT" in (PROJEKT / ".env.example").read_text()


def _abfragen_aufruf() -> str:
    text = (PROJEKT / "docs" / "betrieb.md").read_text(encoding="utf-8")
    abschnitt = text.split("\n## Abfragen für psql\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```sh\n(.*?)^```", abschnitt, re.S | re.M)[0]


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


def test_rezept_unter_der_falschen_rolle_nennt_den_admin_der_stufe(haus: Haus):
    """Als ingest oder aw_stufe nennt das Rezept den Admin (den Eigentümer der Tabellen der Stufe)
    und seinen Aufruf – nie den Rat, einer Rolle CREATEROLE zu geben; als Superuser läuft es mit
    einer Warnung."""
    haus.bauen(5)
    rezept = schritt(4).sh()[0]
    assert "-U aw_admin " in rezept
    for falsch in ("ingest", "aw_stufe"):
        lauf = haus.ausfuehren(rezept.replace("-U aw_admin ", f"-U {falsch} "))
        assert lauf.returncode == 3, lauf.stdout + lauf.stderr
        assert (
            f"Das Rezept läuft als Admin der Stufe – der Rolle, die migriert hat und den Tabellen der Stufe "
            f"gehört: das ist aw_admin, nicht {falsch}. Als aw_admin ausführen: psql -X -v ON_ERROR_STOP=1 "
            "-U aw_admin -d wurzelwerk -v rolle=aw_stufe … -f rollen/aw-rolle-stufe.sql"
        ) in lauf.stderr, lauf.stderr
        assert "createrole" not in lauf.stderr.lower(), lauf.stderr
        # ohne psqls englisches „CONTEXT: PL/pgSQL function … at RAISE“
        assert "CONTEXT" not in lauf.stderr and "PL/pgSQL" not in lauf.stderr, lauf.stderr
    assert _attribute(haus, "ingest")[3] is False  # niemand hat CREATEROLE bekommen
    lauf = haus.ausfuehren(rezept.replace("-U aw_admin ", ""), superuser=True)
    assert lauf.returncode == 0, lauf.stderr
    assert "Das Rezept läuft als Superuser postgres. Gedacht ist es für den Admin der Stufe (aw_admin" in (
        lauf.stderr
    ), lauf.stderr
    haus.schritt(4)  # als Admin: still
    assert "Superuser" not in haus.schritt(4)[0].stderr


def test_rezept_verneint_keine_sonderrechte_sondern_prueft_sie(haus: Haus):
    """Das Rezept verneint keine Sonderrechte („alter role … nosuperuser …“ scheitert als Admin),
    es prüft sie – auch wenn ein Superuser die Rolle vorher anlegte – und sagt, was ein Superuser tut."""
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


def test_check_db_unter_aw_blick_und_ingest_nennt_alles_und_wer_was_tut(haus: Haus):
    """Als aw_blick und als ingest (auch mit --migrieren) prüft check_db, ohne Rechte zu brauchen,
    die es dann meldet: kein Exit 4 an schema_migrationen, sondern die ganze Liste mit wer was tut.
    Einer Rolle nur zum Lesen rät es nicht zum Rezept (das gäbe ihr Schreibrechte), sondern nennt die
    Betriebsrolle."""
    haus.bauen(8)
    teile = psycopg.conninfo.conninfo_to_dict(haus.server.admin_url)
    ort = f"host={teile['host']} port={teile.get('port', 5432)} dbname=wurzelwerk"
    blick = {"DATABASE_URL": f"user=aw_blick {ort}"}  # das Passwort aus ~/.pgpass (Schritt 8)
    e = haus.stufe("check_db.py", "--modus", "blick", env=blick)
    assert e.code == EXIT_OK and e.out.endswith("Alle Voraussetzungen erfüllt (blick).\n"), str(e)
    assert "Hinweis: für" not in e.out, e.out
    ingest = {"DATABASE_URL": f"user=ingest {ort}"}
    faelle = [
        (
            blick,
            (),
            "Recht SELECT auf Tabelle schema_migrationen (für lauf, check_db)",
            [
                "aw_blick ist eine Rolle nur zum Lesen (Rechte von blick): für sie ist .venv/bin/python "
                "check_db.py --modus blick die Probe. check_db.py ohne --modus, Läufe und cron gehören der "
                "Betriebsrolle (im Rezept aw_stufe), nicht aw_blick: DATABASE_URL aus .env im Klon "
                "(Schritt 5)"
            ],
        ),
        (
            ingest,
            (),
            "Recht SELECT auf Tabelle extraktionen (für lauf, check_db)",
            [
                "ingest ist Ingest (Eigentümer von raw_items), keine Rolle der Stufe: check_db.py prüft die "
                "Betriebsrolle (DATABASE_URL aus .env im Klon) oder, mit --modus migrieren, den Admin "
                "(aw_admin)"
            ],
        ),
        (
            ingest,
            ("--migrieren",),
            "Eigentümer von selected_extractor (für migrieren)",
            [
                "Migrieren ist Sache von aw_admin (Eigentümer der Tabellen der Stufe), nicht von ingest: "
                "DATABASE_URL='user=aw_admin dbname=wurzelwerk' .venv/bin/python check_db.py --migrieren"
            ],
        ),
    ]
    for env, args, eintrag, schritte in faelle:
        e = haus.stufe("check_db.py", *args, env=env)
        assert e.code == EXIT_VORAUSSETZUNG, str(e)
        assert f"  - {eintrag}\n" in e.out, e.out
        assert _nach_schritt(e.out) == schritte, e.out
        assert "Hinweis: für" not in e.out and "Traceback" not in e.err
        assert "aw-rolle-stufe.sql" not in e.out, e.out  # kein Rezept für aw_blick oder Ingest
    e = haus.stufe("check_db.py", "--modus", "alle", env=blick)  # auch wer alle Modi prüft
    assert e.code == EXIT_VORAUSSETZUNG and _nach_schritt(e.out) == faelle[0][3], str(e)


def test_check_db_als_admin_hoert_dass_es_die_betriebsrolle_pruefen_soll(haus: Haus):
    """Der Admin darf alles, was lauf und check_db brauchen – „Alle Voraussetzungen erfüllt“ sagte ihm
    sonst nicht, dass er die falsche Rolle prüft; mit --migrieren ist er die richtige."""
    haus.bauen(4)
    admin = "DATABASE_URL='user=aw_admin dbname=wurzelwerk' .venv/bin/python check_db.py"
    hinweis = (
        "Hinweis: aw_admin ist der Admin der Stufe (Eigentümer ihrer Tabellen); seine Probe ist --modus "
        "migrieren. check_db.py ohne --modus, Läufe und cron gehören der Betriebsrolle (im Rezept "
        "aw_stufe): DATABASE_URL aus .env im Klon (docs/betrieb.md, Einrichtung, Schritt 5).\n"
    )
    lauf = haus.ausfuehren(admin)
    assert lauf.returncode == EXIT_OK and hinweis in lauf.stdout, lauf.stdout + lauf.stderr
    for args in (" --migrieren", " --modus migrieren"):
        lauf = haus.ausfuehren(admin + args)
        assert lauf.returncode == EXIT_OK and "Hinweis: aw_admin" not in lauf.stdout, (
            lauf.stdout + lauf.stderr
        )


def test_migrieren_ohne_raw_items_nennt_schritt_2_und_nur_was_den_admin_angeht(haus: Haus):
    """--migrieren auf einer Datenbank ohne raw_items und ohne Rechte nennt Schritt 2 für raw_items,
    keine Migration als Mangel (nicht den Befehl, der gerade läuft) und dem Admin keine Hinweise zu
    Betriebsarten, die nicht seine sind."""
    haus.bauen(1)
    lauf = haus.ausfuehren(schritt(3).sh()[0])
    assert lauf.returncode == EXIT_VORAUSSETZUNG, lauf.stdout + lauf.stderr
    assert "  - Tabelle raw_items (gehört Ingest)\n" in lauf.stdout, lauf.stdout
    assert "Migration aw-" not in lauf.stdout and "python check_db.py --migrieren)" not in lauf.stdout
    assert "Hinweis: nicht angewandt: aw-001-extraktionen, " in lauf.stdout, lauf.stdout
    assert "Hinweis: für" not in lauf.stdout, lauf.stdout
    assert _nach_schritt(lauf.stdout) == [
        "als ingest (Eigentümer der Datenbank, Ingest): raw_items anlegen und dem Admin der Stufe die "
        "Rechte geben – Schritt 2",
        "als ingest (Eigentümer von public): grant create on schema public to aw_admin;",
    ], lauf.stdout
    haus.schritt(2)  # was dasteht, behebt es
    haus.schritt(3)
    haus.schritt(4)
    haus.schritt(5)
    # Der Betriebsrolle fehlt eine Migration (das Buch ohne aw-009): wer sie anwendet, wie.
    with psycopg.connect(haus.server.url("wurzelwerk"), autocommit=True) as conn:
        conn.execute("delete from schema_migrationen where name = 'aw-009-extraktion-versuche'")
    e = haus.stufe("check_db.py")
    assert e.code == EXIT_VORAUSSETZUNG, str(e)
    assert "  - Migration aw-009-extraktion-versuche.sql (nicht angewandt)\n" in e.out, e.out
    assert _nach_schritt(e.out) == [
        "als aw_admin (Eigentümer der Tabellen der Stufe), im Klon: DATABASE_URL='user=aw_admin "
        "dbname=wurzelwerk' .venv/bin/python check_db.py --migrieren – Schritt 3"
    ], e.out


def _textblock(schritt_titel: str, beginn: str) -> str:
    return next(
        text
        for sprache, text in schritt(schritt_titel).bloecke
        if sprache == "text" and text.startswith(beginn)
    )


def test_ohne_einlesen_und_extrahieren_sagen_check_db_und_der_lauf_was_die_doku_zeigt(haus: Haus):
    """Rezept ohne -v einlesen=1 -v extrahieren=1: --modus alle und --einlesen sagen wörtlich,
    was in Schritt 6 und unter „Was sonst gilt“ steht: deutsch, mit dem nächsten Schritt, ohne
    Eigentümer-Zeilen fürs Migrieren."""
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


def test_falsches_passwort_sagt_woher_url_und_passwort_kamen(haus: Haus):
    haus.bauen(5)
    env_datei, pgpass = haus.klon / ".env", haus.home / ".pgpass"
    assert haus.passwort("aw_stufe") not in env_datei.read_text()  # Schritt 5: das Passwort in ~/.pgpass
    assert pgpass.stat().st_mode & 0o777 == 0o600
    richtig = pgpass.read_text()
    pgpass.write_text(richtig.replace(haus.passwort("aw_stufe"), "Falsch-Geheim-1"))
    e = haus.stufe("auswahl.py", "--backfill")
    assert e.code == EXIT_DATENBANK, str(e)
    assert "Rolle oder Passwort falsch." in e.err and f"DATABASE_URL kommt aus {env_datei}." in e.err, e.err
    assert f"Das Passwort kommt aus {pgpass}." in e.err, e.err
    assert "Falsch-Geheim-1" not in e.err + e.out and "Traceback" not in e.err
    # der nächste Schritt – und er behebt es, wie er dasteht
    assert e.err.endswith(
        f" Weiter: Schritt 5 wiederholen – er schreibt die Zeile der Rolle in {pgpass} aus der "
        "Passwortdatei von Schritt 4 neu –; scheitert es dann noch, setzt der Admin mit Schritt 4 das "
        "Passwort aus derselben Datei neu (docs/betrieb.md, Einrichtung).\n"
    ), e.err
    haus.schritt(5)
    assert haus.stufe("check_db.py").code == EXIT_OK
    assert pgpass.read_text() == richtig
    # aus der Umgebung, mit Passwort in der URL: das sagt sie, und dass die .env daneben dann nicht zählt
    url = haus.url("aw_stufe", "Falsch-Geheim-2")
    e = haus.stufe("check_db.py", env={"DATABASE_URL": url})
    assert e.code == EXIT_DATENBANK, str(e)
    assert f"DATABASE_URL kommt aus der Umgebung (die Datei {env_datei} wird dann nicht gelesen)." in e.err, (
        e.err
    )
    assert "Das Passwort kommt aus" not in e.err and "Falsch-Geheim-2" not in e.err, e.err
    # ~/.pgpass für andere lesbar: libpq läse sie nicht (und sagte es englisch) – Exit 7, deutsch
    pgpass.chmod(0o644)
    e = haus.stufe("check_db.py")
    assert e.code == EXIT_KONFIGURATION, str(e)
    assert (
        e.err
        == f"Fehler: {pgpass} ist für Gruppe oder andere lesbar; libpq liest die Passwortdatei dann nicht. chmod 600 {pgpass}\n"
    ), e.err
    # ohne Zeile in ~/.pgpass: was fehlt und wo
    pgpass.write_text("")
    pgpass.chmod(0o600)
    e = haus.stufe("check_db.py")
    assert e.code == EXIT_DATENBANK, str(e)
    assert f"die URL enthält keins, und {pgpass} hat keine passende Zeile" in e.err, e.err


# --- Eigene Testdaten: der Helfer von Ingest ------------------------------------------------


def _testdaten_bloecke() -> list[str]:
    text = (PROJEKT / "docs" / "betrieb.md").read_text(encoding="utf-8")
    abschnitt = text.split("\n## Eigene Testdaten in ein frisches Haus\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```sh\n(.*?)^```", abschnitt, re.S | re.M)


def test_testdaten_nach_der_doku_und_der_helfer_unter_der_falschen_rolle(haus: Haus):
    """Unter der Betriebsrolle oder dem Admin sagt der Helfer, welches Recht fehlt und dass er als
    Ingest läuft, mit dem Aufruf der Doku; nach Schritt 2 legt er nichts an (dieselbe Tabelle mit
    Index)."""
    haus.bauen(5)
    for rolle, env in (("aw_stufe", {}), ("aw_admin", {"DATABASE_URL": "user=aw_admin dbname=wurzelwerk"})):
        e = haus.stufe("-m", "bench.ingest", env={**env, **_pg_umgebung(haus)})
        assert e.code == EXIT_VORAUSSETZUNG, str(e)
        assert e.err == (
            f"Fehler: Der Rolle {rolle} fehlt das Recht, in raw_items zu schreiben (INSERT; lesen darf sie). "
            "Der Helfer "
            "trägt Items für Ingest ein und läuft als Ingest, dem Eigentümer von raw_items (ingest): "
            "DATABASE_URL='user=ingest dbname=wurzelwerk' .venv/bin/python -m bench.ingest "
            "(docs/betrieb.md, Eigene Testdaten in ein frisches Haus). Nichts eingetragen.\n"
        ), e.err
    assert haus.sql("ingest", "select count(*) from raw_items") == [(0,)]
    # Der genannte Aufruf ist der der Doku; ihr Block läuft, wie er dasteht (mit einer Seite).
    block = _testdaten_bloecke()[0]
    assert "DATABASE_URL='user=ingest dbname=wurzelwerk' .venv/bin/python -m bench.ingest\n" in block
    (haus.klon / "meine-seiten").mkdir()
    (haus.klon / "meine-seiten" / "1.html.gz").write_bytes(
        gzip.compress(b"<html><body><article><p>Eine Seite zu Item 1.</p></article></body></html>")
    )
    lauf = haus.ausfuehren(block)
    assert lauf.returncode == 0, lauf.stdout + lauf.stderr
    assert "neu 13, schon da 0" in lauf.stdout and "angelegt" not in lauf.stdout, lauf.stdout
    assert (
        re.search(r"(?:^|\| )neu 13, geändert 0, ", lauf.stdout, re.M) and "Traceback" not in lauf.stderr
    ), lauf.stdout + lauf.stderr


def test_der_helfer_legt_raw_items_an_wie_schritt_2_wenn_es_fehlt(haus: Haus):
    haus.bauen(1)  # ein Testhaus ohne Schritt 2
    block = _testdaten_bloecke()[0].split("\n# als Betriebsrolle", 1)[0]
    lauf = haus.ausfuehren(block)
    assert lauf.returncode == 0, lauf.stdout + lauf.stderr
    assert "raw_items angelegt, mit Index auf slot (wie Schritt 2 der Einrichtung)." in lauf.stdout
    assert haus.sql("ingest", "select indexdef from pg_indexes where indexname = 'raw_items_slot'") == [
        ("CREATE INDEX raw_items_slot ON public.raw_items USING btree (slot)",)
    ]
    haus.bauen(3)  # Schritt 2 danach: die Tabelle bleibt, die Rechte kommen dazu; migrieren geht


def _pg_umgebung(haus: Haus) -> dict[str, str]:
    teile = psycopg.conninfo.conninfo_to_dict(haus.server.admin_url)
    return {"PGHOST": teile["host"], "PGPORT": str(teile.get("port", 5432))}


# --- cron ------------------------------------------------------------------------------------------


# Auf PostgreSQL 15 führt test_betrieb_nacht.py dieselben Zeilen aus (jeden Tick und die Nacht, still
# bei Erfolg, die Bilanz im Log); hier auf 15 nur mit --langsam.
@pytest.mark.parametrize(
    "haus", ["18", pytest.param("15", marks=pytest.mark.langsam)], ids=["pg18", "pg15"], indirect=True
)
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
