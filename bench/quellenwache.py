"""Was die Quellenwache je Tick kostet, auf einem Jahr eines Bestands mit 40 Häusern.

Startet einen Wegwerf-PostgreSQL 18, legt ``raw_items`` wie Ingest an, wendet die Migrationen an
und füllt ``auswahl_kennzahlen`` synthetisch (erfundene Zählungen, echte Form): HÄUSER Häuser ×
SLOTS_JE_TAG Slots am Tag × TAGE Tage, je Zeile ITEMS_JE_HAUS Items (40 × 130 × 365 ≈ 1,9 Mio.
Zeilen für ≈ 13,3 Mio. Items). Für den Tick danach ein neuer Slot mit HÄUSER × ITEMS_JE_HAUS Items
in ``raw_items`` und ihren Entscheidungen in ``selected_extractor`` (mit ``metriken`` wie die Stufe
sie schreibt). Gemessen, je Median aus RUNDEN Läufen:

* die Pflege eines Ticks: für die Items des Slots in Stapeln, wie die Stufe sie bildet,
  ``schreiben.SQL_PAARE_SPERREN`` und ``schreiben.SQL_KENNZAHLEN`` (je Stapel eine Transaktion);
* die Sicht ``auswahl_quellenwache``;
* die Anweisung am Ende eines Ticks, ``nachholen.SQL_QUELLENWACHE`` (Sicht lesen, Befunde eintragen).

``raw_items`` und ``selected_extractor`` enthalten nur den Slot des Ticks: die Pflege sucht dort über
Primärschlüssel und den Index auf ``raw_items (slot)``, deren Tiefe mit 14 Mio. Zeilen um eine Stufe
wächst. Mit ``--fehlalarme N`` statt dessen N Häuser ohne Umbau, ihre Kennzahlen aus echten
Entscheidungen über die Kandidaten von bench/aeb (``fehlalarme``): die Sicht nach jedem Slot,
gezählt die Haus-Tage mit Befund. Zeiten werden gemeldet, nie geprüft. Aufruf (aus dem
Projektverzeichnis)::

    python -m bench.quellenwache            # ein Jahr
    python -m bench.quellenwache --tage 40  # Rauchtest
    python -m bench.quellenwache --fehlalarme 100 --tage 60
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import psycopg

from auswahlstufe import server
from auswahlstufe.anzeige import zahl
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.betrieb import migrationen
from auswahlstufe.lauf import nachholen, schreiben, stufe
from auswahlstufe.server import RAW_ITEMS
from bench.messen import maschine
from version import CODER_VERSION

HAEUSER = 40
SLOTS_JE_TAG = 130
ITEMS_JE_HAUS = 7  # je Haus und Slot: 40 × 7 ≈ 280 Items je Slot, ≈ 36.000 am Tag
RUNDEN = 5
BEGINN = "2026-01-01 00:00+00"
SCHRITT = "11 minutes 4 seconds"  # 130 Slots am Tag

SQL_KENNZAHLEN = """
insert into auswahl_kennzahlen
select %(version)s, 'haus ' || h, %(beginn)s::timestamptz + s * %(schritt)s::interval, %(items)s,
       (random() < 0.02)::int, (random() < 0.02)::int, (random() < 0.02)::int,
       4 + (random() < 0.5)::int, 1 + (random() < 0.5)::int, (random() < 0.5)::int,
       (random() < 0.3)::int, (random() < 0.3)::int, 1 + (random() < 0.5)::int,
       6.5, 6.4, 6.3, (random() < 0.05)::int, 0, (random() < 0.5)::int, 22000
from generate_series(%(von)s::int, %(bis)s::int) s, generate_series(1, %(haeuser)s) h
"""
SQL_LAUF = """
insert into auswahl_laeufe (modus, coder_version, rechner, pid, beendet_am, exit_code)
values ('backfill', %(version)s, 'bench', 0, now(), 0)
"""
SQL_ITEMS = """
insert into raw_items (id, slot, haus)
select g, %(beginn)s::timestamptz + %(slot)s * %(schritt)s::interval, 'haus ' || (1 + g %% %(haeuser)s)
from generate_series(1, %(n)s) g
"""
SQL_ENTSCHEIDUNGEN = """
insert into selected_extractor
    (item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme)
select g, %(version)s, 'newspaper4k', 'gleichstand_rang', 300, %(metriken)s::jsonb, repeat('Text ', 600),
       sha256(convert_to('e' || g, 'UTF8')), sha256(convert_to('r' || g, 'UTF8'))
from generate_series(1, %(n)s) g
"""
METRIKEN = {
    name: {"klasse": "nutzbar", "aktiv": True, "shingles": 500, "abdeckung": 0.99, "stuetzung": 0.98,
           "score": score, "abstand": 0.0}
    for name, score in (("newspaper4k", 0.99), ("readability", 0.97), ("trafilatura", 0.9))
}  # fmt: skip


def _median(funktion) -> float:
    zeiten = []
    for _ in range(RUNDEN):
        start = time.perf_counter()
        funktion()
        zeiten.append(time.perf_counter() - start)
    return statistics.median(zeiten)


def messen(tage: int, verzeichnis: Path) -> dict:
    slots = tage * SLOTS_JE_TAG
    n = HAEUSER * ITEMS_JE_HAUS
    werte = {"version": CODER_VERSION, "beginn": BEGINN, "schritt": SCHRITT, "haeuser": HAEUSER}
    with server.wegwerf_datenbank(verzeichnis) as url, psycopg.connect(url, autocommit=True) as conn:
        conn.execute(RAW_ITEMS)
        migrationen.migrieren(url, ausgabe=lambda _: None)
        conn.execute(SQL_LAUF, werte)
        conn.execute("select setseed(0.3)")
        start = time.perf_counter()
        for von in range(0, slots, 30 * SLOTS_JE_TAG):  # je Monat eine Transaktion
            bis = min(slots, von + 30 * SLOTS_JE_TAG) - 1
            conn.execute(SQL_KENNZAHLEN, {**werte, "items": ITEMS_JE_HAUS, "von": von, "bis": bis})
            print(f"  Kennzahlen bis Slot {bis + 1} von {slots}", file=sys.stderr, flush=True)
        fuellen = time.perf_counter() - start
        conn.execute(SQL_ITEMS, {**werte, "slot": slots, "n": n})
        conn.execute(SQL_ENTSCHEIDUNGEN, {**werte, "n": n, "metriken": json.dumps(METRIKEN)})
        conn.execute("vacuum analyze")
        zeilen = conn.execute("select count(*) from auswahl_kennzahlen").fetchone()[0]
        groesse = conn.execute(
            "select pg_size_pretty(pg_total_relation_size('auswahl_kennzahlen'))"
        ).fetchone()[0]
        # Stapel wie ein Tick mit einem Prozess (stufe._verarbeiten): zwei je Prozess
        groesse_stapel = max(1, min(stufe.STAPEL, -(-n // stufe.STAPEL_JE_PROZESS)))
        stapel = [list(range(a, min(n, a + groesse_stapel - 1) + 1)) for a in range(1, n + 1, groesse_stapel)]

        def pflege() -> None:
            for ids in stapel:
                with conn.transaction():
                    conn.execute(schreiben.SQL_PAARE_SPERREN, {"version": CODER_VERSION, "ids": ids})
                    conn.execute(schreiben.SQL_KENNZAHLEN, {"version": CODER_VERSION, "ids": ids})

        ergebnis = {
            "version": conn.info.parameter_status("server_version"),
            "zeilen": zeilen,
            "groesse": groesse,
            "fuellen": fuellen,
            "items": n,
            "stapel": len(stapel),
            "pflege": _median(pflege),
            "sicht": _median(lambda: conn.execute("select * from auswahl_quellenwache").fetchall()),
            "melden": _median(lambda: nachholen.quellenwache(conn, CODER_VERSION)),
        }
    return ergebnis


# --fehlalarme: gewöhnliche Häuser ohne Umbau, die Kennzahlen aus echten Entscheidungen über die
# Kandidaten von bench/aeb (je Item zufällig gezogen), wie tests/test_quellenwache.py sie baut: ein
# Slot alle zwei Stunden, 16 Items am Werktag, 8 am Wochenende; jedes vierte Haus klein (3 am Tag).
WERKTAG, WOCHENENDE, KLEIN = [2, 1, 1] * 4, [1, 1, 0] * 4, [0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0]
VORLAUF = 28  # Tage, bevor gezählt wird: die Vergangenheit, gegen die die Sicht vergleicht
NAMEN = ("newspaper4k", "readability", "trafilatura")


def _merkmale() -> list[tuple]:
    """Je Artikel von bench/aeb die Zähler einer Zeile von auswahl_kennzahlen (ohne items)."""
    from auswahlstufe.lauf.kodierung import kodieren

    merkmale = []
    for artikel in json.loads(
        (Path(__file__).parent / "aeb" / "candidates.json").read_text(encoding="utf-8")
    ):
        namen = list(artikel["extractions"])
        texte = [artikel["extractions"][n].get("text") for n in namen]
        fehler = [artikel["extractions"][n].get("error") for n in namen]
        _, z = kodieren(0, namen, texte, fehler, b"")
        m = json.loads(z.metriken)
        merkmale.append((
            *(int(m[n]["klasse"] != "nutzbar") for n in NAMEN),
            *(int(z.extraktor == n) for n in NAMEN),
            *(int(m[n]["score"] is not None and m[n]["score"] < 0.95) for n in NAMEN),
            *(m[n]["score"] or 0.0 for n in NAMEN),
            int(z.regel.startswith("ohne_konsens")), int(z.regel == "rueckfall"),
            int(len(z.text or "") < 1000), len(z.text or ""),
        ))  # fmt: skip
    return merkmale


def fehlalarme(haeuser: int, tage: int, verzeichnis: Path) -> dict:
    import random
    from datetime import UTC, datetime, timedelta

    merkmale, zufall = _merkmale(), random.Random(30)
    beginn = datetime(2026, 10, 5, tzinfo=UTC)  # ein Montag
    zeilen = []
    for tag in range(VORLAUF + tage):
        muster = WOCHENENDE if (beginn + timedelta(days=tag)).weekday() >= 5 else WERKTAG
        for i in range(12):
            slot = beginn + timedelta(days=tag, hours=2 * i)
            for h in range(haeuser):
                anzahl = (KLEIN if h % 4 == 3 else muster)[i]
                if anzahl:
                    summe = [
                        sum(x) for x in zip(*(zufall.choice(merkmale) for _ in range(anzahl)), strict=True)
                    ]
                    zeilen.append((CODER_VERSION, f"haus {h}", slot, anzahl, *summe))
    alarme: dict[str, set] = {}
    with server.wegwerf_datenbank(verzeichnis) as url, psycopg.connect(url, autocommit=True) as conn:
        conn.execute(RAW_ITEMS)
        migrationen.migrieren(url, ausgabe=lambda _: None)
        conn.execute(SQL_LAUF, {"version": CODER_VERSION})
        conn.execute("create temp table alle (like auswahl_kennzahlen)")
        with conn.cursor().copy("copy alle from stdin") as copy:
            for zeile in zeilen:
                copy.write_row(zeile)
        grenze = beginn + timedelta(days=VORLAUF)
        conn.execute("insert into auswahl_kennzahlen select * from alle where slot < %s", (grenze,))
        conn.execute("analyze auswahl_kennzahlen")
        for slot in sorted({z[2] for z in zeilen if z[2] >= grenze}):
            conn.execute("insert into auswahl_kennzahlen select * from alle where slot = %s", (slot,))
            for haus, merkmal in conn.execute("select haus, merkmal from auswahl_quellenwache"):
                alarme.setdefault(haus, set()).add((slot.date(), merkmal))
    return {"haeuser": haeuser, "klein": haeuser // 4, "tage": tage, "alarme": alarme}


@click.command(cls=DeutscherBefehl)
@click.option("--tage", type=click.IntRange(30), default=365, show_default=True, help="Tage der Geschichte.")
@click.option(
    "--fehlalarme",
    "haeuser",
    type=click.IntRange(1),
    help="Statt der Kosten: so viele gewöhnliche Häuser über --tage Tage (nach 28 Tagen Vorlauf) "
    "nachspielen und die Befunde der Sicht zählen.",
)
def main(tage: int, haeuser: int | None) -> None:
    """Was die Quellenwache je Tick kostet: Pflege der Kennzahlen und die Sicht, auf einem Jahr."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if haeuser:
        with tempfile.TemporaryDirectory(prefix="aw-quellenwache-") as verzeichnis:
            f = fehlalarme(haeuser, tage, Path(verzeichnis))
        monate = haeuser * tage / 30
        tage_mit = sum(len({t for t, _ in a}) for a in f["alarme"].values())
        print(
            f"`python -m bench.quellenwache --fehlalarme {haeuser} --tage {tage}` am {date.today():%d.%m.%Y}, Commit {commit}"
        )
        print(
            f"{haeuser} Häuser ohne Umbau ({f['klein']} klein) × {tage} Tage = {zahl(monate, 0)} Haus-Monate, "
            f"die Sicht nach jedem Slot: Häuser mit Befund {len(f['alarme'])}, Haus-Tage mit Befund {tage_mit} "
            f"= {zahl(tage_mit / monate, 2)} je Haus-Monat"
        )
        for haus, a in sorted(f["alarme"].items()):
            print(f"  {haus}: " + ", ".join(f"{t:%d.%m.} {m}" for t, m in sorted(a)))
        return
    with tempfile.TemporaryDirectory(prefix="aw-quellenwache-") as verzeichnis:
        m = messen(tage, Path(verzeichnis))
    print(f"`python -m bench.quellenwache --tage {tage}` am {date.today():%d.%m.%Y}, Commit {commit}")
    print(f"{maschine()}, PostgreSQL {m['version']}; Median aus {RUNDEN} Läufen")
    print()
    print(
        f"`auswahl_kennzahlen`: {m['zeilen']} Zeilen ({HAEUSER} Häuser × {SLOTS_JE_TAG} Slots × {tage} Tage), "
        f"{m['groesse']}, gefüllt in {zahl(m['fuellen'], 0)} s"
    )
    print()
    print("| Pflege eines Ticks | Sicht `auswahl_quellenwache` | Ende des Ticks (`SQL_QUELLENWACHE`) |")
    print("|---:|---:|---:|")
    print(
        f"| {zahl(m['pflege'] * 1000, 1)} ms ({m['items']} Items, {m['stapel']} Stapel) "
        f"| {zahl(m['sicht'] * 1000, 0)} ms | {zahl(m['melden'] * 1000, 0)} ms |"
    )


if __name__ == "__main__":
    main()
