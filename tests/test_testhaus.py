"""Eigene Testdaten in ein frisches Haus.

* ``python -m bench.ingest [DATEI.json]`` trägt – nur für ein Testhaus, unter der
  Rolle von Ingest – die Items einer Datei im Stapelformat in ``raw_items`` ein; ohne Datei die
  Beispiele. Die Stufe selbst schreibt ``raw_items`` nie.
* ``auswahl.py --einlesen ORDNER`` lädt einen Ordner mit ``.html``/``.html.gz``-Seiten nach
  ``seiten``: ``<item_id>.html`` oder ``<SHA-256 der URL>.html`` (so heißen die Seiten des
  article-extraction-benchmark), gelesen mit dem Code von ``--extrahieren ORDNER``.
* Ein frisches Haus mit getrennten Rollen (Ingest, Eigentümerin, Betrieb): jede Rolle tut nur
  ihren Schritt, und am Ende stehen Beispiele, Seiten und Entscheidungen in der Datenbank.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

import db
from tests.hilfen import PROJEKT
from tests.hilfen import rechte as rechte_vergeben
from tests.hilfen.prozesse import Ergebnis, auswahl_starten, check_db_starten

pytestmark = pytest.mark.datenbank

BEISPIELE = PROJEKT / "beispiele" / "artikel.json"
AEB = PROJEKT / "bench" / "aeb"


def ingest(*args: str, url: str, cwd: Path) -> Ergebnis:
    """``python -m bench.ingest …`` als Unterprozess, wie ein Mensch ihn startet."""
    lauf = subprocess.run(
        [sys.executable, "-m", "bench.ingest", *args],
        cwd=cwd,
        env={**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(PROJEKT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    return Ergebnis(lauf.returncode, lauf.stdout, lauf.stderr)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seiten(url: str) -> dict[int, tuple]:
    with psycopg.connect(url) as conn:
        return {
            z[0]: z[1:]
            for z in conn.execute("select item_id, html, url, content_type, xmin::text from seiten")
        }


# --- Items für ein Testhaus: python -m bench.ingest ------------------------------


def test_ingest_traegt_die_beispiele_ein_und_legt_raw_items_an(leere_db_url, tmp_path):
    erstes = ingest(url=leere_db_url, cwd=tmp_path)
    assert erstes.code == 0, str(erstes)
    assert "raw_items angelegt" in erstes.out
    assert f"raw_items: 13 Items aus {BEISPIELE} – neu 13, schon da 0" in erstes.out, str(erstes)
    artikel = json.loads(BEISPIELE.read_text(encoding="utf-8"))
    with psycopg.connect(leere_db_url) as conn:
        zeilen = conn.execute(
            "select id, to_char(slot at time zone 'Europe/Berlin', 'YYYY-MM-DD\"T\"HH24:MI'), haus, titel, url "
            "from raw_items order by id"
        ).fetchall()
    assert zeilen == [(a["item_id"], a["slot"][:16], a["haus"], a["titel"], a["url"]) for a in artikel]
    zweites = ingest(str(BEISPIELE), url=leere_db_url, cwd=tmp_path)
    assert zweites.code == 0 and "neu 0, schon da 13" in zweites.out, str(zweites)
    assert "angelegt" not in zweites.out


def test_ingest_nummeriert_artikel_ohne_item_id_und_vergibt_slots(leere_db_url, tmp_path):
    aeb = ingest(str(AEB / "candidates.json"), "--erste-id", "1001", url=leere_db_url, cwd=tmp_path)
    assert aeb.code == 0 and "candidates.json – neu 181, schon da 0" in aeb.out, str(aeb)
    with psycopg.connect(leere_db_url) as conn:
        assert conn.execute("select min(id), max(id), count(distinct slot) from raw_items").fetchone() == (
            1001,
            1181,
            1,
        )
        erste_url = conn.execute("select url from raw_items where id = 1001").fetchone()[0]
    assert erste_url == json.loads((AEB / "candidates.json").read_text())[0]["url"]
    # die Beispiele (item_id 1–13) passen daneben
    assert ingest(url=leere_db_url, cwd=tmp_path).code == 0


def test_ingest_ein_item_mit_anderen_werten_traegt_nichts_ein(leere_db_url, tmp_path):
    assert ingest(url=leere_db_url, cwd=tmp_path).code == 0
    fremd = tmp_path / "fremd.json"
    fremd.write_text(
        json.dumps(
            [
                {"item_id": 99, "slot": "2026-09-07T08:00:00+02:00"},
                {"item_id": 3, "slot": "2026-09-07T08:00:00+02:00", "url": "https://anders.example/3"},
            ]
        ),
        encoding="utf-8",
    )
    ergebnis = ingest(str(fremd), url=leere_db_url, cwd=tmp_path)
    assert ergebnis.code == 1, str(ergebnis)
    assert ergebnis.err.startswith("Fehler: Item 3 gibt es in raw_items schon, mit anderem Wert in ")
    assert "Traceback" not in ergebnis.err
    with psycopg.connect(leere_db_url) as conn:
        assert conn.execute("select count(*) from raw_items").fetchone() == (13,)


@pytest.mark.parametrize(
    ("artikel", "meldung"),
    [
        ({"item_id": "7"}, "Artikel [0]: item_id ist keine ganze Zahl"),
        ({"item_id": 7, "slot": "2026-09-07T08:00"}, "„slot“ ist kein Zeitpunkt mit Zeitzone"),
        ({"item_id": 7, "url": 5}, "„url“ ist eine Zahl, keine Zeichenkette"),
    ],
)
def test_ingest_kaputte_artikel_ein_satz(artikel, meldung, leere_db_url, tmp_path):
    datei = tmp_path / "k.json"
    datei.write_text(json.dumps([artikel]), encoding="utf-8")
    ergebnis = ingest(str(datei), url=leere_db_url, cwd=tmp_path)
    assert ergebnis.code == 1 and meldung in ergebnis.err, str(ergebnis)
    assert "Traceback" not in ergebnis.err


# --- Seiten aus einem Ordner: auswahl.py --einlesen ORDNER -----------------------------------


def test_ordner_seiten_nach_item_id_oder_sha256_der_url(daten, db_url, cli, tmp_path):
    daten.item(1, url="https://beispiel.test/eins")
    daten.item(2)
    daten.item(3, url="https://beispiel.test/drei?ä=1")
    ordner = tmp_path / "seiten"
    ordner.mkdir()
    eins = "<html><head><meta charset='iso-8859-1'></head><body>Gr\xfc\xdfe</body></html>".encode("latin-1")
    (ordner / "1.html").write_bytes(eins)
    (ordner / "2.html.gz").write_bytes(gzip.compress(b"<p>zwei</p>"))
    (ordner / f"{sha256('https://beispiel.test/drei?ä=1')}.html").write_bytes(b"<p>drei</p>")
    (ordner / f"{sha256('https://nirgends.test/')}.html").write_bytes(b"<p>ohne Item</p>")
    (ordner / "77.html").write_bytes(b"<p>Item 77 gibt es nicht</p>")
    (ordner / "notiz.txt").write_text("zählt nicht")

    ergebnis = cli("--einlesen", str(ordner))

    assert ergebnis.code == 0, str(ergebnis)
    assert f"eingelesen: 5 Dateien aus {ordner}, ohne Item 2 in " in ergebnis.out
    assert "Seiten: 3 – neu 3, geändert 0, unverändert 0" in ergebnis.out
    assert "Warnung: 2 Seite(n) aus" in ergebnis.err and "77.html" in ergebnis.err, str(ergebnis)
    gespeichert = seiten(db_url)
    # die Bytes wie in der Datei (.gz entpackt), ohne Content-Type; die URL aus raw_items
    assert {i: z[:3] for i, z in gespeichert.items()} == {
        1: (eins, "https://beispiel.test/eins", None),
        2: (b"<p>zwei</p>", None, None),
        3: (b"<p>drei</p>", "https://beispiel.test/drei?ä=1", None),
    }
    zweites = cli("--einlesen", str(ordner))
    assert "Seiten: 3 – neu 0, geändert 0, unverändert 3" in zweites.out, str(zweites)
    assert seiten(db_url) == gespeichert  # unberührt, auch die Zeilenversion
    (ordner / "2.html.gz").write_bytes(gzip.compress(b"<p>zwei, neu</p>"))
    drittes = cli("--einlesen", str(ordner))
    assert "Seiten: 3 – neu 0, geändert 1, unverändert 2" in drittes.out, str(drittes)


@pytest.mark.parametrize(
    ("dateien", "meldung"),
    [
        (["1.html", "seite-2.html"], "seite-2.html: der Name sagt nicht, zu welchem Item die Seite gehört"),
        (["1.html", "01.html.gz"], "meinen dasselbe Item"),
        (["1.html", "URL1"], "gehören beide zu Item 1"),
        (["1.html", "2.html.gz"], "kein gültiges gzip"),
    ],
)
def test_ordner_mit_unklarer_seite_nichts_eingelesen(dateien, meldung, daten, db_url, cli, tmp_path):
    daten.item(1, url="https://beispiel.test/1")
    daten.item(2)
    ordner = tmp_path / "seiten"
    ordner.mkdir()
    for name in dateien:
        name = f"{sha256('https://beispiel.test/1')}.html" if name == "URL1" else name
        (ordner / name).write_bytes(b"<p>kein gzip</p>")
    ergebnis = cli("--einlesen", str(ordner))
    assert ergebnis.code == 1, str(ergebnis)
    assert meldung in ergebnis.err and "Traceback" not in ergebnis.err, str(ergebnis)
    assert seiten(db_url) == {}


def test_die_seiten_des_benchmarks_in_ein_testhaus(leere_db_url, tmp_path):
    """Der Weg aus docs/betrieb.md: Items aus candidates.json (ihre URLs), dann der Ordner
    bench/aeb/html, dessen Dateien nach der SHA-256 ihrer URL heißen – kein Umrechnen von Hand."""
    from auswahlstufe.betrieb import migrationen

    kandidaten = AEB / "candidates.json"
    assert ingest(str(kandidaten), "--erste-id", "1001", url=leere_db_url, cwd=tmp_path).code == 0
    migrationen.migrieren(leere_db_url, ausgabe=lambda _: None)
    ergebnis = auswahl_starten("--einlesen", str(AEB / "html"), url=leere_db_url, cwd=tmp_path)
    assert ergebnis.code == 0, str(ergebnis)
    assert "ohne Item 0" in ergebnis.out and "Seiten: 181 – neu 181," in ergebnis.out, str(ergebnis)
    erster = json.loads(kandidaten.read_text(encoding="utf-8"))[0]
    gespeichert = seiten(leere_db_url)[1001]
    assert gespeichert[:2] == (
        gzip.decompress((AEB / "html" / f"{erster['id']}.html.gz").read_bytes()),
        erster["url"],
    )


# --- Ein frisches Haus mit getrennten Rollen -------------------------------------------------


@pytest.fixture
def rollen(pg, leere_db_url):
    """Drei Rollen ohne Sonderrechte: Ingest, Eigentümerin der Stufe, Betrieb – je (Name, URL)."""
    datenbank = psycopg.conninfo.conninfo_to_dict(leere_db_url)["dbname"]
    namen = {zweck: f"aw_{zweck}_{datenbank[-8:]}" for zweck in ("ingest", "besitz", "betrieb")}
    with pg.verwalten() as conn:
        for name in namen.values():
            conn.execute(sql.SQL("create role {} login password 'Haus-7'").format(sql.Identifier(name)))
    with psycopg.connect(leere_db_url, autocommit=True) as conn:
        for zweck in ("ingest", "besitz"):  # ab PostgreSQL 15 darf in public nur, wem es erlaubt ist
            conn.execute(sql.SQL("grant create on schema public to {}").format(sql.Identifier(namen[zweck])))
    yield {z: (n, pg.url(datenbank, user=n, password="Haus-7")) for z, n in namen.items()}
    with psycopg.connect(leere_db_url, autocommit=True) as conn:
        for name in reversed(namen.values()):  # erst, was auf raw_items aufbaut
            conn.execute(sql.SQL("drop owned by {}").format(sql.Identifier(name)))
    with pg.verwalten() as conn:
        for name in namen.values():
            conn.execute(sql.SQL("drop role {}").format(sql.Identifier(name)))


def test_frisches_haus_mit_getrennten_rollen(leere_db_url, rollen, tmp_path):
    """Ingest trägt die Beispiele ein, die Eigentümerin migriert, die Betriebsrolle liest
    Kandidaten und Seiten ein und kodiert – jede unter ihrem Namen, keine als Superuser."""
    _, ingest_url = rollen["ingest"]
    besitz_rolle, besitz_url = rollen["besitz"]
    betrieb_rolle, betrieb_url = rollen["betrieb"]
    datenbank = psycopg.conninfo.conninfo_to_dict(leere_db_url)["dbname"]

    assert "neu 13" in ingest(url=ingest_url, cwd=tmp_path).out
    with psycopg.connect(ingest_url, autocommit=True) as conn:  # Ingest gibt, was Stufe und Sicht brauchen
        for recht in ("select, references", "select"):  # SELECT mit Weitergabe: an die Betriebsrolle
            conn.execute(
                sql.SQL("grant {} on raw_items to {} with grant option").format(
                    sql.SQL(recht), sql.Identifier(besitz_rolle)
                )
            )
        conn.execute(sql.SQL("grant select on raw_items to {}").format(sql.Identifier(betrieb_rolle)))
    migriert = check_db_starten("--migrieren", url=besitz_url, cwd=tmp_path)
    assert migriert.code == 0, str(migriert)
    with psycopg.connect(leere_db_url, autocommit=True) as conn:  # die Rechte je Modus, wie im Rezept
        for modus in ("lauf", "einlesen"):
            for anweisung in rechte_vergeben.vergeben(modus, betrieb_rolle, datenbank, conn):
                conn.execute(anweisung)

    kandidaten = auswahl_starten("--einlesen", str(BEISPIELE), url=betrieb_url, cwd=tmp_path)
    assert kandidaten.code == 0 and "13 Artikel, 38 Kandidaten – neu 38" in kandidaten.out, str(kandidaten)
    ordner = tmp_path / "seiten"
    ordner.mkdir()
    seitenliste = json.loads((PROJEKT / "beispiele" / "seiten.json").read_text(encoding="utf-8"))
    urls = {a["item_id"]: a["url"] for a in json.loads(BEISPIELE.read_text(encoding="utf-8"))}
    for seite in seitenliste:  # nach item_id benannt, Item 2 nach der SHA-256 seiner URL in raw_items
        name = sha256(urls[2]) if seite["item_id"] == 2 else str(seite["item_id"])
        (ordner / f"{name}.html.gz").write_bytes(gzip.compress(seite["html"].encode("utf-8")))
    geladen = auswahl_starten("--einlesen", str(ordner), url=betrieb_url, cwd=tmp_path)
    assert geladen.code == 0 and "Seiten: 3 – neu 3," in geladen.out, str(geladen)
    lauf = auswahl_starten("--backfill", url=betrieb_url, cwd=tmp_path)
    assert lauf.code == 0 and "neu 13," in lauf.out, str(lauf)
    # raw_items schreibt nur Ingest: die Betriebsrolle darf es nicht einmal
    with psycopg.connect(betrieb_url) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("insert into raw_items (id, slot) values (500, now())")
    assert {i: z[1] for i, z in seiten(leere_db_url).items()} == {i: urls[i] for i in (1, 2, 3)}
    # Der Helfer von Ingest unter der Betriebsrolle sagt, was ihr fehlt: schreiben, nicht lesen
    # (nicht „…, raw_items zu lesen und zu schreiben“).
    falsch = ingest(url=betrieb_url, cwd=tmp_path)
    assert falsch.code == 4, str(falsch)
    warnung = f"Warnung: {db.PASSWORT_IN_URL}\n"  # die Rollen hier melden sich mit Passwort in der URL an
    assert falsch.err.startswith(warnung), falsch.err
    assert falsch.err.removeprefix(warnung).startswith(
        f"Fehler: Der Rolle {betrieb_rolle} fehlt das Recht, in raw_items zu schreiben (INSERT; lesen darf "
        "sie). Der Helfer trägt Items für Ingest ein und läuft als Ingest, "
    ), falsch.err
