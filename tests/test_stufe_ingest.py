"""Ingest nebenan: Items verschwinden und kommen während eines Laufs, Verbindungen ruhen.

* Ingest löscht Items während eines Laufs (Aufbewahrungsfrist), fügt welche ein und ändert
  Kandidaten. Wer zwischen Lesen und Schreiben verschwindet, *entfällt*: übergangen, gezählt
  (``entfallen N`` in der Bilanz, ``auswahl_laeufe.entfallen``), der Lauf endet mit 0. Was
  während des Laufs kommt oder sich ändert, macht der nächste Lauf.
* Die Verbindungen eines Laufs überstehen ein ``idle_session_timeout``, während die Worker
  oder die Extraktoren rechnen; verliert die Schreibverbindung ihre Sperre doch
  (``pg_terminate_backend``), endet der Lauf mit Exit 5, ohne einen halben Stapel.

Die Verschränkung ist bestimmt, nicht erschlafen: der Test hält eine Zeile von ``raw_items``
mit ``for update``; das Schreiben des Laufs wartet am Fremdschlüssel darauf – sichtbar in
``pg_stat_activity`` (``wait_event_type = 'Lock'``) –, und erst dann löscht und ändert der Test.
"""

from __future__ import annotations

import gzip
import re

import psycopg
import pytest
from psycopg import sql

import db
from auswahlstufe.fehler import EXIT_GESPERRT, EXIT_OK
from tests.hilfen import PROJEKT
from tests.hilfen.daten import SLOT, SLOT_TEXT
from tests.hilfen.prozesse import (
    SQL_WARTET,
    Halt,
    bilanzzeile,
    ende,
    im_hintergrund,
    ruhen_lassen,
    warten_bis,
)

pytestmark = pytest.mark.datenbank

SATZ = "Der Rat der Stadt tagte bis in die Nacht und beschloss den Haushalt mit knapper Mehrheit. "
SQL_ITEMS = "insert into raw_items (id, slot) select g, %(slot)s from generate_series(%(von)s::bigint, %(bis)s::bigint) g"
SQL_KANDIDATEN = """
insert into extraktionen (item_id, extraktor, text)
select g, x, 'Meldung ' || g || '. ' || repeat(%(satz)s::text, (3 + g %% 5)::int)
    || case when x = 'newspaper4k' then 'Jetzt abonnieren.' else '' end
from generate_series(%(von)s::bigint, %(bis)s::bigint) g, unnest(array['newspaper4k', 'readability', 'trafilatura']) x
"""


# Items, auf denen ein Lauf nach seinem ersten Stapel anhält (Halt): mitten im Lauf, mit mehreren
# Stapeln danach (stufe.STAPEL)
MITTEN = 1000


def bestand(url: str, von: int, bis: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SQL_ITEMS, {"slot": SLOT, "von": von, "bis": bis})
        conn.execute(SQL_KANDIDATEN, {"von": von, "bis": bis, "satz": SATZ})


def abfrage(url: str, anfrage, params=None) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(anfrage, params).fetchall()


# --- Ingest löscht, fügt ein, ändert – mitten im Lauf --------------------------------------------


@pytest.mark.parametrize(
    "modus", [["--backfill"], ["--slot", SLOT_TEXT], ["--nachholen"]], ids=["backfill", "slot", "nachholen"]
)
def test_ingest_loescht_fuegt_ein_und_aendert_waehrend_des_laufs(db_url, tmp_path, modus):
    """Ein Item, das Ingest zwischen Lesen und Schreiben löscht, entfällt, gezählt, und der Lauf
    endet mit 0 – nicht mit Exit 3 am Fremdschlüssel („insert or update on table
    "selected_extractor" violates foreign key constraint“).

    Festgelegt und geprüft, was sonst während des Laufs geschieht:
    * ein neues Item hinter der Leseposition (größere id) kodiert der Lauf noch;
    * ein neues Item vor ihr (kleinere id) kodiert der nächste Lauf;
    * Kandidaten, die sich ändern, nachdem der Lauf sie las: er schreibt die Entscheidung über
      das Gelesene samt dessen Eingabe-Summe; der nächste Lauf sieht die neue Summe und rechnet
      neu. Ändern sie sich vor dem Lesen, nimmt der Lauf schon die neuen.
    """
    bestand(db_url, 1, 1000)
    ingest = psycopg.connect(db_url)  # eine Transaktion, wie Ingest sie hätte
    try:
        ingest.execute("select 1 from raw_items where id = 1 for update")
        # 2 Worker: Stapel zu 200, vier unterwegs – die Items 1–800 sind gelesen, wenn das Schreiben
        # des ersten Stapels am Fremdschlüssel auf Item 1 wartet; 801–1000 noch nicht.
        prozess = im_hintergrund(db_url, *modus, "--prozesse", "2", cwd=tmp_path)
        warten_bis(
            db_url,
            prozess,
            lambda conn: conn.execute(SQL_WARTET, ("wurzelwerk-auswahl schreiben",)).fetchone()[0],
            "sein erster Stapel am Fremdschlüssel wartet",
        )
        ingest.execute("delete from raw_items where id in (1, 5, 7)")
        for neu in (0, 1001):  # vor und hinter der Leseposition
            ingest.execute(SQL_ITEMS, {"slot": SLOT, "von": neu, "bis": neu})
            ingest.execute(SQL_KANDIDATEN, {"von": neu, "bis": neu, "satz": SATZ})
        for geaendert in (100, 900):  # schon gelesen / noch nicht gelesen
            ingest.execute(
                "update extraktionen set text = 'Ganz anders: ' || repeat('Neue Meldung über die Brücke. ', 9) "
                "where item_id = %s",
                (geaendert,),
            )
        ingest.commit()
    finally:
        ingest.close()
    code, out, err = ende(prozess)
    assert code == EXIT_OK, f"exit {code}\n{out}\n{err}"
    assert err == "", err
    assert bilanzzeile(out).startswith(
        "neu 998, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0, entfallen 3 in "
    ), out
    laeufe = abfrage(db_url, "select modus, items, neu, entfallen, exit_code from auswahl_laeufe order by id")
    assert laeufe[-1] == ("backfill" if modus == ["--backfill"] else "slot", 1000, 998, 3, EXIT_OK), laeufe
    kodiert = {i for (i,) in abfrage(db_url, "select item_id from selected_extractor")}
    assert kodiert == set(range(2, 1002)) - {5, 7}
    ((alt,),) = abfrage(db_url, "select text from selected_extractor where item_id = 100")
    ((neu,),) = abfrage(db_url, "select text from selected_extractor where item_id = 900")
    assert not alt.startswith("Ganz anders") and neu.startswith("Ganz anders")

    # Der nächste Lauf macht den Rest: Item 0 und die neue Entscheidung für Item 100.
    weiter = ende(im_hintergrund(db_url, *modus, cwd=tmp_path))
    assert weiter[0] == EXIT_OK, weiter
    assert bilanzzeile(weiter[1]).startswith(
        "neu 1, geändert 1, unverändert 997, entfernt 0, ohne Kandidaten 0 in "
    )
    assert abfrage(db_url, "select text like 'Ganz anders%' from selected_extractor where item_id = 100") == [
        (True,)
    ]
    assert abfrage(db_url, "select count(*) from auswahl_slots_ohne_lauf") == [(0,)]


AEB = PROJEKT / "bench" / "aeb" / "html"


def seiten_anlegen(url: str, n: int) -> None:
    """Items 1–n in SLOT mit je einer echten Seite aus dem article-extraction-benchmark."""
    dateien = sorted(AEB.glob("*.html.gz"))[:n]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SQL_ITEMS, {"slot": SLOT, "von": 1, "bis": n})
        for item_id, datei in enumerate(dateien, 1):
            conn.execute(
                "insert into seiten (item_id, html, url) values (%s, %s, %s)",
                (item_id, gzip.decompress(datei.read_bytes()), f"https://example.org/{item_id}"),
            )


def test_ingest_loescht_waehrend_der_extraktion(db_url, tmp_path):
    """Dasselbe beim Schreiben der Kandidaten (--extrahieren): statt Exit 3 am Fremdschlüssel
    extraktionen_item_id_fkey entfallen die Items; die übrigen werden extrahiert und gewählt."""
    seiten_anlegen(db_url, 6)
    ingest = psycopg.connect(db_url)
    try:
        ingest.execute("select 1 from raw_items where id = 1 for update")
        prozess = im_hintergrund(db_url, "--extrahieren", "--nachholen", "--prozesse", "2", cwd=tmp_path)
        warten_bis(
            db_url,
            prozess,
            lambda conn: conn.execute(SQL_WARTET, ("wurzelwerk-auswahl schreiben",)).fetchone()[0],
            "die Extraktion am Fremdschlüssel wartet",
            frist=300,  # die Extraktoren starten auf belasteten Kernen langsam
        )
        ingest.execute("delete from raw_items where id in (1, 2)")
        ingest.commit()
    finally:
        ingest.close()
    code, out, err = ende(prozess)
    assert code == EXIT_OK and err == "", f"exit {code}\n{out}\n{err}"
    assert "Extraktion: 6 Seiten neu oder veraltet, 6 extrahiert, 12 Zeilen in extraktionen geändert, " in out
    assert ", entfallen 2, " in out, out
    assert bilanzzeile(out).startswith(
        "neu 4, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0 in "
    ), out
    assert abfrage(db_url, "select distinct item_id from extraktionen order by 1") == [
        (i,) for i in range(3, 7)
    ]


# --- Ruhende Verbindungen ----------------------------------------------------------------------------


def test_jede_verbindung_hat_tcp_keepalives_was_die_url_setzt_gilt(db_url):
    """Gegen ein NAT, das eine ruhende TCP-Verbindung vergisst: libpq schickt Keepalives
    (db.KEEPALIVES); was DATABASE_URL selbst setzt, bleibt."""
    with db.verbinden(db_url, "test", autocommit=True) as conn:
        assert {k: v for k, v in conn.info.get_parameters().items() if k.startswith("keepalives")} == {
            name: str(wert) for name, wert in db.KEEPALIVES.items()
        }
    eigene = psycopg.conninfo.make_conninfo(db_url, keepalives_idle="5")
    with db.verbinden(eigene, "test", autocommit=True) as conn:
        assert conn.info.get_parameters()["keepalives_idle"] == "5"


def idle_session_timeout(pg, db_name: str, wert: str) -> None:
    with pg.verwalten() as conn:
        conn.execute(
            sql.SQL("alter database {} set idle_session_timeout = {}").format(
                sql.Identifier(db_name), sql.Literal(wert)
            )
        )


def test_idle_session_timeout_trifft_keine_verbindung_des_laufs(pg, db_name, db_url, tmp_path):
    """Eine Verbindung, die länger als idle_session_timeout nichts tut, beendet der Server – mit
    der Schreibverbindung auch die Sperre. Der Lauf setzt es für seine Sitzungen auf 0: hier ruht
    er länger als die Grenze der Datenbank und endet doch mit 0."""
    bestand(db_url, 1, MITTEN)
    idle_session_timeout(pg, db_name, "1s")
    halt = Halt(tmp_path, "stapel", 1)
    prozess = im_hintergrund(db_url, "--backfill", "--prozesse", "2", cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(prozess)
    try:
        ruhen_lassen(db_url, ["wurzelwerk-auswahl lesen", "wurzelwerk-auswahl schreiben"])
    finally:
        halt.weiter()
    code, out, err = ende(prozess)
    assert code == EXIT_OK and err == "", f"exit {code}\n{out}\n{err}"
    assert bilanzzeile(out).startswith(f"neu {MITTEN}, "), out


def test_idle_session_timeout_waehrend_die_extraktoren_rechnen(pg, db_name, db_url, tmp_path):
    """Dasselbe während einer langen Extraktion: die Schreibverbindung hält die Sperre und schreibt
    erst, wenn ein Stapel Seiten fertig ist – sie ruht, so lange die Extraktoren rechnen."""
    seiten_anlegen(db_url, 6)
    idle_session_timeout(pg, db_name, "1s")
    halt = Halt(tmp_path, "seite", 1)
    prozess = im_hintergrund(
        db_url, "--extrahieren", "--slot", SLOT_TEXT, "--prozesse", "2", cwd=tmp_path, env=halt.umgebung
    )
    halt.abwarten(prozess)
    try:
        ruhen_lassen(db_url, ["wurzelwerk-auswahl lesen", "wurzelwerk-auswahl schreiben"])
    finally:
        halt.weiter()
    code, out, err = ende(prozess)
    assert code == EXIT_OK and err == "", f"exit {code}\n{out}\n{err}"
    assert "Extraktion: 6 Seiten neu oder veraltet, 6 extrahiert" in out, out
    assert bilanzzeile(out).startswith("neu 6, "), out


def test_sperre_verloren_exit_5_ohne_halben_stapel_und_der_naechste_macht_den_rest(db_url, tmp_path):
    """Die Schreibverbindung mit der Sperre wird mitten im Lauf beendet (pg_terminate_backend; so
    ginge sie auch in einem vergesslichen NAT). Ein zweiter Lauf bekommt die Sperre und macht
    alles; der erste merkt es an seinem nächsten Stapel – er schreibt nur über die Verbindung, die
    die Sperre hielt – und endet mit Exit 5."""
    bestand(db_url, 1, MITTEN)
    halt = Halt(tmp_path, "stapel", 1)
    erster = im_hintergrund(db_url, "--backfill", "--prozesse", "2", cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(erster)
    try:
        ((backend,),) = abfrage(db_url, "select backend_pid from auswahl_laeufe where id = 1")
        assert abfrage(db_url, "select pg_terminate_backend(%s)", (backend,)) == [(True,)]
        warten_bis(
            db_url,
            erster,
            lambda conn: (
                not conn.execute(
                    "select count(*) from pg_stat_activity where pid = %s", (backend,)
                ).fetchone()[0]
            ),
            "seine Schreibverbindung weg ist",
        )
        schon = abfrage(db_url, "select count(*) from selected_extractor")[0][0]
        assert 0 < schon < MITTEN  # genau der erste Stapel
        zweiter = ende(im_hintergrund(db_url, "--backfill", cwd=tmp_path))
        assert zweiter[0] == EXIT_OK, zweiter
        assert bilanzzeile(zweiter[1]).startswith(f"neu {MITTEN - schon}, geändert 0, unverändert {schon}, ")
    finally:
        halt.weiter()
    code, out, err = ende(erster)
    assert code == EXIT_GESPERRT, f"exit {code}\n{out}\n{err}"
    # Den Grund (57P01) sagt der Server nur einmal, mit dem Schließen; meist liest ihn die erste
    # Anfrage danach, selten (einmal in CI unter Last) sieht sie nur die geschlossene Verbindung –
    # dann nennt die Meldung den allgemeinen Grund. Beides ist wahr, Exit und Rest gleich.
    assert re.search(
        r"Die Verbindung, die die Sperre des Laufs hielt, ist weg: (der Server beendete sie \(pg_terminate_backend "
        r"oder ein Neustart\)|die Verbindung riss ab)\. ",
        err,
    ), err
    assert f"Bis zum Fehler geschrieben: neu {schon}, " in err, err  # nach dem Verlust: kein Stapel mehr
    assert "Traceback" not in err and out == ""
    assert abfrage(db_url, "select id, exit_code, zustand from auswahl_laeufe order by id") == [
        (1, EXIT_GESPERRT, "gesperrt"),  # Exit 5: auch eine verlorene Sperre (aw-007)
        (2, EXIT_OK, "erfolg"),
    ]
    # Der zweite hatte den ersten als abgebrochen geschlossen (seine Sitzung war weg); der erste
    # trug danach sein wirkliches Ende ein.
    assert abfrage(db_url, "select count(*) from selected_extractor") == [(MITTEN,)]
    dritter = ende(im_hintergrund(db_url, "--backfill", cwd=tmp_path))
    assert bilanzzeile(dritter[1]).startswith(f"neu 0, geändert 0, unverändert {MITTEN}, "), dritter
