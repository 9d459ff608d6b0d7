"""Die Abfragen für psql in ``docs/betrieb.md`` laufen, wie sie dort stehen.

Jeder SQL-Block des Abschnitts „Abfragen für psql“ geht wörtlich an ein echtes
``psql`` (mit ``ON_ERROR_STOP``) gegen eine Datenbank, in der ein Backfill und
ein Slot-Lauf gelaufen sind – so fällt eine umbenannte Spalte, Sicht oder
Tabelle auf, bevor ein Betreiber sie abtippt. Sie laufen unter der Rolle, die
die Doku nennt: der Betriebsrolle mit genau den Rechten des Rezepts; der Block
der Überwachung auch unter einer Rolle des Rezepts mit ``-v nur_blick=1``
(ohne „permission denied for view“).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from auswahlstufe.betrieb import migrationen
from tests.hilfen import PROJEKT
from tests.hilfen.daten import SLOT, SLOT_TEXT
from tests.hilfen.server import psql_pfad
from version import CODER_VERSION

pytestmark = pytest.mark.datenbank

BETRIEB = Path(__file__).resolve().parents[1] / "docs" / "betrieb.md"


def _bloecke() -> list[str]:
    text = BETRIEB.read_text(encoding="utf-8")
    abschnitt = text.split("\n## Abfragen für psql\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```sql\n(.*?)^```", abschnitt, re.S | re.M)


def _psql(url: str, skript: str, **variablen: str) -> subprocess.CompletedProcess:
    befehl = [psql_pfad(), url, "-X", "-v", "ON_ERROR_STOP=1"]
    for name, wert in variablen.items():
        befehl += ["-v", f"{name}={wert}"]
    return subprocess.run(befehl, input=skript, capture_output=True, text=True, timeout=60)


def test_der_abschnitt_hat_seine_abfragen():
    bloecke = _bloecke()
    assert len(bloecke) == 3, bloecke  # Betriebsrolle, Überwachung (auch aw_blick), Unterschiede
    # Die Überwachung liest nur, was aw_blick darf: die Sichten und auswahl_laeufe.
    for tabelle in ("selected_extractor", "raw_items", "extraktionen", "seiten"):
        assert not re.search(rf"\b{tabelle}\b", bloecke[1]), tabelle
    for name in (
        "auswahl_letzter_slot",
        "auswahl_slots_ohne_lauf",
        "auswahl_offene_laeufe",
        "auswahl_laeufe",
        "abstand",
    ):
        assert any(name in block for block in bloecke), f"{name} fehlt in den Abfragen"


@pytest.fixture
def rollen_des_rezepts(pg, db_name, db_url):
    """(Betriebsrolle, Rolle nur zum Lesen) als URLs, angelegt mit rollen/aw-rolle-stufe.sql."""
    namen = (f"aw_doku_{db_name[-8:]}", f"aw_doku_blick_{db_name[-8:]}")
    for rolle, extra in zip(namen, ([], ["-v", "nur_blick=1"]), strict=True):
        lauf = subprocess.run(
            [
                psql_pfad(),
                db_url,
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-v",
                f"rolle={rolle}",
                *extra,
                "-f",
                str(PROJEKT / "rollen" / "aw-rolle-stufe.sql"),
            ],
            capture_output=True,
            text=True,
        )
        assert lauf.returncode == 0, lauf.stderr
    yield tuple(pg.url(db_name, user=rolle) for rolle in namen)
    for rolle in namen:
        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute(sql.SQL("drop owned by {}").format(sql.Identifier(rolle)))
        with pg.verwalten() as conn:
            conn.execute(sql.SQL("drop role {}").format(sql.Identifier(rolle)))


def test_jede_abfrage_laeuft_gegen_eine_echte_datenbank(daten, cli, db_url, rollen_des_rezepts):
    betrieb, blick = rollen_des_rezepts
    for item_id, haus in ((1, "Nord"), (2, "Süd"), (3, "Nord")):
        daten.item(item_id, haus=haus, titel=f"Meldung {item_id}", url=f"https://example.org/{item_id}")
    gemeinsam = "Der Rat beschließt heute den Haushalt für das kommende Jahr mit großer Mehrheit."
    daten.kandidaten(
        1, {"trafilatura": gemeinsam, "newspaper4k": gemeinsam + " Werbung.", "readability": gemeinsam}
    )
    daten.kandidaten(2, {"trafilatura": ("", "Zeitüberschreitung"), "readability": "Kurz."})
    # Item 3 ohne Kandidaten: es erscheint unter „ohne brauchbaren Text“.
    assert cli("--backfill").code == 0
    assert cli("--slot", SLOT_TEXT).code == 0
    assert cli("--nachholen").code == 0

    eigene, ueberwachung, unterschiede = _bloecke()
    abfragen = eigene + ueberwachung
    lauf = _psql(betrieb, abfragen, version=CODER_VERSION, item="1")
    assert lauf.returncode == 0 and not lauf.stderr, lauf.stderr
    # Eine Stichprobe dessen, was herauskommt: der Slot, das Item ohne Kandidaten, die Läufe.
    assert "keine Kodierung" in lauf.stdout
    assert "Meldung 3" in lauf.stdout
    assert f"{SLOT:%Y}" in lauf.stdout and "backfill" in lauf.stdout and "slot" in lauf.stdout
    assert "nachholen" in lauf.stdout and "erfolg" in lauf.stdout
    assert "abstand" in lauf.stdout

    # Zwei Versionen: dieselbe gegen sich selbst hat keine Unterschiede.
    lauf = _psql(betrieb, unterschiede, alt=CODER_VERSION, neu=CODER_VERSION)
    assert lauf.returncode == 0 and not lauf.stderr, lauf.stderr
    assert "(0 rows)" in lauf.stdout or "(0 Zeilen)" in lauf.stdout, lauf.stdout

    # Die Rolle nur zum Lesen: der Block der Überwachung ganz, wie er dasteht (keine Abfrage darin
    # endet unter aw_blick mit „permission denied“); der Block der Betriebsrolle nicht.
    lauf = _psql(blick, ueberwachung)
    assert lauf.returncode == 0 and not lauf.stderr, lauf.stderr
    assert f"{SLOT:%Y}" in lauf.stdout and "backfill" in lauf.stdout
    assert lauf.stdout.count("(") >= 6  # sechs Ergebnisse: „(n rows)“
    lauf = _psql(blick, eigene, version=CODER_VERSION, item="1")
    assert lauf.returncode != 0 and "permission denied for table selected_extractor" in lauf.stderr


def gesperrter_aufruf(url: str) -> None:
    """Ein Aufruf von --nachholen, der mit Exit 5 endete (vor 2.1.0: ein anderer Lauf hielt die
    Sperre; seitdem: er verlor seine Sperren), wie er im Protokoll steht."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "insert into auswahl_laeufe (modus, coder_version, rechner, pid, beendet_am, exit_code, meldung) "
            "values ('nachholen', %s, 'aw-1', 1, now(), 5, 'Ein anderer Lauf hält die Sperre')",
            (CODER_VERSION,),
        )


def test_cron_je_tag_zaehlt_exit_5_als_gesperrt_nicht_als_fehler(daten, cli, db_url):
    """Ein Aufruf mit Exit 5 – für --nachholen aus cron vor 2.1.0 der Normalfall – heißt in auswahl_laeufe
    ``gesperrt`` (aw-010); die Abfrage „Hat cron heute gelaufen“ zählt ihn für sich, nicht als
    Fehler."""
    abfrage = next(a for a in _bloecke()[1].split(";") if "Hat cron heute gelaufen" in a).strip()
    daten.item(1)
    daten.kandidaten(1, {"trafilatura": "Ein Text für den Slot."})
    gesperrter_aufruf(db_url)
    assert cli("--nachholen").code == 0
    with psycopg.connect(db_url) as conn:
        assert conn.execute(
            "select exit_code, zustand from auswahl_laeufe where modus = 'nachholen' order by id"
        ).fetchall() == [(5, "gesperrt"), (0, "erfolg")]
        cur = conn.execute(abfrage)
        zeile = dict(zip([s.name for s in cur.description], cur.fetchone(), strict=True))
    assert {k: zeile[k] for k in ("aufrufe", "erfolg", "gesperrt", "fehler", "abgebrochen")} == {
        "aufrufe": 2,
        "erfolg": 1,
        "gesperrt": 1,
        "fehler": 0,
        "abgebrochen": 0,
    }, zeile


SQL_SICHT_UND_RECHTE = (
    "select c.oid, c.relacl, pg_get_viewdef(c.oid) from pg_class c where c.relname = 'auswahl_letzter_slot'"
)


def test_aw010_macht_aus_exit_5_gesperrt_in_einem_protokoll_von_vorher(daten, cli, db_url):
    """aw-007 ist ausgeliefert, wie es war (Exit 5 hieß dort fehler); aw-010 legt zustand neu an.
    Ein Protokoll, das mit aw-007 entstand, zählt danach jeden alten Lauf richtig, und die Sicht,
    die an zustand hing, behält ihre Rechte (das Rezept muss nicht noch einmal laufen)."""
    daten.item(1)
    daten.kandidaten(1, {"trafilatura": "Ein Text für den Slot."})
    gesperrter_aufruf(db_url)
    assert cli("--nachholen").code == 0
    aw007 = (PROJEKT / "migrations" / "aw-007-laeufe-betrieb.sql").read_text(encoding="utf-8")
    alt = aw007.split("add column zustand text generated always as (", 1)[1].split(") stored;", 1)[0]
    sicht = aw007.split("drop view auswahl_letzter_slot;\n", 1)[1].split(" on true;", 1)[0] + " on true"
    assert "gesperrt" not in alt and "select * from auswahl_laeufe x" in sicht
    with psycopg.connect(db_url, autocommit=True) as conn:  # zurück auf den Stand von aw-007
        conn.execute("delete from schema_migrationen where name = 'aw-010-zustand-gesperrt'")
        conn.execute(
            sql.SQL(
                "alter table auswahl_laeufe drop column zustand, add column zustand text generated always as ({}) stored"
            ).format(sql.SQL(alt))
        )
        conn.execute(sql.SQL(sicht.replace("create view", "create or replace view", 1)))
        conn.execute("grant select on auswahl_letzter_slot to public")
        vorher = conn.execute("select exit_code, zustand from auswahl_laeufe order by id").fetchall()
        sicht_vorher = conn.execute(SQL_SICHT_UND_RECHTE).fetchone()
    assert (5, "fehler") in vorher
    assert migrationen.migrieren(db_url, ausgabe=lambda _: None) == ["aw-010-zustand-gesperrt"]
    with psycopg.connect(db_url) as conn:
        nachher = conn.execute("select exit_code, zustand from auswahl_laeufe order by id").fetchall()
        sicht_nachher = conn.execute(SQL_SICHT_UND_RECHTE).fetchone()
    assert nachher == [(c, "gesperrt" if c == 5 else z) for c, z in vorher]
    assert sicht_nachher[:2] == sicht_vorher[:2] and "=r/" in str(sicht_nachher[1])
    assert "x.*" not in sicht_nachher[2] and "zustand" not in sicht_nachher[2]
