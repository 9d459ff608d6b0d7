"""Was eine neue Fassung der Seitenart im Haus kostet: nachprüfen und neu stempeln statt extrahieren.

Auf einem Wegwerf-PostgreSQL 18 liegen N Seiten (die 181 von bench/aeb/html wiederholt) samt
ihren gespeicherten Kandidaten (candidates.json) mit der heutigen Fassung, kodiert. Gemessen
werden, im selben Lauf und abwechselnd, zwei Läufe von ``auswahl.py --extrahieren --backfill``
vom Start bis zum Ende:

* **Grundlinie:** nichts ist veraltet – der Lauf liest die Prüfsummen, extrahiert nichts, wählt
  nichts neu;
* **Nachprüfen:** jede Zeile trägt die vorige Fassung der Seitenart – der Lauf liest jede Seite,
  urteilt ohne Extraktor und stempelt jede Zeile neu.

Gemeldet: Sekunden beider (Median), das Verhältnis und die Dauer je 100.000 Seiten; daneben zum
Vergleich, was eine neue Extraktion derselben Seiten bei der Rate aus docs/extraktion.md kostete.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.nachpruefen -n 2000 --runden 3
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import sys
import tempfile
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
from auswahlstufe.lauf import ingest
from bench.messen import PROJEKT, gemessen

AEB = PROJEKT / "bench" / "aeb"
SLOT = "2026-09-07 06:00+00"
# Seiten je Sekunde mit zwei Workern auf zwei Kernen (docs/extraktion.md, ein Slot von 400 Seiten).
EXTRAKTION_S = 11.56

SQL_SEITE = "insert into seiten (item_id, html, url, content_type) values (%s, %s, %s, 'text/html')"
SQL_KANDIDAT = """
insert into extraktionen (item_id, extraktor, text, fehler, extraktor_fassung, seite_sha256)
select %s, %s, %s, %s, %s, sha256(s.html_sha256 || convert_to('text/html', 'UTF8'))
from seiten s where s.item_id = %s
"""
SQL_VORIGE_FASSUNG = "update extraktionen set extraktor_fassung = regexp_replace(extraktor_fassung, %s, %s)"


def anlegen(url: str, n: int) -> None:
    artikel = json.loads((AEB / "candidates.json").read_text(encoding="utf-8"))
    html = {a["id"]: gzip.decompress((AEB / "html" / f"{a['id']}.html.gz").read_bytes()) for a in artikel}
    versionen = aufrufe.versionen()
    fassung = {x: aufrufe.extraktor_fassung(x, versionen[x]) for x in aufrufe.EXTRAKTOREN}
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.execute(ingest.RAW_ITEMS)
        conn.commit()
        migrationen.migrieren(url, ausgabe=lambda _: None)
        cur.executemany(
            "insert into raw_items (id, slot) values (%s, %s)", [(i, SLOT) for i in range(1, n + 1)]
        )
        for nr in range(1, n + 1):
            a = artikel[(nr - 1) % len(artikel)]
            cur.execute(SQL_SEITE, (nr, html[a["id"]], a["url"]))
            cur.executemany(
                SQL_KANDIDAT,
                [(nr, x, e.get("text"), e.get("error"), fassung[x], nr) for x, e in a["extractions"].items()],
            )


@click.command(cls=DeutscherBefehl)
@click.option("-n", "anzahl", type=click.IntRange(min=1), default=2000, show_default=True, help="Seiten.")
@click.option("--runden", type=click.IntRange(min=1), default=3, show_default=True, help="Runden (Median).")
def main(anzahl: int, runden: int) -> None:
    """Nachprüfen der Seitenart gegen einen Lauf ohne Arbeit, dazu die Kosten einer neuen Extraktion."""
    vorige = "; Seitenart (art.keine_html) Fassung 1"
    args = ("--extrahieren", "--backfill", "--prozesse", "2")
    last = [os.getloadavg()[0]]
    zeiten: dict[str, list[float]] = {"Grundlinie": [], "Nachprüfen": []}
    bilanz = ""
    with tempfile.TemporaryDirectory(prefix="aw-nachpruefen-") as verzeichnis:
        arbeit = Path(verzeichnis)
        with server.wegwerf_datenbank(arbeit) as url:
            anlegen(url, anzahl)
            gemessen(*args, url=url, cwd=arbeit)  # kodieren: danach hat kein Lauf mehr etwas zu wählen
            for runde in range(runden):
                for name in ("Grundlinie", "Nachprüfen") if runde % 2 == 0 else ("Nachprüfen", "Grundlinie"):
                    if name == "Nachprüfen":
                        with psycopg.connect(url) as conn:
                            conn.execute(SQL_VORIGE_FASSUNG, (art.FASSUNG_MUSTER, vorige))
                    sekunden, _, _ = gemessen(*args, url=url, cwd=arbeit)
                    zeiten[name].append(sekunden)
                    last.append(os.getloadavg()[0])
            with psycopg.connect(url) as conn:
                bilanz = conn.execute(
                    "select extraktion::text from auswahl_laeufe where (extraktion->>'nachgeprueft')::int > 0 "
                    "order by id desc limit 1"
                ).fetchone()[0]
    grund, pruefen = (statistics.median(zeiten[n]) for n in ("Grundlinie", "Nachprüfen"))
    print(
        f"`python -m bench.nachpruefen -n {anzahl} --runden {runden}`; {kerne.nutzbar()} Kerne nutzbar, "
        f"Lastmittel {min(last):.1f}–{max(last):.1f}; Aufruf: wurzelwerk-auswahl {' '.join(args)}"
    )
    for name, werte in zeiten.items():
        print(f"{name}: {statistics.median(werte):.1f} s (Median aus {', '.join(f'{w:.1f}' for w in werte)})")
    je_seite = (pruefen - grund) / anzahl
    print(f"Nachprüfen ÷ Grundlinie: {pruefen / grund:.2f}×; Zählung: {bilanz}")
    print(
        f"je 100.000 Seiten: Nachprüfen {dauer_text(pruefen / anzahl * 100_000)} "
        f"(davon {dauer_text(je_seite * 100_000)} mehr als ohne Arbeit); eine neue Extraktion bei "
        f"{EXTRAKTION_S} Seiten/s: {dauer_text(100_000 / EXTRAKTION_S)}"
    )


if __name__ == "__main__":
    main()
