"""Gemeinsame Werkzeuge der Benchmarks: der Zeitnehmer und die Arbeit „Wahl und Lesetext der Wahl“.

Kein Benchmark selbst. Was auch die Tests brauchen (Grundlinie, Erzeuger), steht in
``auswahlstufe/referenz/``; Tests importieren nichts aus ``bench/``.
"""

from __future__ import annotations

import gc
import gzip
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import click
import psycopg

from auswahlstufe.befehl import Aufruffehler
from auswahlstufe.regeln import waehle
from normalisierung import bereinigen

PROJEKT = Path(__file__).resolve().parents[1]


def laufzeit(funktion: Callable[[object], object], eingaben: list) -> float:
    """CPU-Sekunden dieses Prozesses für alle Eingaben, ohne Speicherbereinigung.

    Prozesszeit statt Wanduhr: die zwei Kerne teilen sich mehrere Prozesse,
    und Wartezeit auf den Kern soll nicht als Rechenzeit zählen.
    """
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        for eingabe in eingaben:
            funktion(eingabe)
        return time.process_time() - start
    finally:
        gc.enable()


def bereinigen_der_wahl(extraktionen: object) -> str:
    """Was der Backfill je Item rechnet: Wahl und Lesetext der Wahl."""
    e = waehle(extraktionen)
    eintrag = extraktionen.get(e.extraktor) if isinstance(extraktionen, dict) else None
    text = eintrag.get("text") if isinstance(eintrag, dict) else None
    return bereinigen(text) if isinstance(text, str) else ""


def auf_kern(kern: int | None) -> Callable[[], None] | None:
    """Für ``preexec_fn``: bindet den Unterprozess (und was er startet) an einen Kern."""
    return None if kern is None else lambda: os.sched_setaffinity(0, {kern})


def gemessen(
    *args: str, url: str | None, cwd: Path, projekt: Path = PROJEKT, kern: int | None = None
) -> tuple[float, float, str]:
    """(Sekunden, größter RSS in MB, Bilanzzeile) eines Laufs von auswahl.py.

    Der RSS kommt aus wait4 für genau diesen Prozess; er umfasst seine
    Worker, denn die hat er selbst abgewartet (das Maximum über alle). stdout ist
    das Protokoll des Laufs (Fortschritt, Bilanz der Extraktion, Bilanz): zurück
    kommt die Bilanz der Auswahl (die erste Zeile ``neu …``/``trocken, …``, sonst die
    erste Zeile), ohne Zeilenkopf.
    ``projekt``: das auswahl.py eines anderen Stands (etwa eines entpackten Commits);
    ``kern``: der Lauf samt Workern nur auf diesem Kern; ``url=None``: ohne Datenbank.
    """
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    umgebung["AUSWAHL_ZEILENKOPF"] = "aus"
    if url is not None:
        umgebung["DATABASE_URL"] = url
    # Der forkserver der Extraktion importiert seine Module vor sys.path des Hauptprozesses
    # (Python 3.11): ohne PYTHONPATH kämen sie aus dem installierten Paket, nicht aus ``projekt``.
    umgebung["PYTHONPATH"] = os.pathsep.join(filter(None, [str(projekt), os.environ.get("PYTHONPATH")]))
    with tempfile.TemporaryFile("w+") as fehler:
        start = time.perf_counter()
        prozess = subprocess.Popen(
            [sys.executable, str(projekt / "auswahl.py"), *args],
            cwd=cwd,
            env=umgebung,
            stdout=subprocess.PIPE,
            stderr=fehler,
            text=True,
            preexec_fn=auf_kern(kern),
        )
        out = prozess.stdout.read()
        _, status, verbrauch = os.wait4(prozess.pid, 0)
        sekunden = time.perf_counter() - start
        prozess.returncode = os.waitstatus_to_exitcode(status)
        prozess.stdout.close()
        if prozess.returncode != 0:
            fehler.seek(0)
            raise click.ClickException(
                f"auswahl.py {' '.join(args)}: Exit {prozess.returncode}: {fehler.read().strip()}"
            )
    zeilen = out.strip().splitlines()
    bilanz = [z for z in zeilen if z.startswith(("neu ", "trocken, nichts geschrieben"))]
    return sekunden, verbrauch.ru_maxrss / 1024, (bilanz or zeilen or [""])[0]


def maschine() -> str:
    """Die Zeile ``Maschine: …`` über jeder Tabelle der Skala (ohne PostgreSQL, das kennt der Aufrufer)."""
    return f"Maschine: {os.cpu_count()} Kerne ({platform.machine()}), Python {platform.python_version()}"


def skala(groessen: tuple[int, ...], messen, praefix: str):
    """Misst ``messen(groessen, verzeichnis)`` in einem Wegwerfordner und räumt ihn danach weg;
    die Größen aufsteigend. Gibt zurück, was ``messen`` gibt."""
    if list(groessen) != sorted(groessen):
        raise Aufruffehler("Die Größen aufsteigend angeben.", click.get_current_context())
    verzeichnis = Path(tempfile.mkdtemp(prefix=praefix))
    try:
        return messen(list(groessen), verzeichnis)
    finally:
        shutil.rmtree(verzeichnis, ignore_errors=True)


def entpackt(commit: str, ziel: Path) -> Path:
    """Der Stand eines Commits als Verzeichnis (``git archive``, ohne den Klon zu ändern)."""
    lauf = subprocess.run(["git", "-C", str(PROJEKT), "archive", commit], capture_output=True, check=False)
    if lauf.returncode != 0:
        raise click.ClickException(f"git archive {commit}: {lauf.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(lauf.stdout)) as archiv:
        archiv.extractall(ziel, filter="data")
    return ziel


# --- ein Haus aus den aeb-Seiten ------------------------------------------------------------

AEB = PROJEKT / "bench" / "aeb"
SQL_AEB_SEITE = "insert into seiten (item_id, html, url, content_type) values (%s, %s, %s, 'text/html')"
SQL_AEB_KANDIDAT = """
insert into extraktionen (item_id, extraktor, text, fehler, extraktor_fassung, seite_sha256)
select %s, %s, %s, %s, %s, sha256(s.html_sha256 || convert_to('text/html', 'UTF8'))
from seiten s where s.item_id = %s
"""


def aeb_seiten() -> list[tuple[dict, bytes]]:
    """(Artikel aus candidates.json, HTML-Bytes) der 181 Seiten."""
    artikel = json.loads((AEB / "candidates.json").read_text(encoding="utf-8"))
    return [(a, gzip.decompress((AEB / "html" / f"{a['id']}.html.gz").read_bytes())) for a in artikel]


def aeb_anlegen(
    conn: psycopg.Connection, ids: range, slot: datetime, *, fassung: dict[str, str] | None = None
) -> None:
    """Items ``ids`` im Slot mit den aeb-Seiten (wiederholt); mit ``fassung`` (je Extraktor) dazu
    ihre gespeicherten Kandidaten aus candidates.json, so gestempelt."""
    seiten = aeb_seiten()
    with conn.cursor() as cur:
        cur.executemany("insert into raw_items (id, slot) values (%s, %s)", [(i, slot) for i in ids])
        for nr in ids:
            artikel, html = seiten[(nr - ids.start) % len(seiten)]
            cur.execute(SQL_AEB_SEITE, (nr, html, artikel["url"]))
            if fassung is not None:
                cur.executemany(
                    SQL_AEB_KANDIDAT,
                    [
                        (nr, x, e.get("text"), e.get("error"), fassung[x], nr)
                        for x, e in artikel["extractions"].items()
                    ],
                )
    conn.commit()
