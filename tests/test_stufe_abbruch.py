"""Strg-C (SIGINT) und SIGTERM: das erste Signal beendet den Lauf nach dem laufenden Stapel, das
zweite sofort – beide mit Bilanz und Exit 130; ein zweiter Lauf macht den Rest."""

from __future__ import annotations

import os
import signal
import time

import psycopg
import pytest

from auswahlstufe.fehler import EXIT_ABGEBROCHEN
from auswahlstufe.lauf import stufe
from tests.hilfen.daten import SQL_FREMDE_SPERREN
from tests.hilfen.prozesse import (
    SQL_WARTET,
    Halt,
    auswahl_starten,
    bilanzzeile,
    ende,
    im_hintergrund,
    warten_bis,
)

pytestmark = pytest.mark.datenbank

# 25 Stapel: die Haltepunkte stehen weit vor dem Ende.
ITEMS = 5000
SATZ = "Der Rat der Stadt tagte bis in die Nacht und beschloss den Haushalt mit knapper Mehrheit. "
# Items und Kandidaten im Server erzeugen: schneller als 15.000 einzelne Inserts.
SQL_BESTAND = """
insert into raw_items (id, slot) select g, '2026-09-07 06:00+00' from generate_series(1, %(n)s) g;
insert into extraktionen (item_id, extraktor, text)
select g, x, 'Meldung ' || g || '. ' || repeat(%(satz)s, 3 + g %% 5) || case when x = 'newspaper4k' then
    'Jetzt abonnieren.' else '' end
from generate_series(1, %(n)s) g, unnest(array['newspaper4k', 'readability', 'trafilatura']) x;
"""


def bestand(db_url: str, n: int = ITEMS) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        for anweisung in SQL_BESTAND.split(";")[:2]:
            conn.execute(anweisung, {"n": n, "satz": SATZ})


def geschrieben(db_url: str) -> int:
    with psycopg.connect(db_url, autocommit=True) as conn:
        return conn.execute("select count(*) from selected_extractor").fetchone()[0]


def zweiter_lauf_macht_den_rest(url: str, cwd, schon: int, items: int = ITEMS) -> None:
    """Nach dem Abbruch schreibt ein zweiter Lauf genau die fehlenden Zeilen."""
    zweiter = auswahl_starten("--backfill", url=url, cwd=cwd)
    assert zweiter.code == 0, zweiter.err
    assert bilanzzeile(zweiter.out).startswith(f"neu {items - schon}, geändert 0, unverändert {schon},")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_stoppt_nach_dem_stapel_und_zweiter_lauf_vollendet(sig, db_url, tmp_path):
    """Das Signal trifft die ganze Prozessgruppe (wie Strg-C), während der Lauf nach seinem
    zweiten Stapel steht: er schreibt danach keinen weiteren, sagt es, endet mit 130."""
    bestand(db_url)
    halt = Halt(tmp_path, "stapel", 2)
    prozess = im_hintergrund(db_url, "--backfill", "--prozesse", "2", cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(prozess)
    os.killpg(prozess.pid, sig)
    code, out, err = ende(prozess, timeout=60)
    assert code == EXIT_ABGEBROCHEN, out + err
    assert f"Abgebrochen ({sig.name}) nach 2 Stapeln" in err and "Traceback" not in err, err
    assert geschrieben(db_url) == 2 * stufe.STAPEL  # nur ganze Stapel: jede Zeile alt oder neu
    assert bilanzzeile(out).startswith(f"neu {2 * stufe.STAPEL}, geändert 0, "), out  # die Bilanz sagt es
    with psycopg.connect(db_url, autocommit=True) as conn:  # im Protokoll kein Fehler, ein Abbruch
        assert conn.execute("select exit_code, zustand from auswahl_laeufe").fetchall() == [
            (EXIT_ABGEBROCHEN, "abgebrochen")
        ]
    zweiter_lauf_macht_den_rest(db_url, tmp_path, 2 * stufe.STAPEL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("zweimal", [False, True], ids=["ein Signal", "zwei Signale"])
def test_das_erste_signal_wartet_auf_den_stapel_das_zweite_nicht(sig, zweimal, db_url, tmp_path):
    """Der erste Stapel hängt beim Schreiben an einer Zeile, die Ingest gerade sperrt. Das erste
    Signal lässt ihn zu Ende schreiben (sobald Ingest freigibt), dann ist Schluss; das zweite
    beendet den Lauf sofort: die Anweisung wird abgebrochen, die Transaktion zurückgerollt,
    nichts ist geschrieben, die Sperre ist frei – Exit 130 in beiden Fällen."""
    bestand(db_url, 1000)
    ingest = psycopg.connect(db_url)
    try:
        ingest.execute("select 1 from raw_items where id = 1 for update")
        prozess = im_hintergrund(
            db_url, "--backfill", "--prozesse", "1", cwd=tmp_path, env={"AUSWAHL_LOCK_TIMEOUT": "300s"}
        )
        warten_bis(
            db_url,
            prozess,
            lambda conn: conn.execute(SQL_WARTET, ("wurzelwerk-auswahl schreiben",)).fetchone()[0],
            "der erste Stapel an der Sperre von Ingest wartet",
        )
        prozess.send_signal(sig)
        time.sleep(1)  # nichts geschieht: der Stapel wartet weiter auf Ingest
        assert prozess.poll() is None
        if zweimal:
            prozess.send_signal(sig)
            code, out, err = ende(prozess, timeout=30)
        ingest.rollback()
    finally:
        ingest.close()
    if not zweimal:
        code, out, err = ende(prozess, timeout=60)
    assert code == EXIT_ABGEBROCHEN, out + err
    assert "Traceback" not in err, err
    schon = 0 if zweimal else stufe.STAPEL
    assert geschrieben(db_url) == schon
    if zweimal:
        assert f"Sofort abgebrochen (zweites Signal, {sig.name})" in err, err
    else:
        assert f"Abgebrochen ({sig.name}) nach 1 Stapeln" in err, err
    with psycopg.connect(db_url, autocommit=True) as conn:
        assert conn.execute(SQL_FREMDE_SPERREN).fetchone()[0] == 0  # keine Sperre bleibt
        assert conn.execute("select exit_code from auswahl_laeufe").fetchall() == [(EXIT_ABGEBROCHEN,)]
    zweiter_lauf_macht_den_rest(db_url, tmp_path, schon, 1000)


def test_server_weg_mitten_im_lauf_klare_meldung_und_zweiter_lauf_vollendet(pg, db_url, tmp_path):
    if pg.pgdata is None:
        pytest.skip("Server anhalten geht nur mit dem eingebetteten Server")
    bestand(db_url)
    passwort_url = db_url + " password=Geheim-Wort-77"  # darf in keiner Meldung stehen
    halt = Halt(tmp_path, "stapel", 1)
    prozess = im_hintergrund(passwort_url, "--backfill", "--prozesse", "2", cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(prozess)
    try:
        pg.stoppen("fast")
        halt.weiter()
        code, out, err = ende(prozess, timeout=60)
    finally:
        pg.starten()
    assert code == 3, out + err
    assert "Datenbankserver wurde heruntergefahren" in err or "Verbindung zur Datenbank verloren" in err, err
    assert "Traceback" not in err and "Geheim-Wort-77" not in out + err
    assert geschrieben(db_url) == stufe.STAPEL
    assert f"Bis zum Fehler geschrieben: neu {stufe.STAPEL}," in err
    zweiter_lauf_macht_den_rest(passwort_url, tmp_path, stufe.STAPEL)
