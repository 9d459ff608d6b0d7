"""Die Datenbankmodi gegen einen echten PostgreSQL 18: Modi, Invarianten, schlechte Eingaben."""

from __future__ import annotations

import csv
import json
import random
import threading
import time
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auswahlstufe.betrieb import bereich, sperre
from auswahlstufe.fehler import EingabeFehler, VoraussetzungFehlt
from auswahlstufe.lauf import kodierung, schreiben, stufe
from auswahlstufe.regeln import waehle
from normalisierung import bereinigen
from tests.hilfen.daten import SLOT, raw_items_anlegen
from tests.hilfen.prozesse import auswahl_starten, bilanzzeile
from version import CODER_VERSION

BEISPIEL = Path(__file__).resolve().parents[1] / "beispiele" / "artikel.json"

SATZ = (
    "Der Stadtrat hat am Montag den Haushalt beschlossen und die Sanierung der Schule vertagt. "
    "Die Opposition kritisierte die neuen Schulden scharf. "
    "Nach langer Debatte stimmten 27 von 41 Mitgliedern zu. "
)
WERBUNG = "Jetzt Newsletter abonnieren und keine Nachricht mehr verpassen. "

pytestmark = pytest.mark.datenbank


def text(n: int, zusatz: str = "") -> str:
    return zusatz + f"Meldung {n}. " + SATZ * (1 + n % 3)


def drei(n: int) -> dict[str, str]:
    """Drei Kandidaten mit den üblichen Fehlern: Werbung davor, ein fehlender Absatz."""
    return {
        "newspaper4k": text(n, WERBUNG),
        "readability": text(n),
        "trafilatura": text(n)[: len(text(n)) * 2 // 3],
    }


@pytest.fixture
def lauf(db_url, monkeypatch):
    """stufe.lauf im Testprozess (ein Prozess, schnell); Ausgabe über capsys."""
    monkeypatch.setenv("DATABASE_URL", db_url)

    def laufen(slot=None, *, trocken=False, stichprobe=None, teil=None, prozesse=1):
        einstellungen = stufe.Einstellungen(
            CODER_VERSION, prozesse=prozesse, trocken=trocken, stichprobe=stichprobe
        )
        return stufe.lauf(einstellungen, slot=slot, teil=teil)

    return laufen


def zahlen(bilanz) -> tuple[int, int, int, int, int]:
    return bilanz.neu, bilanz.geaendert, bilanz.unveraendert, bilanz.entfernt, bilanz.ohne_kandidaten


# --- Backfill und was er schreibt -------------------------------------------------------


def test_backfill_schreibt_die_entscheidung_von_waehle(daten, lauf, capsys):
    for n in range(1, 6):
        daten.item(n)
        daten.kandidaten(n, drei(n))
    daten.item(6)  # ohne Kandidaten
    daten.item(7)
    daten.kandidaten(7, {"trafilatura": ("Nur ein Text mit Fehlervermerk.", "timeout"), "Trafilatura": "x"})
    daten.item(8)
    daten.kandidaten(8, {"readability": None, "newspaper4k": ""})  # nichts verfügbar: Rückfall
    bilanz = lauf()
    assert zahlen(bilanz) == (7, 0, 0, 0, 1)
    assert bilanz.unbekannte_zeilen == {"Trafilatura": 1}
    captured = capsys.readouterr()
    assert bilanzzeile(captured.out).startswith(
        "neu 7, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 1 in "
    )
    # eine Auskunft über die Eingabe, kein Befund für einen Menschen: ins Protokoll (stdout)
    assert "„Trafilatura“ 1" in captured.out and captured.err == ""

    zeilen = {z[0]: z for z in daten.kodierungen()}
    assert set(zeilen) == {1, 2, 3, 4, 5, 7, 8}
    for n in (1, 2, 3, 4, 5):
        kandidaten = {name: {"text": t, "error": None} for name, t in drei(n).items()}
        e = waehle(kandidaten)
        _, version, extraktor, regel, konsens, metriken, gespeichert, summe = zeilen[n]
        assert (version, extraktor, regel, konsens) == (CODER_VERSION, e.extraktor, e.regel, e.konsens)
        assert metriken == json.loads(json.dumps(e.metriken()))
        assert gespeichert == bereinigen(drei(n)[e.extraktor])
        assert len(summe) == 32
    assert zeilen[7][2:4] == ("trafilatura", "einziger")
    assert zeilen[8][2:4] == ("newspaper4k", "rueckfall") and zeilen[8][6] == ""
    # die Sicht für psql zeigt Item, Entscheidung und Text
    sicht = daten.abfrage(
        "select item_id, slot, extraktor, text_zeichen from auswahl_uebersicht where item_id = 1"
    )
    assert sicht == [(1, SLOT, zeilen[1][2], len(zeilen[1][6]))]


# Was PostgreSQL in text annimmt: alles außer NUL und einzelnen Surrogaten.
POSTGRES_TEXT = st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)))


@settings(max_examples=200, deadline=None)
@given(
    texte=st.lists(st.one_of(st.none(), POSTGRES_TEXT, st.sampled_from(["\\N", "\\", "\t\r\n", "a\\tb"]))),
    roh=st.binary(max_size=40),
    zahl=st.integers(-(2**63), 2**63 - 1),
)
def test_copy_zeile_kommt_unverfaelscht_an(texte, roh, zahl, daten):
    """Die COPY-Daten der Worker (Textformat von Hand) liest PostgreSQL genau so zurück."""
    zeilen = [(i, zahl, t, roh) for i, t in enumerate(texte)]
    with daten.conn.transaction(), daten.conn.cursor() as cur:
        cur.execute("create temp table t (i int, z bigint, s text, b bytea) on commit drop")
        with cur.copy("copy t (i, z, s, b) from stdin") as copy:
            copy.write("".join(kodierung.copy_zeile(*z) for z in zeilen).encode("utf-8"))
        cur.execute("select i, z, s, b from t order by i")
        assert cur.fetchall() == zeilen


def test_backfill_und_aenderung_schreiben_sonderzeichen_unverfaelscht(daten, lauf):
    """Backslashes, ein wörtliches \\N, Emoji und Tabs im gewählten Text: über den
    direkten Weg (neu) und über aw_stapel (geändert) gleich bereinigen(text)."""
    heikel = "C:\\Pfad\\N und \\\\x41 – „Zitat“ 🙂\tEnde\\\n" + SATZ

    def kandidaten(zusatz: str) -> dict[str, str]:
        return {name: heikel + zusatz for name in ("newspaper4k", "readability", "trafilatura")}

    daten.item(1)
    daten.kandidaten(1, kandidaten(""))
    assert zahlen(lauf())[:2] == (1, 0)
    assert daten.kodierungen()[0][6] == bereinigen(heikel)
    daten.kandidaten(1, kandidaten("\\Nachtrag\\"))
    assert zahlen(lauf())[:2] == (0, 1)
    assert daten.kodierungen()[0][6] == bereinigen(heikel + "\\Nachtrag\\")


def auftrag(item_id: int, kandidaten: dict[str, str] | None = None) -> tuple:
    """Ein Auftrag, wie ihn ein Worker für ein Item ohne bisherige Zeile bekäme."""
    kandidaten = kandidaten or drei(item_id)
    namen = sorted(kandidaten)
    roh = [kandidaten[n].encode("utf-8") for n in namen]
    return item_id, None, None, bytes(32), namen, roh, [None] * len(namen)


def test_neue_zeile_die_inzwischen_jemand_schrieb_geht_ueber_den_upsert(daten, lauf, db_url):
    """Ein Item ohne Kodierung beim Lesen, das bis zum Schreiben doch eine bekam
    (ein --teil mit anderem N): kein Abbruch, der Stapel geht über den Upsert."""
    daten.item(1)
    daten.item(2)
    daten.kandidaten(1, drei(1))
    assert zahlen(lauf())[:2] == (1, 0)
    vorher = daten.kodierungen(mit_zeit=True)
    daten.kandidaten(2, drei(2))

    # so, wie ein Worker ihn gebaut hätte, der beide Items noch ohne Zeile sah
    ergebnis = kodierung.stapel_kodieren([auftrag(1), auftrag(2)], CODER_VERSION, None)
    assert (ergebnis.neu, ergebnis.geaendert) == (2, 0)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(schreiben.SQL_TEMP)
        with conn.transaction():
            assert schreiben.stapel_schreiben(conn, CODER_VERSION, ergebnis) == schreiben.Geschrieben(neu=1)
    nachher = daten.kodierungen(mit_zeit=True)
    assert nachher[0] == vorher[0]  # gleiche Zeilenversion: nicht neu geschrieben
    assert [z[0] for z in nachher] == [1, 2]
    assert zahlen(lauf())[:2] == (0, 0)


def test_zwei_laeufe_die_dieselben_zeilen_aendern_sperren_sie_in_derselben_folge(daten, lauf, db_url):
    """Zwei Läufe schreiben dieselben Items, der eine hat sie absteigend in seinem Stapel: beide
    enden ohne Deadlock, weil der Upsert nach item_id geordnet sperrt. Eine dritte Verbindung hält
    Item 3, bis beide warten: A hält dann 1 und 2, B wartete ungeordnet schon auf 3 und hielte 4."""
    for n in range(1, 5):
        daten.item(n)
        daten.kandidaten(n, drei(n))
    lauf()
    vorher = daten.kodierungen()
    neu = {n: drei(n + 10) for n in range(1, 5)}
    for n, kandidaten_ in neu.items():
        daten.kandidaten(n, kandidaten_)
    stapel = {
        name: kodierung.stapel_kodieren([auftrag(n, neu[n]) for n in folge], CODER_VERSION, None)
        for name, folge in (("auf", [1, 2, 3, 4]), ("ab", [4, 3, 2, 1]))
    }
    fehler: dict[str, BaseException] = {}

    def schreiben_als(name: str, pids: list[int]) -> None:
        try:
            with psycopg.connect(db_url, autocommit=True) as conn:
                pids.append(conn.info.backend_pid)
                conn.execute(schreiben.SQL_TEMP)
                with conn.transaction():
                    schreiben.stapel_schreiben(conn, CODER_VERSION, stapel[name])
        except BaseException as e:
            fehler[name] = e

    def wartet(beobachter: psycopg.Connection, pids: list[int]) -> bool:
        sql_ = "select wait_event_type = 'Lock' from pg_stat_activity where pid = %s"
        return bool(pids) and beobachter.execute(sql_, (pids[0],)).fetchone()[0]

    with psycopg.connect(db_url, autocommit=True) as halter, psycopg.connect(db_url, autocommit=True) as beob:
        with halter.transaction():
            halter.execute("select 1 from selected_extractor where item_id = 3 for update")
            faeden = []
            for name in ("auf", "ab"):
                pids: list[int] = []
                faden = threading.Thread(target=schreiben_als, args=(name, pids))
                faden.start()
                faeden.append(faden)
                frist = time.monotonic() + 60
                while not wartet(beob, pids):
                    assert time.monotonic() < frist, f"{name} wartet nicht auf eine Sperre"
                    time.sleep(0.05)
        for faden in faeden:
            faden.join(timeout=60)
    assert fehler == {}, fehler
    nachher = daten.kodierungen()
    assert [z[0] for z in nachher] == [1, 2, 3, 4]
    assert all(a[6] != b[6] for a, b in zip(vorher, nachher, strict=True))
    # genau, was ein Lauf über die neuen Kandidaten schriebe
    assert zahlen(lauf())[:2] == (0, 0)


def test_kennzahlen_rechnet_nur_ein_stapel_der_schrieb_oder_dem_sie_fehlen(daten, lauf):
    """Die Quellenwache: ein erneuter Backfill ohne Änderung lässt auswahl_kennzahlen unberührt;
    fehlen sie (der erste Backfill nach dem Update), füllt er sie; ändert sich ein Item, rechnet
    sein Paar neu."""
    for n in range(1, 7):
        daten.item(n, SLOT + timedelta(hours=n % 2), haus="taz" if n <= 4 else "faz")
        daten.kandidaten(n, drei(n))
    lauf()

    def kennzahlen() -> list[tuple]:
        return daten.abfrage("select haus, slot, items, xmin::text from auswahl_kennzahlen order by 1, 2")

    vorher = kennzahlen()
    assert [(h, i) for h, _, i, _ in vorher] == [("faz", 1), ("faz", 1), ("taz", 2), ("taz", 2)]
    assert zahlen(lauf())[:2] == (0, 0)
    assert kennzahlen() == vorher  # nicht neu geschrieben
    daten.ausfuehren("delete from auswahl_kennzahlen where haus = 'taz'")
    lauf()
    assert [z[:3] for z in kennzahlen()] == [z[:3] for z in vorher]
    daten.kandidaten(5, drei(50))
    assert zahlen(lauf())[:2] == (0, 1)
    nachher = kennzahlen()
    assert nachher[0][3] != vorher[0][3] or nachher[1][3] != vorher[1][3]  # das Paar von Item 5


def test_zeichen_setzt_der_server_beim_schreiben_und_die_kennzahlen_zaehlen_sie(daten, lauf):
    """aw-014: ein Trigger setzt zeichen = char_length(text) bei jedem Einfügen und bei jeder Änderung
    des Texts – auch durch eine ältere Fassung, die zeichen nicht kennt; ohne Text NULL. Die Kennzahlen
    der Quellenwache (kurz, zeichen) zählen zeichen, in Zeilen von vor aw-014 (NULL) den Text selbst:
    dasselbe Ergebnis."""
    gruesse = " ".join(f"Grüße{i}" for i in range(110))  # unter 1.000 Zeichen, über 1.000 Bytes
    for n in range(1, 7):
        daten.item(n, SLOT + timedelta(hours=n % 2), haus="taz" if n <= 4 else "faz")
        kandidaten = dict.fromkeys(drei(n), gruesse) if n == 1 else drei(n)
        lang = "" if n == 1 else " " + SATZ * 8  # die übrigen über 1.000 Zeichen
        daten.kandidaten(n, {name: f"Grüße aus 東京 😀 {t}{lang}" for name, t in kandidaten.items()})
    daten.item(7, SLOT, haus="taz")
    daten.kandidaten(7, {"trafilatura": "", "readability": None})  # Rückfall ohne Text
    lauf()
    zeilen = daten.abfrage(
        "select zeichen, char_length(text), octet_length(text) from selected_extractor order by item_id"
    )
    assert zeilen[-1] == (None, None, None)
    assert all(z == c for z, c, _ in zeilen) and zeilen[0][1] < 1000 < zeilen[0][2], zeilen

    alle = "select * from auswahl_kennzahlen order by haus, slot"
    gemerkt = daten.abfrage(alle)
    assert sum(z[-2] for z in gemerkt) == 1 + 1  # kurz: Item 1 (nach Zeichen) und Item 7 (ohne Text)
    assert sum(z[-1] for z in gemerkt) == sum(z for z, _, _ in zeilen[:-1])

    def neu_gerechnet() -> list[tuple]:
        daten.ausfuehren("truncate auswahl_kennzahlen")
        lauf()  # füllt die fehlenden Kennzahlen
        return daten.abfrage(alle)

    daten.ausfuehren("update selected_extractor set zeichen = zeichen + 5000 where item_id = 1")
    anders = neu_gerechnet()  # zählt, was in zeichen steht
    assert sum(z[-1] for z in anders) == sum(z[-1] for z in gemerkt) + 5000
    assert sum(z[-2] for z in anders) == 1
    daten.ausfuehren("update selected_extractor set zeichen = null")
    assert neu_gerechnet() == gemerkt  # Zeilen von vor aw-014: aus dem Text

    # eine ältere Fassung ändert den Text, ohne zeichen zu kennen; ein Lauf ändert ein Ergebnis (Upsert)
    daten.ausfuehren("update selected_extractor set text = text || ' und mehr' where item_id = 2")
    daten.kandidaten(3, {name: t + " Nachtrag zum Schluss." for name, t in drei(3).items()})
    assert zahlen(lauf())[:2] == (0, 1)
    zeilen = daten.abfrage(
        "select item_id, zeichen, char_length(text) from selected_extractor where item_id in (2, 3)"
    )
    assert [(i, z) for i, z, _ in zeilen] == [(i, c) for i, _, c in zeilen] and all(zeilen), zeilen


def test_rueckfall_ohne_newspaper4k_hat_text_null(daten, lauf):
    daten.item(1)
    daten.kandidaten(1, {"trafilatura": "", "readability": None})
    lauf()
    assert daten.kodierungen()[0][2:4] == ("newspaper4k", "rueckfall")
    assert daten.kodierungen()[0][6] is None


def test_nach_backfill_aendern_slot_und_backfill_nichts(daten, lauf):
    for n in range(1, 9):
        daten.item(n, SLOT + timedelta(hours=n % 3))
        daten.kandidaten(n, drei(n))
    assert lauf().neu == 8
    vorher = daten.kodierungen(mit_zeit=True)
    for _ in range(2):
        for stunde in range(3):
            slot = (SLOT + timedelta(hours=stunde)).isoformat()
            bilanz = lauf(slot)
            assert (bilanz.neu, bilanz.geaendert, bilanz.entfernt) == (0, 0, 0)
            assert bilanz.unveraendert > 0
        assert zahlen(lauf()) == (0, 0, 8, 0, 0)
        assert zahlen(lauf(teil="1/2"))[:2] == (0, 0)
    # keine neue Zeilenversion (xmin), kodiert_am steht
    assert daten.kodierungen(mit_zeit=True) == vorher


def test_aenderung_schreibt_nur_die_geaenderte_zeile(daten, lauf):
    for n in range(1, 5):
        daten.item(n)
        daten.kandidaten(n, drei(n))
    lauf()
    vorher = {z[0]: z for z in daten.kodierungen(mit_zeit=True)}
    daten.kandidat(2, "readability", text(2) + "Ein neuer Absatz, den nur readability fand.")
    daten.kandidat_loeschen(3)  # keine Kandidaten mehr: Zeile fällt weg
    assert zahlen(lauf()) == (0, 1, 2, 1, 1)
    nachher = {z[0]: z for z in daten.kodierungen(mit_zeit=True)}
    assert set(nachher) == {1, 2, 4}
    assert nachher[1] == vorher[1] and nachher[4] == vorher[4]
    assert nachher[2][-1] != vorher[2][-1]  # neue Zeilenversion
    assert nachher[2][-2] > vorher[2][-2]  # neues kodiert_am


def test_slot_entfernt_kodierung_ohne_kandidaten_nur_im_slot(daten, lauf):
    daten.item(1)
    daten.item(2, SLOT + timedelta(hours=1))
    daten.kandidaten(1, drei(1))
    daten.kandidaten(2, drei(2))
    lauf()
    daten.kandidat_loeschen(1)
    daten.kandidat_loeschen(2)
    assert zahlen(lauf(SLOT.isoformat())) == (0, 0, 0, 1, 1)
    assert [z[0] for z in daten.kodierungen()] == [2]


def test_unbekannter_extraktor_aendert_nichts(daten, lauf):
    daten.item(1)
    daten.kandidaten(1, {**drei(1), "goose3": "irgendwas"})
    lauf()
    vorher = daten.kodierungen(mit_zeit=True)
    daten.kandidat(1, "goose3", "ganz etwas anderes")
    assert zahlen(lauf())[:3] == (0, 0, 1)
    assert daten.kodierungen(mit_zeit=True) == vorher


def test_stichprobe_beim_erneuten_lauf_sieht_jede_entscheidung(daten, lauf, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for n in range(1, 6):
        daten.item(n)
        daten.kandidaten(n, drei(n))
    lauf()
    vorher = daten.kodierungen(mit_zeit=True)
    assert zahlen(lauf(stichprobe=4))[:3] == (0, 0, 5)
    with next(tmp_path.glob("stichprobe-*.csv")).open(encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == 4
    assert daten.kodierungen(mit_zeit=True) == vorher


def test_andere_coder_version_bleibt_unberuehrt(daten, lauf):
    daten.item(1)
    daten.kandidaten(1, drei(1))
    daten.ausfuehren(
        "insert into selected_extractor (item_id, coder_version, extraktor, regel, konsens, metriken, pruefsumme, "
        "ergebnissumme) "
        "values (1, 'alt-0', 'trafilatura', 'einziger', 0, '{}', sha256('x'), sha256('y'))"
    )
    lauf()
    daten.kandidat_loeschen(1)
    lauf()
    assert [z[:3] for z in daten.kodierungen()] == [(1, "alt-0", "trafilatura")]


# --- Slot ----------------------------------------------------------------------------------


def test_slot_berliner_zeit_und_offset(daten, lauf, capsys):
    daten.item(1)  # 06:00 UTC = 08:00 in Berlin
    daten.item(2, SLOT + timedelta(hours=1))
    daten.kandidaten(1, drei(1))
    daten.kandidaten(2, drei(2))
    assert lauf("2026-09-07T08:00").neu == 1
    assert [z[0] for z in daten.kodierungen()] == [1]
    assert lauf("2026-09-07T07:00:00Z").neu == 1
    assert lauf("2026-09-07T08:00+02:00").unveraendert == 1
    capsys.readouterr()
    # 06:00 Berliner Zeit ist 04:00 UTC: kein Item – klare Meldung, Exit 0, nur Nullen
    assert zahlen(lauf("2026-09-07T06:00")) == (0, 0, 0, 0, 0)
    # kein Befund für einen Menschen: ins Protokoll (stdout), nach der Bilanz; stderr bleibt leer
    ausgabe = capsys.readouterr()
    assert (
        bilanzzeile(ausgabe.out).startswith("neu 0, ")
        and "hat keine Items" in ausgabe.out
        and not ausgabe.err
    )


def test_slot_zaehlt_items_ohne_kandidaten(daten, lauf):
    daten.item(1)
    daten.item(2)
    daten.kandidaten(1, drei(1))
    assert zahlen(lauf("2026-09-07T08:00")) == (1, 0, 0, 0, 1)


@pytest.mark.parametrize("falsch", ["morgen", "2026-13-07T08:00", "2026-09-07 8 Uhr", ""])
def test_slot_der_nicht_parst(falsch, lauf):
    with pytest.raises(EingabeFehler, match="kein Zeitpunkt"):
        lauf(falsch)


@pytest.mark.parametrize("tag", ["2026-09-07", "20260907", "2026-W36-1"])
def test_slot_ohne_uhrzeit_ist_ein_eingabefehler(tag, cli):
    """Ein Slot ist ein Zeitpunkt: --slot 2026-09-07 ist nicht still Mitternacht (Exit 0, „hat keine
    Items“), sondern Exit 1 mit den Schreibweisen, die gelten."""
    e = cli("--slot", tag)
    assert e.code == 1 and e.out == "", str(e)
    assert e.err == (
        f"Fehler: --slot „{tag}“ nennt keine Uhrzeit – ein Slot ist ein Zeitpunkt; erwartet z. B. "
        "2026-09-07T08:00 (Europe/Berlin) oder 2026-09-07T08:00+02:00.\n"
    ), e.err


def test_slot_in_der_fruehjahrsluecke_gibt_es_nicht(cli):
    """2026-03-29: in Berlin springt die Uhr von 02:00 auf 03:00; 02:30 gibt es nicht."""
    with pytest.raises(EingabeFehler, match="gibt es in Europe/Berlin nicht") as fehler:
        bereich.slot_parsen("2026-03-29T02:30")
    assert "2026-03-29T01:30+01:00" in str(fehler.value)  # ein Beispiel mit Offset
    ergebnis = cli("--slot", "2026-03-29T02:30")
    assert ergebnis.code == 1 and "gibt es in Europe/Berlin nicht" in ergebnis.err, str(ergebnis)
    # mit Offset ist es ein Zeitpunkt wie jeder andere
    assert bereich.slot_parsen("2026-03-29T02:30+01:00").isoformat() == "2026-03-29T02:30:00+01:00"


def test_slot_in_der_doppelten_herbststunde_verlangt_den_offset():
    """2026-10-25: 02:30 gibt es zweimal (+02:00, dann +01:00) – keine stille Wahl."""
    with pytest.raises(EingabeFehler, match="zweimal") as fehler:
        bereich.slot_parsen("2026-10-25T02:30")
    assert "2026-10-25T02:30+02:00" in str(fehler.value) and "2026-10-25T02:30+01:00" in str(fehler.value)
    sommer = bereich.slot_parsen("2026-10-25T02:30+02:00")
    winter = bereich.slot_parsen("2026-10-25T02:30+01:00")
    assert (winter - sommer).total_seconds() == 3600
    # eine Stunde daneben ist eindeutig
    assert bereich.slot_parsen("2026-10-25T03:30").utcoffset().total_seconds() == 3600
    assert bereich.slot_parsen("2026-03-29T03:30").utcoffset().total_seconds() == 7200


@pytest.mark.parametrize("falsch", ["3", "0/2", "3/2", "a/b", "1/0", "1/2/3"])
def test_teil_der_nicht_parst(falsch, lauf):
    with pytest.raises(EingabeFehler, match="--teil"):
        lauf(teil=falsch)


# --- --trocken und --stichprobe -------------------------------------------------------------


def test_trocken_schreibt_nichts_und_sagt_was_es_taete(daten, lauf, capsys):
    for n in range(1, 7):
        daten.item(n)
        daten.kandidaten(n, drei(n))
    lauf()
    daten.item(7)
    daten.kandidaten(7, drei(7))
    daten.kandidat(1, "readability", "Ganz anderer Text, der alles ändert, weil er lang genug ist.")
    daten.kandidat_loeschen(2)
    vorher = daten.kodierungen(mit_zeit=True)
    capsys.readouterr()
    trocken = lauf(trocken=True)
    assert daten.kodierungen(mit_zeit=True) == vorher
    assert "trocken, nichts geschrieben – würde: neu 1, geändert 1, unverändert 4, entfernt 1" in (
        capsys.readouterr().out
    )
    assert zahlen(lauf()) == zahlen(trocken)


def test_trocken_braucht_keine_schreibrechte(pg, db_name, daten, monkeypatch):
    rolle = "aw_nur_lesen"
    with pg.verwalten() as conn:
        if not conn.execute("select 1 from pg_roles where rolname = %s", (rolle,)).fetchone():
            conn.execute(f"create role {rolle} login")
    daten.item(1)
    daten.kandidaten(1, drei(1))
    daten.ausfuehren(
        f"grant select on raw_items, extraktionen, selected_extractor, schema_migrationen to {rolle}"
    )
    monkeypatch.setenv("DATABASE_URL", pg.url(db_name, user=rolle))
    assert stufe.lauf(stufe.Einstellungen(CODER_VERSION, trocken=True)).neu == 1
    with pytest.raises(
        VoraussetzungFehlt,
        match="darf keine Entscheidungen schreiben \\(kein INSERT auf selected_extractor\\)",
    ):
        stufe.lauf(stufe.Einstellungen(CODER_VERSION))


@pytest.mark.parametrize("trocken", [False, True])
def test_stichprobe(trocken, daten, lauf, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for n in range(1, 9):
        daten.item(n)
        daten.kandidaten(n, drei(n))
    daten.item(9)
    daten.kandidaten(9, {"trafilatura": "", "readability": None})  # Rückfall: zweifelhaftester
    lauf(trocken=trocken, stichprobe=3)
    ausgabe = capsys.readouterr().out
    pfade = list(tmp_path.glob("stichprobe-*.csv"))
    assert len(pfade) == 1 and f"Stichprobe: {pfade[0]}" in ausgabe
    with pfade[0].open(encoding="utf-8") as f:
        zeilen = list(csv.DictReader(f))
    assert len(zeilen) == 3
    assert zeilen[0]["schluessel"] == "9" and zeilen[0]["regel"] == "rueckfall"
    assert bool(daten.kodierungen()) is not trocken


# --- Sperre ------------------------------------------------------------------------------


def sperre_halten(url: str, name: str) -> psycopg.Connection:
    conn = psycopg.connect(url, autocommit=True)
    assert conn.execute(sperre.SQL_SPERRE, (name,)).fetchone()[0]
    return conn


def test_ein_zweiter_lauf_desselben_slots_stoppt_sofort(db_url, daten, cli):
    daten.item(1)
    daten.kandidaten(1, drei(1))
    halter = sperre_halten(db_url, sperre.slot(CODER_VERSION, SLOT))
    try:
        ergebnis = cli("--slot", "2026-09-07T08:00")
        assert ergebnis.code == 5, str(ergebnis)
        # Die Sperre hält eine Sitzung ohne Lauf im Protokoll (hier: der Test): die Meldung
        # nennt ihre PID und sagt, dass kein Lauf dazu gehört.
        assert "bearbeitet gerade ein anderer Lauf" in ergebnis.err, str(ergebnis)
        assert f"Datenbanksitzung mit PID {halter.info.backend_pid}" in ergebnis.err, str(ergebnis)
        assert "kein offener Lauf" in ergebnis.err
        assert "Traceback" not in ergebnis.err
        assert daten.kodierungen() == []
        # --trocken schreibt nicht und braucht keine Sperre; ein Backfill nimmt Blöcke, keinen Slot
        assert cli("--slot", "2026-09-07T08:00", "--trocken").code == 0
        assert cli("--backfill").code == 0
        assert len(daten.kodierungen()) == 1
    finally:
        halter.close()


def test_einen_block_den_ein_anderer_hat_ueberspringt_der_backfill(db_url, daten, lauf):
    """Drei Items in zwei Blöcken (``stufe.STAPEL`` ids breit, gleich wie viele Prozesse). Hält
    ein anderer den ersten Block, schreibt der Backfill nur den zweiten; danach den Rest."""
    for n in (1, 2, stufe.STAPEL + 1):
        daten.item(n)
        daten.kandidaten(n, drei(n))
    halter = sperre_halten(db_url, sperre.block(CODER_VERSION, stufe.STAPEL, 0))
    try:
        assert zahlen(lauf()) == (1, 0, 0, 0, 0)
        assert [k[0] for k in daten.kodierungen()] == [stufe.STAPEL + 1]
    finally:
        halter.close()
    assert zahlen(lauf()) == (2, 0, 1, 0, 0)


# --- --teil ---------------------------------------------------------------------------------


def test_teile_zusammen_ergeben_genau_den_backfill(daten, lauf):
    for n in [*range(1, 25), -7, 10**12]:
        daten.item(n, SLOT + timedelta(hours=n % 2))
        if n % 5:
            daten.kandidaten(n, drei(abs(n) % 97))
    lauf()
    ganz = daten.kodierungen()
    daten.ausfuehren("delete from selected_extractor")
    gesehen = 0
    for k in range(1, 4):
        bilanz = lauf(teil=f"{k}/3")
        gesehen += bilanz.neu + bilanz.ohne_kandidaten
        # jeder Teil schreibt nur seine Items: nach Teil k stehen genau die Reste 0 … k-1
        assert {z[0] % 3 for z in daten.kodierungen()} == set(range(k))
    assert daten.kodierungen() == ganz
    assert gesehen == 26


# --- Invariante: jede Folge von Läufen endet wie ein Backfill in eine leere Tabelle ---------

OPERATIONEN = st.lists(
    st.tuples(
        st.sampled_from(["setzen", "loeschen", "alles_loeschen", "backfill", "slot", "teil", "trocken"]),
        st.integers(1, 6),  # item
        st.sampled_from(["newspaper4k", "readability", "trafilatura", "Trafilatura"]),
        st.integers(0, 5),  # Textvariante
    ),
    max_size=14,
)


@settings(max_examples=50, deadline=None)
@given(folge=OPERATIONEN)
def test_jede_folge_endet_wie_ein_backfill_ins_leere(folge, daten, lauf):
    daten.ausfuehren("delete from raw_items")  # cascade: auch Kandidaten und Kodierungen
    for n in range(1, 7):
        daten.item(n, SLOT + timedelta(hours=n % 2))
    varianten = ["", "kurz", text(1), text(2), text(1, WERBUNG), text(3)[:40]]
    for op, item, extraktor, variante in folge:
        if op == "setzen":
            daten.kandidat(item, extraktor, varianten[variante], "Fehler" if variante == 5 else None)
        elif op == "loeschen":
            daten.kandidat_loeschen(item, extraktor)
        elif op == "alles_loeschen":
            daten.kandidat_loeschen(item)
        elif op == "backfill":
            lauf()
        elif op == "slot":
            lauf((SLOT + timedelta(hours=item % 2)).isoformat())
        elif op == "teil":
            lauf(teil=f"{item % 2 + 1}/2")
        else:
            lauf(trocken=True)
    lauf()
    nach_folge = daten.kodierungen()
    # Invariante 1: ein weiterer Backfill ändert nichts
    assert zahlen(lauf())[:2] + zahlen(lauf())[3:4] == (0, 0, 0)
    # Invariante 2: gleich dem Backfill in eine leere Tabelle
    daten.ausfuehren("delete from selected_extractor")
    lauf()
    assert daten.kodierungen() == nach_folge


def test_seeded_zufallsfolge_mit_vielen_items(daten, lauf):
    """Dieselbe Invariante mit mehr Items und Stapelgrenzen (STAPEL klein gestellt)."""
    zufall = random.Random(20260907)
    alt = stufe.STAPEL
    stufe.STAPEL = 7
    try:
        for n in range(1, 60):
            daten.item(n, SLOT + timedelta(hours=n % 4))
        for _ in range(120):
            n = zufall.randrange(1, 60)
            wurf = zufall.random()
            if wurf < 0.6:
                name = zufall.choice(["newspaper4k", "readability", "trafilatura"])
                daten.kandidat(n, name, text(zufall.randrange(50), zufall.choice(["", WERBUNG])))
            elif wurf < 0.75:
                daten.kandidat_loeschen(n)
            elif wurf < 0.85:
                lauf((SLOT + timedelta(hours=zufall.randrange(4))).isoformat())
            elif wurf < 0.95:
                lauf(teil=f"{zufall.randrange(1, 4)}/3")
            else:
                lauf()
        lauf()
        nach_folge = daten.kodierungen()
        daten.ausfuehren("delete from selected_extractor")
        lauf()
        assert daten.kodierungen() == nach_folge
    finally:
        stufe.STAPEL = alt


# --- Worker-Prozesse und Kommandozeile -------------------------------------------------------


def test_mehrere_prozesse_wie_einer_ueber_die_kommandozeile(db_url, daten, cli):
    alt = stufe.STAPEL
    for n in range(1, 450):
        daten.item(n)
        daten.kandidaten(n, drei(n))
    eins = cli("--backfill", "--prozesse", "1")
    assert eins.code == 0, str(eins)
    assert bilanzzeile(eins.out).startswith(
        "neu 449, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0 in "
    )
    erwartet = daten.kodierungen()
    daten.ausfuehren("delete from selected_extractor")
    zwei = cli("--backfill", "--prozesse", "2")
    assert zwei.code == 0, str(zwei)
    assert daten.kodierungen() == erwartet
    assert alt == stufe.STAPEL
    wieder = cli("--backfill")
    assert bilanzzeile(wieder.out).startswith(
        "neu 0, geändert 0, unverändert 449, entfernt 0, ohne Kandidaten 0 in "
    )


def test_kommandozeile_schlechte_eingaben(db_url, cli, pg, passwort_rolle, db_name, tmp_path):
    ergebnis = cli("--backfill", url=None)
    assert ergebnis.code == 4 and "DATABASE_URL ist nicht gesetzt" in ergebnis.err

    rolle, passwort = passwort_rolle
    falsch = f"postgresql://{rolle}:X{passwort}@/{db_name}?host={pg.socket_oder_host}"
    ergebnis = cli("--backfill", url=falsch)
    assert ergebnis.code == 3 and "Rolle oder Passwort falsch" in ergebnis.err
    assert passwort not in ergebnis.err + ergebnis.out

    ergebnis = cli("--slot", "2026-09-07T08:00", url="postgresql://rolle:Geheim-31@127.0.0.1:1/wurzelwerk")
    assert ergebnis.code == 3 and "nicht erreichbar" in ergebnis.err
    assert "Geheim-31" not in ergebnis.err and "postgresql://rolle:***@127.0.0.1:1/wurzelwerk" in ergebnis.err

    ergebnis = cli("--slot", "nächsten Montag")
    assert ergebnis.code == 1 and "kein Zeitpunkt" in ergebnis.err

    ergebnis = cli("--slot", "2099-01-01T08:00")  # weit in der Zukunft: nichts zu tun, Erfolg
    assert ergebnis.code == 0 and "hat keine Items" in ergebnis.out and not ergebnis.err
    assert bilanzzeile(ergebnis.out).startswith(
        "neu 0, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0"
    )
    for e in (ergebnis,):
        assert "Traceback" not in e.err


def test_raw_items_oder_migrationen_fehlen(leere_db_url, tmp_path):
    ergebnis = auswahl_starten("--backfill", url=leere_db_url, cwd=tmp_path)
    assert ergebnis.code == 4 and "raw_items fehlt" in ergebnis.err, str(ergebnis)
    assert "Prüfen im Klon mit: .venv/bin/python check_db.py – " in ergebnis.err, str(ergebnis)
    raw_items_anlegen(leere_db_url)
    ergebnis = auswahl_starten("--backfill", url=leere_db_url, cwd=tmp_path)
    assert ergebnis.code == 4 and "Migration(en) fehlen: aw-001-extraktionen" in ergebnis.err, str(ergebnis)
    # Der Befehl, der im Klon läuft (kein nacktes python), und wer ihn ausführt: der Admin.
    assert (
        ". Anzuwenden als Admin der Stufe (Eigentümer der Tabellen der Stufe), im Klon: .venv/bin/python "
        "check_db.py --migrieren (docs/betrieb.md, Einrichtung, Schritt 3; danach Schritt 4 für die Rechte "
        "der Betriebsrolle).\n"
    ) in ergebnis.err, str(ergebnis)
    ergebnis = auswahl_starten("--einlesen", str(BEISPIEL), url=leere_db_url, cwd=tmp_path)
    assert ergebnis.code == 4, str(ergebnis)


def test_geaenderte_eingabe_ohne_folgen_schreibt_nichts_und_wird_nicht_wieder_gerechnet(daten, lauf):
    """Ändert sich nur, was die Entscheidung nicht sieht – hier der Fehlertext eines
    beeinträchtigten Kandidaten neben nutzbaren –, bleibt die Zeile inhaltlich unberührt:
    gleiche Ergebnissumme, kodiert_am bleibt; nur die Eingabe-Summe wird nachgetragen (eine
    neue Zeilenversion), damit der nächste Lauf das Item gar nicht erst rechnet."""
    daten.item(1)
    daten.kandidaten(1, {**drei(1), "trafilatura": (text(1), "timeout nach 30 s")})
    lauf()
    vorher = daten.kodierungen(mit_zeit=True)
    summe_vorher = daten.abfrage("select pruefsumme from selected_extractor")
    daten.kandidat(1, "trafilatura", text(1), "timeout nach 31 s")

    trocken = lauf(trocken=True)
    assert zahlen(trocken) == (0, 0, 1, 0, 0) and trocken.nachgetragen == 1
    assert daten.abfrage("select pruefsumme from selected_extractor") == summe_vorher
    erster = lauf()
    assert zahlen(erster) == (0, 0, 1, 0, 0) and (erster.gerechnet, erster.nachgetragen) == (1, 1)
    nachher = daten.kodierungen(mit_zeit=True)
    assert [z[:-1] for z in nachher] == [z[:-1] for z in vorher]  # Inhalt und kodiert_am
    assert daten.abfrage("select pruefsumme from selected_extractor") != summe_vorher

    # Der nächste Lauf rechnet das Item nicht mehr und schreibt nichts.
    zweiter = lauf()
    assert zahlen(zweiter) == (0, 0, 1, 0, 0) and (zweiter.gerechnet, zweiter.nachgetragen) == (0, 0)
    assert daten.kodierungen(mit_zeit=True) == nachher

    # Ändert sich das Ergebnis, wird geschrieben: derselbe Kandidat ohne Fehler ist nutzbar.
    daten.kandidat(1, "trafilatura", text(1), None)
    assert zahlen(lauf()) == (0, 1, 0, 0, 0)
    assert daten.kodierungen() != [z[:8] for z in vorher]
