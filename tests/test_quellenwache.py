"""Die Quellenwache (docs/quellenwache.md): ein Haus, das seine Seiten umbaut, fällt binnen 24 h auf
und wird einmal gemeldet; gewöhnliche Häuser – halbes Wochenende, 3 Items am Tag – nie.

Der Bestand ist echt aus bench/aeb (candidates.json): 20 Häuser über 35 Tage, ein Slot alle zwei
Stunden. Drei Häuser bauen um: nur noch der Teaser (Paywall), readability leer, trafilatura mit
einem Kommentarblock. Die ersten 31 Tage entscheidet ein Backfill, die letzten vier je ein Tick
(``--nachholen``); danach spielt der Test die Kennzahlen Slot für Slot ab und liest die Sicht.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.lauf import nachholen, stufe
from tests.hilfen.daten import Daten
from version import CODER_VERSION

pytestmark = pytest.mark.datenbank

AEB = Path(__file__).resolve().parents[1] / "bench" / "aeb" / "candidates.json"
BEGINN = datetime(2026, 10, 5, tzinfo=UTC)  # ein Montag
TAGE = 35
SLOTS = [timedelta(hours=2 * i) for i in range(12)]
WERKTAG = [2, 1, 1] * 4  # 16 Items am Tag
WOCHENENDE = [1, 1, 0] * 4  # die Hälfte
KLEIN = {4: 1, 7: 1, 10: 1}  # 3 Items am Tag
BACKFILL_BIS = BEGINN + timedelta(days=31)
KOMMENTARE = "\n".join(
    f"Kommentar {i}: Das sehe ich ganz anders, liebe Redaktion, und zwar aus mehreren Gründen, "
    "die ich hier nicht alle nennen kann."
    for i in range(12)
)


def nur_teaser(kandidaten: dict) -> dict:
    return {name: ((text or "")[:280], fehler) for name, (text, fehler) in kandidaten.items()}


def readability_leer(kandidaten: dict) -> dict:
    return {**kandidaten, "readability": ("", None)}


def mit_kommentaren(kandidaten: dict) -> dict:
    text, fehler = kandidaten["trafilatura"]
    return {**kandidaten, "trafilatura": ((text or "") + "\n" + KOMMENTARE, fehler)}


# Haus → (erster Slot der Änderung, was sich ändert, welches Merkmal es zeigt)
UMBAU = {
    "paywall": (BEGINN + timedelta(days=31, hours=10), nur_teaser, "kurz"),
    "leer": (BEGINN + timedelta(days=32, hours=14), readability_leer, "unbrauchbar readability"),
    "kommentar": (BEGINN + timedelta(days=33, hours=6), mit_kommentaren, "abweichend trafilatura"),
}
GEWOEHNLICH = [f"haus{n:02}" for n in range(1, 15)]
KLEINE = ["klein1", "klein2", "klein3"]


def bestand() -> list[tuple[int, datetime, str, dict]]:
    """(id, slot, haus, {extraktor: (text, fehler)}) – derselbe Bestand bei jedem Aufruf."""
    aeb = [
        {n: (e.get("text"), e.get("error")) for n, e in a["extractions"].items()}
        for a in json.loads(AEB.read_text(encoding="utf-8"))
    ]
    zufall = random.Random(30)
    items, nummer = [], 0
    for tag in range(TAGE):
        wochenende = (BEGINN + timedelta(days=tag)).weekday() >= 5
        for i, versatz in enumerate(SLOTS):
            slot = BEGINN + timedelta(days=tag) + versatz
            for haus in [*GEWOEHNLICH, *UMBAU, *KLEINE]:
                anzahl = KLEIN.get(i, 0) if haus in KLEINE else (WOCHENENDE if wochenende else WERKTAG)[i]
                for _ in range(anzahl):
                    nummer += 1
                    kandidaten = zufall.choice(aeb)
                    if haus in UMBAU and slot >= UMBAU[haus][0]:
                        kandidaten = UMBAU[haus][1](kandidaten)
                    items.append((nummer, slot, haus, kandidaten))
    return items


def eintragen(daten: Daten, items: list) -> None:
    with daten.conn.cursor() as cur:
        with cur.copy("copy raw_items (id, slot, haus) from stdin") as copy:
            for nummer, slot, haus, _ in items:
                copy.write_row((nummer, slot, haus))
        with cur.copy("copy extraktionen (item_id, extraktor, text, fehler) from stdin") as copy:
            for nummer, _, _, kandidaten in items:
                for name, (text, fehler) in kandidaten.items():
                    copy.write_row((nummer, name, text, fehler))


def befunde(daten: Daten) -> list[tuple]:
    return daten.abfrage("select haus, merkmal, seit, vorher, jetzt, items, satz from auswahl_quellenwache")


def test_ein_umbau_faellt_binnen_24_stunden_auf_ein_gewoehnliches_haus_nie(daten, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", daten.url)
    items = bestand()
    eintragen(daten, [i for i in items if i[1] < BACKFILL_BIS])
    stufe.lauf(stufe.Einstellungen(CODER_VERSION))
    capsys.readouterr()
    gemeldet = []
    for tag in range(31, TAGE):
        ab, bis = BEGINN + timedelta(days=tag), BEGINN + timedelta(days=tag + 1)
        eintragen(daten, [i for i in items if ab <= i[1] < bis])
        stufe.lauf(stufe.Einstellungen(CODER_VERSION), nachholen_hoechstens=nachholen.HOECHSTENS)
        gemeldet += [z for z in capsys.readouterr().err.splitlines() if z.startswith("Quellenwache: ")]

    # Der Tick nennt jeden Befund einmal, mit dem Satz der Sicht.
    assert Counter(z.split(":")[1].strip() for z in gemeldet) == dict.fromkeys(UMBAU, 1), gemeldet
    satz = re.compile(r"Quellenwache: \w+: .*seit \d+\.\d+\. \d\d:\d\d .*\d+ % der Items.*\(vorher \d+ %\)")
    assert all(satz.fullmatch(z) for z in gemeldet), gemeldet

    # Die Geschichte Slot für Slot: die Sicht nach jedem Slot, wie sie dann war.
    daten.ausfuehren("create temp table alle as select * from auswahl_kennzahlen")
    daten.ausfuehren("truncate auswahl_kennzahlen")
    erstmals: dict[str, tuple] = {}
    fehlalarme = Counter()
    for slot in sorted({i[1] for i in items}):
        daten.ausfuehren("insert into auswahl_kennzahlen select * from alle where slot = %s", (slot,))
        for haus, merkmal, seit, *_ in befunde(daten):
            if haus in UMBAU and slot >= UMBAU[haus][0]:
                erstmals.setdefault(haus, (slot, merkmal, seit))
            else:
                fehlalarme[haus] += 1
    assert not fehlalarme, fehlalarme
    for haus, (beginn, _, merkmal) in UMBAU.items():
        slot, gefunden, seit = erstmals[haus]
        assert slot - beginn < timedelta(hours=24), (haus, slot)
        assert gefunden == merkmal and seit >= beginn, (haus, gefunden, seit)


def test_ein_beendeter_befund_steht_einmal_im_protokoll(daten):
    daten.ausfuehren(
        "insert into auswahl_quellenwache_gemeldet (coder_version, haus, merkmal, seit, satz) "
        "values (%s, 'taz', 'kurz', '2026-12-03 13:00+00', 'taz: …')",
        (CODER_VERSION,),
    )
    assert nachholen.quellenwache(daten.conn, CODER_VERSION) == [
        (False, "Quellenwache: taz, kurz – seit 3.12. 14:00 auffällig, jetzt nicht mehr.")
    ]
    assert nachholen.quellenwache(daten.conn, CODER_VERSION) == []


# Ein Haus mit 2 Items alle zwei Stunden über 30 Tage; am letzten Tag liefert readability nichts mehr.
SQL_GESCHICHTE = """
insert into auswahl_kennzahlen
select %(version)s, 'taz', slot, 2, 0, case when slot > %(ende)s - interval '1 day' then 2 else 0 end, 0,
       2, 0, 0, 0, 0, 0, 2, 2, 2, 0, 0, 0, 6000
from generate_series(%(ende)s - interval '30 days', %(ende)s, interval '2 hours') as slot
"""


def test_check_db_nennt_die_offenen_befunde(daten, monkeypatch):
    """Ohne Befund eine Zeile mit 0; mit Befund je einer sein Satz aus der Sicht (sie zeigt die
    coder_version des letzten Laufs: hier ein Backfill über den leeren Bestand)."""
    import check_db

    monkeypatch.setenv("DATABASE_URL", daten.url)
    stufe.lauf(stufe.Einstellungen(CODER_VERSION))
    zeilen: list[str] = []
    check_db.pruefen(daten.url, ausgabe=zeilen.append)
    assert "Offene Befunde der Quellenwache: 0" in zeilen, zeilen
    daten.ausfuehren(SQL_GESCHICHTE, {"version": CODER_VERSION, "ende": BEGINN + timedelta(days=30)})
    ((satz,),) = daten.abfrage("select satz from auswahl_quellenwache")
    assert satz.startswith("taz: readability") and "(vorher 0 %)" in satz, satz
    zeilen.clear()
    check_db.pruefen(daten.url, ausgabe=zeilen.append)
    i = zeilen.index("Offene Befunde der Quellenwache: 1 (Sicht auswahl_quellenwache; docs/quellenwache.md)")
    assert zeilen[i + 1] == f"  {satz}", zeilen


# --- Ein Blick: die Prüfseite eines Hauses seit dem Befund (--haus, --seit) -------------------


def meldung(n: int) -> dict[str, str]:
    satz = f"Meldung {n}: Der Stadtrat hat am Montag den Haushalt beschlossen und die Schule vertagt. " * 3
    return {"newspaper4k": "Jetzt abonnieren! " + satz, "readability": satz, "trafilatura": satz[:150]}


def pruefseite(tmp_path: Path, **bereich) -> tuple[set[str], str]:
    """Ein trockener Backfill mit Stichprobe, auf ein Haus beschränkt: die Schlüssel der CSV, die Seite."""
    stufe.lauf(stufe.Einstellungen(CODER_VERSION, trocken=True, stichprobe=10), **bereich)
    (pfad,) = tmp_path.glob("stichprobe-*.csv")
    schluessel = {zeile.split(",")[1] for zeile in pfad.read_text(encoding="utf-8").splitlines()[1:]}
    seite = pfad.with_suffix(".html").read_text(encoding="utf-8")
    for datei in tmp_path.glob("stichprobe-*"):
        datei.unlink()
    return schluessel, seite


def test_die_pruefseite_eines_hauses_zeigt_nur_seine_items_seit_dem_befund(daten, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", daten.url)
    monkeypatch.chdir(tmp_path)
    stufe.lauf(stufe.Einstellungen(CODER_VERSION))
    daten.ausfuehren(SQL_GESCHICHTE, {"version": CODER_VERSION, "ende": BEGINN + timedelta(days=30)})
    ((seit,),) = daten.abfrage("select seit from auswahl_quellenwache where haus = 'taz'")
    for n, slot, haus in [(1, -2, "taz"), (2, 0, "taz"), (3, 2, "taz"), (4, 0, "faz")]:
        daten.item(n, seit + timedelta(hours=slot), haus=haus)
        daten.kandidaten(n, meldung(n))

    # ohne --seit: seit dem offenen Befund des Hauses; die Kandidaten nebeneinander
    schluessel, seite = pruefseite(tmp_path, haus="taz")
    assert schluessel == {"2", "3"}
    assert "Meldung 2:" in seite and "Meldung 1:" not in seite and "Meldung 4:" not in seite
    assert all(name in seite for name in meldung(2))
    # --seit gilt vor dem Befund; allein schränkt es alle Häuser ein
    assert pruefseite(tmp_path, haus="taz", seit=(seit + timedelta(hours=2)).isoformat())[0] == {"3"}
    assert pruefseite(tmp_path, seit=seit.isoformat())[0] == {"2", "3", "4"}


def test_ein_unbekanntes_haus_ist_ein_eingabefehler(daten, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", daten.url)
    monkeypatch.chdir(tmp_path)
    daten.item(1, BEGINN, haus="taz")
    daten.kandidaten(1, meldung(1))
    with pytest.raises(EingabeFehler, match="Keine Items für Haus „tazz“ in raw_items"):
        stufe.lauf(stufe.Einstellungen(CODER_VERSION, trocken=True, stichprobe=5), haus="tazz")
    assert not list(tmp_path.glob("stichprobe-*"))
