"""Varianten in den Datenbankmodi: ``--variante`` und ``vergleich.py --datenbank``.

Eine Variante kodiert neben der Voreinstellung unter ihrer eigenen coder_version;
keine Zeile der Voreinstellung wird dabei angefasst (xmin bleibt). Zwei
coder_versionen lassen sich mit einem Befehl aus der Datenbank vergleichen.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from auswahlstufe.pruefung.stichprobe import Fall, Stichprobe
from auswahlstufe.regeln import waehle, zweifel
from tests.hilfen.prozesse import auswahl_starten, starten
from version import CODER_VERSION, Variante, variante_lesen

pytestmark = pytest.mark.datenbank

KANDIDATEN = Path(__file__).resolve().parents[1] / "bench" / "aeb" / "candidates.json"
K4 = variante_lesen("k4:0.03")
K5_T0 = variante_lesen("k5:0")
FORMATZEICHEN = "\u00ad\u200b"  # weiches Trennzeichen, Leerzeichen ohne Breite


def aeb_items(n: int) -> list[tuple[int, dict]]:
    """Die ersten n Seiten des eingebetteten Benchmarks als (item_id, extractions)."""
    artikel = json.loads(KANDIDATEN.read_text(encoding="utf-8"))[:n]
    return [(i, a["extractions"]) for i, a in enumerate(artikel, 1)]


def anlegen(daten, items: list[tuple[int, dict]]) -> None:
    for item_id, extraktionen in items:
        daten.item(item_id, url=f"https://example.org/{item_id}", titel=f"Meldung {item_id}")
        for name, eintrag in extraktionen.items():
            daten.kandidat(item_id, name, eintrag.get("text"), eintrag.get("error"))


def zeilen(daten, version: str) -> dict[int, tuple]:
    """Die Zeilen einer coder_version samt xmin und kodiert_am, je item_id."""
    return {
        z[0]: z[1:]
        for z in daten.abfrage(
            "select item_id, extraktor, regel, konsens, metriken, text, kodiert_am, xmin::text "
            "from selected_extractor where coder_version = %s",
            (version,),
        )
    }


@pytest.fixture
def bestand(daten):
    """40 Seiten aus dem Benchmark; dazu Items, deren Texte Formatzeichen tragen (quelle000)."""
    items = aeb_items(40)
    basis = "Der Rat beschloss den Haushalt nach langer Debatte und vertagte die Schule. " * 4
    for i in range(3):
        mit = basis.replace("Haushalt", f"Haus{FORMATZEICHEN}halt").replace(
            "Schule", f"Schu{FORMATZEICHEN}le"
        )
        items.append(
            (
                1000 + i,
                {
                    "newspaper4k": {"text": "Jetzt abonnieren! " * (i + 1) + basis, "error": None},
                    "readability": {"text": mit, "error": None},
                    "trafilatura": {"text": basis[: len(basis) * (2 + i) // 4], "error": None},
                },
            )
        )
    anlegen(daten, items)
    return items


def test_variantenlauf_laesst_jede_zeile_der_voreinstellung_unberuehrt(daten, bestand, cli):
    erster = cli("--backfill")
    assert erster.code == 0, erster
    vorher = zeilen(daten, CODER_VERSION)
    assert len(vorher) == len(bestand)

    lauf = cli("--backfill", "--variante", "k4:0.03")
    assert lauf.code == 0, lauf
    assert f"neu {len(bestand)}, geändert 0" in lauf.out

    assert zeilen(daten, CODER_VERSION) == vorher  # auch xmin und kodiert_am
    assert set(zeilen(daten, K4.coder_version)) == set(vorher)
    versionen = daten.abfrage("select distinct coder_version from selected_extractor order by 1")
    assert versionen == sorted([(CODER_VERSION,), (K4.coder_version,)])
    protokoll = daten.abfrage("select coder_version, neu, exit_code from auswahl_laeufe order by id")
    assert protokoll == [(CODER_VERSION, len(bestand), 0), (K4.coder_version, len(bestand), 0)]


@pytest.mark.parametrize("schreibweise", ["k4:0.03", "quelle000", "k3:0.1+quelle000", "k5:0"])
def test_entscheidungen_eines_variantenlaufs_gleichen_waehle_mit_ihren_parametern(
    daten, bestand, cli, schreibweise
):
    variante = variante_lesen(schreibweise)
    lauf = cli("--backfill", "--variante", schreibweise, "--prozesse", "2")
    assert lauf.code == 0, lauf
    gespeichert = zeilen(daten, variante.coder_version)
    for item_id, extraktionen in bestand:
        e = waehle(extraktionen, **variante.argumente())
        extraktor, regel, konsens, metriken, *_ = gespeichert[item_id]
        assert (extraktor, regel, konsens, metriken) == (e.extraktor, e.regel, e.konsens, e.metriken()), (
            item_id
        )


def test_quelle000_waehlt_auf_formatzeichen_anders_als_die_voreinstellung(bestand):
    """Die Wache des vorigen Tests: die Daten unterscheiden die Varianten wirklich."""
    quelle000 = variante_lesen("quelle000")
    verschieden = [
        i for i, ex in bestand if waehle(ex).metriken() != waehle(ex, **quelle000.argumente()).metriken()
    ]
    assert any(i >= 1000 for i in verschieden)
    anders_k5_t0 = [
        i for i, ex in bestand if waehle(ex).extraktor != waehle(ex, **K5_T0.argumente()).extraktor
    ]
    assert anders_k5_t0


def test_zweiter_variantenlauf_schreibt_nichts(daten, bestand, cli):
    assert cli("--backfill", "--variante", "k4:0.03").code == 0
    vorher = zeilen(daten, K4.coder_version)
    zweiter = cli("--backfill", "--variante", "4:0,03")  # dieselbe Variante, andere Schreibweise
    assert zweiter.code == 0, zweiter
    assert f"neu 0, geändert 0, unverändert {len(bestand)}, entfernt 0" in zweiter.out
    assert zeilen(daten, K4.coder_version) == vorher


def test_slot_trocken_und_stichprobe_unter_der_variante(daten, bestand, cli, tmp_path):
    trocken = cli("--slot", "2026-09-07T08:00", "--trocken", "--variante", "k4:0.03")
    assert trocken.code == 0, trocken
    assert f"würde: neu {len(bestand)}" in trocken.out
    assert daten.abfrage("select count(*) from selected_extractor") == [(0,)]

    probe = cli("--slot", "2026-09-07T08:00", "--stichprobe", "5", "--teil", "1/1", "--variante", "k4:0.03")
    assert probe.code == 0, probe
    stamm = "stichprobe-" + K4.coder_version.replace(">", "-")
    assert [p.name.startswith(stamm) for p in tmp_path.glob("stichprobe-*.csv")] == [True]
    assert daten.abfrage("select distinct coder_version from selected_extractor") == [(K4.coder_version,)]


@pytest.mark.parametrize("schreibweise", ["k0:0.03", "k4:1.5", "quelle001", "k4"])
def test_falsche_schreibweise_ist_ein_aufruffehler(daten, bestand, cli, schreibweise):
    lauf = cli("--backfill", "--variante", schreibweise)
    assert lauf.code == 2, lauf
    assert "Fehler: Ungültiger Wert für '--variante'" in lauf.err
    assert "erwartet" in lauf.err or "Toleranz" in lauf.err
    assert daten.abfrage("select count(*) from selected_extractor") == [(0,)]
    assert daten.abfrage("select count(*) from auswahl_laeufe") == [(0,)]


def test_variante_gilt_nur_in_den_datenbankmodi(tmp_path):
    datei = tmp_path / "a.json"
    datei.write_text("[]", encoding="utf-8")
    for argumente in ([str(datei)], ["--einlesen", str(datei)]):
        lauf = auswahl_starten(*argumente, "--variante", "k4:0.03", url=None, cwd=tmp_path)
        assert lauf.code == 2, lauf
        assert "--variante gilt nur mit --backfill, --slot oder --nachholen" in lauf.err


def test_extrahieren_mit_variante_waehlt_nur_unter_der_variante(daten, cli):
    """``--extrahieren`` ruft stufe.lauf ebenfalls: auch dort gilt die Variante."""
    pytest.importorskip("trafilatura")
    seiten_id = "0ec95c7261d122f304728e90c983450ef1ce1e0b423546835c397d50aaf0d0f2"
    daten.item(1)
    roh = gzip.decompress((KANDIDATEN.parent / "html" / f"{seiten_id}.html.gz").read_bytes())
    daten.ausfuehren(
        "insert into seiten (item_id, html, content_type) values (1, %s, 'text/html; charset=utf-8')", (roh,)
    )
    lauf = cli("--extrahieren", "--backfill", "--variante", "k4:0.03")
    assert lauf.code == 0, lauf
    extraktionen = {
        name: {"text": text, "error": fehler}
        for name, text, fehler in daten.abfrage("select extraktor, text, fehler from extraktionen")
    }
    e = waehle(extraktionen, **K4.argumente())
    assert daten.abfrage("select coder_version, extraktor, metriken from selected_extractor") == [
        (K4.coder_version, e.extraktor, e.metriken())
    ]


# --- Vergleich zweier coder_versionen aus der Datenbank ----------------------------------------


def vergleich(*argumente: str, url: str | None, cwd: Path):
    return starten("vergleich.py", *argumente, url=url, cwd=cwd)


def test_vergleich_aus_der_datenbank_listet_die_verschieden_gewaehlten_in_zweifelsordnung(
    daten, bestand, cli, db_url, tmp_path
):
    assert cli("--backfill").code == 0
    assert cli("--backfill", "--variante", "k5:0").code == 0
    # Erwartet: dieselben Items und dieselbe Ordnung wie eine Stichprobe über waehle.
    erwartet = Stichprobe(len(bestand))
    for item_id, ex in bestand:
        a, b = waehle(ex), waehle(ex, **K5_T0.argumente())
        if a.extraktor != b.extraktor:
            erwartet.beachte(Fall(str(item_id), a, {}))
    reihenfolge = [f.schluessel for f in erwartet.faelle()]
    assert reihenfolge

    lauf = vergleich("--datenbank", "voreinstellung", "k5:0", url=db_url, cwd=tmp_path)
    assert lauf.code == 0, lauf
    assert f"Items unter beiden Versionen: {len(bestand)}\n" in lauf.out
    assert f"anders gewählt von {K5_T0.coder_version}: {len(reihenfolge)}\n" in lauf.out
    pfade = sorted(tmp_path.glob("vergleich-*.csv"))
    assert len(pfade) == 1 and pfade[0].with_suffix(".html").is_file()
    assert pfade[0].name.startswith("vergleich-" + CODER_VERSION.replace(">", "-"))
    with pfade[0].open(encoding="utf-8") as datei:
        csv_zeilen = list(csv.DictReader(datei))
    assert [z["schluessel"] for z in csv_zeilen] == reihenfolge
    for z in csv_zeilen:
        b = waehle(dict(bestand)[int(z["schluessel"])], **K5_T0.argumente())
        assert z["variante"] == f"{K5_T0.coder_version} wählt {b.extraktor} ({b.regel})"
        assert z["url"] == f"https://example.org/{z['schluessel']}"

    # Mit coder_versionen geschrieben und höchstens 2 Fälle: dieselbe Zählung, die ersten 2.
    lauf = vergleich(
        "--datenbank", CODER_VERSION, K5_T0.coder_version, "--hoechstens", "2", url=db_url, cwd=tmp_path
    )
    assert lauf.code == 0, lauf
    assert f"anders gewählt von {K5_T0.coder_version}: {len(reihenfolge)}\n" in lauf.out
    neu = max(tmp_path.glob("vergleich-*.csv"), key=lambda p: p.stat().st_mtime_ns)
    with neu.open(encoding="utf-8") as datei:
        assert [z["schluessel"] for z in csv.DictReader(datei)] == reihenfolge[:2]


def test_vergleich_mit_einer_version_ohne_zeilen_ist_ein_eingabefehler(daten, bestand, cli, db_url, tmp_path):
    assert cli("--backfill").code == 0
    lauf = vergleich("--datenbank", "voreinstellung", "k4:0.03", url=db_url, cwd=tmp_path)
    assert lauf.code == 1, lauf
    # Statt einer SQL-Abfrage zum Abtippen: welche Versionen es gibt, mit ihren Zeilen.
    assert lauf.err == (
        f"Fehler: Unter coder_version {K4.coder_version} steht keine Zeile in selected_extractor. "
        f"Vorhanden ist: {CODER_VERSION} ({len(bestand)} Zeilen). Kodieren: .venv/bin/python auswahl.py "
        "--backfill (eine Variante mit --variante, etwa k4:0.03).\n"
    ), lauf
    assert not list(tmp_path.glob("vergleich-*"))
    assert cli("--backfill", "--variante", "k5:0").code == 0
    lauf = vergleich("--datenbank", "k4:0.03", "voreinstellung", url=db_url, cwd=tmp_path)
    assert lauf.code == 1, lauf
    vorhanden = "; ".join(
        f"{v} ({len(bestand)} Zeilen)" for v in sorted([CODER_VERSION, K5_T0.coder_version])
    )
    assert f"Vorhanden sind: {vorhanden}. " in lauf.err, lauf
    assert "select coder_version" not in lauf.err and "count(" not in lauf.err


def test_vergleich_auf_leerer_tabelle_sagt_wie_sie_sich_fuellt(db_url, tmp_path):
    lauf = vergleich("--datenbank", "voreinstellung", "k4:0.03", url=db_url, cwd=tmp_path)
    assert lauf.code == 1, lauf
    assert lauf.err == (
        f"Fehler: Unter coder_version {CODER_VERSION} steht keine Zeile in selected_extractor. Die Tabelle "
        "ist leer; kodieren: .venv/bin/python auswahl.py --backfill (eine Variante mit --variante, etwa "
        "k4:0.03).\n"
    ), lauf


def test_vergleich_aus_der_datenbank_aufruffehler(tmp_path):
    for argumente, meldung in (
        (["--datenbank", "voreinstellung", "k4"], "Ungültiger Wert für '--datenbank'"),
        (["--datenbank", "k5:0.03", "voreinstellung"], "dieselbe coder_version"),
        (["x.json", "--datenbank", "voreinstellung", "k4:0.03"], "--datenbank steht allein"),
        ([], "KANDIDATEN.json oder --datenbank"),
    ):
        lauf = vergleich(*argumente, url=None, cwd=tmp_path)
        assert lauf.code == 2, lauf
        assert meldung in lauf.err, lauf


def test_vergleich_aus_der_datenbank_zaehlt_wie_vergleich_auf_der_datei(daten, cli, db_url, tmp_path):
    """Die Zahl in docs/stichprobe.md: auf den 181 Seiten wählt k4:0.03 bei 3 anders."""
    anlegen(daten, aeb_items(181))
    assert cli("--backfill").code == 0
    assert cli("--backfill", "--variante", "k4:0.03").code == 0
    lauf = vergleich("--datenbank", "voreinstellung", "k4:0.03", url=db_url, cwd=tmp_path)
    assert lauf.code == 0, lauf
    assert "Items unter beiden Versionen: 181\n" in lauf.out
    assert f"anders gewählt von {K4.coder_version}: 3\n" in lauf.out
    assert f"nur unter {CODER_VERSION}: 0\nnur unter {K4.coder_version}: 0\n" in lauf.out


def unterschiede_abfrage() -> str:
    """Die Abfrage „unterschiede-abfrage“ aus docs/stichprobe.md, wie ein Mensch sie kopiert."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "stichprobe.md").read_text(encoding="utf-8")
    block = text.split("-- unterschiede-abfrage\n", 1)[1].split("```", 1)[0]
    return block.replace(":'grundlage'", "%(grundlage)s").replace(":'variante'", "%(variante)s")


def test_unterschiede_abfrage_der_doku_findet_dieselben_items(daten, bestand, cli):
    assert cli("--backfill").code == 0
    assert cli("--backfill", "--variante", "k5:0").code == 0
    zeilen = daten.abfrage(
        unterschiede_abfrage(), {"grundlage": CODER_VERSION, "variante": K5_T0.coder_version}
    )
    erwartet = {}
    for item_id, ex in bestand:
        a, b = waehle(ex), waehle(ex, **K5_T0.argumente())
        if a.extraktor != b.extraktor:
            erwartet[item_id] = (a.extraktor, b.extraktor, a.regel)
    assert {z[0]: z[1:4] for z in zeilen} == erwartet
    schluessel = [(z[5], -z[4], z[0]) for z in zeilen]
    assert schluessel == sorted(schluessel)
    for item_id, *_, wert, fast_gleich in zeilen:
        z = zweifel(waehle(dict(bestand)[item_id]))
        assert (wert, fast_gleich) == (pytest.approx(z.wert), z.fast_gleich)


def test_variante_voreinstellung_ist_die_coder_version():
    assert Variante().coder_version == CODER_VERSION
    assert Variante().argumente() == {"k": 5, "toleranz": 0.03, "formatzeichen_loeschen": True}
