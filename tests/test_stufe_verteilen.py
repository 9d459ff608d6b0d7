"""Die Datenbank verteilt die Arbeit: Blöcke für Backfills, Slots für Ticks – niemand wartet.

Ein Backfill nimmt sich Blöcke von ids mit einem Try-Lock und überspringt, was ein anderer hat; ein
Tick nimmt die Sperre seines Slots (``betrieb.sperre``). Gezeigt an echten Läufen, die an
Haltepunkten (``AUSWAHL_HALT``) stehen, gleich wie schnell die Maschine ist:

* zwei Rechner mit demselben ``--backfill`` (und ``--extrahieren --backfill``) zugleich: beide
  Exit 0, zusammen genau ein Backfill – keine Seite zweimal extrahiert, jedes Item einmal neu –,
  und ein weiterer Backfill ändert nichts;
* ein Tick kodiert (und extrahiert) den frisch gepollten Slot mit Exit 0, während ein Backfill
  mitten im Bestand steht, und der Backfill läuft danach zu Ende – auch mit ``--teil``;
* zwei Ticks machen einen Slot nicht doppelt: ``--nachholen`` überspringt ihn, ``--slot`` endet
  mit Exit 5 und nennt den Lauf, der ihn hat.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from auswahlstufe.fehler import EXIT_GESPERRT, EXIT_OK
from tests.hilfen.daten import SLOT
from tests.hilfen.prozesse import Halt, auswahl_starten, bilanzzeile, ende, im_hintergrund

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


def entschieden(url: str, von: int, bis: int) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select count(*) from selected_extractor where item_id between %s and %s", (von, bis)
        ).fetchone()[0]


def zahlen(bilanz: str) -> dict[str, int]:
    """„neu 12, geändert 0, unverändert 3, …“ → {"neu": 12, …}."""
    teile = (t.rsplit(" ", 1) for t in bilanz.split(" in ")[0].split(", "))
    return {name: int(wert) for name, wert in teile}


def extrahiert(ausgabe: str) -> int:
    zeile = next(z for z in ausgabe.splitlines() if z.startswith("Extraktion: "))
    return int(zeile.split(" extrahiert")[0].rsplit(" ", 1)[1])


def stehen_lassen(url: str, tmp_path, *args: str, punkt: str, n: int):
    """Ein Lauf, der am ``n``-ten Vorbeikommen an ``punkt`` steht, bis ``halt.weiter()``."""
    halt = Halt(tmp_path, punkt, n)
    lauf = im_hintergrund(url, *args, "--prozesse", "2", cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(lauf)
    return halt, lauf


@pytest.mark.parametrize("extrahieren", [False, True], ids=["auswahl", "extraktion"])
def test_zwei_rechner_mit_demselben_backfill_teilen_sich_den_bestand(db_url, tmp_path, extrahieren):
    """Der erste steht mitten im Bestand (er hält seine Blöcke), der zweite macht alles andere;
    dann macht der erste weiter. Zusammen genau ein Backfill."""
    bestand = 3000 if not extrahieren else 60
    anlegen(db_url, 1, bestand, SLOT, kandidaten=not extrahieren, seiten=extrahieren)
    befehl = ("--extrahieren", "--backfill") if extrahieren else ("--backfill",)
    halt, erster = stehen_lassen(db_url, tmp_path, *befehl, punkt="seite" if extrahieren else "stapel", n=2)
    try:
        zweiter = auswahl_starten(*befehl, "--prozesse", "2", url=db_url, cwd=tmp_path)
        assert erster.poll() is None, "der erste Lauf stand nicht mehr"
    finally:
        halt.weiter()
    code, out, err = ende(erster)
    assert (code, err) == (EXIT_OK, ""), f"exit {code}\n{out}\n{err}"
    assert (zweiter.code, zweiter.err) == (EXIT_OK, ""), str(zweiter)

    erste, zweite = zahlen(bilanzzeile(out)), zahlen(bilanzzeile(zweiter.out))
    assert erste["neu"] > 0 and zweite["neu"] > 0, (out, zweiter.out)  # beide haben gearbeitet
    assert erste["neu"] + zweite["neu"] == bestand
    if extrahieren:  # keine Seite zweimal
        assert extrahiert(out) > 0 and extrahiert(zweiter.out) > 0
        assert extrahiert(out) + extrahiert(zweiter.out) == bestand, (out, zweiter.out)
    nochmal = auswahl_starten(*befehl, url=db_url, cwd=tmp_path)
    assert nochmal.code == EXIT_OK, str(nochmal)
    assert bilanzzeile(nochmal.out).startswith(f"neu 0, geändert 0, unverändert {bestand},"), str(nochmal)
    assert entschieden(db_url, 1, bestand) == bestand


def test_ein_kleiner_bestand_mit_verschieden_vielen_prozessen_keiner_doppelt(db_url, tmp_path):
    """Die Blöcke haben überall dieselbe Breite: ein Rechner mit zwei Workern (kleinere Stapel) und
    einer mit einem sehen dieselben Sperren – kein Item wird von beiden gerechnet."""
    bestand = 600
    anlegen(db_url, 1, bestand, SLOT)
    halt, erster = stehen_lassen(db_url, tmp_path, "--backfill", punkt="stapel", n=1)
    try:
        zweiter = auswahl_starten("--backfill", "--prozesse", "1", url=db_url, cwd=tmp_path)
    finally:
        halt.weiter()
    code, out, err = ende(erster)
    assert (code, err, zweiter.code) == (EXIT_OK, "", EXIT_OK), f"{out}\n{err}\n{zweiter}"
    erste, zweite = zahlen(bilanzzeile(out)), zahlen(bilanzzeile(zweiter.out))
    # Der zweite nahm nur Blöcke, die der erste nicht hielt: nichts darin war schon entschieden.
    assert 0 < zweite["neu"] < bestand and zweite["unverändert"] == 0, (out, zweiter.out)
    assert erste["neu"] + zweite["neu"] == bestand, (out, zweiter.out)
    assert entschieden(db_url, 1, bestand) == bestand


@pytest.mark.parametrize(
    ("backfill", "tick", "je_tick"),
    [
        ((), lambda slot: ("--nachholen",), FRISCH),
        # Mit --teil (alte cron-Zeilen): der Tick desselben Teils hat seinen Slot für sich.
        (("--teil", "1/2"), lambda slot: ("--slot", slot, "--teil", "1/2"), FRISCH // 2),
    ],
    ids=["backfill", "teil 1/2"],
)
def test_der_tick_kodiert_den_frischen_slot_waehrend_der_backfill_steht(
    db_url, tmp_path, backfill, tick, je_tick
):
    bestand = 3000
    anlegen(db_url, 1, bestand, SLOT)
    assert auswahl_starten("--backfill", url=db_url, cwd=tmp_path).code == EXIT_OK  # der Bestand ist kodiert
    halt, lang = stehen_lassen(db_url, tmp_path, "--backfill", *backfill, punkt="stapel", n=2)
    slot = frischer_slot()
    try:
        anlegen(db_url, bestand + 1, bestand + FRISCH, slot)  # Ingest pollt
        kurz = auswahl_starten(*tick(slot.isoformat()), url=db_url, cwd=tmp_path)
        assert lang.poll() is None, "der Backfill stand nicht mehr"
    finally:
        halt.weiter()
    assert (kurz.code, kurz.err) == (EXIT_OK, ""), str(kurz)
    assert bilanzzeile(kurz.out).startswith(f"neu {je_tick}, geändert 0, "), str(kurz)
    code, out, err = ende(lang)
    assert (code, err) == (EXIT_OK, ""), f"exit {code}\n{out}\n{err}"
    # Was der Tick schrieb, schrieb der Backfill nicht noch einmal; am Bestand änderte er nichts.
    assert zahlen(bilanzzeile(out))["geändert"] == 0, out
    assert entschieden(db_url, bestand + 1, bestand + FRISCH) == je_tick
    # Ein ganzer Backfill danach findet nur, was kein Teil nahm (mit --teil 1/2 den anderen Teil des Slots).
    nochmal = auswahl_starten("--backfill", url=db_url, cwd=tmp_path)
    assert nochmal.code == EXIT_OK, str(nochmal)
    rest = FRISCH - je_tick
    assert bilanzzeile(nochmal.out).startswith(f"neu {rest}, geändert 0, unverändert {bestand + je_tick},"), (
        str(nochmal)
    )


def test_die_extraktion_laeuft_weiter_waehrend_der_tick_extrahiert(db_url, tmp_path):
    """Nach einem Update der Extraktoren ist jede gespeicherte Seite veraltet (hier: die Kandidaten
    tragen eine alte Fassung); ``--extrahieren --backfill`` extrahiert sie neu. Dazwischen pollt
    Ingest einen Slot, und der Tick (``--extrahieren --nachholen``) extrahiert und kodiert ihn."""
    bestand = 60
    anlegen(db_url, 1, bestand, SLOT, seiten=True)
    assert auswahl_starten("--backfill", url=db_url, cwd=tmp_path).code == EXIT_OK  # alte Kandidaten
    halt, lang = stehen_lassen(db_url, tmp_path, "--extrahieren", "--backfill", punkt="seite", n=3)
    try:
        anlegen(db_url, 1001, 1003, frischer_slot(), kandidaten=False, seiten=True)
        tick = auswahl_starten("--extrahieren", "--nachholen", url=db_url, cwd=tmp_path)
        assert lang.poll() is None, "der Backfill stand nicht mehr"
    finally:
        halt.weiter()
    assert (tick.code, tick.err) == (EXIT_OK, ""), str(tick)
    assert "Extraktion: 3 Seiten neu oder veraltet, 3 extrahiert" in tick.out, str(tick)
    assert bilanzzeile(tick.out).startswith("neu 3, geändert 0, "), str(tick)
    code, out, err = ende(lang)
    assert (code, err) == (EXIT_OK, ""), f"exit {code}\n{out}\n{err}"
    # Jede Seite des Bestands genau einmal extrahiert, die drei frischen nicht noch einmal.
    assert extrahiert(out) == bestand, out
    nochmal = auswahl_starten("--extrahieren", "--backfill", url=db_url, cwd=tmp_path)
    assert nochmal.code == EXIT_OK, str(nochmal)
    assert "Extraktion: 0 Seiten neu oder veraltet, 0 extrahiert" in nochmal.out, str(nochmal)
    assert bilanzzeile(nochmal.out).startswith(f"neu 0, geändert 0, unverändert {bestand + 3},"), str(nochmal)


def test_zwei_ticks_machen_einen_slot_nicht_doppelt(db_url, tmp_path):
    """Der erste Tick steht mitten in seinem Slot. Ein zweiter ``--nachholen`` überspringt ihn (ein
    Hinweis im Protokoll, keine Mail), ein ``--slot`` desselben Slots endet mit Exit 5 und nennt ihn."""
    slot = frischer_slot()
    anlegen(db_url, 1, 600, slot)
    halt, erster = stehen_lassen(db_url, tmp_path, "--nachholen", punkt="stapel", n=1)
    try:
        zweiter = auswahl_starten("--nachholen", url=db_url, cwd=tmp_path)
        von_hand = auswahl_starten("--slot", slot.isoformat(), url=db_url, cwd=tmp_path)
    finally:
        halt.weiter()
    assert (zweiter.code, zweiter.err) == (EXIT_OK, ""), str(zweiter)
    assert "bearbeitet gerade ein anderer Lauf" in zweiter.out and "übersprungen" in zweiter.out, str(zweiter)
    assert von_hand.code == EXIT_GESPERRT, str(von_hand)
    assert "bearbeitet gerade ein anderer Lauf" in von_hand.err and f"Prozess {erster.pid}" in von_hand.err, (
        str(von_hand)
    )
    code, out, err = ende(erster)
    assert (code, err) == (EXIT_OK, ""), f"exit {code}\n{out}\n{err}"
    assert bilanzzeile(out).startswith("neu 600, "), out
