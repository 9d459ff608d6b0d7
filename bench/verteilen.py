"""Die Datenbank verteilt die Arbeit: ein Tick während eines langen Backfills, zwei Rechner an einem Bestand.

Auf einem Wegwerf-PostgreSQL 18 liegt ein Bestand von N Seiten (die aeb-Seiten wiederholt), kodiert,
aber mit Kandidaten einer früheren Fassung aller drei Pakete: ``auswahl.py --extrahieren
--backfill`` extrahiert jede Seite neu, wie nach einem Update der Extraktoren. Gemessen wird, was cron
täte: Ingest pollt einen Slot (``--seiten`` neue Seiten, Slot = jetzt), und ``auswahl.py
--extrahieren --nachholen`` läuft sofort – die Zeit vom Poll bis zum Ende des Ticks (dann ist der
Slot entschieden):

* **ohne Backfill:** der Tick allein, vor dem Backfill und nach ihm (die Grundlinie);
* **während des Backfills:** ``--ticks`` Polls im Abstand ``--abstand``, jeder mit seinem Tick,
  während der Backfill läuft (gemeldet wird, ob er beim Ende des Ticks noch lief).

Danach, mit ``--rechner``: derselbe Backfill (wieder jede Seite veraltet) einmal allein und einmal
als zwei gleiche Aufrufe zugleich, jeder mit ``--prozesse 1`` – zwei Rechner mit je einem Kern, auf
einer Maschine mit zwei Kernen. Gemeldet: beide Zeiten, ihr Verhältnis, und dass jede Seite genau
einmal extrahiert wurde.

Gemeldet: die Zeiten je Tick, ihr Median gegen die Grundlinie, und wie lange der Backfill brauchte.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.verteilen -n 543 --ticks 4 --abstand 20 --rechner
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
EIN_KERN = ("--extrahieren", "--backfill", "--prozesse", "1")
FRUEHERE = dict.fromkeys(("trafilatura", "newspaper4k", "readability"), "eine frühere Fassung")
SQL_VERALTEN = "update extraktionen set extraktor_fassung = 'eine frühere Fassung'"
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


def _starten(url: str, arbeit: Path, args: tuple[str, ...]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(PROJEKT / "auswahl.py"), *args],
        cwd=arbeit,
        env=_umgebung(url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _extrahiert(prozess: subprocess.Popen) -> int:
    out, err = prozess.communicate()
    if prozess.returncode != 0:
        raise click.ClickException(f"Backfill: Exit {prozess.returncode}: {err.strip()}")
    zeile = next(z for z in out.splitlines() if z.startswith("Extraktion: "))
    return int(zeile.split(" extrahiert")[0].rsplit(" ", 1)[1])


def rechner(url: str, arbeit: Path, anzahl: int) -> tuple[float, float, list[int]]:
    """Jede Seite veraltet, dann ein Backfill mit einem Kern; noch einmal veraltet, dann zwei zugleich.
    Sekunden allein, Sekunden zu zweit (bis beide fertig), die extrahierten Seiten je Rechner."""
    zeiten, je_rechner = [], []
    for n in (1, 2):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(SQL_VERALTEN)
        start = time.perf_counter()
        laeufe = [_starten(url, arbeit, EIN_KERN) for _ in range(n)]
        je_rechner = [_extrahiert(lauf) for lauf in laeufe]
        zeiten.append(time.perf_counter() - start)
    if sum(je_rechner) != anzahl:
        raise click.ClickException(f"zu zweit {je_rechner} Seiten extrahiert, erwartet zusammen {anzahl}")
    return zeiten[0], zeiten[1], je_rechner


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
@click.option(
    "--rechner", "mit_rechnern", is_flag=True, help="Dazu: ein Backfill allein gegen zwei zugleich."
)
def main(anzahl: int, seiten: int, ticks: int, abstand: float, mit_rechnern: bool) -> None:
    """Ein Tick während eines langen Backfills gegen denselben ohne ihn; zwei Rechner gegen einen."""
    last = [os.getloadavg()[0]]
    ohne: list[float] = []
    waehrend: list[tuple[float, bool]] = []
    naechste_id = anzahl + 1
    zwei = None
    with tempfile.TemporaryDirectory(prefix="aw-verteilen-") as verzeichnis:
        arbeit = Path(verzeichnis)
        with server.wegwerf_datenbank(arbeit) as url:
            with psycopg.connect(url) as conn:
                conn.execute(RAW_ITEMS)
                conn.commit()
                migrationen.migrieren(url, ausgabe=lambda _: None)
                aeb_anlegen(conn, range(1, anzahl + 1), BESTAND_SLOT, fassung=FRUEHERE)
            gemessen("--backfill", url=url, cwd=arbeit)  # entschieden, mit den alten Kandidaten
            ohne.append(pollen_und_ticken(url, arbeit, naechste_id, seiten))
            naechste_id += seiten
            beginn = time.perf_counter()
            backfill = _starten(url, arbeit, BACKFILL)
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
            if mit_rechnern:
                zwei = rechner(url, arbeit, naechste_id - 1 + seiten)
                last.append(os.getloadavg()[0])
    grund = statistics.median(ohne)
    print(
        f"`python -m bench.verteilen -n {anzahl} --seiten {seiten} --ticks {ticks} --abstand {abstand:g}"
        f"{' --rechner' if mit_rechnern else ''}`; "
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

    if zwei is not None:
        allein, zusammen, je = zwei
        print(
            f"Backfill mit einem Kern: allein {allein:.1f} s, zwei zugleich {zusammen:.1f} s "
            f"({allein / zusammen:.2f}× so schnell), extrahiert je Rechner {' + '.join(map(str, je))}"
        )


if __name__ == "__main__":
    main()
