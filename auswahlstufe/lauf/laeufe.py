"""Protokoll der Läufe in ``auswahl_laeufe`` (Migration aw-004).

Ein Lauf (außer ``--trocken``) trägt sich beim Start ein und am Ende mit
Bilanz, Exit-Code und Meldung aus – jedes Mal in einer eigenen kurzen
Transaktion, damit ein getöteter Lauf als unbeendet stehen bleibt. Fehlt der
Rolle das Recht auf die Tabelle, läuft die Stufe trotzdem und warnt: das
Protokoll ist eine Auskunft, die Kodierung ist die Arbeit.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime

import click
import psycopg
from psycopg.types.json import Jsonb

SQL_BEGINN = """
insert into auswahl_laeufe (modus, slot, teil, coder_version, prozesse, stichprobe, rechner, pid)
values (%(modus)s, %(slot)s, %(teil)s, %(version)s, %(prozesse)s, %(stichprobe)s, %(rechner)s, %(pid)s)
returning id
"""
SQL_ENDE = """
update auswahl_laeufe set
    beendet_am = clock_timestamp(),
    neu = %(neu)s, geaendert = %(geaendert)s, unveraendert = %(unveraendert)s, entfernt = %(entfernt)s,
    ohne_kandidaten = %(ohne_kandidaten)s, nachgetragen = %(nachgetragen)s,
    exit_code = %(exit_code)s, meldung = %(meldung)s, extraktion = %(extraktion)s
where id = %(id)s
"""


def beginnen(
    conn: psycopg.Connection,
    *,
    slot: datetime | None,
    teil: tuple[int, int] | None,
    version: str,
    prozesse: int,
    stichprobe: int | None,
) -> int | None:
    """Trägt den Lauf ein (``conn`` im Autocommit); gibt seine id zurück, None ohne Recht."""
    params = {
        "modus": "backfill" if slot is None else "slot",
        "slot": slot,
        "teil": f"{teil[0]}/{teil[1]}" if teil else None,
        "version": version,
        "prozesse": prozesse,
        "stichprobe": stichprobe,
        "rechner": socket.gethostname(),
        "pid": os.getpid(),
    }
    try:
        return conn.execute(SQL_BEGINN, params).fetchone()[0]
    except psycopg.errors.InsufficientPrivilege:
        click.echo(
            "Warnung: der Lauf wird nicht protokolliert – der Rolle fehlt das Recht auf auswahl_laeufe "
            "(select, insert, update).",
            err=True,
        )
        return None


def beenden(conn: psycopg.Connection, lauf_id: int, bilanz, exit_code: int, meldung: str | None) -> None:
    """Trägt das Ende ein (``conn`` im Autocommit)."""
    conn.execute(
        SQL_ENDE,
        {
            "id": lauf_id,
            "neu": bilanz.neu,
            "geaendert": bilanz.geaendert,
            "unveraendert": bilanz.unveraendert,
            "entfernt": bilanz.entfernt,
            "ohne_kandidaten": bilanz.ohne_kandidaten,
            "nachgetragen": bilanz.nachgetragen,
            "exit_code": exit_code,
            "meldung": meldung,
            # die Zählung der Extraktion davor (--extrahieren, aw-009), sonst NULL
            "extraktion": Jsonb(bilanz.extraktion) if bilanz.extraktion is not None else None,
        },
    )
