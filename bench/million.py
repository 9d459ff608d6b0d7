"""Skala: ein Backfill über viele erzeugte Items – Zeit, Speicher, längste Transaktion.

Startet einen Wegwerf-PostgreSQL 18 (``server.wegwerf_datenbank``), legt
``raw_items`` wie Ingest an, wendet die Migrationen an und erzeugt je Größe
die Items im Server (``generate_series``): drei Kandidaten à etwa 3 KB, aus
Wörtern, die je Item anders sind; trafilatura verliert das letzte Drittel,
newspaper4k trägt Werbung davor, jedes zehnte Item hat bei trafilatura einen
Fehlertext (beeinträchtigt). Dann, je Größe:

* ``auswahl.py --backfill`` in die leere Tabelle: Wanduhr, größter RSS (aus
  wait4, über Hauptprozess und Worker) und die längste Transaktion der Stufe,
  abgetastet in ``pg_stat_activity`` alle 0,2 s (``now() - xact_start`` je
  Verbindung mit application_name ``wurzelwerk-auswahl …``);
* der Fehlertext jedes zehnten Items ändert sich (das Ergebnis nicht):
  ein erster erneuter Lauf rechnet genau diese Items und trägt ihre
  Eingabe-Summe nach, ein zweiter rechnet keins – beide mit Zeit.

Zeiten werden gemeldet, nie geprüft. Gleiche Größen wachsen: die Items der
kleineren Größe bleiben, es kommen nur die fehlenden dazu.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.million                          # 100000 und 1000000 Items
    python -m bench.million 100000 300000            # andere Größen
    python -m bench.million 300 600                  # Rauchtest
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import psycopg

from auswahlstufe import kerne, server
from auswahlstufe.anzeige import zahl
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.server import RAW_ITEMS
from bench import optionen
from bench.messen import gemessen, maschine, skala

# Items von %(von)s bis %(bis)s, 400 je Slot; ein Wortschatz je Item aus md5.
SQL_ITEMS = """
insert into raw_items (id, slot, haus)
select g, timestamptz '2026-09-07 06:00+00' + (g / 400) * interval '1 hour', 'haus ' || g %% 7
from generate_series(%(von)s::bigint, %(bis)s::bigint) g
"""
# Der Grundtext eines Items: 60 Sätze aus je 8 Wörtern (~3 KB), Wörter aus md5
# von Item und Satz – jedes Item hat seine eigenen Shingles.
SQL_KANDIDATEN = """
insert into extraktionen (item_id, extraktor, text, fehler)
select b.g, x.name,
       case x.name
           when 'newspaper4k' then 'Jetzt abonnieren und keine Nachricht verpassen. ' || b.text
           when 'trafilatura' then left(b.text, length(b.text) * 2 / 3)
           else b.text
       end,
       case when x.name = 'trafilatura' and b.g %% 10 = 0 then 'timeout nach 30 s' end
from (
    select g, string_agg(
        'Satz ' || s || ' ' || left(md5(g::text || ':' || s), 6) || ' ' || substr(md5(s::text), 1, 5) || ' '
        || substr(md5(g::text), 1 + s %% 20, 7) || ' und ' || left(md5(s::text || g::text), 8) || ' am '
        || (g + s) %% 31 || '. Mai.', ' ' order by s) as text
    from generate_series(%(von)s::bigint, %(bis)s::bigint) g, generate_series(1, 60) s
    group by g
) b, (values ('newspaper4k'), ('readability'), ('trafilatura')) x(name)
"""
SQL_GROESSE = "select avg(length(text))::int from extraktionen where item_id <= 100"
SQL_FEHLER_AENDERN = "update extraktionen set fehler = 'timeout nach 31 s' where fehler = 'timeout nach 30 s'"
SQL_FEHLER_ZURUECK = "update extraktionen set fehler = 'timeout nach 30 s' where fehler = 'timeout nach 31 s'"
SQL_LEEREN = "truncate selected_extractor"
SQL_PFLEGE = ["vacuum analyze", "checkpoint"]
# Die älteste offene Transaktion einer Verbindung der Stufe, in Sekunden.
SQL_LAENGSTE = """
select coalesce(max(extract(epoch from now() - xact_start)), 0)
from pg_stat_activity
where application_name like 'wurzelwerk-auswahl%' and xact_start is not null
"""


def ausfuehren(url: str, *anfragen: str, **params) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for anfrage in anfragen:
            conn.execute(anfrage, params or None)


def erzeugen(url: str, von: int, bis: int) -> None:
    for start in range(von, bis + 1, 50000):  # in Happen: jede Transaktion bleibt klein
        ende = min(bis, start + 49999)
        ausfuehren(url, SQL_ITEMS, SQL_KANDIDATEN, von=start, bis=ende)


class Waechter:
    """Tastet in einem Thread die längste offene Transaktion der Stufe ab."""

    def __init__(self, url: str, abstand: float = 0.2) -> None:
        self.url, self.abstand = url, abstand
        self.laengste = 0.0
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._laufen, daemon=True)

    def __enter__(self) -> Waechter:
        self._thread.start()
        return self

    def _laufen(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self._halt.wait(self.abstand):
                self.laengste = max(self.laengste, float(conn.execute(SQL_LAENGSTE).fetchone()[0]))

    def __exit__(self, *_) -> None:
        self._halt.set()
        self._thread.join()


def lauf(url: str, verzeichnis: Path, *args: str) -> tuple[float, float, str, float]:
    """(Sekunden, größter RSS in MB, Bilanzzeile, längste Transaktion in s)."""
    with Waechter(url) as waechter:
        sekunden, rss, bilanz = gemessen(*args, url=url, cwd=verzeichnis)
    return sekunden, rss, bilanz, waechter.laengste


def messen(groessen: list[int], verzeichnis: Path) -> tuple[str, list[dict]]:
    from auswahlstufe.betrieb import migrationen

    ergebnisse = []
    with server.wegwerf_datenbank(verzeichnis) as url:
        ausfuehren(url, RAW_ITEMS)
        migrationen.migrieren(url, ausgabe=lambda _: None)
        with psycopg.connect(url) as conn:
            version = conn.execute("show server_version").fetchone()[0]
        da = 0
        for n in groessen:
            print(f"erzeuge Items {da + 1} bis {n} …", file=sys.stderr, flush=True)
            erzeugen(url, da + 1, n)
            da = n
            ausfuehren(url, SQL_LEEREN, *SQL_PFLEGE)
            with psycopg.connect(url) as conn:
                groesse = conn.execute(SQL_GROESSE).fetchone()[0]
            print(f"Backfill über {n} Items …", file=sys.stderr, flush=True)
            m = {"n": n, "zeichen": groesse, "backfill": lauf(url, verzeichnis, "--backfill")}
            print(f"  {m['backfill']}", file=sys.stderr, flush=True)
            ausfuehren(url, SQL_FEHLER_AENDERN, *SQL_PFLEGE)
            m["nachtragen"] = lauf(url, verzeichnis, "--backfill")
            m["danach"] = lauf(url, verzeichnis, "--backfill")
            print(f"  {m['nachtragen']}\n  {m['danach']}", file=sys.stderr, flush=True)
            ausfuehren(url, SQL_FEHLER_ZURUECK)
            ergebnisse.append(m)
    return version, ergebnisse


def tabelle(ergebnisse: list[dict]) -> list[str]:
    zeilen = [
        "| Items | Zeichen je Kandidat | `--backfill` leer | Spitze RSS | längste Transaktion "
        "| erneut nach geändertem Fehlertext (jedes 10. Item) | noch einmal |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in ergebnisse:
        b, nach, danach = m["backfill"], m["nachtragen"], m["danach"]
        zeilen.append(
            f"| {m['n']} | {m['zeichen']} | {zahl(b[0], 1)} s ({zahl(m['n'] / b[0], 0)} Items/s) "
            f"| {zahl(b[1], 0)} MB | {zahl(b[3], 2)} s | {zahl(nach[0], 1)} s | {zahl(danach[0], 1)} s |"
        )
    return zeilen


@click.command(cls=DeutscherBefehl)
@optionen.groessen
def main(groessen: tuple[int, ...]) -> None:
    """Backfill über viele erzeugte Items (Skala).

    GRÖSSE: Zahl der Items, aufsteigend; ohne Angabe 100000 und 1000000.
    """
    groessen = groessen or optionen.GROESSEN
    version, ergebnisse = skala(groessen, messen, "aw-million-")
    befehl = " ".join(["python -m bench.million", *map(str, groessen)])
    print(f"`{befehl}`")
    print(f"{maschine()}, PostgreSQL {version}, {kerne.nutzbar()} Worker")
    print()
    print("\n".join(tabelle(ergebnisse)))
    print()
    for m in ergebnisse:
        print(f"{m['n']}: Backfill „{m['backfill'][2]}“")
        print(f"{m['n']}: erneut „{m['nachtragen'][2]}“; noch einmal „{m['danach'][2]}“")


if __name__ == "__main__":
    main()
