"""Extraktion gemessen: Güte aus dem HTML, Tempo auf den Kernen, Spitzenspeicher.

Drei Messungen auf den 181 Seiten von bench/aeb/html (für Tempo und Speicher
wiederholt, bis die Zahl der Seiten erreicht ist):

* ``guete``: die Kandidaten aus dem HTML (Worker, Zeichensatzregel wie im
  Betrieb), Auswahl mit ``regeln.waehle``, Maß mit ``bewertung`` gegen
  ground-truth.json; dazu, wie viele Kandidaten zeichengleich mit den
  veröffentlichten (candidates.json) sind.
* ``tempo``: im selben Lauf, blockweise abwechselnd, die drei Extraktoren
  nacheinander in einem Prozess (Summe der Einzelzeiten, Wanduhr) und dieselben
  Seiten über ``extraktion.Extraktion`` mit einem und mit N Workern; gemeldet
  werden Seiten/s und die Verhältnisse. Ein Worker gegen die Summe zeigt die
  Kosten der Isolation, N gegen einen Worker, was die Kerne hergeben – auf einer
  Maschine, die andere Läufe teilen, weniger als N.
* ``speicher``: Spitzen-RSS (Hauptprozess, alle Worker zusammen, größter
  Worker) je Zahl der Seiten, abgetastet über /proc alle 0,2 s.
* ``slot``: ein Slot von N Seiten (Voreinstellung 400) in der Datenbank, wie cron
  ihn nach einem Abruf startet: ``auswahl.py --extrahieren --slot …`` als eigener
  Prozess auf einem Wegwerf-PostgreSQL 18, Wanduhr vom Start des Prozesses bis zu
  seinem Ende (Import, Verbindung, Extraktion, Auswahl, Schreiben); danach derselbe
  Aufruf noch einmal, der nichts mehr zu tun hat. Im Nachbarslot liegen 100 Seiten,
  die der Lauf nicht anfassen darf.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.extraktion guete
    python -m bench.extraktion tempo -n 543 --prozesse 2
    python -m bench.extraktion speicher -n 1000 -n 10000 --prozesse 2
    python -m bench.extraktion slot -n 400 --prozesse 2
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import psycopg

import bewertung
from auswahlstufe import server
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.extraktion import seiten as extraktion
from auswahlstufe.lauf import ingest, migrationen
from auswahlstufe.regeln import waehle
from bench.messen import gemessen

AEB = Path(__file__).resolve().parent / "aeb"


def benchmark() -> tuple[list[str], dict, dict, dict[str, bytes]]:
    """ids, Handreferenz, veröffentlichte Kandidaten, HTML-Bytes je id."""
    wahrheit = json.loads((AEB / "ground-truth.json").read_text(encoding="utf-8"))
    kandidaten = {a["id"]: a for a in json.loads((AEB / "candidates.json").read_text(encoding="utf-8"))}
    ids = sorted(wahrheit)
    html = {i: gzip.decompress((AEB / "html" / f"{i}.html.gz").read_bytes()) for i in ids}
    return ids, wahrheit, kandidaten, html


def seiten(ids: list[str], wahrheit: dict, html: dict, n: int) -> Iterator[extraktion.Seite]:
    for i in itertools.islice(itertools.cycle(ids), n):
        yield extraktion.Seite(html[i], wahrheit[i]["url"], i)


def guete(prozesse: int) -> None:
    ids, wahrheit, veroeffentlicht, html = benchmark()
    artikel = []
    gleich = dict.fromkeys(extraktion.EXTRAKTOREN, 0)
    with extraktion.Extraktion(prozesse) as ex:
        for nr, kandidaten in ex.seiten(seiten(ids, wahrheit, html, len(ids))):
            for name in gleich:
                gleich[name] += kandidaten[name] == veroeffentlicht[ids[nr]]["extractions"][name]
            art = {"extractions": kandidaten}
            art["selected_extractor"] = waehle(kandidaten).extraktor
            artikel.append(art)
    referenzen = [wahrheit[i]["articleBody"] for i in ids]
    zeilen = bewertung.zeilen_messen(artikel, referenzen)
    print(f"Güte aus dem HTML, {len(ids)} Seiten (F1 / Präzision / Recall):")
    for name, werte in zeilen.items():
        g = bewertung.guete(werte)
        print(f"  {name:<28} {g.f1:.4f} / {g.praezision:.4f} / {g.recall:.4f}")
    print("Zeichengleich mit den veröffentlichten Kandidaten:")
    for name, zahl in gleich.items():
        print(f"  {name:<28} {zahl}/{len(ids)}")


def tempo(n: int, prozesse: int, block: int) -> None:
    """Abwechselnd ein Block Seiten nacheinander in diesem Prozess, derselbe Block über
    einen Worker und über N Worker: alle sehen so dieselbe Last der anderen Läufe."""
    ids, wahrheit, _, html = benchmark()
    extraktion.vorbereiten()
    liste = list(seiten(ids, wahrheit, html, n))
    einzeln = dict.fromkeys(extraktion.EXTRAKTOREN, 0.0)
    mit = {1: 0.0, prozesse: 0.0}
    cpu = time.process_time()
    with extraktion.Extraktion(1) as ex1, extraktion.Extraktion(prozesse) as exn:
        for anfang in range(0, n, block):
            teil = liste[anfang : anfang + block]
            for seite in teil:
                text, _ = extraktion.dekodieren(seite.html)
                for name in extraktion.EXTRAKTOREN:
                    beginn = time.perf_counter()
                    with contextlib.suppress(Exception):  # zählt wie im Worker: die Zeit bis zum Fehler
                        extraktion.extrahieren(name, text, seite.url)
                    einzeln[name] += time.perf_counter() - beginn
            for zahl, ex in ((1, ex1), (prozesse, exn)):
                beginn = time.perf_counter()
                for _ in ex.seiten(teil):
                    pass
                mit[zahl] += time.perf_counter() - beginn
    summe = sum(einzeln.values())
    print(f"{n} Seiten in Blöcken zu {block}, Wanduhr; Lastmittel jetzt {os.getloadavg()[0]:.1f}")
    print("Ein Prozess, je Extraktor (ms je Seite):")
    for name, sekunden in einzeln.items():
        print(f"  {name:<14} {1000 * sekunden / n:7.1f}")
    print(f"  {'Summe':<14} {1000 * summe / n:7.1f}  → {n / summe:.2f} Seiten/s")
    for zahl, sekunden in mit.items():
        print(
            f"{zahl} Worker: {sekunden:.1f} s → {n / sekunden:.2f} Seiten/s; "
            f"Beschleunigung gegen die Summe {summe / sekunden:.2f}×"
        )
    print(f"Prozessorzeit des Hauptprozesses (mit den Einzelzeiten): {time.process_time() - cpu:.1f} s")


def _nachfahren(wurzel: int) -> list[int]:
    kinder: dict[int, list[int]] = {}
    for eintrag in os.listdir("/proc"):
        if not eintrag.isdigit():
            continue
        try:
            with open(f"/proc/{eintrag}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kinder.setdefault(ppid, []).append(int(eintrag))
    offen, alle = [wurzel], []
    while offen:
        pid = offen.pop()
        alle.append(pid)
        offen.extend(kinder.get(pid, []))
    return alle


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def speicher(anzahlen: list[int], prozesse: int) -> None:
    ids, wahrheit, _, html = benchmark()
    print("Seiten   Sekunden  Spitze Hauptprozess  Spitze alle Prozesse  Spitze größter Worker  (MB)")
    for n in anzahlen:
        spitze = {"haupt": 0, "alle": 0, "worker": 0}
        fertig = threading.Event()

        def abtasten(spitze=spitze, fertig=fertig) -> None:
            while not fertig.wait(0.2):
                pids = _nachfahren(os.getpid())  # forkserver und Worker hängen am Hauptprozess
                werte = {pid: _rss(pid) for pid in pids}
                spitze["haupt"] = max(spitze["haupt"], werte.get(os.getpid(), 0))
                spitze["alle"] = max(spitze["alle"], sum(werte.values()))
                worker = [w for pid, w in werte.items() if pid != os.getpid()]
                spitze["worker"] = max(spitze["worker"], max(worker, default=0))

        faden = threading.Thread(target=abtasten, daemon=True)
        faden.start()
        beginn = time.perf_counter()
        with extraktion.Extraktion(prozesse) as ex:
            for _ in ex.seiten(seiten(ids, wahrheit, html, n)):
                pass
        sekunden = time.perf_counter() - beginn
        fertig.set()
        faden.join()
        mb = {k: v / 2**20 for k, v in spitze.items()}
        print(f"{n:>6}  {sekunden:9.1f}  {mb['haupt']:19.0f}  {mb['alle']:20.0f}  {mb['worker']:21.0f}")


SLOT = "2026-09-07T08:00"  # Europe/Berlin, = 06:00 UTC
SQL_SLOT_ITEM = "insert into raw_items (id, slot, haus, url) values (%s, %s, 'haus', %s)"
SQL_SLOT_SEITE = "insert into seiten (item_id, html, url, content_type) values (%s, %s, %s, 'text/html')"
SQL_SLOT_ZAHLEN = """
select (select count(distinct e.item_id) from extraktionen e join raw_items r on r.id = e.item_id
        where r.slot = %(slot)s),
       (select count(*) from extraktionen e join raw_items r on r.id = e.item_id where r.slot <> %(slot)s),
       (select count(*) from selected_extractor s join raw_items r on r.id = s.item_id where r.slot = %(slot)s)
"""


def slot(n: int, prozesse: int) -> None:
    """Ein Slot von n Seiten: ``auswahl.py --extrahieren --slot`` vom Start bis zum Ende, zweimal."""
    ids, wahrheit, _, html = benchmark()
    im_slot = datetime.fromisoformat("2026-09-07T06:00+00:00")
    nachbar = im_slot + timedelta(hours=1)
    args = ("--extrahieren", "--slot", SLOT, "--prozesse", str(prozesse))
    with tempfile.TemporaryDirectory(prefix="aw-slot-") as verzeichnis:
        arbeit = Path(verzeichnis)
        with server.wegwerf_datenbank(arbeit) as url:
            with psycopg.connect(url) as conn:
                conn.execute(ingest.RAW_ITEMS)
            migrationen.migrieren(url, ausgabe=lambda _: None)
            with psycopg.connect(url) as conn:
                version = conn.execute("show server_version").fetchone()[0]
                for nummer, seite in enumerate(seiten(ids, wahrheit, html, n + 100), start=1):
                    conn.execute(SQL_SLOT_ITEM, (nummer, im_slot if nummer <= n else nachbar, seite.url))
                    conn.execute(SQL_SLOT_SEITE, (nummer, seite.html, seite.url))
            laeufe = [gemessen(*args, url=url, cwd=arbeit) for _ in range(2)]
            with psycopg.connect(url) as conn:
                extrahiert, nebenan, gewaehlt = conn.execute(SQL_SLOT_ZAHLEN, {"slot": im_slot}).fetchone()
    print(
        f"`python -m bench.extraktion slot -n {n} --prozesse {prozesse}`; PostgreSQL {version}, "
        f"{os.cpu_count()} Kerne, Lastmittel jetzt {os.getloadavg()[0]:.1f}"
    )
    print(f"Aufruf: wurzelwerk-auswahl {' '.join(args)} ({n} Seiten im Slot, 100 im Nachbarslot)")
    (erst, rss_erst, bilanz_erst), (noch, rss_noch, bilanz_noch) = laeufe
    print(
        f"  erster Lauf: {erst:.1f} s vom Start bis zum Ende, {n / erst:.2f} Seiten/s, "
        f"Spitze RSS {rss_erst:.0f} MB; „{bilanz_erst}“"
    )
    print(f"  noch einmal: {noch:.1f} s, Spitze RSS {rss_noch:.0f} MB; „{bilanz_noch}“")
    print(
        f"Danach: {extrahiert} Items des Slots extrahiert, {gewaehlt} gewählt, {nebenan} Zeilen im Nachbarslot"
    )


@click.command(cls=DeutscherBefehl)
@click.argument("messung", type=click.Choice(["guete", "tempo", "speicher", "slot"]))
@click.option(
    "-n",
    "anzahlen",
    type=click.IntRange(min=1),
    multiple=True,
    metavar="N",
    help="Zahl der Seiten, bei speicher mehrmals (ohne Angabe: tempo 543, speicher 1000 und 10000, slot 400).",
)
@click.option(
    "--prozesse", type=click.IntRange(min=1), default=2, show_default=True, metavar="N", help="Worker."
)
@click.option(
    "--block",
    type=click.IntRange(min=1),
    default=60,
    show_default=True,
    metavar="N",
    help="tempo: Seiten je Block.",
)
def main(messung: str, anzahlen: tuple[int, ...], prozesse: int, block: int) -> None:
    """Extraktion gemessen: Güte aus dem HTML, Tempo auf den Kernen, Spitzenspeicher, ein Slot."""
    if messung == "guete":
        guete(prozesse)
    elif messung == "tempo":
        tempo((anzahlen or (543,))[0], prozesse, block)
    elif messung == "slot":
        slot((anzahlen or (400,))[0], prozesse)
    else:
        speicher(list(anzahlen or (1000, 10000)), prozesse)


if __name__ == "__main__":
    main()
