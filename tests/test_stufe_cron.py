"""Im echten Haus mit cron: nachholen, überwachen, tote Läufe schließen, das cron-Log.

* ``--nachholen`` kodiert jeden offenen Slot – ein Item mit Kandidaten hat keine Entscheidung
  der coder_version (oder, mit ``--extrahieren``, eine Seite ohne Kandidaten) –, der neueste
  zuerst, höchstens ``--hoechstens`` je Aufruf, jeden als eigenen Slot-Lauf. Eine Nacht mit Exit 5, ein gestoppter Server, ein getöteter Lauf heilen so beim
  nächsten Aufruf, ohne dass ein Mensch etwas tut.
* Die Sichten unterscheiden „lief, 0 Items“ von „kodiert“ und sagen dasselbe wie ``--nachholen``.
* Ein Lauf, dessen Sitzung starb, wird vom nächsten schreibenden Lauf als abgebrochen geschlossen;
  ein Lauf, der noch lebt, nie.
* Die Sperrmeldung nennt den Lauf, der die Sperre hält (id, Prozess, Rechner, Beginn mit Datum),
  auch wenn er unter einer anderen Rolle läuft.
* Das cron-Log: ohne Terminal trägt jede Zeile Zeit, Modus, Slot und coder_version; stdout ist das
  Protokoll, stderr bleibt leer, solange kein Mensch etwas tun muss.

Alles gegen einen echten PostgreSQL 18, ``auswahl.py`` als echter Unterprozess.
"""

from __future__ import annotations

import os
import pty
import re
import signal
import socket
import subprocess
import sys
from datetime import timedelta

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg import sql

from auswahlstufe.betrieb import laeufe, sperre
from auswahlstufe.fehler import EXIT_DATENBANK, EXIT_GESPERRT, EXIT_KONFIGURATION, EXIT_OK, EXIT_ZEITLIMIT
from auswahlstufe.lauf import nachholen, stufe
from tests.hilfen import PROJEKT
from tests.hilfen import rechte as rechte_vergeben
from tests.hilfen.daten import SLOT, SLOT_TEXT
from tests.hilfen.prozesse import (
    Halt,
    bilanzzeile,
    ende,
    im_hintergrund,
    warten_bis_getrennt,
)
from version import CODER_VERSION, Variante

pytestmark = pytest.mark.datenbank

SATZ = "Der Rat der Stadt tagte bis in die Nacht und beschloss den Haushalt mit knapper Mehrheit. "
SQL_ITEMS = "insert into raw_items (id, slot) select g, %(slot)s from generate_series(%(von)s::bigint, %(bis)s::bigint) g"
SQL_KANDIDATEN = """
insert into extraktionen (item_id, extraktor, text)
select g, x, 'Meldung ' || g || '. ' || repeat(%(satz)s::text, (3 + g %% 5)::int) || case when x = 'newspaper4k' then
    'Jetzt abonnieren.' else '' end
from generate_series(%(von)s::bigint, %(bis)s::bigint) g, unnest(array['newspaper4k', 'readability', 'trafilatura']) x
"""
SQL_LAEUFE = "select id, modus, slot, aufruf, items, neu, exit_code, zustand from auswahl_laeufe order by id"
# Items eines Slots, auf dem ein Lauf nach seinem ersten Stapel anhält (Halt): mitten im Lauf, mit
# mehreren Stapeln danach (stufe.STAPEL)
MITTEN = 1000


def slots(n: int) -> list:
    """n Slots zu je einer Stunde ab SLOT (08:00 in Berlin)."""
    return [SLOT + timedelta(hours=h) for h in range(n)]


def slot_text(slot) -> str:
    return laeufe.slot_text(slot)


def bestand(url: str, je_slot: int, anzahl: int) -> list:
    """Items 1… in ``anzahl`` Slots zu je ``je_slot`` Items, alle mit drei Kandidaten."""
    mit = slots(anzahl)
    with psycopg.connect(url, autocommit=True) as conn:
        for nr, slot in enumerate(mit):
            bereich = {"slot": slot, "von": nr * je_slot + 1, "bis": (nr + 1) * je_slot, "satz": SATZ}
            conn.execute(SQL_ITEMS, bereich)
            conn.execute(SQL_KANDIDATEN, bereich)
    return mit


def abfrage(url: str, anfrage, params=None) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(anfrage, params).fetchall()


def bilanzen(out: str) -> list[str]:
    return [z for z in out.splitlines() if z.startswith("neu ")]


def sperre_halten(url: str, slot) -> psycopg.Connection:
    """Eine Sitzung von Hand, ohne Lauf, hält die Sperre des Slots ``slot``."""
    conn = psycopg.connect(url, autocommit=True)
    conn.execute(sperre.SQL_SPERRE, (sperre.slot(CODER_VERSION, slot),))
    return conn


# --- --nachholen ----------------------------------------------------------------------------------


def test_nachholen_holt_verlorene_slots_nach_der_neueste_zuerst(db_url, cli):
    """Ein Slot-Lauf, der an der Sperre scheiterte (Exit 5), und ein Slot, der nie lief: der
    nächste Aufruf von --nachholen holt beide nach, den neuesten zuerst (der frische Poll wartet
    nicht auf das Nachholen)."""
    verloren, gelaufen, nie = bestand(db_url, 20, 3)
    halter = sperre_halten(db_url, verloren)
    try:
        assert cli("--slot", slot_text(verloren)).code == EXIT_GESPERRT
    finally:
        halter.close()
    assert cli("--slot", slot_text(gelaufen)).code == EXIT_OK
    assert abfrage(db_url, "select slot, items, ohne_entscheidung from auswahl_slots_ohne_lauf") == [
        (nie, 20, 20),
        (verloren, 20, 20),
    ]

    e = cli("--nachholen")
    assert e.code == EXIT_OK, str(e)
    assert [b.split(" in ")[0] for b in bilanzen(e.out)] == [
        "neu 20, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0"
    ] * 2, e.out
    assert e.err == "", str(e)
    aufruf, erster, zweiter = abfrage(db_url, SQL_LAEUFE)[2:]
    assert aufruf[1:] == ("nachholen", None, None, 40, 40, EXIT_OK, "erfolg"), aufruf
    # der neueste zuerst, jeder als eigener Slot-Lauf mit Verweis auf seinen Aufruf
    assert erster[1:] == ("slot", nie, aufruf[0], 20, 20, EXIT_OK, "erfolg"), erster
    assert zweiter[1:] == ("slot", verloren, aufruf[0], 20, 20, EXIT_OK, "erfolg"), zweiter
    assert abfrage(db_url, "select count(*) from selected_extractor") == [(60,)]
    assert abfrage(db_url, "select count(*) from auswahl_slots_ohne_lauf") == [(0,)]
    assert abfrage(db_url, "select slot, items, kodiert, lauf_id from auswahl_letzter_slot") == [
        (nie, 20, 20, erster[0])
    ]

    # Nichts offen: still (cron mailt nichts), Exit 0, ein Eintrag als Lebenszeichen.
    e = cli("--nachholen")
    assert (e.code, e.out, e.err) == (EXIT_OK, "", ""), str(e)
    assert abfrage(db_url, SQL_LAEUFE)[-1][1:] == ("nachholen", None, None, 0, 0, EXIT_OK, "erfolg")


def test_nachholen_hoechstens_n_slots_und_sagt_was_offen_bleibt(db_url, cli):
    alle = bestand(db_url, 3, 5)
    gesehen = []
    for rest in (3, 1, 0):
        e = cli("--nachholen", "--hoechstens", "2")
        assert e.code == EXIT_OK and e.err == "", str(e)
        hinweis = [z for z in e.out.splitlines() if z.startswith("Hinweis:")]
        if rest:
            assert hinweis == [
                f"Hinweis: {rest} weitere Slots sind offen (--hoechstens 2); der nächste Aufruf von "
                "--nachholen macht weiter."
            ], e.out
        else:
            assert hinweis == [], e.out
        gesehen += [s for (s,) in abfrage(db_url, "select slot from auswahl_laeufe where modus = 'slot'")]
        gesehen = sorted(set(gesehen))
    assert gesehen == alle
    assert cli("--nachholen", "--hoechstens", "2").out == ""


def test_nach_einem_backfill_ist_nichts_offen_nur_was_dazukommt(db_url, cli):
    """Offen ist, wo ein Item mit Kandidaten keine Entscheidung hat – gleich, wer kodierte: nach
    einem Backfill holt --nachholen nicht die ganze Geschichte Slot für Slot nach. Kommt später
    ein Item mit Kandidaten (Ingest) oder kommen Kandidaten zu einem Item (späte Extraktion),
    ist sein Slot offen, nur er; ein Item ohne Kandidaten macht keine Arbeit, ein gelöschtes auch nicht."""
    eins, zwei, drei = bestand(db_url, 20, 3)
    assert bilanzzeile(cli("--backfill").out).startswith("neu 60, ")
    assert cli("--nachholen").out == ""

    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(SQL_ITEMS, {"slot": zwei, "von": 61, "bis": 61})
        conn.execute(SQL_KANDIDATEN, {"von": 61, "bis": 61, "satz": SATZ})
        conn.execute(SQL_ITEMS, {"slot": drei, "von": 62, "bis": 62})  # noch ohne Kandidaten
    assert abfrage(db_url, "select slot, items, ohne_entscheidung from auswahl_slots_ohne_lauf") == [
        (zwei, 21, 1)
    ]
    e = cli("--nachholen")
    assert [b.split(" in ")[0] for b in bilanzen(e.out)] == [
        "neu 1, geändert 0, unverändert 20, entfernt 0, ohne Kandidaten 0"
    ], e.out

    # Die Kandidaten von Item 62 kommen später: sein Slot ist offen, nur er.
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(SQL_KANDIDATEN, {"von": 62, "bis": 62, "satz": SATZ})
    assert abfrage(db_url, "select slot, ohne_entscheidung from auswahl_slots_ohne_lauf") == [(drei, 1)]
    assert [b.split(" in ")[0] for b in bilanzen(cli("--nachholen").out)] == [
        "neu 1, geändert 0, unverändert 20, entfernt 0, ohne Kandidaten 0"
    ]

    # Ingest löscht (Aufbewahrungsfrist): die Fremdschlüssel löschen mit, nichts ist offen.
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("delete from raw_items where id <= 25")
    assert abfrage(db_url, "select count(*) from auswahl_slots_ohne_lauf") == [(0,)]
    assert cli("--nachholen").out == ""
    assert abfrage(db_url, "select slot from auswahl_letzter_slot") == [(drei,)]
    assert eins not in [s for (s,) in abfrage(db_url, "select slot from raw_items")]


def test_eine_neue_seite_eines_entschiedenen_items_nimmt_backfill_wie_die_hilfe_sagt(db_url, cli):
    """Die Hilfe sagt genau die Regel von --nachholen (lauf.nachholen): eine neue Seite eines Items,
    das schon Kandidaten hat, nimmt erst --backfill – nicht „Slots, zu denen seitdem Items,
    Kandidaten oder Seiten kamen“."""
    hilfe = " ".join(cli("--help").out.split())
    assert "seitdem Items, Kandidaten oder Seiten" not in hilfe and "seitdem kamen Items" not in hilfe
    assert (
        "Offen ist ein Slot, in dem ein Item Kandidaten, aber keine Entscheidung dieser coder_version hat "
        "– mit --extrahieren auch eine Seite, aber keine Kandidaten. Geänderte Kandidaten oder eine neue "
        "Seite eines schon entschiedenen Items nimmt erst --backfill (die nächtliche cron-Zeile)."
    ) in hilfe, hilfe
    bestand(db_url, 3, 1)
    assert bilanzzeile(cli("--backfill").out).startswith("neu 3, ")
    with psycopg.connect(db_url, autocommit=True) as conn:  # die Seite von Item 1 kommt neu
        conn.execute(
            "insert into seiten (item_id, html) values (1, %s)",
            (
                b"<html><body><article><p>"
                + b"Ein neuer Absatz mit Text. " * 30
                + b"</p></article></body></html>",
            ),
        )
    assert abfrage(db_url, "select count(*) from auswahl_slots_ohne_lauf") == [(0,)]
    e = cli("--extrahieren", "--nachholen")
    assert (e.code, e.out, e.err) == (EXIT_OK, "", ""), str(e)  # nichts offen
    e = cli("--extrahieren", "--backfill", "--prozesse", "1")
    assert e.code == EXIT_OK and "Extraktion: 1 Seiten neu oder veraltet, 1 extrahiert" in e.out, str(e)
    assert (
        abfrage(db_url, "select count(*) from extraktionen where item_id = 1 and seite_sha256 is not null")[
            0
        ][0]
        > 0
    )


def test_nachholen_trocken_sagt_was_es_taete_und_schreibt_nichts(db_url, cli):
    bestand(db_url, 20, 2)
    e = cli("--nachholen", "--trocken")
    assert e.code == EXIT_OK and e.err == "", str(e)
    zeilen = [z.split(" in ")[0] for z in e.out.splitlines()]
    assert (
        zeilen
        == [
            "trocken, nichts geschrieben – würde: neu 20, geändert 0, unverändert 0, entfernt 0, "
            "ohne Kandidaten 0"
        ]
        * 2
    ), e.out
    assert abfrage(db_url, "select count(*) from selected_extractor") == [(0,)]
    assert abfrage(db_url, "select count(*) from auswahl_laeufe") == [(0,)]


def test_nachholen_einer_variante_zaehlt_nur_fuer_die_variante(db_url, cli):
    bestand(db_url, 10, 2)
    variante = Variante(k=4)
    e = cli("--nachholen", "--variante", "k4:0.03")
    assert e.code == EXIT_OK and len(bilanzen(e.out)) == 2, str(e)
    assert abfrage(db_url, "select distinct coder_version, variante from auswahl_laeufe") == [
        (variante.coder_version, "k4:0.03")
    ]
    # Für die Voreinstellung ist alles noch offen; ihre Läufe überschreiben nichts der Variante.
    assert len(bilanzen(cli("--nachholen").out)) == 2
    assert cli("--nachholen").out == cli("--nachholen", "--variante", "k4:0.03").out == ""
    assert abfrage(
        db_url, "select coder_version, count(*) from selected_extractor group by 1 order by 1"
    ) == sorted([(CODER_VERSION, 20), (variante.coder_version, 20)])


def test_nachholen_ueberspringt_einen_slot_den_ein_frischer_lauf_hat(db_url, tmp_path):
    """Hat ein kurzer Lauf, der gerade arbeitet (ein --slot von Hand), seinen Slot, überspringt
    --nachholen ihn mit einem Hinweis im Protokoll (stdout; cron mailt nicht, jener macht ihn) und
    holt die übrigen nach. Ist der Halter unbekannt (oder läuft er schon länger als STILL_WARTEN),
    steht derselbe Satz auf stderr. Ein zweiter Lauf von Hand (--slot) endet mit Exit 5 und nennt
    den nächsten Schritt: warten, dann wiederholen. (Ticks neben Backfills: tests/test_stufe_verteilen.py.)"""
    _, spaet = bestand(db_url, MITTEN, 2)
    halt = Halt(tmp_path, "stapel", 1)  # der Slot-Lauf hält seinen Slot und bleibt mitten im Lauf
    halter = im_hintergrund(db_url, "--slot", slot_text(spaet), cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(halter)
    try:
        von_hand = im_hintergrund(db_url, "--slot", slot_text(spaet), cwd=tmp_path)
        code, out, err = ende(von_hand, timeout=120)
        assert code == EXIT_GESPERRT and err.startswith(
            f"Fehler: Slot {slot_text(spaet)} bearbeitet gerade"
        ), err
        assert err.endswith(
            "Dieser Lauf bricht ab, ohne etwas zu schreiben. Sobald jener endet (solange er läuft, steht "
            "er in auswahl_offene_laeufe), denselben Aufruf wiederholen.\n"
        ), err

        still = im_hintergrund(db_url, "--nachholen", cwd=tmp_path)
        code, out, err = ende(still, timeout=120)
        assert code == EXIT_OK and err == "", f"exit {code}\n{out}\n{err}"
        assert out.startswith(
            f"Hinweis: Slot {slot_text(spaet)} bearbeitet gerade ein anderer Lauf: Lauf 1 ("
        ), out
        assert f"Prozess {halter.pid} auf {socket.gethostname()}, " in out and "übersprungen." in out, out
        assert bilanzzeile(out).startswith(f"neu {MITTEN}, "), out  # der frühe Slot ist nachgeholt
    finally:
        halt.weiter()
    code, out, err = ende(halter)
    assert code == EXIT_OK, err
    assert abfrage(db_url, "select modus, exit_code from auswahl_laeufe where modus = 'nachholen'") == [
        ("nachholen", EXIT_OK),
    ]
    still = im_hintergrund(db_url, "--nachholen", cwd=tmp_path)
    assert ende(still) == (EXIT_OK, "", "")  # nichts mehr offen

    # Eine Sitzung ohne Lauf (von Hand) hält die Sperre eines offenen Slots: niemand weiß, wie lange.
    neu = SLOT + timedelta(hours=10)
    with psycopg.connect(db_url, autocommit=True) as conn:
        bereich = {"slot": neu, "von": 2 * MITTEN + 1, "bis": 3 * MITTEN, "satz": SATZ}
        conn.execute(SQL_ITEMS, bereich)
        conn.execute(SQL_KANDIDATEN, bereich)
    halter = sperre_halten(db_url, neu)
    try:
        laut = im_hintergrund(db_url, "--nachholen", cwd=tmp_path)
        code, out, err = ende(laut, timeout=120)
    finally:
        halter.close()
    assert code == EXIT_OK and "Datenbanksitzung mit PID" in err and "übersprungen" in err, err


def test_ein_fehler_in_einem_nachgeholten_slot_steht_mit_seinem_exit_code_im_protokoll(db_url, cli):
    """Scheitert ein Slot (hier: statement_timeout, während Ingest ein Item sperrt), endet der Aufruf
    mit dem Exit-Code des Fehlers, der Slot-Lauf und der Aufruf stehen mit ihm im Protokoll, und
    der nächste Aufruf holt ihn nach. Der neuere Slot kam vorher dran und ist kodiert."""
    erster, zweiter = bestand(db_url, 20, 2)
    with psycopg.connect(db_url) as halter:
        halter.execute("select 1 from raw_items where id = 1 for update")
        e = cli("--nachholen", env={"AUSWAHL_STATEMENT_TIMEOUT": "300ms", "AUSWAHL_LOCK_TIMEOUT": "0"})
        halter.rollback()
    assert e.code == EXIT_ZEITLIMIT and "Zeitlimit der Datenbank überschritten" in e.err, str(e)
    assert abfrage(db_url, "select modus, slot, exit_code, zustand from auswahl_laeufe order by id") == [
        ("nachholen", None, EXIT_ZEITLIMIT, "fehler"),
        ("slot", zweiter, EXIT_OK, "erfolg"),
        ("slot", erster, EXIT_ZEITLIMIT, "fehler"),
    ]
    e = cli("--nachholen")
    assert e.code == EXIT_OK and len(bilanzen(e.out)) == 1, str(e)


# --- Sicht und --nachholen sagen dasselbe ------------------------------------------------------

SCHRITTE = st.lists(
    st.one_of(
        st.tuples(st.just("item"), st.integers(0, 2), st.booleans()),  # Item in Slot, mit Kandidaten?
        st.tuples(st.just("kandidat"), st.integers(0, 2), st.just(False)),  # späte Kandidaten
        st.tuples(st.just("seite"), st.integers(0, 2), st.just(False)),  # späte Seite
        st.tuples(st.just("loeschen"), st.integers(0, 2), st.just(False)),  # Ingest löscht
        st.tuples(st.just("slot"), st.integers(0, 2), st.just(False)),  # ein --slot-Lauf
        st.tuples(st.just("nachholen"), st.just(0), st.just(False)),
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=15)
@given(schritte=SCHRITTE)
def test_sicht_und_nachholen_sind_sich_einig_und_nachholen_laesst_nichts_liegen(
    db_url, monkeypatch, schritte
):
    """Nach jedem Schritt nennt die Sicht auswahl_slots_ohne_lauf genau die Slots, die
    --extrahieren --nachholen nähme; nach --nachholen ist kein Slot offen, und ein Trockenlauf
    über alles fände nichts mehr zu tun – kein Item bleibt liegen."""
    monkeypatch.setenv("DATABASE_URL", db_url)
    alle = slots(3)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("truncate raw_items cascade")
        conn.execute("truncate auswahl_laeufe cascade")
        naechste = 1
        for art, nr, mit in schritte:
            slot = alle[nr]
            if art == "item":
                conn.execute(SQL_ITEMS, {"slot": slot, "von": naechste, "bis": naechste})
                if mit:
                    conn.execute(SQL_KANDIDATEN, {"von": naechste, "bis": naechste, "satz": SATZ})
                naechste += 1
            elif art in ("kandidat", "seite", "loeschen"):
                item = conn.execute(
                    "select min(r.id) from raw_items r where r.slot = %s and not exists "
                    f"(select 1 from {'seiten' if art == 'seite' else 'extraktionen'} e where e.item_id = r.id)"
                    if art != "loeschen"
                    else "select max(id) from raw_items where slot = %s",
                    (slot,),
                ).fetchone()[0]
                if item is None:
                    continue
                if art == "kandidat":
                    conn.execute(SQL_KANDIDATEN, {"von": item, "bis": item, "satz": SATZ})
                elif art == "seite":
                    conn.execute("insert into seiten (item_id, html) values (%s, '<p>x</p>')", (item,))
                else:
                    conn.execute("delete from raw_items where id = %s", (item,))
            elif art == "slot":
                stufe.lauf(stufe.Einstellungen(CODER_VERSION), slot=slot_text(slot))
            else:
                stufe.lauf(stufe.Einstellungen(CODER_VERSION), nachholen_hoechstens=10)
                assert nachholen.offene_slots(conn, CODER_VERSION, 10, mit_seiten=False) == ([], 0)
                trocken = stufe.lauf(stufe.Einstellungen(CODER_VERSION, trocken=True))
                assert (trocken.neu, trocken.geaendert, trocken.entfernt) == (0, 0, 0)
            # (vor dem ersten Lauf kennt die Sicht keine Version: dann ist jeder Slot offen)
            sicht = [s for (s,) in conn.execute("select slot from auswahl_slots_ohne_lauf")]
            offen, zahl = nachholen.offene_slots(conn, CODER_VERSION, 10, mit_seiten=True)
            assert sicht == offen and zahl == len(offen), (art, nr)


# --- Tote Läufe ------------------------------------------------------------------------------------


def test_ein_lauf_den_ein_serverhalt_abschnitt_schliesst_der_naechste_und_holt_nach(pg, db_url, tmp_path):
    """Ein Lauf, dem der Server mitten im Lauf weggeht, kann sein Ende nicht eintragen. Der nächste
    Aufruf von --nachholen schließt ihn als abgebrochen (statt ihn für immer unter „nie beendet“ zu
    lassen) und kodiert den Slot fertig."""
    if pg.pgdata is None:
        pytest.skip("Server anhalten geht nur mit dem eingebetteten Server")
    (slot,) = bestand(db_url, MITTEN, 1)
    halt = Halt(tmp_path, "stapel", 1)
    prozess = im_hintergrund(
        db_url, "--slot", slot_text(slot), "--prozesse", "2", cwd=tmp_path, env=halt.umgebung
    )
    halt.abwarten(prozess)
    try:
        pg.stoppen("fast")
        halt.weiter()
        code, out, err = ende(prozess, timeout=120)
    finally:
        pg.starten()
    assert code == EXIT_DATENBANK, err
    ((lauf_id, _, _, _, _, _, exit_code, zustand),) = abfrage(db_url, SQL_LAEUFE)
    assert (exit_code, zustand) == (None, "offen")
    assert abfrage(db_url, "select id, sitzung_lebt from auswahl_offene_laeufe") == [(lauf_id, False)]
    schon = abfrage(db_url, "select count(*) from selected_extractor")[0][0]

    weiter = im_hintergrund(db_url, "--nachholen", cwd=tmp_path)
    code, out, err = ende(weiter)
    assert code == EXIT_OK, err
    assert err.startswith(f"Hinweis: Lauf {lauf_id} (--slot {slot_text(slot)}, Prozess {prozess.pid} auf "), (
        err
    )
    # Er endete ja (Exit 3, eigene Meldung) – nur eintragen konnte er es nicht mehr
    assert err.rstrip().endswith(
        "trug sein Ende nicht ein (Datenbanksitzung weg: getötet, Server gestoppt oder Verbindung "
        "verloren); jetzt als abgebrochen geschlossen."
    ), err
    assert "endete nie" not in err
    assert bilanzzeile(out).startswith(f"neu {MITTEN - schon}, geändert 0, unverändert {schon}, "), out
    toter = abfrage(
        db_url, "select zustand, exit_code, meldung from auswahl_laeufe where id = %s", (lauf_id,)
    )[0]
    assert toter[:2] == ("abgebrochen", None) and toter[2].startswith(
        "abgebrochen: trug sein Ende nicht ein"
    ), toter
    assert abfrage(db_url, "select count(*) from auswahl_offene_laeufe") == [(0,)]
    # Einmal gemeldet, dann still.
    assert ende(im_hintergrund(db_url, "--nachholen", cwd=tmp_path)) == (EXIT_OK, "", "")


def test_ein_getoeteter_aufruf_von_nachholen_ist_ein_hinweis_nicht_zwei(db_url, tmp_path):
    """Stirbt ein Aufruf von --nachholen mitten in einem Slot, bleiben zwei Einträge offen: der
    Aufruf und sein Slot-Lauf. Der nächste Lauf meldet einen Hinweis für den toten Prozess, nicht
    zwei: den Slot-Lauf, in dem er starb, mit seinem Aufruf; geschlossen sind beide."""
    (slot,) = bestand(db_url, MITTEN, 1)
    halt = Halt(tmp_path, "stapel", 1)
    prozess = im_hintergrund(db_url, "--nachholen", "--prozesse", "2", cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(prozess)
    os.killpg(prozess.pid, signal.SIGKILL)
    ende(prozess, timeout=60)
    warten_bis_getrennt(db_url)
    (aufruf, _), (slot_lauf, beginn) = abfrage(
        db_url, "select id, begonnen_am from auswahl_laeufe where beendet_am is null order by id"
    )

    code, _out, err = ende(im_hintergrund(db_url, "--nachholen", cwd=tmp_path))
    assert code == EXIT_OK, err
    assert err.splitlines() == [
        f"Hinweis: Lauf {slot_lauf} (--slot {slot_text(slot)} aus --nachholen {aufruf}, Prozess {prozess.pid} "
        f"auf {socket.gethostname()}, begonnen {laeufe.zeit_text(beginn)}) {laeufe.NICHT_EINGETRAGEN}; jetzt "
        f"als abgebrochen geschlossen, sein Aufruf {aufruf} ebenso."
    ], err
    assert (
        abfrage(db_url, "select zustand from auswahl_laeufe where id in (%s, %s)", (aufruf, slot_lauf))
        == [("abgebrochen",)] * 2
    )


def test_ein_lebender_lauf_wird_nie_geschlossen(db_url, tmp_path):
    """Ein Lauf einer anderen coder_version (eigene Sperre) läuft daneben: er sieht den offenen
    Lauf, aber dessen Sitzung lebt – er lässt ihn in Ruhe."""
    (slot,) = bestand(db_url, MITTEN, 1)
    halt = Halt(tmp_path, "stapel", 1)
    erster = im_hintergrund(
        db_url, "--slot", slot_text(slot), "--prozesse", "2", cwd=tmp_path, env=halt.umgebung
    )
    halt.abwarten(erster)
    try:
        daneben = im_hintergrund(
            db_url, "--backfill", "--variante", "k4:0.03", "--prozesse", "1", cwd=tmp_path
        )
        code, _out, err = ende(daneben)
        assert code == EXIT_OK and err == "", err
        assert abfrage(db_url, "select id, zustand from auswahl_laeufe order by id") == [
            (1, "offen"),
            (2, "erfolg"),
        ]
        assert abfrage(db_url, "select id, sitzung_lebt from auswahl_offene_laeufe") == [(1, True)]
    finally:
        halt.weiter()
    assert ende(erster)[0] == EXIT_OK
    assert abfrage(db_url, "select zustand from auswahl_laeufe order by id") == [("erfolg",), ("erfolg",)]


def test_offene_laeufe_von_vor_aw_007_schliesst_wer_ihre_sperre_frei_findet(db_url, cli):
    """Läufe ohne backend_pid (vor Migration aw-007 begonnen) gelten als tot, wenn keine andere
    Sitzung die Sperre ihrer coder_version hält."""
    bestand(db_url, 5, 1)
    anderer = "auswahl-0+alt"
    with psycopg.connect(db_url, autocommit=True) as conn:
        for version in (CODER_VERSION, anderer):
            conn.execute(
                "insert into auswahl_laeufe (modus, coder_version, rechner, pid) values ('backfill', %s, 'alt', 1)",
                (version,),
            )
        with psycopg.connect(db_url, autocommit=True) as halter:
            halter.execute(
                "select pg_advisory_lock(hashtextextended(%s, 0))", (f"wurzelwerk-auswahl {anderer}",)
            )
            e = cli("--backfill")
            assert e.code == EXIT_OK and e.err.count("als abgebrochen geschlossen") == 1, str(e)
            assert "Lauf 1 (--backfill, Prozess 1 auf alt" in e.err
            assert conn.execute("select id, zustand from auswahl_laeufe order by id").fetchall() == [
                (1, "abgebrochen"),
                (2, "offen"),  # seine Sperre hält jemand: vielleicht läuft er noch
                (3, "erfolg"),
            ]
        e = cli("--backfill")  # jetzt ist auch seine Sperre frei
        assert e.code == EXIT_OK and "Lauf 2 (--backfill, Prozess 1 auf alt" in e.err, str(e)


# --- Die Sperrmeldung nennt den Lauf ---------------------------------------------------------------


def test_sperrmeldung_nennt_den_lauf_auch_unter_einer_anderen_rolle(pg, db_name, db_url, tmp_path):
    """Die Sperrmeldung nennt den Lauf aus auswahl_laeufe (id, Prozess, Rechner, Beginn mit Datum),
    nicht die PID des Serverprozesses – auch wenn er einer anderen Rolle gehört, deren Sitzung
    pg_stat_activity nur mit PID zeigt."""
    (slot,) = bestand(db_url, MITTEN, 1)
    rollen = [f"aw_sperre_{n}_{os.getpid()}" for n in ("a", "b")]
    with psycopg.connect(db_url, autocommit=True) as conn:
        for rolle in rollen:
            conn.execute(sql.SQL("create role {} login").format(sql.Identifier(rolle)))
            for anweisung in rechte_vergeben.vergeben("lauf", rolle, db_name, conn):
                conn.execute(anweisung)
    try:
        url_a, url_b = (pg.url(db_name, user=rolle) for rolle in rollen)
        halt = Halt(tmp_path, "stapel", 1)
        erster = im_hintergrund(
            url_a, "--slot", slot_text(slot), "--prozesse", "2", cwd=tmp_path, env=halt.umgebung
        )
        halt.abwarten(erster)
        try:
            zweiter = im_hintergrund(url_b, "--slot", slot_text(slot), cwd=tmp_path)
            code, out, err = ende(zweiter)
        finally:
            halt.weiter()
        assert ende(erster)[0] == EXIT_OK
        ((beginn, backend),) = abfrage(
            db_url, "select begonnen_am, backend_pid from auswahl_laeufe where id = 1"
        )
        assert code == EXIT_GESPERRT and out == "", err
        assert (
            f"(Sperre „{sperre.slot(CODER_VERSION, slot)}“): Lauf 1 (--slot {slot_text(slot)}, Prozess {erster.pid} auf "
            f"{socket.gethostname()}, begonnen {laeufe.zeit_text(beginn)}). Dieser Lauf bricht ab" in err
        ), err
        assert re.search(r"begonnen \d\d\.\d\d\.20\d\d \d\d:\d\d:\d\d ME(S)?Z\)", err), err
        assert str(backend) not in err  # nicht der Serverprozess
    finally:
        warten_bis_getrennt(db_url)
        with psycopg.connect(db_url, autocommit=True) as conn:
            for rolle in rollen:
                conn.execute(sql.SQL("drop owned by {}").format(sql.Identifier(rolle)))
                conn.execute(sql.SQL("drop role {}").format(sql.Identifier(rolle)))


# --- Das cron-Log ------------------------------------------------------------------------------------

KOPF = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d modus=(?P<modus>\S+)( slot=(?P<slot>\S+))? "
    r"version=(?P<version>\S+) \| (?P<text>.*)$"
)
CRON = {"AUSWAHL_ZEILENKOPF": "auto"}  # wie im Betrieb (conftest schaltet ihn für die Tests aus)


def koepfe(text: str) -> list[dict]:
    zeilen = [KOPF.match(z) for z in text.splitlines()]
    assert all(zeilen), text
    return [z.groupdict() for z in zeilen]


def test_cron_log_jede_zeile_mit_zeit_modus_slot_version_und_still_ohne_befund(db_url, cli):
    """Ohne Terminal trägt jede Zeile Zeit, Modus, Slot und coder_version; der Hinweis auf unbekannte
    Extraktoren steht auf stdout (cron mailt ihn nicht); ohne Arbeit schreibt der Tick nichts."""
    (slot,) = bestand(db_url, 20, 1)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("insert into extraktionen (item_id, extraktor, text) values (1, 'Trafilatura', 'x')")
    for _ in range(2):
        e = cli("--slot", SLOT_TEXT, env=CRON)
        assert e.code == EXIT_OK and e.err == "", str(e)  # nichts für einen Menschen: keine Mail
        zeilen = koepfe(e.out)
        assert {(z["modus"], z["slot"], z["version"]) for z in zeilen} == {
            ("slot", slot_text(slot), CODER_VERSION)
        }
        texte = [z["text"] for z in zeilen]
        assert texte[0].startswith(("neu 20, ", "neu 0, geändert 0, unverändert 20, ")), texte
        assert (
            texte[1] == "Hinweis: 1 Kandidatenzeilen unbekannter Extraktoren übergangen („Trafilatura“ 1)."
        ), texte

    e = cli("--nachholen", "--extrahieren", env=CRON)  # nichts offen: gar keine Zeile
    assert (e.code, e.out, e.err) == (EXIT_OK, "", ""), str(e)

    # Ein Fehler: auf stderr, mit Kopf – auch die letzte Zeile, die click nach dem Lauf druckt.
    halter = sperre_halten(db_url, slot)
    try:
        e = cli("--slot", slot_text(slot), env=CRON)
    finally:
        halter.close()
    assert e.code == EXIT_GESPERRT and e.out == ""
    ((zeile,),) = [koepfe(e.err)]
    assert (zeile["modus"], zeile["slot"]) == ("slot", slot_text(slot)) and zeile["text"].startswith(
        "Fehler: "
    ), e.err


@pytest.mark.parametrize("zone", ["UTC", "America/New_York"])
def test_der_zeilenkopf_steht_in_berliner_zeit_wie_jede_zeit_der_stufe(db_url, cli, zone):
    """Auf einem Rechner in UTC (oder New York) steht der Zeilenkopf in Berliner Zeit wie der Hinweis
    daneben („begonnen … MEZ“) – eine Zone je Zeile; Slots sind Berliner Zeit."""
    from datetime import datetime

    from auswahlstufe.anzeige import BERLIN

    bestand(db_url, 3, 1)
    vorher = datetime.now(BERLIN)
    e = cli("--slot", SLOT_TEXT, env={**CRON, "TZ": zone})
    assert e.code == EXIT_OK, str(e)
    for zeile in e.out.splitlines():
        zeit = datetime.fromisoformat(zeile.split(" ", 1)[0])
        assert zeit.utcoffset() == datetime.now(BERLIN).utcoffset() or zeit.utcoffset() == vorher.utcoffset()
        assert zeit.isoformat() == zeit.astimezone(BERLIN).isoformat(), zeile  # Wanduhr in Berlin
        assert vorher - timedelta(seconds=1) <= zeit <= datetime.now(BERLIN), zeile


def test_am_terminal_kein_zeilenkopf(db_url, tmp_path):
    bestand(db_url, 20, 1)
    herr, knecht = pty.openpty()
    prozess = subprocess.Popen(
        [sys.executable, str(PROJEKT / "auswahl.py"), "--slot", SLOT_TEXT],
        cwd=tmp_path,
        env={**os.environ, "DATABASE_URL": db_url, **CRON},
        stdout=knecht,
        stderr=knecht,
    )
    os.close(knecht)
    gelesen = b""
    while True:
        try:
            stueck = os.read(herr, 4096)
        except OSError:  # das Terminal ist zu: der Prozess ist fertig
            break
        if not stueck:
            break
        gelesen += stueck
    os.close(herr)
    assert prozess.wait(timeout=120) == EXIT_OK
    text = gelesen.decode()
    assert "neu 20, geändert 0" in text and "modus=" not in text, text


def test_zeilenkopf_mit_unbekanntem_wert_ist_ein_konfigurationsfehler(db_url, cli):
    e = cli("--backfill", env={"AUSWAHL_ZEILENKOPF": "immer"})
    assert e.code == EXIT_KONFIGURATION, str(e)
    assert (
        e.err == "Fehler: AUSWAHL_ZEILENKOPF='immer' ist keiner der Werte auto, an, aus (auto: Zeilenkopf, "
        "wenn die Ausgabe kein Terminal ist).\n"
    ), e.err


BETRIEB = PROJEKT / "docs" / "betrieb.md"


def test_die_cron_zeile_aus_der_doku_mailt_nur_was_ein_mensch_sehen_muss(db_url, tmp_path):
    """Die Zeile des Ticks aus docs/betrieb.md (Schritt 7, cron), wörtlich bis auf Klon und
    Python, unter ``sh -c`` wie cron sie ausführt: was cron mailen würde (stdout und stderr der
    Shell), ist leer, solange kein Mensch etwas tun muss; das Log hat je Zeile den Zeilenkopf."""
    abschnitt = BETRIEB.read_text(encoding="utf-8").split("\n### 7. Als Betriebsrolle: cron\n", 1)[1]
    block = re.search(r"^```crontab\n(.*?)^```", abschnitt, re.S | re.M).group(1)
    (zeile,) = [z for z in block.splitlines() if z.startswith("5-59/15 ")]
    befehl = zeile.split(None, 5)[5]
    (tmp_path / "log").mkdir()
    log = tmp_path / "log" / "auswahl.log"
    befehl = befehl.replace("cd /srv/wurzelwerk-auswahl", f"cd {tmp_path}").replace(
        ".venv/bin/python auswahl.py", f"{sys.executable} {PROJEKT / 'auswahl.py'}"
    )
    assert f"cd {tmp_path}" in befehl and "log/auswahl.log" in befehl, befehl
    umgebung = {k: v for k, v in os.environ.items() if k != "AUSWAHL_ZEILENKOPF"}  # wie im Betrieb
    umgebung["DATABASE_URL"] = db_url

    def cron() -> str:
        lauf = subprocess.run(["sh", "-c", befehl], env=umgebung, capture_output=True, text=True, timeout=600)
        return lauf.stdout + lauf.stderr  # was cron mailen würde

    bestand(db_url, 5, 2)
    assert cron() == ""
    erste = koepfe(log.read_text())
    assert [z["text"].split(" in ")[0] for z in erste if z["text"].startswith("neu ")] == [
        "neu 5, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0"
    ] * 2
    assert {z["modus"] for z in erste} == {"nachholen+extrahieren"}
    assert cron() == "" and koepfe(log.read_text()) == erste  # nichts offen: keine Zeile
    # Ingest pollt, und eine Sitzung von Hand hält die Sperre des Slots: das soll jemand sehen.
    neu = SLOT + timedelta(hours=10)
    with psycopg.connect(db_url, autocommit=True) as conn:
        bereich = {"slot": neu, "von": 11, "bis": 15, "satz": SATZ}
        conn.execute(SQL_ITEMS, bereich)
        conn.execute(SQL_KANDIDATEN, bereich)
    halter = sperre_halten(db_url, neu)
    try:
        (mail,) = koepfe(cron())
    finally:
        halter.close()
    assert mail["text"].startswith(f"Hinweis: Slot {slot_text(neu)} bearbeitet gerade ein anderer Lauf"), mail
