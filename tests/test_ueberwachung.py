"""Die Überwachung sagt die Wahrheit: verpasste Ticks, Fortschritt, Plan einer Extraktion.

* Ein Tick, der die Datenbank nie erreicht (Anmeldung scheitert), hinterlässt keinen Lauf – aber
  einen Slot, dessen erste Entscheidung zu spät kommt oder fehlt: ``auswahl_slots.verzug``, und die
  Abfrage „Hat cron heute gelaufen?“ der Doku zählt ihn als verspätet, statt „fehler 0“ zu sagen.
* Ein langer Lauf trägt seinen Fortschritt ein; ``auswahl_fortschritt`` zeigt Phase, fertig von
  gesamt, Rate und Ende, solange er läuft.
* ``check_db.py`` nennt vor einer Extraktion über den Bestand, wie viele Seiten je Extraktor zu
  extrahieren sind und – sobald das Haus einen Lauf zum Messen hat – wie lange das dauert.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from auswahlstufe.fehler import EXIT_DATENBANK, EXIT_OK
from auswahlstufe.fortschritt import ganze_prozent
from tests.hilfen.haus import abfrage_der_doku
from tests.hilfen.prozesse import Halt, auswahl_starten, check_db_starten, ende, im_hintergrund_ohne_abstand

pytestmark = pytest.mark.datenbank

SATZ = "Der Rat der Stadt tagte bis in die Nacht und beschloss den Haushalt mit knapper Mehrheit. "
SQL_ITEMS = (
    "insert into raw_items (id, slot) select g, %(slot)s from generate_series(%(von)s::int, %(bis)s::int) g"
)
SQL_KANDIDATEN = """
insert into extraktionen (item_id, extraktor, text)
select g, x, 'Meldung ' || g || '. ' || repeat(%(satz)s::text, (3 + g %% 5)::int)
from generate_series(%(von)s::int, %(bis)s::int) g, unnest(array['newspaper4k', 'readability', 'trafilatura']) x
"""
SQL_SEITEN = """
insert into seiten (item_id, html, url)
select g, convert_to('<html><body><article><h1>Meldung ' || g || '</h1><p>' || repeat(%(satz)s::text, 4)
    || ' Nummer ' || g || '.</p></article></body></html>', 'UTF8'), 'https://example.org/' || g
from generate_series(%(von)s::int, %(bis)s::int) g
"""


def pollen(url: str, von: int, bis: int, slot: datetime, *, kandidaten: bool = True, seiten: bool = False):
    werte = {"von": von, "bis": bis, "slot": slot, "satz": SATZ}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SQL_ITEMS, werte)
        conn.execute(SQL_KANDIDATEN if kandidaten else SQL_SEITEN, werte)
        if kandidaten and seiten:
            conn.execute(SQL_SEITEN, werte)


def vor(minuten: int) -> datetime:
    return datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=minuten)


def test_ein_tick_der_die_datenbank_nie_erreicht_steht_als_verspaeteter_slot(db_url, tmp_path):
    frueh, eben = vor(40), vor(3)
    pollen(db_url, 1, 10, frueh)
    pollen(db_url, 11, 20, eben)
    falsch = make_conninfo(**{**conninfo_to_dict(db_url), "user": "gibt_es_nicht"})
    tick = auswahl_starten("--nachholen", url=falsch, cwd=tmp_path)
    assert tick.code == EXIT_DATENBANK and "Traceback" not in tick.err, str(tick)

    with psycopg.connect(db_url) as conn:
        slots = conn.execute(
            "select slot, mit_arbeit, kodiert, verzug > interval '15 minutes' from auswahl_slots"
        ).fetchall()
        assert slots == [(eben, 10, 0, False), (frueh, 10, 0, True)]
        assert conn.execute("select count(*) from auswahl_laeufe").fetchone()[0] == 0  # keine Spur dort
        tage = conn.execute(abfrage_der_doku("Hat cron heute gelaufen?")).fetchall()
    # je Tag: tag, aufrufe, erfolg, gesperrt, fehler, abgebrochen, zuletzt, slots, verspaetet
    assert sum(t[1] for t in tage) == 0 and sum(t[7] for t in tage) == 2 and sum(t[8] for t in tage) == 1

    # Der nächste Tick kommt durch: beide Slots entschieden, der frühe bleibt als verspätet stehen.
    assert auswahl_starten("--nachholen", url=db_url, cwd=tmp_path).code == EXIT_OK
    with psycopg.connect(db_url) as conn:
        slots = conn.execute(
            "select slot, kodiert, verzug > interval '15 minutes' from auswahl_slots"
        ).fetchall()
    assert slots == [(eben, 10, False), (frueh, 10, True)]


def test_ein_rechtzeitig_entschiedener_slot_bleibt_rechtzeitig_auch_wenn_spaeter_neu_entschieden_wird(
    db_url, tmp_path
):
    """Der Verzug zählt bis zur ersten Entscheidung des Slots. Entscheidet ihn später ein Backfill
    einer neuen coder_version (nach einem Update die aktuelle) oder ändert eine neue Extraktion jede
    seiner Zeilen (kodiert_am neu), war der Tick trotzdem rechtzeitig – der Slot ist nicht verspätet."""
    eben = vor(3)
    pollen(db_url, 1, 10, eben)
    assert auswahl_starten("--nachholen", url=db_url, cwd=tmp_path).code == EXIT_OK
    spaeter = eben + timedelta(hours=5)
    with psycopg.connect(db_url, autocommit=True) as conn:
        # Die Nacht nach dem Update: der Backfill der neuen Fassung entscheidet den Slot neu.
        conn.execute(
            "insert into auswahl_laeufe (modus, coder_version, rechner, pid, begonnen_am, beendet_am, exit_code) "
            "values ('backfill', 'auswahl-neu', 'hier', 1, %s, %s, 0)",
            (spaeter, spaeter),
        )
        conn.execute(
            "insert into selected_extractor (item_id, coder_version, extraktor, regel, konsens, metriken, "
            "text, pruefsumme, ergebnissumme, kodiert_am) select item_id, 'auswahl-neu', extraktor, regel, "
            "konsens, metriken, text, pruefsumme, ergebnissumme, %s from selected_extractor",
            (spaeter,),
        )
        neu = conn.execute("select coder_version, kodiert, verzug > interval '15 minutes' from auswahl_slots")
        assert neu.fetchall() == [("auswahl-neu", 10, False)]
        # Eine neue Extraktion ändert jede Zeile des Slots, auch die der ersten Fassung.
        conn.execute("update selected_extractor set kodiert_am = %s", (spaeter,))
        neu = conn.execute("select coder_version, kodiert, verzug > interval '15 minutes' from auswahl_slots")
        assert neu.fetchall() == [("auswahl-neu", 10, False)]


def test_der_fortschritt_eines_laufs_steht_in_der_sicht(db_url, tmp_path):
    pollen(db_url, 1, 3000, vor(60 * 24 * 30))
    halt = Halt(tmp_path, "stapel", 3)
    lauf = im_hintergrund_ohne_abstand(
        db_url, "--backfill", "--prozesse", "2", cwd=tmp_path, env=halt.umgebung
    )
    try:
        halt.abwarten(lauf)
        with psycopg.connect(db_url) as conn:
            (zeile,) = conn.execute(
                "select modus, phase, fertig, gesamt, prozent, je_sekunde > 0, ende_gegen > stand_am "
                "from auswahl_fortschritt"
            ).fetchall()
    finally:
        halt.weiter()
    assert zeile[:2] == ("backfill", "Kodieren") and zeile[3] == 3000, zeile
    assert (
        200 <= zeile[2] < 3000 and zeile[4] == ganze_prozent(zeile[2], 3000) and zeile[5:] == (True, True)
    ), zeile
    assert ende(lauf)[0] == EXIT_OK
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from auswahl_fortschritt").fetchone()[0] == 0


def test_check_db_nennt_den_plan_der_extraktion_und_mit_einem_gemessenen_lauf_seine_dauer(db_url, tmp_path):
    pollen(db_url, 1, 25, vor(60), kandidaten=False, seiten=True)
    vorher = check_db_starten(url=db_url, cwd=tmp_path)
    assert vorher.code == EXIT_OK, str(vorher)
    assert (
        "Extraktion über den Bestand (--extrahieren --backfill): 25 Seiten zu extrahieren (newspaper4k 25, "
        "readability 25, trafilatura 25); die Dauer ist offen (noch kein Lauf dieses Hauses mit Extraktion"
    ) in vorher.out, vorher.out

    assert (
        auswahl_starten("--extrahieren", "--backfill", "--prozesse", "2", url=db_url, cwd=tmp_path).code == 0
    )
    danach = check_db_starten(url=db_url, cwd=tmp_path)
    assert "Extraktion über den Bestand (--extrahieren --backfill): 0 Seiten zu extrahieren\n" in danach.out

    # Ein Update aller drei Pakete: jede Seite ist wieder zu extrahieren – jetzt mit Schätzung.
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("update extraktionen set extraktor_fassung = 'eine frühere Fassung'")
    geplant = check_db_starten(url=db_url, cwd=tmp_path)
    treffer = re.search(
        r"25 Seiten zu extrahieren \(.*\); geschätzt (.+) mit (\d+) Prozessen \((.+) Seiten/s", geplant.out
    )
    assert treffer, geplant.out
