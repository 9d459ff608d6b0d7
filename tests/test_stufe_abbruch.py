"""Strg-C (SIGINT) und SIGTERM: der Lauf hört nach dem laufenden Stapel auf, mit Bilanz und Exit 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psycopg
import pytest

from auswahlstufe.lauf import stufe
from tests.hilfen import PROJEKT
from tests.hilfen.prozesse import auswahl_starten, bilanzzeile

pytestmark = pytest.mark.datenbank

# Genug Items, dass ein Signal mitten in den Lauf fällt (etwa 25 Stapel).
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


def backfill_bis_zum_ersten_stapel(db_url: str, umgebung: dict, daten, cwd, **popen) -> subprocess.Popen:
    """Bestand anlegen, einen Backfill mit zwei Workern starten und warten, bis er schreibt."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        for anweisung in SQL_BESTAND.split(";")[:2]:
            conn.execute(anweisung, {"n": ITEMS, "satz": SATZ})
    prozess = subprocess.Popen(
        [sys.executable, str(PROJEKT / "auswahl.py"), "--backfill", "--prozesse", "2"],
        cwd=cwd,
        env=umgebung,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )
    frist = time.monotonic() + 60
    while daten.abfrage("select count(*) from selected_extractor")[0][0] == 0:
        assert prozess.poll() is None and time.monotonic() < frist, "Lauf endete vor dem ersten Stapel"
        time.sleep(0.02)
    return prozess


def zweiter_lauf_macht_den_rest(url: str, cwd, geschrieben: int) -> None:
    """Nach dem Abbruch schreibt ein zweiter Lauf genau die fehlenden Zeilen."""
    zweiter = auswahl_starten("--backfill", url=url, cwd=cwd)
    assert zweiter.code == 0, zweiter.err
    assert bilanzzeile(zweiter.out).startswith(
        f"neu {ITEMS - geschrieben}, geändert 0, unverändert {geschrieben},"
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_stoppt_nach_dem_stapel_und_zweiter_lauf_vollendet(sig, db_url, daten, tmp_path):
    umgebung = {**os.environ, "DATABASE_URL": db_url}
    # eigene Prozessgruppe: das Signal trifft auch die Worker, wie Strg-C
    prozess = backfill_bis_zum_ersten_stapel(db_url, umgebung, daten, tmp_path, start_new_session=True)
    os.killpg(prozess.pid, sig)
    out, err = prozess.communicate(timeout=60)
    geschrieben = daten.abfrage("select count(*) from selected_extractor")[0][0]
    assert prozess.returncode == 130, out + err
    assert "Abgebrochen" in err and sig.name in err and "Traceback" not in err
    assert bilanzzeile(out).startswith(f"neu {geschrieben}, geändert 0, "), (
        out
    )  # die Bilanz sagt, was geschrieben ist
    assert 0 < geschrieben < ITEMS
    assert geschrieben % stufe.STAPEL == 0  # nur ganze Stapel: jede Zeile alt oder neu
    zweiter_lauf_macht_den_rest(umgebung["DATABASE_URL"], tmp_path, geschrieben)


def test_server_weg_mitten_im_lauf_klare_meldung_und_zweiter_lauf_vollendet(pg, db_url, daten, tmp_path):
    if pg.pgdata is None:
        pytest.skip("Server anhalten geht nur mit dem eingebetteten Server")
    passwort_url = db_url + " password=Geheim-Wort-77"  # darf in keiner Meldung stehen
    umgebung = {**os.environ, "DATABASE_URL": passwort_url}
    prozess = backfill_bis_zum_ersten_stapel(db_url, umgebung, daten, tmp_path)
    daten.schliessen()
    try:
        pg.stoppen("fast")
        out, err = prozess.communicate(timeout=60)
    finally:
        pg.starten()
    assert prozess.returncode == 3, out + err
    assert "Datenbankserver wurde heruntergefahren" in err or "Verbindung zur Datenbank verloren" in err, err
    assert "Traceback" not in err and "Geheim-Wort-77" not in out + err
    with psycopg.connect(db_url) as conn:
        geschrieben = conn.execute("select count(*) from selected_extractor").fetchone()[0]
    assert 0 < geschrieben < ITEMS
    assert f"Bis zum Fehler geschrieben: neu {geschrieben}," in err
    zweiter_lauf_macht_den_rest(umgebung["DATABASE_URL"], tmp_path, geschrieben)
