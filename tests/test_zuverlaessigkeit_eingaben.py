"""Schlechte und extreme Eingaben im Stapelbetrieb und in der Datenbank.

Was test_stapel.py und test_stufe_einlesen.py schon prüfen (kaputtes JSON,
ungültiges UTF-8 in der Datei, NUL, doppelte Schlüssel in der Datei, falsche
Typen, unbekannte item_ids, ein Slot weit in der Zukunft), steht hier nicht
noch einmal; die Übersicht aller Fälle steht in .notizen/zuverlaessigkeit.md.

Hier: ein Kandidat mit 50 MB Text, 100 000 und eine Million kleine Artikel
(Zeit und Spitzen-RSS), Verschachtelung bis an die Grenze des Interpreters, und
für ``--einlesen`` ungültiges UTF-8, zu tiefe Dateien, doppelte Schlüssel,
``Trafilatura`` und ein 50-MB-Kandidat; dazu Slots an den Rändern des Kalenders.
Die großen Läufe sind ``langsam``; ``-s`` zeigt die gemessenen Zahlen.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from auswahlstufe.fehler import EXIT_AUFRUF, EXIT_EINGABE, EXIT_OK
from tests.hilfen import PROJEKT
from tests.hilfen.daten import SLOT, fingerabdruck
from tests.hilfen.prozesse import bilanzzeile

SATZ = "Der Stadtrat hat am Montag den Haushalt beschlossen und die Sanierung der Schule vertagt.\n"
WOERTER = ["der", "rat", "hat", "heute", "den", "haushalt", "beschlossen", "und", "die", "schule", "vertagt"]

# Misst Zeit und Spitzen-RSS eines Kindprozesses (ru_maxrss in KiB unter Linux).
MESSEN = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
    "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.perf_counter() - t); "
    "sys.stderr.write(r.stderr)"
)


def gemessen(*args: str, cwd: Path) -> tuple[int, int, float, str]:
    """(Exit-Code, Spitzen-RSS in Bytes, Sekunden, stderr) von ``python auswahl.py …``."""
    p = subprocess.run(
        [sys.executable, "-c", MESSEN, sys.executable, str(PROJEKT / "auswahl.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    code, kib, sekunden = p.stdout.split()
    return int(code), int(kib) * 1024, float(sekunden), p.stderr


def auswahl(*args: str, cwd: Path, url: str | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "AUSWAHL_ZEILENKOPF": "aus"}  # Zeilen wie gedruckt (conftest)
    if url:
        env["DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, str(PROJEKT / "auswahl.py"), *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def ein_satz(p: subprocess.CompletedProcess) -> None:
    """Ein Fehler ist ein Satz auf stderr – kein Traceback, nichts auf stdout."""
    assert "Traceback" not in p.stderr, p.stderr
    assert p.stderr.startswith("Fehler: ") and p.stderr.count("\n") == 1, p.stderr
    assert p.stdout == ""


def grosser_text(megabyte: float, zufaellig: bool) -> str:
    """Wiederholter Absatz (so verdoppelt ein kaputter Extraktor eine Seite) oder
    zufällige Wörter (der teuerste Fall: fast jedes Shingle ist neu)."""
    zeichen = int(megabyte * 10**6)
    if not zufaellig:
        return SATZ * (zeichen // len(SATZ))
    import random

    zufall = random.Random(50)
    return " ".join(zufall.choices(WOERTER, k=zeichen // 6))


def grosser_artikel(text: str, item_id: int = 1) -> dict:
    return {
        "item_id": item_id,
        "extractions": {
            "newspaper4k": {"text": text[:5000], "error": None},
            "readability": {"text": text, "error": None},
            "trafilatura": {"text": text[: len(text) // 2], "error": None},
        },
    }


def schreiben(pfad: Path, artikel: list) -> Path:
    with pfad.open("w", encoding="utf-8") as f:
        json.dump(artikel, f, ensure_ascii=False)
    return pfad


# --- Stapelbetrieb: große Eingaben --------------------------------------------------------------


@pytest.mark.parametrize(
    "zufaellig", [False, pytest.param(True, marks=pytest.mark.langsam)], ids=["wiederholt", "zufall"]
)
def test_kandidat_mit_50_mb_text(tmp_path, zufaellig):
    eingabe = schreiben(tmp_path / "gross.json", [grosser_artikel(grosser_text(50, zufaellig))])
    code, rss, sekunden, err = gemessen(str(eingabe), "-o", "aus.json", cwd=tmp_path)
    groesse = eingabe.stat().st_size
    print(
        f"\n50-MB-Kandidat ({'zufällige Wörter' if zufaellig else 'wiederholter Absatz'}), Datei "
        f"{groesse / 1e6:.0f} MB: {sekunden:.1f} s, Spitze {rss / 1e6:.0f} MB RSS ({rss / groesse:.1f}× der Datei)"
    )
    assert code == EXIT_OK, err
    aus = json.loads((tmp_path / "aus.json").read_bytes())
    assert len(aus) == 1 and aus[0]["selected_extractor"] in ("readability", "trafilatura")
    assert len(aus[0]["extractions"]["readability"]["text"]) == len(
        json.loads(eingabe.read_bytes())[0]["extractions"]["readability"]["text"]
    )
    # Der teure Fall (fast nur verschiedene Shingles) braucht ~25× der Datei; dokumentiert, nicht begrenzt.
    assert rss < (40 if zufaellig else 12) * groesse


def kleine_artikel(pfad: Path, anzahl: int) -> Path:
    with pfad.open("w", encoding="utf-8") as f:
        f.write("[")
        for i in range(anzahl):
            f.write(
                ("," if i else "")
                + json.dumps({"item_id": i, "extractions": {"trafilatura": {"text": f"kurz {i}"}}})
            )
        f.write("]")
    return pfad


@pytest.mark.parametrize(
    "anzahl", [100_000, pytest.param(1_000_000, marks=pytest.mark.langsam)], ids=["100k", "1M"]
)
def test_viele_kleine_artikel(tmp_path, anzahl):
    eingabe = kleine_artikel(tmp_path / "klein.json", anzahl)
    code, rss, sekunden, err = gemessen(str(eingabe), "-o", "aus.json", cwd=tmp_path)
    groesse = eingabe.stat().st_size
    print(
        f"\n{anzahl} kleine Artikel, {groesse / 1e6:.0f} MB: {sekunden:.1f} s, "
        f"Spitze {rss / 1e6:.0f} MB RSS ({rss / groesse:.1f}× der Datei)"
    )
    assert code == EXIT_OK, err
    assert f"{anzahl} Artikel entschieden" in err
    with (tmp_path / "aus.json").open("rb") as f:
        zeilen = sum(1 for z in f if z.startswith(b"{"))
    assert zeilen == anzahl  # ein Artikel je Zeile: keiner fehlt
    assert rss < 12 * groesse + 100e6


# --- Stapelbetrieb: Verschachtelung bis an die Grenze --------------------------------------------


def tief_laden(text: str) -> object:
    """json.loads mit Luft: der Testprozess steht tiefer im Stapel als auswahl.py."""
    alt = sys.getrecursionlimit()
    sys.setrecursionlimit(alt + 5000)
    try:
        return json.loads(text)
    finally:
        sys.setrecursionlimit(alt)


@pytest.mark.parametrize("tiefe", [100, 980, 995, 100_000])
@pytest.mark.parametrize("ort", ["text", "error", "artikel"])
def test_verschachtelung_an_der_grenze(tmp_path, tiefe, ort):
    """Jede Tiefe: entweder ein vollständiges Ergebnis oder ein Satz mit Ort –
    nie ein Traceback, nie eine halbe Ausgabe."""
    tief = "[" * tiefe + "]" * tiefe
    kandidat = (
        f'{{"text": "Der Rat tagte lange.", "error": {tief}}}' if ort == "error" else f'{{"text": {tief}}}'
    )
    if ort == "artikel":
        roh = f'[{{"item_id": 1, "tief": {tief}, "extractions": {{}}}}]'
    else:
        roh = f'[{{"item_id": 1, "extractions": {{"trafilatura": {kandidat}}}}}]'
    eingabe = tmp_path / "tief.json"
    eingabe.write_text(roh, encoding="utf-8")
    p = auswahl(str(eingabe), "-o", "aus.json", cwd=tmp_path)
    if p.returncode == EXIT_OK:
        aus = tief_laden((tmp_path / "aus.json").read_text("utf-8"))
        assert aus[0]["selected_extractor"] == ("trafilatura" if ort == "error" else "newspaper4k")
    else:
        assert p.returncode == EXIT_EINGABE, p.stderr
        ein_satz(p)
        assert ("verschachtelt" in p.stderr and str(eingabe) in p.stderr) or "Artikel [0]" in p.stderr, (
            p.stderr
        )
        assert not (tmp_path / "aus.json").exists()
    assert [d.name for d in tmp_path.iterdir() if d.name.startswith(".")] == []  # keine Reste


# --- --einlesen ---------------------------------------------------------------------------------


@pytest.fixture
def zwei_items(db_url, daten):
    daten.item(1)
    daten.item(2)
    daten.kandidaten(1, {"trafilatura": "Vorher da."})
    return db_url


def unveraendert_nach(url: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    vorher = fingerabdruck(url)
    p = auswahl(*args, cwd=cwd, url=url)
    assert fingerabdruck(url) == vorher, p.stderr
    return p


def test_einlesen_ungueltiges_utf8(zwei_items, tmp_path):
    datei = tmp_path / "latin1.json"
    roh = b'[{"item_id": 1, "extractions": {"trafilatura": {"text": "Gr\xfc\xdfe"}}}]'
    datei.write_bytes(roh)
    p = unveraendert_nach(zwei_items, "--einlesen", str(datei), cwd=tmp_path)
    assert p.returncode == EXIT_EINGABE
    ein_satz(p)
    assert f"{datei} ist kein gültiges UTF-8: Byte {roh.index(0xFC)} (Zeile 1) ist 0xfc" in p.stderr


@pytest.mark.parametrize("tiefe", [980, 100_000])
@pytest.mark.parametrize("ort", ["text", "error", "kandidat"])
def test_einlesen_tiefe_verschachtelung(zwei_items, tmp_path, tiefe, ort):
    tief = "[" * tiefe + "]" * tiefe
    kandidat = {
        "text": f'{{"text": {tief}}}',
        "error": f'{{"text": "x", "error": {tief}}}',
        "kandidat": tief,
    }[ort]
    datei = tmp_path / "tief.json"
    datei.write_text(f'[{{"item_id": 2, "extractions": {{"trafilatura": {kandidat}}}}}]', encoding="utf-8")
    vorher = fingerabdruck(zwei_items)
    p = auswahl("--einlesen", str(datei), cwd=tmp_path, url=zwei_items)
    assert "Traceback" not in p.stderr, p.stderr
    if p.returncode == EXIT_OK:
        # eingelesen: ein Text, der kein String ist, ist nicht verfügbar (text NULL)
        with psycopg.connect(zwei_items) as conn:
            text, fehler = conn.execute("select text, fehler from extraktionen where item_id = 2").fetchone()
        assert text is None or text == "x"
        assert fehler is None or fehler.startswith("[") or fehler.startswith("kein Objekt")
    else:
        assert p.returncode == EXIT_EINGABE, p.stderr
        ein_satz(p)
        assert "verschachtelt" in p.stderr and str(datei) in p.stderr, p.stderr
        assert fingerabdruck(zwei_items) == vorher


def test_einlesen_doppelte_schluessel_im_objekt(zwei_items, tmp_path):
    datei = tmp_path / "doppelt.json"
    datei.write_text(
        '[{"item_id": 2, "extractions": {"trafilatura": {"text": "alt"}, '
        '"trafilatura": {"text": "Der neue Text gilt.", "text": "Der letzte Text gilt."}}}]',
        encoding="utf-8",
    )
    p = auswahl("--einlesen", str(datei), cwd=tmp_path, url=zwei_items)
    assert p.returncode == EXIT_OK, p.stderr
    assert (
        "Warnung: Artikel [0], extractions: Schlüssel „trafilatura“ doppelt – der letzte Wert gilt."
        in p.stderr
    )
    assert "Warnung: Artikel [0], extractions.trafilatura: Schlüssel „text“ doppelt" in p.stderr
    with psycopg.connect(zwei_items) as conn:
        assert conn.execute("select text from extraktionen where item_id = 2").fetchall() == [
            ("Der letzte Text gilt.",)
        ]


def test_einlesen_anders_geschriebener_name(zwei_items, tmp_path):
    text = "Der Rat hat heute den Haushalt beschlossen und die Schule vertagt."
    artikel = [
        {"item_id": 2, "extractions": {"Trafilatura": {"text": text}, "readability": {"text": text[:40]}}}
    ]
    datei = schreiben(tmp_path / "name.json", artikel)
    p = auswahl("--einlesen", str(datei), cwd=tmp_path, url=zwei_items)
    assert p.returncode == EXIT_OK, p.stderr
    assert "„Trafilatura“ (gemeint: trafilatura?)" in p.stderr
    # der Name wird gespeichert, wie er kam, und von der Auswahl übergangen und gezählt
    b = auswahl("--backfill", cwd=tmp_path, url=zwei_items)
    # eine Auskunft über die Eingabe, kein Befund für einen Menschen: im Protokoll (stdout)
    assert b.returncode == EXIT_OK and "„Trafilatura“ 1" in b.stdout and b.stderr == "", b.stderr
    with psycopg.connect(zwei_items) as conn:
        wahl = conn.execute("select extraktor, regel from selected_extractor where item_id = 2").fetchone()
    assert wahl == ("readability", "einziger")
    # genau wie der Stapelbetrieb über dieselbe Datei
    s = auswahl(str(datei), "-o", "aus.json", cwd=tmp_path)
    assert json.loads((tmp_path / "aus.json").read_text("utf-8"))[0]["selected_extractor"] == "readability", (
        s.stderr
    )


@pytest.mark.langsam
def test_einlesen_und_backfill_mit_50_mb_kandidat(zwei_items, tmp_path):
    datei = schreiben(tmp_path / "gross.json", [grosser_artikel(grosser_text(50, False), item_id=2)])
    start = time.perf_counter()
    p = auswahl("--einlesen", str(datei), cwd=tmp_path, url=zwei_items)
    einlesen = time.perf_counter() - start
    assert p.returncode == EXIT_OK, p.stderr
    start = time.perf_counter()
    b = auswahl("--backfill", cwd=tmp_path, url=zwei_items)
    backfill = time.perf_counter() - start
    assert b.returncode == EXIT_OK and bilanzzeile(b.stdout).startswith("neu 2, "), b.stderr
    with psycopg.connect(zwei_items) as conn:
        extraktor, text = conn.execute(
            "select extraktor, text from selected_extractor where item_id = 2"
        ).fetchone()
    # bereinigen entfernt wiederholte Zeilen: vom wiederholten Absatz bleibt einer
    assert extraktor in ("readability", "trafilatura")
    assert text.startswith(SATZ.strip()) and len(text) < 2 * len(SATZ)
    print(f"\n50-MB-Kandidat über die Datenbank: --einlesen {einlesen:.1f} s, --backfill {backfill:.1f} s")


# --- Slots an den Rändern ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slot", "code", "meldung"),
    [
        ("2099-01-01T08:00", EXIT_OK, "hat keine Items"),
        ("9999-12-31T23:59", EXIT_OK, "hat keine Items"),
        ("0001-01-01T00:00", EXIT_OK, "+00:53:28 hat keine Items"),  # Berliner Ortszeit (LMT) vor 1893
        ("0001-01-01T00:00+00:00", EXIT_OK, "hat keine Items"),
        ("10000-01-01T00:00", EXIT_EINGABE, "kein Zeitpunkt"),
        ("2026-02-30T08:00", EXIT_EINGABE, "kein Zeitpunkt"),
        ("2026-09-07T08:00+25:00", EXIT_EINGABE, "kein Zeitpunkt"),
        ("", EXIT_AUFRUF, "Genau eine Betriebsart angeben"),  # leer heißt für click: nicht angegeben
    ],
)
def test_slot_an_den_raendern(db_url, daten, tmp_path, slot, code, meldung):
    daten.item(1, SLOT)
    daten.kandidaten(1, {"trafilatura": "Ein Text."})
    p = auswahl("--slot", slot, cwd=tmp_path, url=db_url)
    print(f"\n--slot {slot!r}: exit {p.returncode}, {(p.stderr.strip().splitlines() or [''])[-1]}")
    assert "Traceback" not in p.stderr, p.stderr
    if code is None:
        assert p.returncode in (EXIT_OK, EXIT_EINGABE), p.stderr
    else:
        assert p.returncode == code, p.stderr
    if p.returncode == EXIT_OK:
        assert bilanzzeile(p.stdout).startswith(
            "neu 0, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0"
        ), p.stdout
    elif p.returncode != EXIT_AUFRUF:  # click zeigt bei Aufruffehlern die Kurzhilfe mit
        ein_satz(p)
    if meldung:  # ein leerer Slot ist ein Hinweis im Protokoll (stdout), ein Fehler steht auf stderr
        assert meldung in (p.stdout if p.returncode == EXIT_OK else p.stderr)
    assert daten.kodierungen() == []
