"""Was Kompression im Server kostet: die Zahlen hinter ``storage external``.

Startet einen Wegwerf-PostgreSQL 18, lädt ``bench.erzeugen.artikel(n, seed)``,
kodiert einmal mit ``auswahl.py --backfill`` und misst dann, jeweils als
CPU-Zeit des Serverprozesses (``/proc/<pid>/stat``) und als Platz:

* Schreiben: dieselben n Kodierungen, in Stapeln von 200 wie die Stufe
  (COPY in eine temporäre Tabelle, ein Upsert je Stapel), einmal mit
  komprimiertem Text (pglz, die Voreinstellung), einmal unkomprimiert
  (``storage external``, wie ``selected_extractor.text``);
* Lesen: die Kandidatentexte aller Items, wie ein Backfill sie liest, einmal
  komprimiert (wie ``extraktionen`` heute), einmal unkomprimiert.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.speicher_db            # 20000 Items, ~1 min
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import psycopg
from psycopg import sql

from auswahlstufe import server
from auswahlstufe.anzeige import zahl
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.server import RAW_ITEMS
from bench import optionen
from bench.messen import gemessen

STAPEL = 200
# Eine Zieltabelle wie selected_extractor, mit wählbarer Speicherart des Texts.
SQL_ZIEL = "create table aw_ziel (like selected_extractor including all)"
SQL_ZIEL_SPEICHER = sql.SQL("alter table aw_ziel alter column text set storage {}")
SQL_ZIEL_WEG = "drop table if exists aw_ziel"
SQL_TEMP = sql.SQL(
    "create temp table if not exists aw_t (like selected_extractor including defaults) on commit delete rows;"
    "alter table aw_t alter column text set storage {}"
)
SQL_SPALTEN = "item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme"
SQL_KODIERUNGEN = (
    "select "
    + SQL_SPALTEN.replace("metriken", "metriken::text")
    + " from selected_extractor order by item_id"
)
SQL_COPY = "copy aw_t (" + SQL_SPALTEN + ") from stdin"
SQL_UPSERT = (
    "insert into aw_ziel as s select * from aw_t on conflict (item_id, coder_version) do update "
    "set text = excluded.text where s.ergebnissumme is distinct from excluded.ergebnissumme"
)
SQL_GROESSE = "select pg_total_relation_size(%s::regclass)"
# Die Kandidatentexte so lesen, wie ein Backfill sie liest (je Item ein Array).
SQL_LESEN = """
select item_id, array_agg(text order by extraktor) from extraktionen
group by item_id order by item_id
"""
SQL_UNKOMPRIMIERT = (
    "alter table extraktionen alter column text set storage external;"
    "update extraktionen set text = text || '';"
    "vacuum full extraktionen"
)


def server_cpu(conn: psycopg.Connection) -> float:
    """CPU-Sekunden (utime + stime) des Serverprozesses dieser Verbindung bisher."""
    with open(f"/proc/{conn.info.backend_pid}/stat", encoding="ascii") as f:
        felder = f.read().rsplit(")", 1)[1].split()
    return (int(felder[11]) + int(felder[12])) / os.sysconf("SC_CLK_TCK")


def schreiben(url: str, zeilen: list[tuple], speicher: str) -> tuple[float, int]:
    """(Server-CPU, Bytes der Tabelle) für alle Zeilen in Stapeln, Text mit ``speicher``."""
    with psycopg.connect(url, autocommit=True) as verwaltung:
        verwaltung.execute(SQL_ZIEL_WEG)
        verwaltung.execute(SQL_ZIEL)
        verwaltung.execute(SQL_ZIEL_SPEICHER.format(sql.SQL(speicher)))
        verwaltung.execute("checkpoint")
    with psycopg.connect(url) as conn:
        conn.execute(SQL_TEMP.format(sql.SQL(speicher)))
        conn.commit()
        vorher = server_cpu(conn)
        for anfang in range(0, len(zeilen), STAPEL):
            with conn.transaction(), conn.cursor() as cur:
                with cur.copy(SQL_COPY) as copy:
                    for zeile in zeilen[anfang : anfang + STAPEL]:
                        copy.write_row(zeile)
                cur.execute(SQL_UPSERT)
        cpu = server_cpu(conn) - vorher
        groesse = conn.execute(SQL_GROESSE, ("aw_ziel",)).fetchone()[0]
    return cpu, groesse


def lesen(url: str) -> tuple[float, int]:
    """(Server-CPU, Bytes von extraktionen) für einmal alle Kandidatentexte lesen."""
    with psycopg.connect(url) as conn:
        vorher = server_cpu(conn)
        with conn.cursor(name="aw_lesen", binary=True) as cur:
            cur.itersize = STAPEL
            cur.execute(SQL_LESEN)
            for _ in cur:
                pass
        cpu = server_cpu(conn) - vorher
        groesse = conn.execute(SQL_GROESSE, ("extraktionen",)).fetchone()[0]
    return cpu, groesse


def messen(n: int, seed: int, verzeichnis: Path) -> list[str]:
    from auswahlstufe.betrieb import migrationen
    from auswahlstufe.referenz.erzeugen import artikel
    from bench.tempo_db import bestand_laden

    with server.wegwerf_datenbank(verzeichnis) as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(RAW_ITEMS)
        migrationen.migrieren(url, ausgabe=lambda _: None)
        bestand_laden(url, list(artikel(n, seed)))
        gemessen("--backfill", url=url, cwd=verzeichnis)
        with psycopg.connect(url) as conn:
            zeilen = conn.execute(SQL_KODIERUNGEN).fetchall()
        schreiben(url, zeilen, "external")  # einmal zum Aufwärmen (Katalog, Puffer)
        ergebnis = {art: schreiben(url, zeilen, art) for art in ("extended", "external")}
        gelesen = {"pglz": min(lesen(url) for _ in range(2))}
        with psycopg.connect(url, autocommit=True) as conn:
            for anweisung in SQL_UNKOMPRIMIERT.split(";"):
                conn.execute(anweisung)
        gelesen["unkomprimiert"] = min(lesen(url) for _ in range(2))

    def mb(b: int) -> str:
        return f"{b / 1e6:.0f} MB"

    zeilen_aus = [
        f"{n} Items (seed {seed}), PostgreSQL-Serverprozess, CPU-Sekunden",
        "| Messung | komprimiert (pglz) | unkomprimiert (external) |",
        "|---|---:|---:|",
        f"| Kodierungen schreiben (COPY + Upsert, Stapel {STAPEL}) | {zahl(ergebnis['extended'][0], 2)} s, "
        f"{mb(ergebnis['extended'][1])} | {zahl(ergebnis['external'][0], 2)} s, {mb(ergebnis['external'][1])} |",
        f"| Kandidatentexte lesen (wie ein Backfill) | {zahl(gelesen['pglz'][0], 2)} s, {mb(gelesen['pglz'][1])} "
        f"| {zahl(gelesen['unkomprimiert'][0], 2)} s, {mb(gelesen['unkomprimiert'][1])} |",
    ]
    return zeilen_aus


@click.command(cls=DeutscherBefehl)
@optionen.anzahl(20000)
@optionen.seed
def main(anzahl: int, seed: int) -> None:
    """Kosten der Kompression im Server (storage external) auf einem Wegwerf-PostgreSQL 18."""
    verzeichnis = Path(tempfile.mkdtemp(prefix="aw-speicher-"))
    try:
        for zeile in messen(anzahl, seed, verzeichnis):
            print(zeile)
    finally:
        shutil.rmtree(verzeichnis, ignore_errors=True)


if __name__ == "__main__":
    main()
