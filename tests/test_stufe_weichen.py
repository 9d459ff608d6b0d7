"""Frische Slots warten nicht auf einen langen Lauf: ein Backfill weicht dem Tick.

Ein ``--backfill`` (mit ``--extrahieren``: nach einem Update der Extraktoren Stunden) hält die
Sperre seiner coder_version. Ein kurzer Lauf (``--nachholen``, ``--slot``) wartet dann in der
Schlange des Servers, statt mit Exit 5 zu enden; der Backfill sieht ihn vor seiner nächsten
Seite (Keyset-Seite der Auswahl, Seite der Extraktion), schreibt, was unterwegs ist, gibt die
Sperre frei und nimmt sie wieder, sobald der kurze Lauf fertig ist. Gezeigt an echten Läufen:

* der Tick kodiert den frisch gepollten Slot (Exit 0), während der Backfill noch läuft – er steht
  danach an einem zweiten Haltepunkt –, und der Backfill endet danach selbst mit Exit 0;
* das Ergebnis ist das eines sauberen Neuaufbaus: ein weiterer Backfill ändert nichts, und was
  der Tick schrieb, schreibt der Backfill nicht noch einmal;
* dasselbe mit ``--teil 1/2`` (die Teile halten die Sperre der Version geteilt) und mit der
  Extraktion.

Die Haltepunkte (``AUSWAHL_HALT``) halten den Backfill an bestimmten Stellen, gleich wie schnell die
Maschine ist; ob der Tick wartet, zeigt ``pg_locks`` (eine nicht gewährte Sperre).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from auswahlstufe.betrieb import kontext, sperre
from auswahlstufe.fehler import EXIT_OK
from tests.hilfen.daten import SLOT, sperrname
from tests.hilfen.prozesse import Halt, auswahl_starten, bilanzzeile, ende, im_hintergrund, warten_bis

pytestmark = pytest.mark.datenbank

SATZ = "Der Rat der Stadt tagte bis in die Nacht und beschloss den Haushalt mit knapper Mehrheit. "
SQL_ITEMS = (
    "insert into raw_items (id, slot) select g, %(slot)s from generate_series(%(von)s::int, %(bis)s::int) g"
)
SQL_KANDIDATEN = """
insert into extraktionen (item_id, extraktor, text, extraktor_fassung)
select g, x, 'Meldung ' || g || '. ' || repeat(%(satz)s::text, (3 + g %% 5)::int), %(fassung)s
from generate_series(%(von)s::int, %(bis)s::int) g, unnest(array['newspaper4k', 'readability', 'trafilatura']) x
"""
SQL_SEITEN = """
insert into seiten (item_id, html, url, content_type)
select g, convert_to('<html><head><title>Meldung ' || g || '</title></head><body><article><h1>Meldung '
    || g || '</h1><p>' || repeat(%(satz)s::text, 4) || ' Nummer ' || g || '.</p><p>' || repeat(%(satz)s::text, 3)
    || '</p></article></body></html>', 'UTF8'), 'https://example.org/' || g, 'text/html; charset=utf-8'
from generate_series(%(von)s::int, %(bis)s::int) g
"""
FRISCH = 50


def anlegen(url: str, von: int, bis: int, slot: datetime, *, kandidaten: bool = True, seiten: bool = False):
    werte = {"von": von, "bis": bis, "slot": slot, "satz": SATZ, "fassung": "eine alte Fassung"}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SQL_ITEMS, werte)
        if kandidaten:
            conn.execute(SQL_KANDIDATEN, werte)
        if seiten:
            conn.execute(SQL_SEITEN, werte)


def frischer_slot() -> datetime:
    """Der Slot eines Polls eben: der neueste, den --nachholen zuerst nimmt."""
    return datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=1)


def tick_wartet(url: str, tick, name: str) -> None:
    """Bis der Tick in der Schlange des Servers auf die Sperre ``name`` wartet; dann so lange, dass
    der Backfill bei seiner nächsten Seite wieder fragt (höchstens einmal je PRUEFABSTAND)."""
    warten_bis(url, tick, lambda conn: sperre.wartet_jemand(conn, name), "der Tick auf die Sperre wartet")
    time.sleep(kontext.PRUEFABSTAND)


def entschieden(url: str, von: int, bis: int) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select count(*) from selected_extractor where item_id between %s and %s", (von, bis)
        ).fetchone()[0]


def zwei_halte(tmp_path, punkt: str, erster: int, zweiter: int) -> tuple[Halt, Halt, dict[str, str]]:
    a, b = Halt(tmp_path, punkt, erster), Halt(tmp_path, punkt, zweiter)
    return a, b, {"AUSWAHL_HALT": f"{a.umgebung['AUSWAHL_HALT']},{b.umgebung['AUSWAHL_HALT']}"}


@pytest.mark.parametrize(
    ("teil", "zweiter_halt"), [((), 20), (("--teil", "1/2"), 10)], ids=["backfill", "teil 1/2"]
)
def test_der_tick_kodiert_den_frischen_slot_waehrend_der_backfill_laeuft(
    db_url, tmp_path, teil, zweiter_halt
):
    bestand = 6000  # 30 Stapel, ein Teil 15
    anlegen(db_url, 1, bestand, SLOT)
    assert auswahl_starten("--backfill", url=db_url, cwd=tmp_path).code == EXIT_OK  # der Bestand ist kodiert
    halt, spaeter, umgebung = zwei_halte(tmp_path, "stapel", 1, zweiter_halt)
    backfill = im_hintergrund(db_url, "--backfill", *teil, "--prozesse", "2", cwd=tmp_path, env=umgebung)
    try:
        halt.abwarten(backfill)
        anlegen(db_url, bestand + 1, bestand + FRISCH, frischer_slot())  # Ingest pollt
        tick = im_hintergrund(db_url, "--nachholen", cwd=tmp_path)
        tick_wartet(db_url, tick, sperrname())
        halt.weiter()

        code, out, err = ende(tick, timeout=120)
        assert (code, err) == (EXIT_OK, ""), f"exit {code}\n{out}\n{err}"
        assert "Hinweis: ein Backfill hält die Sperre; dieser Lauf wartet" in out, out
        assert bilanzzeile(out).startswith(f"neu {FRISCH}, geändert 0, "), out
        assert entschieden(db_url, bestand + 1, bestand + FRISCH) == FRISCH
        # Der Backfill läuft noch: er wartet auf die Sperre oder steht schon am zweiten Halt.
        assert backfill.poll() is None
        spaeter.abwarten(backfill)
    finally:
        halt.weiter()
        spaeter.weiter()
    code, out, err = ende(backfill)
    assert (code, err) == (EXIT_OK, ""), f"exit {code}\n{out}\n{err}"
    assert "Hinweis: ein kurzer Lauf wartet auf die Sperre; dieser Lauf gibt sie ihm" in out, out
    assert "Hinweis: weiter nach " in out, out
    # Was der Tick schrieb, schrieb der Backfill nicht noch einmal; am Bestand änderte er nichts.
    assert bilanzzeile(out).startswith("neu 0, geändert 0, "), out

    nochmal = auswahl_starten("--backfill", url=db_url, cwd=tmp_path)
    assert nochmal.code == EXIT_OK, str(nochmal)
    assert bilanzzeile(nochmal.out).startswith(f"neu 0, geändert 0, unverändert {bestand + FRISCH},"), str(
        nochmal
    )
    with psycopg.connect(db_url) as conn:
        laeufe = conn.execute("select modus, exit_code from auswahl_laeufe order by id").fetchall()
    assert laeufe == [("backfill", 0), ("backfill", 0), ("nachholen", 0), ("slot", 0), ("backfill", 0)]


def test_die_extraktion_weicht_dem_tick_und_das_ergebnis_ist_das_eines_neuaufbaus(db_url, tmp_path):
    """Nach einem Update der Extraktoren ist jede gespeicherte Seite veraltet (hier: die Kandidaten
    tragen eine alte Fassung); ``--extrahieren --backfill`` extrahiert sie neu. Dazwischen pollt
    Ingest einen Slot, und der Tick (``--extrahieren --nachholen``) extrahiert und kodiert ihn."""
    bestand = 60
    anlegen(db_url, 1, bestand, SLOT, seiten=True)
    assert (
        auswahl_starten("--backfill", url=db_url, cwd=tmp_path).code == EXIT_OK
    )  # entschieden, alte Kandidaten
    halt, spaeter, umgebung = zwei_halte(tmp_path, "seite", 3, 40)
    backfill = im_hintergrund(
        db_url, "--extrahieren", "--backfill", "--prozesse", "2", cwd=tmp_path, env=umgebung
    )
    try:
        halt.abwarten(backfill)
        anlegen(db_url, 1001, 1003, frischer_slot(), kandidaten=False, seiten=True)
        tick = im_hintergrund(db_url, "--extrahieren", "--nachholen", cwd=tmp_path)
        tick_wartet(db_url, tick, sperrname())
        halt.weiter()

        code, out, err = ende(tick, timeout=180)
        assert (code, err) == (EXIT_OK, ""), f"exit {code}\n{out}\n{err}"
        assert "Extraktion: 3 Seiten neu oder veraltet, 3 extrahiert" in out, out
        assert bilanzzeile(out).startswith("neu 3, geändert 0, "), out
        assert backfill.poll() is None
        spaeter.abwarten(backfill)
    finally:
        halt.weiter()
        spaeter.weiter()
    code, out, err = ende(backfill)
    assert (code, err) == (EXIT_OK, ""), f"exit {code}\n{out}\n{err}"
    assert "Hinweis: ein kurzer Lauf wartet auf die Sperre; dieser Lauf gibt sie ihm" in out, out
    # Jede Seite des Bestands genau einmal extrahiert, die drei frischen nicht noch einmal.
    assert f"Extraktion: {bestand} Seiten neu oder veraltet, {bestand} extrahiert" in out, out

    nochmal = auswahl_starten("--extrahieren", "--backfill", url=db_url, cwd=tmp_path)
    assert nochmal.code == EXIT_OK, str(nochmal)
    assert "Extraktion: 0 Seiten neu oder veraltet, 0 extrahiert" in nochmal.out, str(nochmal)
    assert bilanzzeile(nochmal.out).startswith(f"neu 0, geändert 0, unverändert {bestand + 3},"), str(nochmal)
