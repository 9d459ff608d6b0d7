"""Frische Slots warten nicht auf einen langen Lauf: ein Backfill weicht dem Tick.

Ein ``--backfill`` (mit ``--extrahieren``: nach einem Update der Extraktoren Stunden) hält die
Sperre seiner coder_version. Ein kurzer Lauf (``--nachholen``, ``--slot``) wartet dann in der
Schlange des Servers, statt mit Exit 5 zu enden; der Backfill sieht ihn vor seiner nächsten
Seite (Keyset-Seite der Auswahl, Seite der Extraktion), schreibt, was unterwegs ist, gibt die
Sperre frei und nimmt sie wieder, sobald der kurze Lauf fertig ist. Gezeigt an echten Läufen:

* jeder Tick kodiert den frisch gepollten Slot (Exit 0), während der Backfill noch läuft – er
  steht danach am nächsten Haltepunkt; zwei Ticks während eines Backfills –, und der Backfill
  endet danach selbst mit Exit 0;
* das Ergebnis ist das eines sauberen Neuaufbaus: ein weiterer Backfill ändert nichts, und was
  der Tick schrieb, schreibt der Backfill nicht noch einmal;
* dasselbe mit ``--teil 1/2`` (die Teile halten die Sperre der Version geteilt), mit einem Tick
  desselben Teils (``--slot … --teil 1/2``: er wartet auf die Sperre des Teils) und mit der
  Extraktion.

Die Haltepunkte (``AUSWAHL_HALT``) halten den Backfill an bestimmten Stellen, gleich wie schnell die
Maschine ist; ob der Tick wartet, zeigt ``pg_locks`` (eine nicht gewährte Sperre).
"""

from __future__ import annotations

import time
from collections.abc import Callable
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


def weichen_lassen(
    url: str,
    tmp_path,
    backfill: tuple[str, ...],
    halte: tuple[str, tuple[int, ...]],
    pollen: Callable[[int], None],
    tick: Callable[[int], tuple[str, ...]],
    sperre_des_ticks: str,
) -> tuple[list[str], str]:
    """Der Ablauf jedes Tests hier: der Backfill steht am ersten Haltepunkt, Ingest pollt
    (``pollen(i)``), der Tick (``tick(i)``) wartet auf die Sperre ``sperre_des_ticks``, der Backfill
    darf weiter und weicht. Der Tick muss mit Exit 0 fertig sein, während der Backfill noch läuft
    (er wartet auf die Sperre oder steht am nächsten Haltepunkt) – so je Haltepunkt außer dem
    letzten; danach endet auch der Backfill mit Exit 0. Gibt stdout der Ticks und des Backfills."""
    punkt, nummern = halte
    halts = [Halt(tmp_path, punkt, n) for n in nummern]
    umgebung = {**halts[0].umgebung, "AUSWAHL_HALT": ",".join(h.umgebung["AUSWAHL_HALT"] for h in halts)}
    lang = im_hintergrund(url, *backfill, "--prozesse", "2", cwd=tmp_path, env=umgebung)
    ticks = []
    try:
        for i, halt in enumerate(halts[:-1]):
            halt.abwarten(lang)
            pollen(i)
            kurz = im_hintergrund(url, *tick(i), cwd=tmp_path)
            tick_wartet(url, kurz, sperre_des_ticks)
            halt.weiter()
            code, tick_out, err = ende(kurz, timeout=180)
            assert (code, err) == (EXIT_OK, ""), f"Tick {i + 1}: exit {code}\n{tick_out}\n{err}"
            assert "Hinweis: ein Backfill hält die Sperre; dieser Lauf wartet" in tick_out, tick_out
            assert lang.poll() is None, f"Tick {i + 1}: der Backfill lief nicht mehr"
            ticks.append(tick_out)
        halts[-1].abwarten(lang)
    finally:
        for halt in halts:
            halt.weiter()
    code, out, err = ende(lang)
    assert (code, err) == (EXIT_OK, ""), f"exit {code}\n{out}\n{err}"
    assert out.count("Hinweis: ein kurzer Lauf wartet auf die Sperre; dieser Lauf gibt sie ihm") == len(
        ticks
    ), out
    assert "Hinweis: weiter nach " in out, out
    return ticks, out


def frische_slots(n: int) -> list[datetime]:
    """Die Slots von ``n`` Polls, einer je Tick, alle jünger als der Bestand."""
    jetzt = frischer_slot()
    return [jetzt - timedelta(minutes=i) for i in range(n)]


@pytest.mark.parametrize(
    ("backfill", "tick", "halte", "je_tick"),
    [
        ((), lambda slot: ("--nachholen",), (1, 7, 20), FRISCH),
        (("--teil", "1/2"), lambda slot: ("--nachholen",), (1, 10), FRISCH),
        # Ein Tick desselben Teils wartet auf die Sperre des Teils (die der Version hält er geteilt).
        (("--teil", "1/2"), lambda slot: ("--slot", slot, "--teil", "1/2"), (1, 7, 13), FRISCH // 2),
    ],
    ids=["backfill, zwei Ticks", "teil 1/2", "teil 1/2, Ticks desselben Teils"],
)
def test_der_tick_kodiert_den_frischen_slot_waehrend_der_backfill_laeuft(
    db_url, tmp_path, backfill, tick, halte, je_tick
):
    # 30 Stapel, ein Teil 15. Zwischen zwei Haltepunkten mehr als das Fenster der Worker
    # (Prozesse × STAPEL_JE_PROZESS): was schon unterwegs war, schreibt der Backfill vor dem Weichen.
    bestand = 6000
    anlegen(db_url, 1, bestand, SLOT)
    assert auswahl_starten("--backfill", url=db_url, cwd=tmp_path).code == EXIT_OK  # der Bestand ist kodiert
    anzahl = len(halte) - 1
    slots = frische_slots(anzahl)
    von = [bestand + 1 + i * FRISCH for i in range(anzahl)]
    teil = (1, 2) if "--slot" in tick("") else None

    ticks, out = weichen_lassen(
        db_url,
        tmp_path,
        ("--backfill", *backfill),
        ("stapel", halte),
        lambda i: anlegen(db_url, von[i], von[i] + FRISCH - 1, slots[i]),  # Ingest pollt
        lambda i: tick(slots[i].isoformat()),
        sperrname(teil),
    )

    for i, tick_out in enumerate(ticks):
        assert bilanzzeile(tick_out).startswith(f"neu {je_tick}, geändert 0, "), tick_out
        assert entschieden(db_url, von[i], von[i] + FRISCH - 1) == je_tick
    # Was die Ticks schrieben, schrieb der Backfill nicht noch einmal; am Bestand änderte er nichts.
    assert bilanzzeile(out).startswith("neu 0, geändert 0, "), out
    nochmal = auswahl_starten("--backfill", url=db_url, cwd=tmp_path)
    assert nochmal.code == EXIT_OK, str(nochmal)
    gesamt = bestand + anzahl * FRISCH
    assert bilanzzeile(nochmal.out).startswith(
        f"neu {anzahl * (FRISCH - je_tick)}, geändert 0, unverändert {gesamt - anzahl * (FRISCH - je_tick)},"
    ), str(nochmal)
    with psycopg.connect(db_url) as conn:
        laeufe = conn.execute("select modus, exit_code from auswahl_laeufe order by id").fetchall()
    je = [("nachholen", 0), ("slot", 0)] if teil is None else [("slot", 0)]
    assert laeufe == [("backfill", 0), ("backfill", 0), *je * anzahl, ("backfill", 0)]


def test_die_extraktion_weicht_dem_tick_und_das_ergebnis_ist_das_eines_neuaufbaus(db_url, tmp_path):
    """Nach einem Update der Extraktoren ist jede gespeicherte Seite veraltet (hier: die Kandidaten
    tragen eine alte Fassung); ``--extrahieren --backfill`` extrahiert sie neu. Dazwischen pollt
    Ingest einen Slot, und der Tick (``--extrahieren --nachholen``) extrahiert und kodiert ihn."""
    bestand = 60
    anlegen(db_url, 1, bestand, SLOT, seiten=True)
    assert (
        auswahl_starten("--backfill", url=db_url, cwd=tmp_path).code == EXIT_OK
    )  # entschieden, alte Kandidaten

    (tick,), out = weichen_lassen(
        db_url,
        tmp_path,
        ("--extrahieren", "--backfill"),
        ("seite", (3, 40)),
        lambda i: anlegen(db_url, 1001, 1003, frischer_slot(), kandidaten=False, seiten=True),
        lambda i: ("--extrahieren", "--nachholen"),
        sperrname(),
    )

    assert "Extraktion: 3 Seiten neu oder veraltet, 3 extrahiert" in tick, tick
    assert bilanzzeile(tick).startswith("neu 3, geändert 0, "), tick
    # Jede Seite des Bestands genau einmal extrahiert, die drei frischen nicht noch einmal.
    assert f"Extraktion: {bestand} Seiten neu oder veraltet, {bestand} extrahiert" in out, out
    nochmal = auswahl_starten("--extrahieren", "--backfill", url=db_url, cwd=tmp_path)
    assert nochmal.code == EXIT_OK, str(nochmal)
    assert "Extraktion: 0 Seiten neu oder veraltet, 0 extrahiert" in nochmal.out, str(nochmal)
    assert bilanzzeile(nochmal.out).startswith(f"neu 0, geändert 0, unverändert {bestand + 3},"), str(nochmal)
