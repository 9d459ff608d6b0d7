"""Nur neu extrahieren, was sich ändern kann: eine neue Fassung der Seitenart stempelt nur neu.

``extraktor_fassung`` hält zwei Dinge getrennt fest: die **Textfassung** (Paketversion,
Einstellungen, Zeichensatzregel – ändert sie sich, kann sich der Text jeder Seite ändern) und die
**Fassung der Seitenart** (``art.FASSUNG``: welche Seite gar keine HTML-Seite ist, was eine leere
Seite bekommt). Ändert sich nur die zweite, entscheidet das Urteil über die Seite ohne Extraktor:

* eine HTML-Seite behält Text und Fehler ihres Extraktors, die Zeile wird nur neu gestempelt
  (``extrahiert_am`` bleibt);
* eine Seite, die keine HTML-Seite ist oder leer, bekommt den festen Kandidaten des Urteils,
  wo die Zeile ihm nicht gleicht (die leere Seite: drei leere Texte statt readabilitys englischem
  „Document is empty“), sonst wird sie neu gestempelt;
* ändert sich auch die Textfassung eines Extraktors (hier: newspaper4k vor der festen
  Kandidatenordnung), extrahiert nur er neu.

Gezeigt an den 181 Seiten des article-extraction-benchmark (ihre gespeicherten Kandidaten aus
``bench/aeb/candidates.json``) und an den feindlichen Seiten und Randfällen der Extraktion, mit den
Stempeln, die die beiden Vorgänger im Haus hinterließen; newspaper4k extrahiert dabei jede sechste
aeb-Seite neu (``AEB_JEDE``, mit ``--langsam`` alle). Die Seiten stehen einmal je Modul in einer
Datenbank, die feindlichen extrahiert; jeder Test bekommt eine Kopie davon.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import re

import psycopg
import pytest
from psycopg import sql

from auswahlstufe.extraktion import art, aufrufe
from auswahlstufe.referenz import binaer
from auswahlstufe.referenz.feindlich import feindliche_seiten, randfaelle
from tests.hilfen import PROJEKT
from tests.hilfen.prozesse import auswahl_starten

pytestmark = pytest.mark.datenbank

AEB = PROJEKT / "bench" / "aeb"
SLOT = "2026-09-07 06:00+00"
AEB_AB = 1001  # ids der aeb-Seiten; die feindlichen davor
# newspaper4k rechnet in test_vor_der_seitenart_extrahiert_nur_newspaper4k_neu jede sechste aeb-Seite neu
# (die übrigen löscht er vorher aus seiner Kopie); mit --langsam alle 181.
AEB_JEDE = 6

# Die Stempel der Vorgänger, aus dem heutigen gebildet (die Texte der Einstellungen stehen im Code
# jener Stände: Seitenart Fassung 1 seit der Prüfung auf Nicht-HTML; davor keine Seitenart, und
# newspaper4k ohne feste Kandidatenordnung).
SQL_ALS_VORGAENGER = """
update extraktionen set extraktor_fassung = regexp_replace(extraktor_fassung, %(muster)s, %(ersatz)s)
"""
SQL_OHNE_FESTE_ORDNUNG = """
update extraktionen set extraktor_fassung = replace(extraktor_fassung,
    '; Kandidatenordnung fest (newspaper_fest); Fassung 2', '; Fassung 1')
where extraktor = 'newspaper4k'
"""
SQL_ZEILEN = """
select item_id, extraktor, text, fehler, extrahiert_am, extraktor_fassung
from extraktionen order by item_id, extraktor
"""
# So hinterließ die Fassung 1 der Seitenart eine leere Seite (readability warf).
LEER_ALT = "Extraktor scheiterte: Unparseable: Document is empty"


def seiten_anlegen(conn: psycopg.Connection) -> dict[str, int]:
    """Die feindlichen Seiten und Randfälle (ohne Kandidaten) und die aeb-Seiten samt ihren
    gespeicherten Kandidaten; gibt die ids der feindlichen zurück."""
    feindlich = {
        **feindliche_seiten(mit_50_mb=False),
        **randfaelle(),
        "pdf": binaer.pdf(),
        "png": binaer.png(),
    }
    ids = {name: nr for nr, name in enumerate(sorted(feindlich), start=1)}
    for name, nr in ids.items():
        conn.execute("insert into raw_items (id, slot) values (%s, %s)", (nr, SLOT))
        conn.execute(
            "insert into seiten (item_id, html, url) values (%s, %s, %s)",
            (nr, feindlich[name], f"https://example.org/{name}"),
        )
    kandidaten = json.loads((AEB / "candidates.json").read_text(encoding="utf-8"))
    for nr, artikel in enumerate(kandidaten, start=AEB_AB):
        html = gzip.decompress((AEB / "html" / f"{artikel['id']}.html.gz").read_bytes())
        conn.execute("insert into raw_items (id, slot) values (%s, %s)", (nr, SLOT))
        conn.execute(
            "insert into seiten (item_id, html, url, content_type) values (%s, %s, %s, 'text/html')",
            (nr, html, artikel["url"]),
        )
        for name, ergebnis in artikel["extractions"].items():
            conn.execute(
                "insert into extraktionen (item_id, extraktor, text, fehler, extraktor_fassung, seite_sha256) "
                "select %s, %s, %s, %s, %s, sha256(s.html_sha256 || convert_to(coalesce(s.content_type, ''), "
                "'UTF8')) from seiten s where s.item_id = %s",
                (nr, name, ergebnis.get("text"), ergebnis.get("error"), _heutige_fassung(name), nr),
            )
    return ids


def _heutige_fassung(name: str) -> str:
    return aufrufe.extraktor_fassung(name, aufrufe.versionen()[name])


def zeilen(url: str) -> dict[tuple[int, str], tuple]:
    with psycopg.connect(url) as conn:
        return {(i, x): tuple(rest) for i, x, *rest in conn.execute(SQL_ZEILEN).fetchall()}


def _datenbank(pg, name: str, vorlage: str) -> None:
    with pg.verwalten() as conn:
        conn.execute(
            sql.SQL("create database {} template {}").format(sql.Identifier(name), sql.Identifier(vorlage))
        )


def _weg(pg, name: str) -> None:
    with pg.verwalten() as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def bestand(pg, vorlage, tmp_path_factory):
    """Eine Datenbank mit allen Seiten, die feindlichen von der heutigen Stufe extrahiert – einmal
    je Modul; jeder Test bekommt eine Kopie davon (``haus``)."""
    name = f"aw_nachpruefen_{os.getpid()}"
    _weg(pg, name)
    _datenbank(pg, name, vorlage)
    url = pg.url(name)
    with psycopg.connect(url, autocommit=True) as conn:
        ids = seiten_anlegen(conn)
    erste = auswahl_starten(
        "--extrahieren", "--backfill", "--prozesse", "2", url=url, cwd=tmp_path_factory.mktemp("bestand")
    )
    assert erste.code == 0, str(erste)
    assert f"Extraktion: {len(ids)} Seiten neu oder veraltet, {len(ids)} extrahiert" in erste.out, str(erste)
    yield name, ids
    _weg(pg, name)


_kopien = itertools.count()


@pytest.fixture
def haus(pg, bestand):
    """Ein Haus mit allen Seiten, die feindlichen von der heutigen Stufe extrahiert: eine Kopie
    von ``bestand`` (``CREATE DATABASE … TEMPLATE``), nach dem Test wieder weg."""
    vorlage, ids = bestand
    name = f"{vorlage}_{next(_kopien)}"
    _datenbank(pg, name, vorlage)
    yield pg.url(name), ids
    _weg(pg, name)


def test_nach_der_fassung_1_der_seitenart_wird_nichts_extrahiert(haus, tmp_path):
    url, ids = haus
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            SQL_ALS_VORGAENGER,
            {"muster": art.FASSUNG_MUSTER, "ersatz": "; Seitenart (art.keine_html) Fassung 1"},
        )
        conn.execute(
            "update extraktionen set text = null, fehler = %s where item_id = %s and extraktor = 'readability'",
            (LEER_ALT, ids["leer"]),
        )
    vorher = zeilen(url)
    seiten = len(ids) + 181

    lauf = auswahl_starten("--extrahieren", "--backfill", "--prozesse", "2", url=url, cwd=tmp_path)

    assert lauf.code == 0, str(lauf)
    assert (
        f"Extraktion: {seiten} Seiten neu oder veraltet, 0 extrahiert, {seiten} nachgeprüft (Seitenart, "
        f"ohne Extraktor; {3 * seiten - 1} Zeilen neu gestempelt), 1 Zeilen in extraktionen geändert"
    ) in lauf.out, str(lauf)
    nachher = zeilen(url)
    assert nachher.keys() == vorher.keys()
    for schluessel, (text, fehler, am, fassung) in nachher.items():
        assert fassung == _heutige_fassung(schluessel[1]), schluessel
        if schluessel == (ids["leer"], "readability"):
            assert (text, fehler) == ("", None)  # das Urteil über die leere Seite, kein Extraktor
        else:
            assert (text, fehler, am) == vorher[schluessel][:3], schluessel  # nur gestempelt
    # Der nächste Lauf hat nichts mehr zu tun.
    zweiter = auswahl_starten("--extrahieren", "--backfill", url=url, cwd=tmp_path)
    assert "Extraktion: 0 Seiten neu oder veraltet, 0 extrahiert" in zweiter.out, str(zweiter)


def test_vor_der_seitenart_extrahiert_nur_newspaper4k_neu(haus, tmp_path, request):
    """Der Stand ohne Seitenart: trafilatura und readability haben dieselbe Textfassung wie heute,
    newspaper4k nicht (ohne feste Kandidatenordnung). Damals bekam eine PDF-Seite den Text, den
    ein Extraktor daraus las; heute ist sie keine HTML-Seite – das Urteil ersetzt die Zeile.
    newspaper4k rechnet hier jede ``AEB_JEDE``-te aeb-Seite neu (mit ``--langsam`` alle 181)."""
    url, ids = haus
    jede = 1 if request.config.getoption("--langsam") else AEB_JEDE
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("delete from raw_items where id >= %s and (id - %s) %% %s <> 0", (AEB_AB, AEB_AB, jede))
        conn.execute(SQL_ALS_VORGAENGER, {"muster": art.FASSUNG_MUSTER, "ersatz": ""})
        conn.execute(SQL_OHNE_FESTE_ORDNUNG)
        conn.execute(
            "update extraktionen set text = '%%PDF-1.4 1 0 obj', fehler = null "
            "where item_id = %s and extraktor = 'trafilatura'",
            (ids["pdf"],),
        )
    vorher = zeilen(url)
    seiten = len(ids) + len(range(0, 181, jede))

    lauf = auswahl_starten("--extrahieren", "--backfill", "--prozesse", "2", url=url, cwd=tmp_path)

    assert lauf.code == 0, str(lauf)
    # Jede Seite geht an newspaper4k (eine neue Textfassung); die beiden anderen prüft das Urteil.
    assert f"Extraktion: {seiten} Seiten neu oder veraltet, {seiten} extrahiert" in lauf.out, str(lauf)
    treffer = re.search(r"(\d+) Zeilen neu gestempelt", lauf.out)
    assert treffer and int(treffer[1]) == 2 * seiten - 1, lauf.out  # alle außer der PDF bei trafilatura
    nachher = zeilen(url)
    # „geändert“ zählt nur Zeilen, deren Text oder Fehler sich änderte; was newspaper4k gleich wieder
    # fand, heißt neu extrahiert mit gleichem Text (neu sind nur Fassung und extrahiert_am).
    anders = sum(z[:2] != vorher[k][:2] for k, z in nachher.items())
    gleich = sum(z[:2] == vorher[k][:2] and z[2] != vorher[k][2] for k, z in nachher.items())
    bilanz = f"{anders} Zeilen in extraktionen geändert, {gleich} neu extrahiert mit gleichem Text und Fehler"
    assert gleich > 0 and bilanz in lauf.out, (anders, gleich, lauf.out)
    for (item, extraktor), (text, fehler, am, fassung) in nachher.items():
        assert fassung == _heutige_fassung(extraktor)
        if extraktor != "newspaper4k" and (item, extraktor) != (ids["pdf"], "trafilatura"):
            assert (text, fehler, am) == vorher[(item, extraktor)][:3], (item, extraktor)
    assert nachher[(ids["pdf"], "trafilatura")][:2] == (None, "keine HTML-Seite: PDF")
