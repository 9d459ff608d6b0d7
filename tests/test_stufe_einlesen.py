"""--einlesen: Kandidaten aus dem Stapelformat nach extraktionen – Datei und Datenbank treffen sich."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.testhilfen import SLOT

PROJEKT = Path(__file__).resolve().parents[1]
BEISPIEL = PROJEKT / "beispiele" / "artikel.json"

pytestmark = pytest.mark.datenbank


def schreiben(pfad: Path, artikel: list) -> Path:
    pfad.write_text(json.dumps(artikel, ensure_ascii=False), encoding="utf-8")
    return pfad


def stapel_entscheidungen(cli, datei: Path, tmp_path: Path) -> dict[int, str]:
    """selected_extractor je item_id aus dem Stapelbetrieb (ohne Datenbank)."""
    ausgabe = tmp_path / "aus.json"
    ergebnis = cli(str(datei), "-o", str(ausgabe), url=None)
    assert ergebnis.code == 0, str(ergebnis)
    return {a["item_id"]: a["selected_extractor"] for a in json.loads(ausgabe.read_text())}


def db_entscheidungen(daten) -> dict[int, str]:
    return dict(daten.abfrage("select item_id, extraktor from selected_extractor order by item_id"))


def test_beispiel_datei_und_datenbank_entscheiden_gleich(daten, cli, tmp_path):
    artikel = json.loads(BEISPIEL.read_text(encoding="utf-8"))
    for a in artikel:
        daten.item(a["item_id"], a["slot"], haus=a.get("haus"), titel=a.get("titel"), url=a.get("url"))
    ergebnis = cli("--einlesen", str(BEISPIEL))
    assert ergebnis.code == 0, str(ergebnis)
    zeilen = sum(len(a["extractions"]) for a in artikel)
    assert f"eingelesen: {len(artikel)} Artikel, {zeilen} Kandidaten – neu {zeilen}," in ergebnis.out
    assert cli("--backfill").code == 0
    assert db_entscheidungen(daten) == stapel_entscheidungen(cli, BEISPIEL, tmp_path)
    # ein zweites Einlesen ändert nichts, extrahiert_am bleibt
    vorher = daten.abfrage(
        "select item_id, extraktor, extrahiert_am, xmin::text from extraktionen order by 1, 2"
    )
    zweites = cli("--einlesen", str(BEISPIEL))
    assert f"neu 0, geändert 0, unverändert {zeilen}" in zweites.out, str(zweites)
    assert daten.abfrage(
        "select item_id, extraktor, extrahiert_am, xmin::text from extraktionen order by 1, 2"
    ) == (vorher)


def test_unbekannte_items_werden_gemeldet_nicht_eingefuegt(daten, cli, tmp_path):
    daten.item(1)
    datei = schreiben(
        tmp_path / "k.json",
        [
            {"item_id": 1, "extractions": {"trafilatura": {"text": "eins zwei drei", "error": None}}},
            {"item_id": 404, "extractions": {"trafilatura": {"text": "gibt es nicht", "error": None}}},
            {"item_id": 405, "extractions": {}},
        ],
    )
    ergebnis = cli("--einlesen", str(datei))
    assert ergebnis.code == 0, str(ergebnis)
    assert "2 item_id(s)" in ergebnis.err and "404, 405" in ergebnis.err
    assert "unbekannte Items 2" in ergebnis.out
    assert daten.abfrage("select item_id, extraktor from extraktionen") == [(1, "trafilatura")]


def test_nul_und_surrogate_werden_ersetzt_und_entscheiden_wie_die_datei(daten, cli, tmp_path):
    satz = "Der Rat tagte lange und beschloss am Ende den Haushalt für das nächste Jahr. "
    artikel = [
        {
            "item_id": 1,
            "extractions": {
                "newspaper4k": {"text": "Werbung\u0000" + satz * 3, "error": None},
                "readability": {"text": satz * 3 + "ab\u0000cd", "error": None},
                "trafilatura": {"text": satz * 2 + "\ud800 ende", "error": "teil\u0000weise"},
            },
        }
    ]
    datei = tmp_path / "nul.json"
    datei.write_text(json.dumps(artikel), encoding="ascii")  # \u0000 und \ud800 als Escape
    daten.item(1)
    ergebnis = cli("--einlesen", str(datei))
    assert ergebnis.code == 0, str(ergebnis)
    assert "4 Werte enthielten NUL-Zeichen oder einzelne Surrogate" in ergebnis.err
    texte = dict(daten.abfrage("select extraktor, text from extraktionen"))
    assert "\u0000" not in "".join(texte.values()) and "\ufffd" in texte["readability"]
    assert (
        dict(daten.abfrage("select extraktor, fehler from extraktionen"))["trafilatura"] == "teil\ufffdweise"
    )
    assert cli("--backfill").code == 0
    assert db_entscheidungen(daten) == stapel_entscheidungen(cli, datei, tmp_path)


def test_falsche_typen_gelten_als_nicht_verfuegbar_wie_in_der_datei(daten, cli, tmp_path):
    artikel = [
        {
            "item_id": n,
            "extractions": {
                "newspaper4k": kandidat,
                "trafilatura": {"text": "Ein kurzer, aber brauchbarer Text über den Rat.", "error": fehler},
            },
        }
        for n, (kandidat, fehler) in enumerate(
            [
                ({"text": 42, "error": None}, None),
                ({"text": ["a", "b"], "error": None}, 0),
                ({"text": {"x": 1}}, False),
                ("kein objekt", None),
                (None, ""),
            ],
            1,
        )
    ]
    datei = schreiben(tmp_path / "typen.json", artikel)
    for a in artikel:
        daten.item(a["item_id"])
    assert cli("--einlesen", str(datei)).code == 0
    assert daten.abfrage(
        "select count(*) from extraktionen where extraktor = 'newspaper4k' and text is null"
    ) == [(5,)]
    assert cli("--backfill").code == 0
    assert db_entscheidungen(daten) == stapel_entscheidungen(cli, datei, tmp_path)


@pytest.mark.parametrize(
    ("artikel", "meldung"),
    [
        # vor jeder Liste steht ein gültiger Artikel [0]: auch er wird nicht geschrieben
        ([{"extractions": {}}], "Artikel [1] hat keine ganzzahlige item_id"),
        ([{"item_id": 1, "extractions": {}}, {"item_id": "2", "extractions": {}}], "Artikel [2] hat keine"),
        ([{"item_id": True, "extractions": {}}], "Artikel [1] hat keine"),
        ([{"item_id": 2**70, "extractions": {}}], "Artikel [1] hat keine"),
        ([{"item_id": 1, "extractions": []}], "Artikel [1] (item_id 1) hat kein Objekt „extractions“"),
        ({"item_id": 1}, "erwartet wird eine JSON-Liste"),
    ],
)
def test_kaputte_artikel_nichts_geschrieben(artikel, meldung, daten, cli, tmp_path):
    daten.item(1)
    daten.item(2)
    gut = {"item_id": 1, "extractions": {"trafilatura": {"text": "gut", "error": None}}}
    datei = schreiben(tmp_path / "kaputt.json", [gut, *artikel] if isinstance(artikel, list) else artikel)
    ergebnis = cli("--einlesen", str(datei))
    assert ergebnis.code == 1, str(ergebnis)
    assert meldung in ergebnis.err, str(ergebnis)
    assert "Traceback" not in ergebnis.err
    assert daten.abfrage("select count(*) from extraktionen") == [(0,)]


def test_kaputtes_json_und_fehlende_datei(cli, tmp_path):
    datei = tmp_path / "kaputt.json"
    datei.write_text('[{"item_id": 1,}]')
    ergebnis = cli("--einlesen", str(datei))
    assert ergebnis.code == 1 and "Zeile 1, Spalte" in ergebnis.err, str(ergebnis)
    ergebnis = cli("--einlesen", str(tmp_path / "fehlt.json"))
    assert ergebnis.code == 1 and "gibt es nicht" in ergebnis.err, str(ergebnis)


def test_doppelte_kandidaten_der_letzte_gilt(daten, cli, tmp_path):
    daten.item(1, SLOT)
    datei = schreiben(
        tmp_path / "doppelt.json",
        [
            {"item_id": 1, "extractions": {"trafilatura": {"text": "erster", "error": None}}},
            {"item_id": 1, "extractions": {"trafilatura": {"text": "zweiter", "error": None}}},
        ],
    )
    ergebnis = cli("--einlesen", str(datei))
    assert ergebnis.code == 0 and "1 Kandidaten standen doppelt" in ergebnis.err, str(ergebnis)
    assert daten.abfrage("select text from extraktionen") == [("zweiter",)]


def test_die_datei_ersetzt_die_kandidaten_ihrer_items(daten, cli, tmp_path):
    """Nennt die Datei für ein Item einen Kandidaten nicht mehr, geht er auch in der Datenbank –
    sonst entschiede sie anders als der Stapelbetrieb über dieselbe Datei. Andere Items bleiben."""
    for item_id in (1, 2):
        daten.item(item_id)
    daten.kandidaten(2, {"trafilatura": "Ein Item, das die Datei nicht nennt, bleibt unberührt."})
    text = "Der Stadtrat hat am Montag den Haushalt beschlossen und die Sanierung vertagt. "
    drei = {
        "newspaper4k": {"text": "Anzeige. " + text, "error": None},
        "readability": {"text": text, "error": None},
        "trafilatura": {"text": text + "Mehr zum Thema.", "error": None},
    }
    assert (
        cli("--einlesen", str(schreiben(tmp_path / "a.json", [{"item_id": 1, "extractions": drei}]))).code
        == 0
    )
    ohne_readability = [{"item_id": 1, "extractions": {k: v for k, v in drei.items() if k != "readability"}}]
    datei = schreiben(tmp_path / "b.json", ohne_readability)

    ergebnis = cli("--einlesen", str(datei))
    assert ergebnis.code == 0, str(ergebnis)
    assert "neu 0, geändert 0, unverändert 2, entfernt 1," in ergebnis.out
    assert daten.abfrage("select item_id, extraktor from extraktionen order by 1, 2") == [
        (1, "newspaper4k"),
        (1, "trafilatura"),
        (2, "trafilatura"),
    ]
    assert cli("--backfill").code == 0
    assert db_entscheidungen(daten)[1] == stapel_entscheidungen(cli, datei, tmp_path)[1]

    # Ein Artikel mit leerem „extractions“ sagt: dieses Item hat keine Kandidaten.
    leer = cli("--einlesen", str(schreiben(tmp_path / "c.json", [{"item_id": 1, "extractions": {}}])))
    assert "entfernt 2," in leer.out, str(leer)
    assert daten.abfrage("select item_id from extraktionen") == [(2,)]


def test_kandidat_kein_objekt_mit_surrogat_wird_ersetzt(daten, cli, tmp_path):
    daten.item(1)
    datei = tmp_path / "s.json"
    datei.write_text('[{"item_id": 1, "extractions": {"trafilatura": "x\\ud800y\\u0000"}}]', encoding="ascii")
    ergebnis = cli("--einlesen", str(datei))
    assert ergebnis.code == 0, str(ergebnis)
    assert "Traceback" not in ergebnis.err
    assert daten.abfrage("select text, fehler from extraktionen") == [(None, "kein Objekt: x\ufffdy\ufffd")]


def _einlesen_von(quelle: str, db_url: str, cwd: Path, eingabe: bytes | None = None):
    umgebung = {**os.environ, "DATABASE_URL": db_url}
    return subprocess.run(
        [sys.executable, str(PROJEKT / "auswahl.py"), "--einlesen", quelle],
        input=eingabe,
        env=umgebung,
        cwd=cwd,
        capture_output=True,
        timeout=120,
    )


def test_von_stdin_und_aus_einer_fifo_wie_aus_der_datei(daten, db_url, tmp_path):
    """Zwei Durchgänge brauchen eine Datei; stdin und eine FIFO gehen über eine Kopie auf der Platte."""
    artikel = json.loads(BEISPIEL.read_text(encoding="utf-8"))
    for a in artikel:
        daten.item(a["item_id"], a["slot"])
    abfrage = "select item_id, extraktor, text, fehler from extraktionen order by 1, 2"
    aus_stdin = _einlesen_von("-", db_url, tmp_path, BEISPIEL.read_bytes())
    assert aus_stdin.returncode == 0, aus_stdin.stderr.decode()
    assert b"eingelesen: 13 Artikel, 38 Kandidaten" in aus_stdin.stdout
    nach_stdin = daten.abfrage(abfrage)
    daten.abfrage("delete from extraktionen returning 1")
    fifo = tmp_path / "k.fifo"
    os.mkfifo(fifo)
    schreiber = threading.Thread(target=lambda: fifo.write_bytes(BEISPIEL.read_bytes()))
    schreiber.start()
    aus_fifo = _einlesen_von(str(fifo), db_url, tmp_path)
    schreiber.join()
    assert aus_fifo.returncode == 0, aus_fifo.stderr.decode()
    assert daten.abfrage(abfrage) == nach_stdin
    assert len(nach_stdin) == 38
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.fifo"]  # keine Kopie bleibt liegen


def test_kaputtes_json_von_stdin_nennt_stdin_und_die_stelle(daten, db_url, tmp_path):
    lauf = _einlesen_von("-", db_url, tmp_path, b'[{"item_id": 1, "extractions": {}},\n {"item_id": 2,]')
    assert lauf.returncode == 1
    assert lauf.stderr.decode().startswith("Fehler: stdin ist kein gültiges JSON: Zeile 2, Spalte 16:")


@pytest.mark.parametrize(
    "danach",
    [
        [
            {"item_id": 1, "extractions": {"readability": {"text": "anders", "error": None}}}
        ],  # andere Schlüssel
        [{"item_id": 1, "extractions": {}}, {"item_id": 1, "extractions": {}}],  # mehr Artikel
        "[{kaputt",
    ],
    ids=["andere_kandidaten", "mehr_artikel", "kaputt"],
)
def test_datei_aendert_sich_zwischen_den_durchgaengen(daten, db_url, tmp_path, monkeypatch, danach):
    """Schreibt jemand die Datei neu, während sie eingelesen wird: ein Satz, nichts geschrieben."""
    from auswahlstufe.fehler import EingabeFehler
    from auswahlstufe.lauf import einlesen

    daten.item(1)
    datei = schreiben(
        tmp_path / "k.json", [{"item_id": 1, "extractions": {"trafilatura": {"text": "eins", "error": None}}}]
    )
    echt = einlesen.vorpruefen

    def pruefen_und_dann_aendern(durchgang, sichtbar):
        ergebnis = echt(durchgang, sichtbar)
        if isinstance(danach, str):
            datei.write_text(danach, encoding="utf-8")
        else:
            schreiben(datei, danach)
        return ergebnis

    monkeypatch.setattr(einlesen, "vorpruefen", pruefen_und_dann_aendern)
    monkeypatch.setenv("DATABASE_URL", db_url)
    with pytest.raises(
        EingabeFehler, match=r"k\.json hat sich während des Einlesens geändert; nichts eingelesen"
    ):
        einlesen.einlesen(str(datei))
    assert daten.abfrage("select count(*) from extraktionen") == [(0,)]


# --- Artikel mit html: die Seite nach seiten (aw-006) ----------------------------------------

SEITE = "<html><head><meta charset='iso-8859-1'></head><body><p>Grüße aus Köln – {}</p></body></html>"


def seitenzeilen(daten) -> list[tuple]:
    return daten.abfrage(
        "select item_id, convert_from(html, 'UTF8'), url, content_type, geholt_am::text from seiten order by 1"
    )


def test_html_geht_nach_seiten_neben_den_kandidaten(daten, cli, tmp_path):
    for i in (1, 2, 3):
        daten.item(i)
    daten.conn.execute(
        "insert into extraktionen (item_id, extraktor, text) values (2, 'trafilatura', 'bleibt')"
    )
    datei = schreiben(
        tmp_path / "s.json",
        [
            {"item_id": 1, "extractions": {"trafilatura": {"text": "eins", "error": None}}},
            # nur html: die Kandidaten von Item 2 bleiben unberührt
            {"item_id": 2, "html": SEITE.format("zwei"), "url": "https://example.org/2"},
            # beides in einem Artikel
            {
                "item_id": 3,
                "html": SEITE.format("drei"),
                "geholt_am": "2026-11-30T08:00:00+01:00",
                "extractions": {"readability": {"text": "drei", "error": None}},
            },
        ],
    )
    ergebnis = cli("--einlesen", str(datei))
    assert ergebnis.code == 0, str(ergebnis)
    assert "eingelesen: 3 Artikel, 2 Kandidaten – neu 2," in ergebnis.out
    assert "Seiten: 2 – neu 2, geändert 0, unverändert 0" in ergebnis.out
    zeilen = seitenzeilen(daten)
    assert [z[:4] for z in zeilen] == [
        (2, SEITE.format("zwei"), "https://example.org/2", "text/html; charset=utf-8"),
        (3, SEITE.format("drei"), None, "text/html; charset=utf-8"),
    ]
    assert daten.abfrage("select geholt_am = '2026-11-30T07:00:00Z' from seiten where item_id = 3") == [
        (True,)
    ]
    assert daten.abfrage("select item_id, extraktor, text from extraktionen order by 1") == [
        (1, "trafilatura", "eins"),
        (2, "trafilatura", "bleibt"),
        (3, "readability", "drei"),
    ]


def test_seiten_zweimal_eingelesen_bleiben_unberuehrt_geaenderte_werden_ersetzt(daten, cli, tmp_path):
    daten.item(1)
    daten.item(2)
    artikel = [{"item_id": 1, "html": SEITE.format("eins")}, {"item_id": 2, "html": SEITE.format("zwei")}]
    assert cli("--einlesen", str(schreiben(tmp_path / "a.json", artikel))).code == 0
    vorher = daten.abfrage("select item_id, geholt_am, xmin::text from seiten order by 1")
    zweites = cli("--einlesen", str(schreiben(tmp_path / "a.json", artikel)))
    assert "Seiten: 2 – neu 0, geändert 0, unverändert 2" in zweites.out, str(zweites)
    assert daten.abfrage("select item_id, geholt_am, xmin::text from seiten order by 1") == vorher
    artikel[1]["html"] = SEITE.format("zwei, neu")
    drittes = cli("--einlesen", str(schreiben(tmp_path / "a.json", artikel)))
    assert "Seiten: 2 – neu 0, geändert 1, unverändert 1" in drittes.out, str(drittes)
    assert seitenzeilen(daten)[1][1] == SEITE.format("zwei, neu")


def test_seite_eines_unbekannten_items_wird_gemeldet_nicht_eingefuegt(daten, cli, tmp_path):
    daten.item(1)
    datei = schreiben(
        tmp_path / "s.json", [{"item_id": 1, "html": "<p>a</p>"}, {"item_id": 9, "html": "<p>b</p>"}]
    )
    ergebnis = cli("--einlesen", str(datei))
    assert ergebnis.code == 0, str(ergebnis)
    assert "1 item_id(s)" in ergebnis.err and ": 9." in ergebnis.err
    assert [z[0] for z in seitenzeilen(daten)] == [1]


@pytest.mark.parametrize(
    ("artikel", "meldung"),
    [
        ({"item_id": 1, "html": ["<p>"]}, "Artikel [1] (item_id 1): „html“ ist eine Liste"),
        ({"item_id": 1, "html": "<p>", "url": 5}, "Artikel [1] (item_id 1): „url“ ist eine Zahl"),
        (
            {"item_id": 1, "html": "<p>", "geholt_am": "gestern"},
            "„geholt_am“ ist kein Zeitpunkt mit Zeitzone",
        ),
        (
            {"item_id": 1, "html": "<p>", "geholt_am": "2026-11-30T08:00:00"},
            "„geholt_am“ ist kein Zeitpunkt mit Zeitzone",
        ),
        ({"html": "<p>"}, "Artikel [1] hat keine ganzzahlige item_id"),
        ({"item_id": 1}, "Artikel [1] (item_id 1) hat kein Objekt „extractions“ und kein „html“"),
    ],
)
def test_kaputte_seiten_nichts_geschrieben(artikel, meldung, daten, cli, tmp_path):
    daten.item(1)
    gut = {"item_id": 1, "html": "<p>gut</p>", "extractions": {"trafilatura": {"text": "gut", "error": None}}}
    ergebnis = cli("--einlesen", str(schreiben(tmp_path / "kaputt.json", [gut, artikel])))
    assert ergebnis.code == 1, str(ergebnis)
    assert meldung in ergebnis.err, str(ergebnis)
    assert "Traceback" not in ergebnis.err
    assert daten.abfrage("select (select count(*) from seiten) + (select count(*) from extraktionen)") == [
        (0,)
    ]
