"""Fortschritt auf stderr: am Terminal click's Balken, sonst eine schlichte Zeile je Abstand –
für jede Betriebsart, die lange laufen kann (Kodieren, --einlesen, Stapelbetrieb)."""

from __future__ import annotations

import io
import json
import re
from datetime import datetime, time, timedelta

import pytest

from auswahlstufe import fortschritt as fortschritt_modul
from auswahlstufe.anzeige import BERLIN
from auswahlstufe.fortschritt import MB, dauer_text, fortschritt
from tests.hilfen import PROJEKT
from tests.hilfen.prozesse import auswahl_ohne_abstand


class Uhr:
    """Eine Uhr, die nur weitergeht, wenn der Test es sagt."""

    def __init__(self) -> None:
        self.jetzt = 1000.0

    def __call__(self) -> float:
        return self.jetzt


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_ohne_terminal_eine_zeile_je_abstand_mit_rate_und_rest():
    datei, uhr = io.StringIO(), Uhr()
    with fortschritt(1000, "Kodieren", datei=datei, abstand=10, uhr=uhr) as weiter:
        uhr.jetzt += 4
        weiter(100)  # vor dem ersten Abstand: keine Zeile
        assert datei.getvalue() == ""
        uhr.jetzt += 6
        weiter(100)  # 200 Items in 10 s
        uhr.jetzt += 30  # eine lange Pause: danach eine Zeile, nicht drei
        weiter(200)
        uhr.jetzt += 1
        weiter(100)
    zeilen = datei.getvalue().splitlines()
    assert zeilen[0].startswith(
        "Kodieren: 200 von 1000 Items (20 %), 20 Items/s, noch etwa 40 s (Ende gegen "
    )
    assert zeilen[1].startswith("Kodieren: 400 von 1000 Items (40 %), 10 Items/s, noch etwa 1 min 0 s ")
    assert len(zeilen) == 2


def test_ohne_terminal_keine_zeile_am_ende_und_keine_bei_null_items():
    datei, uhr = io.StringIO(), Uhr()
    with fortschritt(10, datei=datei, abstand=1, uhr=uhr) as weiter:
        uhr.jetzt += 5
        weiter(10)  # fertig: die Bilanzzeile des Laufs sagt den Rest
    with fortschritt(0, datei=datei, abstand=1, uhr=uhr) as weiter:
        weiter(0)
    assert datei.getvalue() == ""


def test_am_terminal_der_balken_von_click():
    datei = Terminal()
    with fortschritt(50, "Kodieren", datei=datei) as weiter:
        weiter(25)
        weiter(25)
    assert "Kodieren" in datei.getvalue() and "50/50" in datei.getvalue()


def test_einheit_und_teiler_in_der_zeile():
    datei, uhr = io.StringIO(), Uhr()
    with fortschritt(220 * MB, "Prüfen", datei=datei, abstand=10, uhr=uhr, einheit="MB", teiler=MB) as weiter:
        uhr.jetzt += 10
        weiter(100 * MB)
    assert datei.getvalue().startswith("Prüfen: 100 von 220 MB (45 %), 10 MB/s, noch etwa 12 s ")


def test_ohne_balken_am_terminal_nichts_ohne_terminal_trotzdem_zeilen():
    terminal, uhr = Terminal(), Uhr()
    with fortschritt(50, "Einlesen", datei=terminal, balken=False) as weiter:
        weiter(50)
    assert terminal.getvalue() == ""
    datei = io.StringIO()
    with fortschritt(50, "Einlesen", datei=datei, abstand=1, uhr=uhr, balken=False) as weiter:
        uhr.jetzt += 2
        weiter(10)
    assert datei.getvalue().startswith("Einlesen: 10 von 50 Items (20 %)")


def test_der_abstand_gilt_beim_aufruf(monkeypatch):
    datei, uhr = io.StringIO(), Uhr()
    monkeypatch.setattr(fortschritt_modul, "ABSTAND", 0)
    with fortschritt(3, "Kodieren", datei=datei, uhr=uhr) as weiter:
        weiter(1)
        weiter(1)
        weiter(1)
    assert len(datei.getvalue().splitlines()) == 2


def test_prozent_kaufmaennisch_gerundet():
    """80 von 120 Seiten sind 66,7 % – gerundet, nicht zu 66 % abgeschnitten."""
    datei, uhr = io.StringIO(), Uhr()
    with fortschritt(120, "Extrahieren", datei=datei, abstand=10, uhr=uhr, einheit="Seiten") as weiter:
        uhr.jetzt += 10
        weiter(80)
    assert datei.getvalue().startswith("Extrahieren: 80 von 120 Seiten (67 %), "), datei.getvalue()
    assert fortschritt_modul.ganze_prozent(1, 8) == 13  # 12,5: die Hälfte rundet auf
    assert fortschritt_modul.ganze_prozent(1, 3) == 33
    # 100 % erst am Ende: 995 von 1000 sind 99,5 %, aber noch nicht fertig
    assert fortschritt_modul.ganze_prozent(995, 1000) == 99
    assert fortschritt_modul.ganze_prozent(1000, 1000) == 100


def test_dauer_text():
    assert [dauer_text(s) for s in (0.4, 45, 75, 3600, 7500)] == [
        "0 s",
        "45 s",
        "1 min 15 s",
        "1 h 00 min",
        "2 h 05 min",
    ]


# --- Was im cron-Log steht, je Betriebsart -------------------------------------------------
# Die Stufe als eigener Prozess mit stderr in eine Pipe, der Abstand 0 statt 10 s: eine Zeile je
# Aktualisierung außer der letzten (die sagt die Bilanz).

ZEILE = re.compile(
    r"^(\w+): (\d+) von (\d+) (\w+) \((\d+) %\), \d+ \w+/s(, noch etwa .+ \(Ende gegen \d\d:\d\d:\d\d\))?$"
)
SATZ = "Der Rat der Stadt tagte bis in die Nacht und beschloss den Haushalt mit knapper Mehrheit. "


def zeilen(err: str) -> dict[str, list[tuple[int, int, str]]]:
    """Titel → [(fertig, gesamt, Einheit), …] der Fortschrittszeilen auf stderr."""
    gefunden: dict[str, list[tuple[int, int, str]]] = {}
    for zeile in err.splitlines():
        if treffer := ZEILE.match(zeile):
            titel, fertig, gesamt, einheit = treffer.group(1, 2, 3, 4)
            gefunden.setdefault(titel, []).append((int(fertig), int(gesamt), einheit))
    return gefunden


def stapeldatei(pfad, n: int, laenge: int = 1):
    artikel = [
        {
            "item_id": i,
            "extractions": {
                x: {"text": f"Meldung {i}. " + SATZ * laenge, "error": None}
                for x in ("newspaper4k", "readability", "trafilatura")
            },
        }
        for i in range(1, n + 1)
    ]
    pfad.write_text(json.dumps(artikel, ensure_ascii=False), encoding="utf-8")
    return pfad


def test_ende_gegen_steht_in_europe_berlin_auch_unter_utc(tmp_path):
    """„Ende gegen“ steht in Europe/Berlin wie der Zeilenkopf und jede Zeit der Stufe – nicht in der
    Ortszeit des Prozesses, unter cron (``env -i``) UTC."""
    datei = stapeldatei(tmp_path / "a.json", 300)
    vorher = datetime.now(BERLIN)
    e = auswahl_ohne_abstand(str(datei), url=None, cwd=tmp_path, env={"TZ": "UTC"})
    nachher = datetime.now(BERLIN)
    assert e.code == 0, str(e)
    enden = re.findall(r"Ende gegen (\d\d):(\d\d):(\d\d)\)", e.err)
    assert enden, e.err
    for h, m, s in enden:
        # die Uhrzeit am Tag von vorher, davor oder danach – die nächste an vorher
        um = min(
            (
                datetime.combine(vorher.date() + timedelta(days=d), time(int(h), int(m), int(s)), BERLIN)
                for d in (-1, 0, 1)
            ),
            key=lambda t: abs(t - vorher),
        )
        assert vorher - timedelta(minutes=1) <= um <= nachher + timedelta(minutes=10), (um, vorher, e.err)


def test_stapelbetrieb_zeigt_die_auswahl(tmp_path):
    datei = stapeldatei(tmp_path / "a.json", 300)
    e = auswahl_ohne_abstand(str(datei), url=None, cwd=tmp_path)
    assert e.code == 0, str(e)
    auswahl = zeilen(e.err)["Auswahl"]
    assert len(auswahl) == 299 and auswahl[0] == (1, 300, "Artikel") and auswahl[-1][0] == 299, e.err
    assert e.err.splitlines()[299].startswith("300 Artikel entschieden"), e.err


@pytest.mark.datenbank
def test_einlesen_zeigt_pruefen_und_einlesen(daten, db_url, tmp_path):
    n = 200
    for i in range(1, n + 1):
        daten.item(i)
    datei = stapeldatei(tmp_path / "k.json", n, laenge=60)  # gut 3 MB: mehrere Stücke zu 1 MiB
    assert datei.stat().st_size > 3 * MB
    e = auswahl_ohne_abstand("--einlesen", str(datei), url=db_url, cwd=tmp_path)
    assert e.code == 0, str(e)
    gefunden = zeilen(e.err)
    groesse_mb = datei.stat().st_size // MB
    assert gefunden["Prüfen"][0] == (1, groesse_mb, "MB"), e.err
    assert len(gefunden["Prüfen"]) >= 3
    assert gefunden["Einlesen"] == [(i, n, "Artikel") for i in range(1, n)], e.err
    assert f"eingelesen: {n} Artikel" in e.out, str(e)


@pytest.mark.datenbank
def test_kodieren_zeigt_stapel_fuer_stapel(daten, db_url, tmp_path):
    n = 1000
    for i in range(1, n + 1):
        daten.item(i)
    datei = stapeldatei(tmp_path / "k.json", n)
    assert auswahl_ohne_abstand("--einlesen", str(datei), url=db_url, cwd=tmp_path).code == 0
    e = auswahl_ohne_abstand("--backfill", "--prozesse", "2", url=db_url, cwd=tmp_path)
    assert e.code == 0, str(e)
    # Ein Datenbanklauf ohne Terminal schreibt den Fortschritt ins Protokoll (stdout, vor der
    # Bilanz): stderr bleibt für das, was ein Mensch sehen muss (betrieb.protokoll) – cron mailt nichts.
    kodieren = zeilen(e.out)["Kodieren"]
    # je Stapel zu 200 Items eine Zeile, bis auf den letzten
    assert [fertig for fertig, _, _ in kodieren] == [200, 400, 600, 800], e.out
    assert {(gesamt, einheit) for _, gesamt, einheit in kodieren} == {(n, "Items")}
    assert e.out.splitlines()[-1].startswith(f"neu {n}, "), str(e)
    assert e.err == "", str(e)


@pytest.mark.datenbank
def test_extrahieren_zaehlt_seiten_wie_seine_bilanz(daten, db_url, tmp_path):
    """Fortschritt und Bilanz der Extraktion zählen dasselbe: Seiten (nicht „Items“)."""
    for i in (1, 2, 3):
        daten.item(i)
    seiten = str(PROJEKT / "beispiele" / "seiten.json")
    assert auswahl_ohne_abstand("--einlesen", seiten, url=db_url, cwd=tmp_path).code == 0
    e = auswahl_ohne_abstand("--extrahieren", "--backfill", "--prozesse", "1", url=db_url, cwd=tmp_path)
    assert e.code == 0, str(e)
    assert zeilen(e.out)["Extrahieren"] == [(1, 3, "Seiten"), (2, 3, "Seiten")], e.out
    assert "Extraktion: 3 Seiten neu oder veraltet, 3 extrahiert" in e.out, e.out
