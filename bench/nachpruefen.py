"""Was eine neue Fassung der Seitenart im Haus kostet: nachprüfen und neu stempeln statt extrahieren.

Auf einem Wegwerf-PostgreSQL 18 liegen N Seiten (die 181 von bench/aeb/html wiederholt) samt
ihren gespeicherten Kandidaten (candidates.json) mit der heutigen Fassung, kodiert. Gemessen
werden, im selben Lauf und abwechselnd, zwei Läufe von ``auswahl.py --extrahieren --backfill``
vom Start bis zum Ende:

* **Grundlinie:** nichts ist veraltet – der Lauf liest die Prüfsummen, extrahiert nichts, wählt
  nichts neu;
* **Nachprüfen:** jede Zeile trägt die vorige Fassung der Seitenart (Stand f2b5c16) – der Lauf liest
  jede Seite, urteilt ohne Extraktor und stempelt jede Zeile neu;
* **newspaper4k neu:** die Stempel des Stands 90cfb01 (ohne Seitenart, newspaper4k ohne feste
  Kandidatenordnung) – newspaper4k extrahiert jede Seite neu, die beiden anderen werden nachgeprüft;
* **alles neu:** eine neue Fassung aller drei Pakete – jede Seite wird ganz neu extrahiert.

Gemeldet: Sekunden (Median), die Verhältnisse und die Dauer je 100.000 Seiten. Ohne ``-n`` jede
der 181 Seiten einmal: newspaper4k merkt sich je Worker, was es an einer Seite schon rechnete –
wiederholte Seiten wären billiger als im Betrieb.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.nachpruefen --runden 3
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from datetime import datetime
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import psycopg

from auswahlstufe import kerne, server
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.betrieb import migrationen
from auswahlstufe.extraktion import art, aufrufe
from auswahlstufe.fortschritt import dauer_text
from auswahlstufe.server import RAW_ITEMS
from bench.messen import aeb_anlegen, gemessen

SQL_VORIGE_FASSUNG = "update extraktionen set extraktor_fassung = regexp_replace(extraktor_fassung, %s, %s)"
SQL_OHNE_FESTE_ORDNUNG = """
update extraktionen set extraktor_fassung = replace(extraktor_fassung,
    '; Kandidatenordnung fest (newspaper_fest); Fassung 2', '; Fassung 1')
where extraktor = 'newspaper4k'
"""
SQL_ALLES_NEU = "update extraktionen set extraktor_fassung = 'eine frühere Fassung des Pakets'"
# Die Stempel, die ein Stand hinterließ: (Ersatz für die Seitenart, Zusatz); None: nichts veraltet.
STAENDE = {
    "Grundlinie": None,
    "Nachprüfen": ("; Seitenart (art.keine_html) Fassung 1", None),
    "newspaper4k neu": ("", SQL_OHNE_FESTE_ORDNUNG),
    "alles neu": ("", SQL_ALLES_NEU),
}


SLOT = datetime.fromisoformat("2026-09-07T06:00+00:00")


def anlegen(url: str, n: int) -> None:
    versionen = aufrufe.versionen()
    fassung = {x: aufrufe.extraktor_fassung(x, versionen[x]) for x in aufrufe.EXTRAKTOREN}
    with psycopg.connect(url) as conn:
        conn.execute(RAW_ITEMS)
        conn.commit()
        migrationen.migrieren(url, ausgabe=lambda _: None)
        aeb_anlegen(conn, range(1, n + 1), SLOT, fassung=fassung)


@click.command(cls=DeutscherBefehl)
@click.option("-n", "anzahl", type=click.IntRange(min=1), default=181, show_default=True, help="Seiten.")
@click.option("--runden", type=click.IntRange(min=1), default=3, show_default=True, help="Runden (Median).")
def main(anzahl: int, runden: int) -> None:
    """Nachprüfen der Seitenart gegen einen Lauf ohne Arbeit, dazu die Kosten einer neuen Extraktion."""
    args = ("--extrahieren", "--backfill", "--prozesse", "2")
    last = [os.getloadavg()[0]]
    zeiten: dict[str, list[float]] = {name: [] for name in STAENDE}
    with tempfile.TemporaryDirectory(prefix="aw-nachpruefen-") as verzeichnis:
        arbeit = Path(verzeichnis)
        with server.wegwerf_datenbank(arbeit) as url:
            anlegen(url, anzahl)
            gemessen(*args, url=url, cwd=arbeit)  # kodieren: danach hat kein Lauf mehr etwas zu wählen
            for runde in range(runden):
                reihe = list(STAENDE) if runde % 2 == 0 else list(STAENDE)[::-1]
                for name in reihe:
                    if STAENDE[name] is not None:
                        ersatz, zusatz = STAENDE[name]
                        with psycopg.connect(url) as conn:
                            conn.execute(SQL_VORIGE_FASSUNG, (art.FASSUNG_MUSTER, ersatz))
                            if zusatz:
                                conn.execute(zusatz)
                    sekunden, _, _ = gemessen(*args, url=url, cwd=arbeit)
                    zeiten[name].append(sekunden)
                    last.append(os.getloadavg()[0])
    print(
        f"`python -m bench.nachpruefen -n {anzahl} --runden {runden}`; {kerne.nutzbar()} Kerne nutzbar, "
        f"Lastmittel {min(last):.1f}–{max(last):.1f}; Aufruf: wurzelwerk-auswahl {' '.join(args)}"
    )
    grund = statistics.median(zeiten["Grundlinie"])
    for name, werte in zeiten.items():
        median = statistics.median(werte)
        print(
            f"{name}: {median:.1f} s (Median aus {', '.join(f'{w:.1f}' for w in werte)}), "
            f"{median / grund:.2f}× die Grundlinie, je 100.000 Seiten {dauer_text(median / anzahl * 100_000)}"
        )


if __name__ == "__main__":
    main()
