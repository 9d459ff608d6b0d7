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
  die der Lauf nicht anfassen darf. Mit ``--vorher COMMIT`` abwechselnd derselbe Slot
  mit dem ``auswahl.py`` dieses Commits (aus ``git archive`` entpackt) und dem des Klons,
  je Runde auf leeren Tabellen.
* ``kern``: alles auf einem Kern, im selben Lauf abwechselnd: die Stock-Aufrufe
  (``seiten.STOCK_AUFRUFE`` mit Fix, ohne Beschleuniger) in einem Prozess, die schnellen
  Aufrufe (``seiten.AUFRUFE``) in einem Prozess und ``auswahl.py --extrahieren ORDNER
  --prozesse 1`` vom Start bis zum Ende (Isolation, Zeichensatz, Auswahl, Schreiben
  eingeschlossen); Seiten/s, Verhältnisse, Kosten der Isolation je Seite, und ob jeder
  Kandidat gleich dem Stock-Aufruf ist.
* ``zufall``: die sechs Seiten aus ``bench/newspaper4k-zufall`` in frischen Prozessen mit
  verschiedener Vorgeschichte, newspaper4k stock ohne Fix, mit Fix und schnell: die Länge
  des Texts je Seite und Prozess.

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.extraktion guete
    python -m bench.extraktion tempo -n 543 --prozesse 2
    python -m bench.extraktion speicher -n 1000 -n 10000 --prozesse 2
    python -m bench.extraktion slot -n 400 --prozesse 2 --vorher a3920e8 --runden 3
    python -m bench.extraktion kern -n 181 --runden 5
    python -m bench.extraktion zufall
"""

from __future__ import annotations

import contextlib
import ctypes
import gzip
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
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

from auswahlstufe import kerne, server
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.betrieb import migrationen
from auswahlstufe.extraktion import aufrufe, zeichensatz
from auswahlstufe.extraktion import seiten as extraktion
from auswahlstufe.extraktion import stapel as extraktion_stapel
from auswahlstufe.pruefung import bewertung
from auswahlstufe.regeln import waehle
from auswahlstufe.server import RAW_ITEMS
from bench.messen import PROJEKT, auf_kern, entpackt, gemessen

AEB = Path(__file__).resolve().parent / "aeb"
ZUFALL = Path(__file__).resolve().parent / "newspaper4k-zufall"


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
    aufrufe.vorbereiten()
    liste = list(seiten(ids, wahrheit, html, n))
    einzeln = dict.fromkeys(extraktion.EXTRAKTOREN, 0.0)
    mit = {1: 0.0, prozesse: 0.0}
    cpu = time.process_time()
    with extraktion.Extraktion(1) as ex1, extraktion.Extraktion(prozesse) as exn:
        for anfang in range(0, n, block):
            teil = liste[anfang : anfang + block]
            for seite in teil:
                text, _ = zeichensatz.dekodieren(seite.html)
                for name in extraktion.EXTRAKTOREN:
                    beginn = time.perf_counter()
                    with contextlib.suppress(Exception):  # zählt wie im Worker: die Zeit bis zum Fehler
                        aufrufe.extrahieren(name, text, seite.url)
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
# Welche Fassung von newspaper4k ein Stand schrieb (zeigt, dass wirklich der alte Code lief).
SQL_SLOT_FASSUNG = "select distinct extraktor_fassung from extraktionen where extraktor = 'newspaper4k'"
# Vor jedem Stand: der Slot wieder neu (Seiten und Items bleiben).
SQL_SLOT_LEEREN = "truncate extraktionen, selected_extractor"


def slot(n: int, prozesse: int, vorher: str | None, runden: int, kern_nr: int | None) -> None:
    """Ein Slot von n Seiten: ``auswahl.py --extrahieren --slot`` vom Start bis zum Ende, zweimal;
    mit ``vorher`` abwechselnd der Stand dieses Commits und der des Klons."""
    ids, wahrheit, _, html = benchmark()
    im_slot = datetime.fromisoformat("2026-09-07T06:00+00:00")
    nachbar = im_slot + timedelta(hours=1)
    args = ("--extrahieren", "--slot", SLOT, "--prozesse", str(prozesse))
    last = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="aw-slot-") as verzeichnis:
        arbeit = Path(verzeichnis)
        staende = [("jetzt", PROJEKT)]
        if vorher:
            staende.insert(0, (f"vorher ({vorher})", entpackt(vorher, arbeit / "vorher")))
        with server.wegwerf_datenbank(arbeit) as url:
            with psycopg.connect(url) as conn:
                conn.execute(RAW_ITEMS)
            migrationen.migrieren(url, ausgabe=lambda _: None)
            with psycopg.connect(url) as conn:
                version = conn.execute("show server_version").fetchone()[0]
                for nummer, seite in enumerate(seiten(ids, wahrheit, html, n + 100), start=1):
                    conn.execute(SQL_SLOT_ITEM, (nummer, im_slot if nummer <= n else nachbar, seite.url))
                    conn.execute(SQL_SLOT_SEITE, (nummer, seite.html, seite.url))
            messungen: dict[str, list] = {name: [] for name, _ in staende}
            for runde in range(runden):
                for name, projekt in staende if runde % 2 == 0 else staende[::-1]:
                    with psycopg.connect(url) as conn:
                        conn.execute(SQL_SLOT_LEEREN)
                    laeufe = [
                        gemessen(*args, url=url, cwd=arbeit, projekt=projekt, kern=kern_nr) for _ in range(2)
                    ]
                    with psycopg.connect(url) as conn:
                        zahlen = conn.execute(SQL_SLOT_ZAHLEN, {"slot": im_slot}).fetchone()
                        fassung = [z[0] for z in conn.execute(SQL_SLOT_FASSUNG)]
                    messungen[name].append((laeufe, zahlen, fassung))
                    last.append(os.getloadavg()[0])
    print(
        f"`python -m bench.extraktion slot -n {n} --prozesse {prozesse}"
        f"{f' --vorher {vorher}' if vorher else ''} --runden {runden}"
        f"{'' if kern_nr is None else f' --kern {kern_nr}'}`; PostgreSQL {version}, "
        f"{kerne.nutzbar()} Kerne nutzbar, Lastmittel {min(last):.1f}–{max(last):.1f}"
    )
    print(f"Aufruf: wurzelwerk-auswahl {' '.join(args)} ({n} Seiten im Slot, 100 im Nachbarslot)")
    erste = {}
    for name, ergebnisse in messungen.items():
        erste[name] = statistics.median(laeufe[0][0] for laeufe, _, _ in ergebnisse)
        noch = statistics.median(laeufe[1][0] for laeufe, _, _ in ergebnisse)
        (_, rss, bilanz), _ = ergebnisse[-1][0]
        extrahiert, nebenan, gewaehlt = ergebnisse[-1][1]
        print(f"{name}:")
        print(
            f"  erster Lauf: {erste[name]:.1f} s vom Start bis zum Ende (Median aus {len(ergebnisse)}: "
            f"{', '.join(f'{laeufe[0][0]:.1f}' for laeufe, _, _ in ergebnisse)}), {n / erste[name]:.2f} Seiten/s, "
            f"Spitze RSS {rss:.0f} MB; „{bilanz}“"
        )
        print(f"  noch einmal: {noch:.1f} s; „{ergebnisse[-1][0][1][2]}“")
        print(
            f"  danach: {extrahiert} Items des Slots extrahiert, {gewaehlt} gewählt, {nebenan} Zeilen im "
            f"Nachbarslot; newspaper4k-Fassung: {' | '.join(ergebnisse[-1][2])}"
        )
    if vorher:
        alt, neu = erste[staende[0][0]], erste["jetzt"]
        print(f"Erster Lauf, vorher gegen jetzt: {alt / neu:.2f}× schneller")


# --- alles auf einem Kern: Stock-Aufrufe gegen den ganzen Befehl ---------------------------

# Im Unterprozess: ``aufrufe_messen(ART, ORDNER, AUSGABE)``.
AUFRUFE_MESSEN = "import sys; from bench.extraktion import aufrufe_messen; aufrufe_messen(*sys.argv[1:])"


def aufrufe_messen(art: str, ordner: str, ausgabe: str) -> None:
    """Jede Seite des Ordners durch die drei Aufrufe, ohne Isolation, wie die Stufe sie vorbereitet
    (Zeichensatzregel, URL wie im Stapel); ``art``: ``stock`` (mit Fix, ohne Beschleuniger) oder
    ``schnell``. Schreibt die Kandidaten im Stapelformat nach ``ausgabe`` und druckt die Summe der
    Zeiten der Aufrufe (Wanduhr) je Extraktor als JSON."""
    import logging

    logging.disable(logging.CRITICAL)
    aufrufe.vorbereiten(beschleuniger=art == "schnell")
    je_name = aufrufe.AUFRUFE if art == "schnell" else aufrufe.STOCK_AUFRUFE
    summe = dict.fromkeys(extraktion.EXTRAKTOREN, 0.0)
    artikel = []
    for schluessel, pfad in extraktion_stapel.ordner_dateien(Path(ordner)):
        text = zeichensatz.dekodieren(gzip.decompress(pfad.read_bytes()))[0]
        url = extraktion.ERSATZ_URL.format(schluessel=schluessel)
        kandidaten = {}
        for name in extraktion.EXTRAKTOREN:
            beginn = time.perf_counter()
            try:
                kandidaten[name] = {"text": je_name[name](text, url), "error": None}
            except Exception as e:
                kandidaten[name] = {
                    "text": None,
                    "error": f"Extraktor scheiterte: {type(e).__name__}: {str(e)[:300]}",
                }
            summe[name] += time.perf_counter() - beginn
        artikel.append({"id": schluessel, "extractions": kandidaten})
    Path(ausgabe).write_text(json.dumps(artikel, ensure_ascii=False), encoding="utf-8")
    print(json.dumps({"aufrufe_s": summe}))


PR_SET_CHILD_SUBREAPER = 36  # prctl(2)


def nachfahren_erben() -> None:
    """Verwaiste Nachfahren (forkserver, resource_tracker eines gemessenen auswahl.py) fallen an
    diesen Prozess statt an init: so zählt ``cpu_der_kinder`` auch ihre Prozessorzeit."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def cpu_der_kinder() -> float:
    """Prozessorzeit aller abgewarteten Nachfahren bisher; wartet vorher auf alle, die noch laufen."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    verbrauch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return verbrauch.ru_utime + verbrauch.ru_stime


def _aufrufe_im_prozess(art: str, ordner: Path, ausgabe: Path, kern: int) -> tuple[float, dict[str, float]]:
    """(Sekunden vom Start bis zum Ende, Summe der Aufrufe je Extraktor) eines Prozesses auf einem Kern."""
    beginn = time.perf_counter()
    lauf = subprocess.run(
        [sys.executable, "-c", AUFRUFE_MESSEN, art, str(ordner), str(ausgabe)],
        cwd=PROJEKT,
        capture_output=True,
        text=True,
        preexec_fn=auf_kern(kern),
        check=False,
    )
    sekunden = time.perf_counter() - beginn
    if lauf.returncode != 0:
        raise click.ClickException(f"Aufrufe ({art}): Exit {lauf.returncode}: {lauf.stderr[-2000:]}")
    return sekunden, json.loads(lauf.stdout.strip().splitlines()[-1])["aufrufe_s"]


def _kandidaten(ausgabe: Path) -> dict[tuple[str, str], dict]:
    return {
        (a["id"], name): a["extractions"][name]
        for a in json.loads(ausgabe.read_text(encoding="utf-8"))
        for name in extraktion.EXTRAKTOREN
    }


def kern(n: int, runden: int, kern_nr: int | None, vorher: str | None) -> None:
    """Stock-Aufrufe, schnelle Aufrufe und der ganze Befehl (mit ``vorher`` auch der des alten
    Stands), abwechselnd, alles auf einem Kern; Wanduhr und Prozessorzeit aller Prozesse."""
    ids, _, _, _ = benchmark()
    kern_nr = max(os.sched_getaffinity(0)) if kern_nr is None else kern_nr
    last = [os.getloadavg()[0]]
    nachfahren_erben()
    with tempfile.TemporaryDirectory(prefix="aw-kern-") as verzeichnis:
        arbeit = Path(verzeichnis)
        ordner = arbeit / "seiten"
        ordner.mkdir()
        for nr, i in enumerate(itertools.islice(itertools.cycle(ids), n)):
            (ordner / f"{i}{'' if nr < len(ids) else f'-{nr // len(ids)}'}.html.gz").symlink_to(
                AEB / "html" / f"{i}.html.gz"
            )
        befehle = {"auswahl.py": PROJEKT}
        if vorher:
            befehle[f"auswahl.py ({vorher})"] = entpackt(vorher, arbeit / "vorher")
        reihe = ["stock", "schnell", *befehle]
        zeiten: dict[str, dict[str, list[float]]] = {
            art: {"wand": [], "cpu": [], "aufrufe": [], **{name: [] for name in extraktion.EXTRAKTOREN}}
            for art in reihe
        }
        for runde in range(runden):
            for art in reihe[runde % len(reihe) :] + reihe[: runde % len(reihe)]:
                cpu = cpu_der_kinder()
                if art in befehle:
                    sekunden, _, _ = gemessen(
                        *("--extrahieren", str(ordner), "-o", str(arbeit / f"{art}.json"), "--prozesse", "1"),
                        url=None,
                        cwd=arbeit,
                        projekt=befehle[art],
                        kern=kern_nr,
                    )
                else:
                    sekunden, aufrufe = _aufrufe_im_prozess(art, ordner, arbeit / f"{art}.json", kern_nr)
                    zeiten[art]["aufrufe"].append(sum(aufrufe.values()))
                    for name, dauer in aufrufe.items():
                        zeiten[art][name].append(dauer)
                zeiten[art]["wand"].append(sekunden)
                zeiten[art]["cpu"].append(cpu_der_kinder() - cpu)
                last.append(os.getloadavg()[0])
            print(
                f"Runde {runde + 1}: "
                + ", ".join(
                    f"{art} {z['wand'][-1]:.1f} s (Prozessorzeit {z['cpu'][-1]:.1f})"
                    for art, z in zeiten.items()
                )
                + f"; Lastmittel {last[-1]:.1f}",
                flush=True,
            )
        stock = _kandidaten(arbeit / "stock.json")
        gleich = {
            art: sum(stock[k] == v for k, v in _kandidaten(arbeit / f"{art}.json").items()) for art in reihe
        }
    m = {art: {k: statistics.median(v) if v else 0.0 for k, v in z.items()} for art, z in zeiten.items()}
    bezug = m["stock"]["aufrufe"]
    print(
        f"\n`python -m bench.extraktion kern -n {n} --runden {runden}{f' --vorher {vorher}' if vorher else ''}`: "
        f"{n} Seiten aus bench/aeb/html, alles auf Kern {kern_nr}; Median aus {runden} Runden; "
        f"Lastmittel {min(last):.1f}–{max(last):.1f}"
    )
    print(f"  {'':<66} {'Wanduhr':>8} {'Seiten/s':>9} {'Stock-Aufrufe ÷':>16} {'Prozessorzeit':>14}")
    zeilen = [
        ("Stock-Aufrufe, Summe der Aufrufe", m["stock"]["aufrufe"], None),
        ("Stock-Aufrufe in einem Prozess, Start bis Ende", m["stock"]["wand"], m["stock"]["cpu"]),
        ("schnelle Aufrufe, Summe der Aufrufe", m["schnell"]["aufrufe"], None),
        ("schnelle Aufrufe in einem Prozess, Start bis Ende", m["schnell"]["wand"], m["schnell"]["cpu"]),
    ] + [
        (f"{art} --extrahieren --prozesse 1, Start bis Ende", m[art]["wand"], m[art]["cpu"])
        for art in befehle
    ]
    for name, sekunden, cpu in zeilen:
        print(
            f"  {name:<66} {sekunden:7.1f}s {n / sekunden:9.2f} {bezug / sekunden:15.2f}× "
            f"{'' if cpu is None else f'{cpu:13.1f}s'}"
        )
    print(
        "Je Extraktor, ms je Seite (Summe der Aufrufe): "
        + ", ".join(
            f"{name} {1000 * m['stock'][name] / n:.1f} → {1000 * m['schnell'][name] / n:.1f}"
            for name in extraktion.EXTRAKTOREN
        )
    )
    neu = m["auswahl.py"]
    print(
        f"Der ganze Befehl gegen die Stock-Aufrufe: {bezug / neu['wand']:.2f}× (gegen ihre Summe), "
        f"{m['stock']['wand'] / neu['wand']:.2f}× (gegen ihren Prozess, beide vom Start bis zum Ende), "
        f"{m['stock']['cpu'] / neu['cpu']:.2f}× (Prozessorzeit)"
    )
    if vorher:
        alt = m[f"auswahl.py ({vorher})"]
        print(
            f"Der ganze Befehl gegen den von {vorher}: {alt['wand'] / neu['wand']:.2f}× (Wanduhr), "
            f"{alt['cpu'] / neu['cpu']:.2f}× (Prozessorzeit)"
        )
    print(
        f"Isolation und alles außer den Aufrufen je Seite: {1000 * (neu['wand'] - m['schnell']['aufrufe']) / n:.1f} ms "
        f"(auswahl.py − Summe der schnellen Aufrufe, Wanduhr; mit Start, Zeichensatz, Auswahl, Schreiben), "
        f"{1000 * (neu['cpu'] - m['schnell']['cpu']) / n:.1f} ms (Prozessorzeit gegen die schnellen Aufrufe in "
        "einem Prozess, beide mit Start)"
    )
    print(
        "Kandidaten gleich dem Stock-Aufruf: "
        + ", ".join(f"{art} {zahl}/{3 * n}" for art, zahl in gleich.items() if art != "stock")
    )


# --- newspaper4k-Zufall: frische Prozesse mit verschiedener Vorgeschichte -------------------

ZUFALL_EINMAL = "import sys; from bench.extraktion import zufall_einmal; zufall_einmal(*sys.argv[1:])"
VARIANTEN = ("ohne Fix", "mit Fix", "schnell")


def zufall_einmal(variante: str, nummer: str) -> None:
    """Im frischen Prozess: newspaper4k auf den sechs Seiten; druckt die Länge des Texts je Seite.
    Die Vorgeschichte hängt an ``nummer``: vorher so viele mal fünf aeb-Seiten, Speicher belegt,
    die sechs in gemischter Reihenfolge (PYTHONHASHSEED setzt der Aufrufer)."""
    import logging

    logging.disable(logging.CRITICAL)
    i = int(nummer)
    if variante != "ohne Fix":
        aufrufe.vorbereiten(beschleuniger=variante == "schnell")
    aufruf = aufrufe.AUFRUFE["newspaper4k"] if variante == "schnell" else aufrufe.STOCK_AUFRUFE["newspaper4k"]
    halde = [[x] * (x % 7 + 1) for x in range(i * 70_000)]  # Speicher belegen, lückenhaft freigeben
    del halde[:: 2 + i % 3]
    ids, wahrheit, _, html = benchmark()
    for seite in seiten(ids[-5 * i :] if i else [], wahrheit, html, 5 * i):
        with contextlib.suppress(Exception):
            aufruf(zeichensatz.dekodieren(seite.html)[0], seite.url)
    liste = json.loads((ZUFALL / "seiten.json").read_text(encoding="utf-8"))
    random.Random(i).shuffle(liste)
    laengen = {}
    for s in liste:
        text = zeichensatz.dekodieren(gzip.decompress((ZUFALL / "html" / f"{s['id']}.html.gz").read_bytes()))[
            0
        ]
        laengen[s["id"]] = len(aufruf(text, s["url"]))
    print(json.dumps(laengen))


def zufall(laeufe: int) -> None:
    """Je Variante ``laeufe`` frische Prozesse; die Länge des newspaper4k-Texts je Seite."""
    auftraege = [(v, i) for v in VARIANTEN for i in range(laeufe)]
    laengen: dict[str, dict[str, list[int]]] = {v: {} for v in VARIANTEN}
    gleichzeitig = kerne.nutzbar()
    for anfang in range(0, len(auftraege), gleichzeitig):
        prozesse = [
            (
                v,
                subprocess.Popen(
                    [sys.executable, "-c", ZUFALL_EINMAL, v, str(i)],
                    cwd=PROJEKT,
                    env={**os.environ, "PYTHONHASHSEED": str(i)},
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
            for v, i in auftraege[anfang : anfang + gleichzeitig]
        ]
        for v, prozess in prozesse:
            aus, fehler = prozess.communicate()
            if prozess.returncode != 0:
                raise click.ClickException(f"zufall ({v}): Exit {prozess.returncode}: {fehler[-2000:]}")
            for seite, laenge in json.loads(aus).items():
                laengen[v].setdefault(seite, []).append(laenge)
    print(
        f"`python -m bench.extraktion zufall --runden {laeufe}`: Länge des newspaper4k-Texts je Seite "
        f"in {laeufe} frischen Prozessen (PYTHONHASHSEED 0–{laeufe - 1}, vorher 0–{5 * (laeufe - 1)} aeb-Seiten, "
        "Speicher belegt, Reihenfolge gemischt)"
    )
    for seite in sorted(laengen["ohne Fix"]):
        zeile = "; ".join(
            f"{v}: {', '.join(map(str, laengen[v][seite]))} ({len(set(laengen[v][seite]))} verschieden)"
            for v in VARIANTEN
        )
        print(f"  {seite}  {zeile}")


@click.command(cls=DeutscherBefehl)
@click.argument("messung", type=click.Choice(["guete", "tempo", "speicher", "slot", "kern", "zufall"]))
@click.option(
    "-n",
    "anzahlen",
    type=click.IntRange(min=1),
    multiple=True,
    metavar="N",
    help="Zahl der Seiten, bei speicher mehrmals (ohne Angabe: tempo 543, speicher 1000 und 10000, slot 400, "
    "kern 181).",
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
@click.option(
    "--vorher",
    metavar="COMMIT",
    help="slot und kern: abwechselnd auch mit dem auswahl.py dieses Commits messen (etwa a3920e8).",
)
@click.option(
    "--runden",
    type=click.IntRange(min=1),
    metavar="N",
    help="slot und kern: so viele Runden, gemeldet wird der Median (ohne Angabe 3); zufall: so viele "
    "frische Prozesse je Variante (ohne Angabe 6).",
)
@click.option(
    "--kern",
    "kern_nr",
    type=click.IntRange(min=0),
    metavar="K",
    help="kern: auf diesem Kern messen (ohne Angabe: der letzte erlaubte); slot: auswahl.py auf diesem "
    "Kern (ohne Angabe: auf allen).",
)
def main(
    messung: str,
    anzahlen: tuple[int, ...],
    prozesse: int,
    block: int,
    vorher: str | None,
    runden: int | None,
    kern_nr: int | None,
) -> None:
    """Extraktion gemessen: Güte aus dem HTML, Tempo auf den Kernen, Spitzenspeicher, ein Slot,
    alles auf einem Kern, newspaper4k-Zufall."""
    if messung == "guete":
        guete(prozesse)
    elif messung == "tempo":
        tempo((anzahlen or (543,))[0], prozesse, block)
    elif messung == "slot":
        slot((anzahlen or (400,))[0], prozesse, vorher, runden or 3, kern_nr)
    elif messung == "kern":
        kern((anzahlen or (181,))[0], runden or 3, kern_nr, vorher)
    elif messung == "zufall":
        zufall(runden or 6)
    else:
        speicher(list(anzahlen or (1000, 10000)), prozesse)


if __name__ == "__main__":
    main()
