"""Vom Poll zur Entscheidung, während ein langer Backfill extrahiert – gegen denselben Tick ohne ihn.

Auf einem Wegwerf-PostgreSQL 18 liegt ein Bestand von N Seiten (die aeb-Seiten wiederholt), kodiert,
aber mit Kandidaten einer früheren Fassung aller drei Pakete: ``auswahl.py --extrahieren
--backfill`` extrahiert jede Seite neu, wie nach einem Update der Extraktoren. Gemessen wird, was cron
täte: Ingest pollt einen Slot (``--seiten`` neue Seiten, Slot = jetzt), und ``auswahl.py
--extrahieren --nachholen`` läuft sofort – die Zeit vom Poll bis zum Ende des Ticks (dann ist der
Slot entschieden):

* **ohne Backfill:** der Tick allein, vor dem Backfill und nach ihm (die Grundlinie);
* **während des Backfills:** ``--ticks`` Polls im Abstand ``--abstand``, jeder mit seinem Tick,
  während der Backfill läuft (gemeldet wird, ob er beim Ende des Ticks noch lief).

Gemeldet: die Zeiten je Tick, ihr Median gegen die Grundlinie, und wie lange der Backfill brauchte.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.weichen -n 543 --ticks 4 --abstand 20
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import psycopg

from auswahlstufe import kerne, server
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.betrieb import migrationen
from auswahlstufe.server import RAW_ITEMS
from bench.messen import PROJEKT, aeb_anlegen, gemessen

BESTAND_SLOT = datetime.fromisoformat("2026-09-07T06:00+00:00")
TICK = ("--extrahieren", "--nachholen", "--prozesse", "2")
BACKFILL = ("--extrahieren", "--backfill", "--prozesse", "2")
SQL_ENTSCHIEDEN = """
select count(*) from selected_extractor s join raw_items r on r.id = s.item_id where r.slot = %s
"""


def _umgebung(url: str) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": url, "AUSWAHL_ZEILENKOPF": "aus", "PYTHONPATH": str(PROJEKT)}


def pollen_und_ticken(url: str, arbeit: Path, ab: int, seiten: int) -> float:
    """Ein Poll (``seiten`` Items mit Seiten ab id ``ab``, Slot = jetzt) und sofort der Tick;
    Sekunden vom Poll bis der Slot entschieden ist."""
    slot = datetime.now(UTC).replace(microsecond=0)
    with psycopg.connect(url) as conn:
        aeb_anlegen(conn, range(ab, ab + seiten), slot)
    start = time.perf_counter()
    gemessen(*TICK, url=url, cwd=arbeit)
    dauer = time.perf_counter() - start
    with psycopg.connect(url) as conn:
        entschieden = conn.execute(SQL_ENTSCHIEDEN, (slot,)).fetchone()[0]
    if entschieden != seiten:
        raise click.ClickException(f"Slot {slot}: {entschieden} von {seiten} entschieden")
    return dauer


@click.command(cls=DeutscherBefehl)
@click.option(
    "-n", "anzahl", type=click.IntRange(min=1), default=543, show_default=True, help="Seiten im Bestand."
)
@click.option("--seiten", type=click.IntRange(min=1), default=20, show_default=True, help="Seiten je Poll.")
@click.option(
    "--ticks", type=click.IntRange(min=1), default=4, show_default=True, help="Polls während des Backfills."
)
@click.option(
    "--abstand",
    type=click.FloatRange(min=0),
    default=20.0,
    show_default=True,
    help="Sekunden zwischen Polls.",
)
def main(anzahl: int, seiten: int, ticks: int, abstand: float) -> None:
    """Vom Poll zur Entscheidung: ein Tick während eines langen Backfills gegen denselben ohne ihn."""
    last = [os.getloadavg()[0]]
    ohne: list[float] = []
    waehrend: list[tuple[float, bool]] = []
    naechste_id = anzahl + 1
    with tempfile.TemporaryDirectory(prefix="aw-weichen-") as verzeichnis:
        arbeit = Path(verzeichnis)
        with server.wegwerf_datenbank(arbeit) as url:
            with psycopg.connect(url) as conn:
                conn.execute(RAW_ITEMS)
                conn.commit()
                migrationen.migrieren(url, ausgabe=lambda _: None)
                fruehere = dict.fromkeys(
                    ("trafilatura", "newspaper4k", "readability"), "eine frühere Fassung"
                )
                aeb_anlegen(conn, range(1, anzahl + 1), BESTAND_SLOT, fassung=fruehere)
            gemessen("--backfill", url=url, cwd=arbeit)  # entschieden, mit den alten Kandidaten
            ohne.append(pollen_und_ticken(url, arbeit, naechste_id, seiten))
            naechste_id += seiten
            beginn = time.perf_counter()
            backfill = subprocess.Popen(
                [sys.executable, str(PROJEKT / "auswahl.py"), *BACKFILL],
                cwd=arbeit,
                env=_umgebung(url),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(ticks):
                time.sleep(abstand)
                if backfill.poll() is not None:
                    break
                dauer = pollen_und_ticken(url, arbeit, naechste_id, seiten)
                naechste_id += seiten
                waehrend.append((dauer, backfill.poll() is None))
                last.append(os.getloadavg()[0])
            fehler = backfill.communicate()[1]
            backfill_s = time.perf_counter() - beginn
            if backfill.returncode != 0:
                raise click.ClickException(f"Backfill: Exit {backfill.returncode}: {fehler.strip()}")
            ohne.append(pollen_und_ticken(url, arbeit, naechste_id, seiten))
    grund = statistics.median(ohne)
    print(
        f"`python -m bench.weichen -n {anzahl} --seiten {seiten} --ticks {ticks} --abstand {abstand:g}`; "
        f"{kerne.nutzbar()} Kerne nutzbar, Lastmittel {min(last):.1f}–{max(last):.1f}"
    )
    print(
        f"Tick ohne Backfill (vorher, nachher): {', '.join(f'{s:.1f} s' for s in ohne)}; Median {grund:.1f} s"
    )
    print(
        "Ticks während des Backfills: "
        + ", ".join(f"{s:.1f} s{'' if lief else ' (Backfill schon fertig)'}" for s, lief in waehrend)
    )
    if waehrend:
        median = statistics.median(s for s, _ in waehrend)
        print(f"Median während des Backfills: {median:.1f} s, {median / grund:.2f}× der Tick ohne ihn")
    print(
        f"Backfill über {anzahl} Seiten: {timedelta(seconds=round(backfill_s))} ({anzahl / backfill_s:.1f} Seiten/s)"
    )


if __name__ == "__main__":
    main()
