"""Was ein Tick von cron kostet: ``--nachholen`` auf einem großen Bestand.

Startet einen Wegwerf-PostgreSQL 18 (``server.wegwerf_datenbank``), legt ``raw_items``
wie Ingest an, wendet die Migrationen an und erzeugt je Größe die Items im Server: 400
je Slot, drei kurze Kandidaten und eine Seite je Item, und zu jedem Item schon eine
Entscheidung der aktuellen coder_version – der Stand nach einem Backfill. Die
Entscheidungen sind erzeugt, nicht gerechnet: gemessen wird das Suchen, nicht das
Kodieren. Dann je Größe, jeweils der Median aus drei Läufen:

* ``SQL_OFFENE_SLOTS`` ohne und mit Seiten – was ``--nachholen`` und
  ``--extrahieren --nachholen`` bei jedem Tick fragen;
* die Sichten ``auswahl_slots_ohne_lauf`` und ``auswahl_letzter_slot``, diese ohne und
  mit Index auf ``raw_items (slot)`` (den ``check_db.py`` empfiehlt);
* ``auswahl.py --extrahieren --nachholen`` vom Prozessstart bis zum Ende, wenn nichts
  offen ist (dann schreibt er keine Zeile);
* und einmal mit einem offenen Slot (seine Entscheidungen gelöscht): der Aufruf findet
  und kodiert genau ihn.

Zeiten werden gemeldet, nie geprüft. Aufruf (aus dem Projektverzeichnis)::

    python -m bench.nachholen                  # 100000 und 1000000 Items
    python -m bench.nachholen 2000 4000        # Rauchtest
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import psycopg

from auswahlstufe import server
from auswahlstufe.anzeige import zahl
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.lauf import nachholen
from auswahlstufe.server import RAW_ITEMS
from bench import optionen
from bench.messen import gemessen, maschine, skala
from version import CODER_VERSION

ITEMS_JE_SLOT = 400
SQL_ITEMS = """
insert into raw_items (id, slot, haus)
select g, timestamptz '2026-01-01 06:00+00' + (g / 400) * interval '15 minutes', 'haus ' || g %% 7
from generate_series(%(von)s::bigint, %(bis)s::bigint) g
"""
# Kandidaten, wie die Extraktion der heutigen Fassung sie aus der Seite schrieb: ein Lauf mit
# --extrahieren findet dann nichts zu extrahieren, der offene Slot unten misst nur die Auswahl.
SQL_KANDIDATEN = """
insert into extraktionen (item_id, extraktor, text, extraktor_fassung, seite_sha256)
select p.item_id, f.extraktor, 'Meldung ' || p.item_id || ': der Rat tagte und beschloss den Haushalt.',
       f.fassung, sha256(p.html_sha256 || convert_to(coalesce(p.content_type, ''), 'UTF8'))
from seiten p, unnest(%(namen)s::text[], %(fassungen)s::text[]) as f (extraktor, fassung)
where p.item_id between %(von)s and %(bis)s
"""
SQL_SEITEN = """
insert into seiten (item_id, html)
select g, convert_to('<p>Meldung ' || g || '</p>', 'UTF8') from generate_series(%(von)s::bigint, %(bis)s::bigint) g
"""
# Eine Entscheidung je Item, wie ein Backfill sie hinterließe (Inhalt erfunden, Form echt).
SQL_ENTSCHEIDUNGEN = """
insert into selected_extractor
    (item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme)
select g, %(version)s, 'readability', 'bester_score', 10, '{}'::jsonb, 'Meldung ' || g,
       sha256(convert_to('e' || g, 'UTF8')), sha256(convert_to('r' || g, 'UTF8'))
from generate_series(%(von)s::bigint, %(bis)s::bigint) g
"""
# Ein Eintrag im Protokoll, damit die Sichten die aktuelle coder_version kennen.
SQL_LAUF = """
insert into auswahl_laeufe (modus, coder_version, rechner, pid, beendet_am, exit_code)
values ('backfill', %(version)s, 'bench', 0, now(), 0)
"""
SQL_SICHT_OFFEN = "select * from auswahl_slots_ohne_lauf"
SQL_SICHT_LETZTER = "select * from auswahl_letzter_slot"
SQL_INDEX = "create index if not exists raw_items_slot_bench on raw_items (slot)"
SQL_OHNE_INDEX = "drop index if exists raw_items_slot_bench"
SQL_SLOT_OEFFNEN = """
delete from selected_extractor s using raw_items r
where r.id = s.item_id and r.slot = (select min(slot) from raw_items)
"""
SQL_PFLEGE = ["vacuum analyze", "checkpoint"]
RUNDEN = 3


def ausfuehren(url: str, *anfragen, **params) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for anfrage in anfragen:
            conn.execute(anfrage, params or None)


def erzeugen(url: str, von: int, bis: int) -> None:
    from auswahlstufe.extraktion.stufe import fassungen

    fassung = fassungen()
    for start in range(von, bis + 1, 50000):  # in Happen: jede Transaktion bleibt klein
        ende = min(bis, start + 49999)
        params = {
            "von": start,
            "bis": ende,
            "version": CODER_VERSION,
            "namen": list(fassung),
            "fassungen": list(fassung.values()),
        }
        ausfuehren(url, SQL_ITEMS, SQL_SEITEN, SQL_KANDIDATEN, SQL_ENTSCHEIDUNGEN, **params)


def median(url: str, anfrage, params=None) -> tuple[float, int]:
    """(Median der Sekunden aus RUNDEN Läufen, Zahl der Zeilen)."""
    zeiten, zeilen = [], 0
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(RUNDEN):
            start = time.perf_counter()
            zeilen = len(conn.execute(anfrage, params).fetchall())
            zeiten.append(time.perf_counter() - start)
    return statistics.median(zeiten), zeilen


def offene(mit_seiten: bool):
    return nachholen.anfrage(mit_seiten=mit_seiten), {
        "version": CODER_VERSION,
        "hoechstens": nachholen.HOECHSTENS,
    }


def messen(groessen: list[int], verzeichnis: Path) -> tuple[str, list[dict]]:
    from auswahlstufe.betrieb import migrationen

    ergebnisse = []
    with server.wegwerf_datenbank(verzeichnis) as url:
        ausfuehren(url, RAW_ITEMS)
        migrationen.migrieren(url, ausgabe=lambda _: None)
        ausfuehren(url, SQL_LAUF, version=CODER_VERSION)
        with psycopg.connect(url) as conn:
            version = conn.execute("show server_version").fetchone()[0]
        da = 0
        for n in groessen:
            print(f"erzeuge Items {da + 1} bis {n} …", file=sys.stderr, flush=True)
            erzeugen(url, da + 1, n)
            da = n
            ausfuehren(url, SQL_OHNE_INDEX, *SQL_PFLEGE)
            m = {"n": n, "slots": -(-n // ITEMS_JE_SLOT)}
            m["offen"] = median(url, *offene(False))
            m["offen_seiten"] = median(url, *offene(True))
            m["sicht_offen"] = median(url, SQL_SICHT_OFFEN)
            m["letzter"] = median(url, SQL_SICHT_LETZTER)
            ausfuehren(url, SQL_INDEX, "analyze raw_items")
            m["letzter_index"] = median(url, SQL_SICHT_LETZTER)
            m["offen_index"] = median(url, *offene(True))
            laeufe = [
                gemessen("--extrahieren", "--nachholen", url=url, cwd=verzeichnis) for _ in range(RUNDEN)
            ]
            m["tick"] = statistics.median(sekunden for sekunden, _, _ in laeufe), laeufe[0][2]
            ausfuehren(url, SQL_SLOT_OEFFNEN)
            m["ein_slot"] = gemessen("--extrahieren", "--nachholen", url=url, cwd=verzeichnis)
            ausfuehren(url, SQL_OHNE_INDEX)
            print(f"  {m}", file=sys.stderr, flush=True)
            ergebnisse.append(m)
    return version, ergebnisse


def tabelle(ergebnisse: list[dict]) -> list[str]:
    zeilen = [
        "| Items (Slots) | offene Slots suchen | … mit Seiten | Sicht `auswahl_slots_ohne_lauf` "
        "| Sicht `auswahl_letzter_slot` ohne / mit Index | … mit Seiten, mit Index "
        "| Tick `--extrahieren --nachholen`, nichts offen | ein offener Slot |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in ergebnisse:
        zeilen.append(
            f"| {m['n']} ({m['slots']}) | {zahl(m['offen'][0], 2)} s | {zahl(m['offen_seiten'][0], 2)} s "
            f"| {zahl(m['sicht_offen'][0], 2)} s | {zahl(m['letzter'][0], 2)} s / {zahl(m['letzter_index'][0], 3)} s "
            f"| {zahl(m['offen_index'][0], 2)} s | {zahl(m['tick'][0], 2)} s | {zahl(m['ein_slot'][0], 2)} s |"
        )
    return zeilen


@click.command(cls=DeutscherBefehl)
@optionen.groessen
def main(groessen: tuple[int, ...]) -> None:
    """Was ein Tick von cron kostet: --nachholen auf einem großen Bestand.

    GRÖSSE: Zahl der Items, aufsteigend; ohne Angabe 100000 und 1000000.
    """
    groessen = groessen or optionen.GROESSEN
    version, ergebnisse = skala(groessen, messen, "aw-nachholen-")
    befehl = " ".join(["python -m bench.nachholen", *map(str, groessen)])
    print(f"`{befehl}`")
    print(f"{maschine()}, PostgreSQL {version}; Median aus {RUNDEN} Läufen")
    print()
    print("\n".join(tabelle(ergebnisse)))
    print()
    for m in ergebnisse:
        print(
            f"{m['n']}: Tick ohne Arbeit „{m['tick'][1]}“ (leer: keine Zeile); ein offener Slot „{m['ein_slot'][2]}“"
        )


if __name__ == "__main__":
    main()
