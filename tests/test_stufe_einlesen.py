"""--einlesen: Kandidaten aus dem Stapelformat nach extraktionen – Datei und Datenbank treffen sich."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.hilfen.daten import SLOT, sql_konstanten
from tests.hilfen.prozesse import ende, im_hintergrund

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


def test_was_beide_durchgaenge_lesen_steht_vor_dem_lesen_fest(tmp_path):
    """Eine gewöhnliche Datei lesen beide Durchgänge selbst; stdin und eine FIFO geben ihre Bytes
    nur einmal und gehen vorher ganz in eine Kopie, die danach verschwindet. Was sich nicht öffnen
    lässt, sagt derselbe Satz wie im Stapelbetrieb."""
    from auswahlstufe.einlesen import quelle
    from auswahlstufe.fehler import EingabeFehler

    datei = tmp_path / "k.json"
    datei.write_bytes(b"[]")
    assert not quelle.nur_einmal_lesbar(str(datei))
    with quelle.zweimal_lesbar(str(datei)) as pfad:
        assert pfad == str(datei)
    fifo = tmp_path / "k.fifo"
    os.mkfifo(fifo)
    assert quelle.nur_einmal_lesbar(str(fifo)) and quelle.nur_einmal_lesbar("-")
    schreiber = threading.Thread(target=lambda: fifo.write_bytes(b"[1]"))
    schreiber.start()
    with quelle.zweimal_lesbar(str(fifo)) as pfad:
        schreiber.join()
        assert pfad != str(fifo) and Path(pfad).read_bytes() == b"[1]" == Path(pfad).read_bytes()
    assert not Path(pfad).exists()
    for fehlt, satz in [(tmp_path / "fehlt.json", "gibt es nicht"), (tmp_path, "ist ein Verzeichnis")]:
        with pytest.raises(EingabeFehler, match=satz), quelle.zweimal_lesbar(str(fehlt)):
            pass


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
    from auswahlstufe.einlesen import datei as einlesen
    from auswahlstufe.fehler import EingabeFehler

    daten.item(1)
    datei = schreiben(
        tmp_path / "k.json", [{"item_id": 1, "extractions": {"trafilatura": {"text": "eins", "error": None}}}]
    )
    echt = einlesen.vorpruefen

    def pruefen_und_dann_aendern(*argumente):
        ergebnis = echt(*argumente)
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


# --- Große Dateien: in Stücken, jede Anweisung kurz, alles in einer Transaktion ---------------

# Jede schreibende Anweisung auf extraktionen und seiten trägt sich mit ihrer Zeilenzahl ein
# (Anweisungstrigger mit Übergangstabellen): so zeigt sich unabhängig vom Tempo der Maschine,
# wie viel eine einzelne Anweisung schreibt.
PROTOKOLL = """
create table aw_protokoll (tabelle text, art text, zeilen bigint, items bigint);
create function aw_protokollieren() returns trigger language plpgsql as $$
begin
    if tg_op = 'DELETE' then
        insert into aw_protokoll select tg_table_name, tg_op, count(*), count(distinct item_id) from alt;
    else
        insert into aw_protokoll select tg_table_name, tg_op, count(*), count(distinct item_id) from neu;
    end if;
    return null;
end $$;
create trigger aw_p_ei after insert on extraktionen referencing new table as neu
    for each statement execute function aw_protokollieren();
create trigger aw_p_eu after update on extraktionen referencing new table as neu
    for each statement execute function aw_protokollieren();
create trigger aw_p_ed after delete on extraktionen referencing old table as alt
    for each statement execute function aw_protokollieren();
create trigger aw_p_si after insert on seiten referencing new table as neu
    for each statement execute function aw_protokollieren();
create trigger aw_p_su after update on seiten referencing new table as neu
    for each statement execute function aw_protokollieren();
"""


def kleine_stuecke(monkeypatch, zeilen: int, items: int) -> None:
    """Stücke wie bei einer großen Datei, aber schon bei einer kleinen."""
    from auswahlstufe.einlesen import stuecke

    monkeypatch.setattr(stuecke, "STUECK_ZEILEN", zeilen)
    monkeypatch.setattr(stuecke, "STUECK_ZEICHEN", 10**9)
    monkeypatch.setattr(stuecke, "STUECK_ITEMS", items)


def drei_kandidaten(i: int, wie: str = "") -> dict:
    return {n: {"text": f"Text {i} von {n}{wie} " * 5, "error": None} for n in rechte_namen()}


def rechte_namen() -> tuple[str, ...]:
    return ("newspaper4k", "readability", "trafilatura")


def test_jede_anweisung_schreibt_nur_ein_stueck_alles_in_einer_transaktion(
    daten, db_url, monkeypatch, tmp_path
):
    """Kandidaten und Seiten gehen in Stücken hinein: keine Anweisung schreibt mehr als ein Stück,
    und doch gilt alles oder nichts. Gezählt vom Server, nicht gestoppt – unabhängig vom Tempo."""
    from auswahlstufe.einlesen import datei as einlesen

    for i in range(1, 61):
        daten.item(i)
    for i in range(1, 21):  # vorher da: 20 Items mit Kandidaten (teils geändert), 10 mit Seite
        daten.kandidaten(i, {n: k["text"] for n, k in drei_kandidaten(i, " alt" if i % 2 else "").items()})
    for i in range(1, 11):
        daten.ausfuehren("insert into seiten (item_id, html) values (%s, %s)", (i, b"<p>alt</p>"))
    daten.kandidat(5, "alter_name", "geht")  # nennt die Datei nicht mehr
    artikel = [
        {
            "item_id": i,
            "extractions": drei_kandidaten(i),
            **({"html": f"<p>Seite {i}</p>"} if i <= 30 else {}),
        }
        for i in range(1, 61)
    ]
    datei = schreiben(tmp_path / "gross.json", artikel)
    daten.ausfuehren(PROTOKOLL)
    kleine_stuecke(monkeypatch, zeilen=25, items=10)
    monkeypatch.setenv("DATABASE_URL", db_url)

    bilanz = einlesen.einlesen(str(datei))

    assert (bilanz.zeilen, bilanz.neu, bilanz.geaendert, bilanz.entfernt) == (180, 120, 30, 1)
    assert (bilanz.seiten_neu, bilanz.seiten_geaendert) == (20, 10)
    protokoll = daten.abfrage("select tabelle, art, zeilen, items from aw_protokoll")
    schreibend = [p for p in protokoll if p[2]]
    assert schreibend and max(z for _, art, z, _ in schreibend if art != "DELETE") <= 25, protokoll
    assert max(i for _, art, _, i in protokoll if art == "DELETE") <= 10, protokoll
    je = {(t, a): sum(p[2] for p in protokoll if p[:2] == (t, a)) for t, a, _, _ in protokoll}
    assert je[("extraktionen", "INSERT")] == 120 and je[("extraktionen", "UPDATE")] == 30
    assert je[("seiten", "INSERT")] == 20 and je[("seiten", "UPDATE")] == 10
    assert len([p for p in protokoll if p[:2] == ("extraktionen", "INSERT") and p[2]]) >= 120 // 25
    assert daten.abfrage("select count(*) from extraktionen") == [(180,)]


def test_ein_fehler_im_letzten_stueck_laesst_alles_unveraendert(daten, db_url, monkeypatch, tmp_path):
    """Alles oder nichts über die Stücke hinweg: scheitert das letzte, sind die ersten auch nicht da."""
    import db
    from auswahlstufe.einlesen import datei as einlesen

    for i in range(1, 41):
        daten.item(i)
    daten.kandidaten(1, {"trafilatura": "bleibt"})
    daten.ausfuehren("insert into seiten (item_id, html) values (1, '\\x3c703e')")
    daten.ausfuehren(
        "create function aw_nein() returns trigger language plpgsql as $$ begin "
        "if new.item_id = 40 then raise exception 'Item 40 abgelehnt'; end if; return new; end $$"
    )
    daten.ausfuehren(
        "create trigger aw_nein before insert or update on extraktionen for each row execute function aw_nein()"
    )
    vorher = daten.abfrage("select item_id, extraktor, text, xmin::text from extraktionen")
    vorher_seiten = daten.abfrage("select item_id, html, xmin::text from seiten")
    artikel = [{"item_id": i, "extractions": drei_kandidaten(i), "html": f"<p>{i}</p>"} for i in range(1, 41)]
    datei = schreiben(tmp_path / "k.json", artikel)
    kleine_stuecke(monkeypatch, zeilen=10, items=5)
    monkeypatch.setenv("DATABASE_URL", db_url)

    with pytest.raises(db.DatenbankFehler, match="Item 40 abgelehnt"):
        einlesen.einlesen(str(datei))

    assert daten.abfrage("select item_id, extraktor, text, xmin::text from extraktionen") == vorher
    assert daten.abfrage("select item_id, html, xmin::text from seiten") == vorher_seiten


def test_statement_timeout_trifft_ein_stueck_nicht_das_ganze_einlesen(daten, db_url, monkeypatch, tmp_path):
    """Das Zeitlimit gilt hängenden Anweisungen, nicht dem Laden. Ein langsamer Leser (ein COPY
    liefe im Takt des Clients) und ein langsamer Server (ein Trigger schläft je
    Zeile) machen das Ganze sicher länger als das Limit; jedes Stück bleibt weit darunter."""
    from auswahlstufe.einlesen import datei as einlesen

    n, schlaf = 200, 0.015  # 200 × 15 ms = 3 s je Richtung, das Limit ist 2 s, ein Stück 10 × 15 ms
    for i in range(1, n + 1):
        daten.item(i)
    daten.ausfuehren(
        "create function aw_langsam() returns trigger language plpgsql as $$ begin "
        f"perform pg_sleep({schlaf}); return new; end $$"
    )
    daten.ausfuehren(
        "create trigger aw_langsam before insert or update on extraktionen "
        "for each row execute function aw_langsam()"
    )
    artikel = [{"item_id": i, "extractions": {"trafilatura": {"text": f"Text {i}"}}} for i in range(1, n + 1)]
    datei = schreiben(tmp_path / "k.json", artikel)
    echt = einlesen.artikel_einzeln
    durchgaenge = []

    def langsam_nach_dem_pruefen(*argumente):
        durchgaenge.append(1)
        for paar in echt(*argumente):
            if len(durchgaenge) > 1:  # der Durchgang, der in Stücken schreibt
                time.sleep(schlaf)
            yield paar

    monkeypatch.setattr(einlesen, "artikel_einzeln", langsam_nach_dem_pruefen)
    kleine_stuecke(monkeypatch, zeilen=10, items=10)
    monkeypatch.setenv("AUSWAHL_STATEMENT_TIMEOUT", "2s")
    monkeypatch.setenv("DATABASE_URL", db_url)

    bilanz = einlesen.einlesen(str(datei))

    assert (bilanz.zeilen, bilanz.neu) == (n, n)
    assert daten.abfrage("select count(*) from extraktionen") == [(n,)]


def test_einlesen_zaehlt_neue_zeilen_ohne_xmax():
    """Neu oder geändert sagt der Vergleich mit dem Stand vor der Anweisung, nicht xmax."""
    texte = {name: text for name, text in sql_konstanten().items() if "einlesen" in name}
    assert texte and not [name for name, text in texte.items() if "xmax" in text]


def test_seite_die_der_abholer_gleichzeitig_schreibt_bricht_das_einlesen_nicht_ab(daten, db_url, tmp_path):
    """Der Abholer schreibt dieselbe Seite, während --einlesen sie schreibt. Ein Upsert: die Zeile
    des Abholers wird zur Seite der Datei („ändern, dann fehlende einfügen“ stieße beim Einfügen auf
    seine Zeile: unique_violation, Exit 3)."""
    import psycopg

    daten.item(1)
    daten.item(2)
    datei = schreiben(
        tmp_path / "s.json",
        [{"item_id": 1, "html": SEITE.format("Datei")}, {"item_id": 2, "html": SEITE.format("zwei")}],
    )
    with psycopg.connect(db_url) as abholer:
        abholer.execute("insert into seiten (item_id, html) values (1, %s)", (b"<p>vom Abholer</p>",))
        lauf = im_hintergrund(db_url, "--einlesen", str(datei), cwd=tmp_path)
        frist = time.monotonic() + 60
        # warten, bis --einlesen an der Zeile des Abholers wartet (Sperre auf dessen Transaktion)
        while not daten.abfrage(
            "select 1 from pg_stat_activity where application_name like %s and wait_event_type = 'Lock'",
            ("%einlesen%",),
        ):
            assert lauf.poll() is None, lauf.communicate()
            assert time.monotonic() < frist, "--einlesen wartet nie auf die Zeile des Abholers"
            time.sleep(0.02)
        abholer.commit()
    code, out, err = ende(lauf)
    assert code == 0, out + err
    assert "Seiten: 2 – neu" in out and "unverändert 0" in out, out
    assert [z[:2] for z in seitenzeilen(daten)] == [(1, SEITE.format("Datei")), (2, SEITE.format("zwei"))]
