"""Die Stufe als Unterprozess: Skripte starten, Prozesse in /proc verfolgen, auf einen Lauf
warten; ein teures Ergebnis einmal für alle Worker von pytest-xdist."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

import db
from tests.hilfen import PROJEKT

# --- Prozesse in /proc --------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """Die Felder von /proc/<pid>/stat nach dem Namen (der in Klammern Leerzeichen enthalten
    kann): [0] Zustand, [1] PPID, [3] Sitzung, [11] und [12] utime und stime in Ticks; None,
    wenn der Prozess fort ist."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _prozesse() -> dict[int, tuple[int, int]]:
    """PID → (PPID, Sitzung), aus /proc."""
    prozesse: dict[int, tuple[int, int]] = {}
    for eintrag in Path("/proc").iterdir():
        if eintrag.name.isdigit() and (felder := _stat(int(eintrag.name))) is not None:
            prozesse[int(eintrag.name)] = (int(felder[1]), int(felder[3]))
    return prozesse


def _eltern() -> dict[int, list[int]]:
    """PPID → Kinder, aus /proc."""
    kinder: dict[int, list[int]] = {}
    for pid, (ppid, _) in _prozesse().items():
        kinder.setdefault(ppid, []).append(pid)
    return kinder


def in_sitzung(sitzung: int) -> list[int]:
    """Alle Prozesse der Sitzung ``sitzung`` – auch verwaiste (ihr Elternteil ist dann init),
    die ``nachfahren`` nicht mehr findet. Ein Lauf aus ``im_hintergrund`` ist eine eigene Sitzung."""
    return sorted(pid for pid, (_, sid) in _prozesse().items() if sid == sitzung)


def kinder(pid: int) -> list[int]:
    """Die Kindprozesse von ``pid`` (die Worker eines Laufs der Auswahl)."""
    return sorted(_eltern().get(pid, []))


def _lebt(pid: int) -> bool:
    """Läuft oder schläft der Prozess noch (fort oder Zombie: nein)?"""
    felder = _stat(pid)
    return felder is not None and felder[0] != "Z"


def bis_beendet(pids: list[int], frist: float = 30) -> None:
    """Wartet, bis jeder Prozess fort oder ein Zombie ist (mit Frist)."""
    ende_um = time.monotonic() + frist
    while lebende := [pid for pid in pids if _lebt(pid)]:
        if time.monotonic() > ende_um:
            pytest.fail(f"nach {frist} s leben noch: {lebende}")
        time.sleep(0.02)


def bis_er_wartet(pid: int, frist: float = 30) -> None:
    """Wartet, bis ``pid`` schläft und keine Prozessorzeit mehr verbraucht (zehn Proben in
    Folge: er wartet auf etwas, etwa auf angehaltene Worker), mit Frist."""
    ende_um, ruhig, vorher = time.monotonic() + frist, 0, None
    while ruhig < 10:
        if (felder := _stat(pid)) is None:
            pytest.fail(f"Prozess {pid} endete, statt zu warten")
        jetzt = cpu_sekunden(pid)
        ruhig = ruhig + 1 if felder[0] == "S" and jetzt == vorher else 0
        vorher = jetzt
        if time.monotonic() > ende_um:
            pytest.fail(f"Prozess {pid} wartet nach {frist} s noch nicht")
        time.sleep(0.02)


def nachfahren(pid: int) -> list[int]:
    """Alle Nachfahren von ``pid`` (Worker, forkserver und dessen Kinder)."""
    baum = _eltern()
    offen, alle = list(baum.get(pid, [])), []
    while offen:
        kind = offen.pop()
        alle.append(kind)
        offen.extend(baum.get(kind, []))
    return sorted(alle)


def cpu_sekunden(pid: int) -> float:
    """Rechenzeit (utime + stime) des Prozesses ``pid`` in Sekunden, aus /proc; 0 ohne ihn."""
    if (felder := _stat(pid)) is None:
        return 0.0
    return (int(felder[11]) + int(felder[12])) / os.sysconf("SC_CLK_TCK")


def extraktionsworker(pid: int) -> list[int]:
    """Die Worker der Extraktion im Prozess ``pid``: die Kinder seines forkservers
    (der Hauptprozess startet ihn; seine Kommandozeile nennt ``multiprocessing.forkserver``)."""
    baum = _eltern()
    for kind in baum.get(pid, []):
        try:
            kommandozeile = Path(f"/proc/{kind}/cmdline").read_bytes()
        except OSError:
            continue
        if b"multiprocessing.forkserver" in kommandozeile:
            return sorted(baum.get(kind, []))
    return []


def gelesene_bytes(pid: int) -> int:
    """Wie viele Bytes der Prozess ``pid`` bisher las (``rchar`` in /proc/PID/io); 0 ohne ihn."""
    try:
        zeilen = Path(f"/proc/{pid}/io").read_text().splitlines()
    except OSError:
        return 0
    return next(int(z.split()[1]) for z in zeilen if z.startswith("rchar:"))


# --- Unterprozesse ------------------------------------------------------------------------


@dataclass
class Ergebnis:
    code: int
    out: str
    err: str

    def __str__(self) -> str:  # als Meldung in assert … , str(ergebnis)
        return f"exit {self.code}\n--- stdout ---\n{self.out}\n--- stderr ---\n{self.err}"


def bilanzzeile(ausgabe: str) -> str:
    """Die Bilanzzeile der Auswahl aus stdout (``neu …`` oder ``trocken, nichts geschrieben – …``).

    stdout ist das Protokoll eines Laufs (betrieb.protokoll): davor können die Bilanz der Extraktion
    und, ohne Terminal, Fortschrittszeilen stehen (ein Lauf über 10 s auf einer belasteten
    Maschine). Ohne Bilanz: ``""``."""
    for zeile in ausgabe.splitlines():
        if zeile.startswith(("neu ", "trocken, nichts geschrieben")):
            return zeile
    return ""


def im_hintergrund(url: str, *args: str, cwd: Path, env: dict | None = None) -> subprocess.Popen:
    """``python auswahl.py …`` als eigene Sitzung (eigene Prozessgruppe), ohne zu warten."""
    return subprocess.Popen(
        [sys.executable, str(PROJEKT / "auswahl.py"), *args],
        cwd=cwd,
        env={**os.environ, "DATABASE_URL": url, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def ende(prozess: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    """(Exit-Code, stdout, stderr); hängt der Lauf länger als ``timeout``, scheitert der Test
    (und der Lauf samt allen Nachfahren wird getötet, auch gestoppte außerhalb der Gruppe und
    verwaiste seiner Sitzung, die stdout oder stderr noch offen halten)."""
    try:
        out, err = prozess.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for pid in [prozess.pid, *nachfahren(prozess.pid), *in_sitzung(prozess.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        out, err = prozess.communicate()
        pytest.fail(f"Lauf hängt nach {timeout} s\n{out}\n{err}")
    return prozess.returncode, out, err


def ohne_leserechte(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python auswahl.py …`` als Prozess, für den ``chmod 000`` gilt (Text, ohne DATABASE_URL).

    Die Tests laufen in CI als root, und root liest jede Datei (CAP_DAC_OVERRIDE).
    Ohne diese beiden Fähigkeiten im Begrenzungssatz (``setpriv`` aus util-linux)
    achtet auch ein root-Prozess die Dateirechte; als anderer Nutzer reicht chmod.
    """
    vorsatz = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [*vorsatz, sys.executable, str(PROJEKT / "auswahl.py"), *args],
        cwd=cwd,
        env=umgebung,
        capture_output=True,
        text=True,
        timeout=600,
    )


def starten(
    skript: str, *args: str, url: str | None, cwd: Path, env: dict | None = None, timeout: float = 300
) -> Ergebnis:
    """``python SKRIPT …`` aus dem Projekt, DATABASE_URL nur wie angegeben (``None``: keine)."""
    return _python([str(PROJEKT / skript), *args], url=url, cwd=cwd, env=env, timeout=timeout)


# auswahl.py, nur dass der Fortschritt ohne Terminal bei jeder Aktualisierung eine Zeile schreibt
_AUSWAHL_OHNE_ABSTAND = (
    "import sys; from auswahlstufe import fortschritt; fortschritt.ABSTAND = 0; "
    "from auswahlstufe.cli import BEFEHL, cli; cli(sys.argv[1:], prog_name=BEFEHL)"
)


def auswahl_ohne_abstand(
    *args: str, url: str | None, cwd: Path, env: dict | None = None, timeout: float = 300
) -> Ergebnis:
    """``python auswahl.py …`` als Unterprozess (stderr kein Terminal), mit einer Fortschrittszeile
    bei jeder Aktualisierung statt alle 10 s – so zeigt ein kurzer Lauf, was im cron-Log stünde."""
    return _python(
        ["-c", _AUSWAHL_OHNE_ABSTAND, *args],
        url=url,
        cwd=cwd,
        env={"PYTHONPATH": str(PROJEKT), **(env or {})},
        timeout=timeout,
    )


def im_hintergrund_ohne_abstand(url: str, *args: str, cwd: Path, env: dict | None = None) -> subprocess.Popen:
    """Wie ``im_hintergrund``, nur mit dem Fortschritt bei jeder Aktualisierung (Zeile und Eintrag
    in auswahl_laeufe) statt alle 10 s."""
    return subprocess.Popen(
        [sys.executable, "-c", _AUSWAHL_OHNE_ABSTAND, *args],
        cwd=cwd,
        env={**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(PROJEKT), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _python(
    argumente: list[str], *, url: str | None, cwd: Path, env: dict | None, timeout: float
) -> Ergebnis:
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    if url is not None:
        umgebung["DATABASE_URL"] = url
    umgebung.update(env or {})
    lauf = subprocess.run(
        [sys.executable, *argumente],
        cwd=cwd,
        env=umgebung,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Ergebnis(lauf.returncode, lauf.stdout, lauf.stderr)


def auswahl_starten(
    *args: str, url: str | None, cwd: Path, env: dict | None = None, timeout: float = 300
) -> Ergebnis:
    """``python auswahl.py …`` als Unterprozess."""
    return starten("auswahl.py", *args, url=url, cwd=cwd, env=env, timeout=timeout)


def check_db_starten(
    *args: str, url: str | None, cwd: Path, env: dict | None = None, timeout: float = 300
) -> Ergebnis:
    """``python check_db.py …`` als Unterprozess."""
    return starten("check_db.py", *args, url=url, cwd=cwd, env=env, timeout=timeout)


# --- Auf einen Lauf warten ----------------------------------------------------------------


# Verbindungen der Stufe, die noch offen sind (ein getöteter Lauf: bis der Server es merkt).
SQL_STUFE_VERBUNDEN = "select count(*) from pg_stat_activity where application_name like %s"


def warten_bis_getrennt(url: str, sekunden: float = 15) -> float:
    """Wartet, bis der Server alle Verbindungen der Stufe beendet hat (und mit
    ihnen die Sperren); gibt die Wartezeit zurück."""
    start = time.monotonic()
    with psycopg.connect(url, autocommit=True) as conn:
        while conn.execute(SQL_STUFE_VERBUNDEN, (f"{db.ANWENDUNG}%",)).fetchone()[0]:
            if time.monotonic() - start > sekunden:
                pytest.fail(f"Verbindungen der Stufe nach {sekunden} s noch offen")
            time.sleep(0.02)
    return time.monotonic() - start


# Eine Verbindung eines Laufs (application_name) wartet auf eine Zeilensperre – etwa am
# Fremdschlüssel auf raw_items, dessen Zeile Ingest in einer offenen Transaktion hält.
SQL_WARTET = """
select count(*) from pg_stat_activity
where datname = current_database() and application_name = %s and wait_event_type = 'Lock'
"""


def warten_bis(url: str, prozess, bedingung, was: str, frist: float = 120) -> None:
    """Wartet, bis ``bedingung(conn)`` gilt (mit Frist); der Lauf darf nicht vorher enden."""
    ende_um = time.monotonic() + frist
    with psycopg.connect(url, autocommit=True) as conn:
        while not bedingung(conn):
            if prozess.poll() is not None:
                pytest.fail(f"der Lauf endete, bevor {was}:\n{ende(prozess)}")
            if time.monotonic() > ende_um:
                pytest.fail(f"nach {frist} s nicht: {was}")
            time.sleep(0.02)


def bis_zum_ersten_stapel(url: str, prozess, frist: float = 120) -> None:
    """Wartet, bis der Lauf ``prozess`` seinen ersten Stapel nach selected_extractor schrieb."""
    warten_bis(
        url,
        prozess,
        lambda conn: conn.execute("select count(*) from selected_extractor").fetchone()[0],
        "er den ersten Stapel schrieb",
        frist,
    )


def worker_mit_seite(prozess: subprocess.Popen, mindestens: int, frist_s: float = 300) -> int:
    """Wartet, bis ein Worker der Extraktion im Lauf ``prozess`` mindestens ``mindestens``
    Bytes gelesen hat und danach rechnet (seine CPU-Zeit steigt um 0,1 s), und gibt seine Nummer
    zurück. Ein neuer Worker liest beim Start etwa 1,7 MB (Module, Daten); mit einer Seite von
    4 MB und ``mindestens`` = 4 MB rechnet er dann an seinem Auftrag: ein Signal trifft ihn
    mitten in der Seite, nie beim Start und nie zwischen zwei Aufträgen. Endet der Lauf vorher
    oder nach ``frist_s``, scheitert der Test."""
    frist = time.monotonic() + frist_s
    gelesen: dict[int, float] = {}  # Worker → CPU-Zeit, als er die Seite gelesen hatte
    while time.monotonic() < frist:
        if prozess.poll() is not None:
            pytest.fail(f"der Lauf endete, bevor ein Worker eine Seite las: {prozess.communicate()}")
        for pid in extraktionsworker(prozess.pid):
            if pid not in gelesen and gelesene_bytes(pid) >= mindestens:
                gelesen[pid] = cpu_sekunden(pid)
            elif pid in gelesen and cpu_sekunden(pid) - gelesen[pid] >= 0.1:
                return pid
        time.sleep(0.005)
    ende(prozess, timeout=1)
    pytest.fail(f"nach {frist_s} s hat kein Worker eine Seite gelesen")


SQL_RUHEN = """
select application_name, state, extract(epoch from now() - state_change)
from pg_stat_activity where datname = current_database() and application_name = any(%s)
"""


def ruhen_lassen(url: str, namen: list[str], sekunden: float = 2.5) -> None:
    """Wartet, bis jede Verbindung ``namen`` des Laufs länger als ``sekunden`` ruht (Uhr des
    Servers) – länger als sein idle_session_timeout. Beendet der Server eine vorher, scheitert
    der Test gleich."""
    frist = time.monotonic() + 60
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            zeilen = {name: (zustand, dauer) for name, zustand, dauer in conn.execute(SQL_RUHEN, (namen,))}
            weg = [n for n in namen if n not in zeilen]
            assert not weg, f"Verbindungen des Laufs vom Server beendet: {weg}"
            if all(zustand == "idle" and dauer > sekunden for zustand, dauer in zeilen.values()):
                return
            assert time.monotonic() < frist, zeilen
            time.sleep(0.05)


# --- Haltepunkte (tests/hilfen/haltepunkte.py) ------------------------------------------------


def _anlauf() -> str:
    """``PYTHONPATH`` mit ``anlauf/`` (sein ``sitecustomize`` richtet Halte ein) und dem Projekt vorn."""
    pfade = [str(PROJEKT / "tests" / "hilfen" / "anlauf"), str(PROJEKT), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(filter(None, pfade))


def haengen(*items: int) -> dict[str, str]:
    """Umgebung für einen Lauf, in dem jeder Stapel der Auswahl mit einem dieser Items im Worker
    hängt (``haltepunkte.haengen_einrichten``)."""
    return {"AUSWAHL_HAENGEN": ",".join(map(str, items)), "PYTHONPATH": _anlauf()}


@dataclass
class Halt:
    """Ein Lauf hält am ``n``-ten Vorbeikommen an ``punkt`` (``AUSWAHL_HALT``), bis ``weiter()``.

    ``Halt(tmp_path, "stapel", 2)``: ``umgebung`` für den Lauf, ``abwarten(prozess)`` wartet, bis
    er dort steht – so trifft ein Fehler den Lauf an einer bestimmten Stelle, gleich wie schnell
    die Maschine ist."""

    ort: Path
    punkt: str
    n: int = 1

    @property
    def datei(self) -> Path:
        return self.ort / f"halt-{self.punkt}-{self.n}"

    @property
    def umgebung(self) -> dict[str, str]:
        return {"AUSWAHL_HALT": f"{self.punkt}:{self.n}:{self.datei}", "PYTHONPATH": _anlauf()}

    def abwarten(self, prozess: subprocess.Popen, frist: float = 300) -> None:
        """Bis der Lauf am Haltepunkt steht; endet er vorher, scheitert der Test."""
        erreicht = Path(f"{self.datei}.erreicht")
        ende_um = time.monotonic() + frist
        while not erreicht.exists():
            if prozess.poll() is not None:
                pytest.fail(f"der Lauf endete vor dem Haltepunkt {self.punkt}:{self.n}:\n{ende(prozess)}")
            if time.monotonic() > ende_um:
                pytest.fail(f"nach {frist} s nicht am Haltepunkt {self.punkt}:{self.n}")
            time.sleep(0.01)

    def weiter(self) -> None:
        Path(f"{self.datei}.weiter").touch()


# --- Ein Ergebnis für alle Worker (pytest-xdist) ---------------------------------------------------


def einmal_fuer_alle_worker(tmp_path_factory: pytest.TempPathFactory, name: str, rechnen):
    """``rechnen(ordner)`` einmal je Testlauf. Mit ``-n`` hat jeder Worker seine eigenen Fixtures
    des Moduls, und xdist verteilt die Tests eines Moduls auf beide: der erste rechnet, der andere
    wartet an einer Dateisperre im gemeinsamen Ordner des Laufs und liest das Ergebnis (pickle)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return rechnen(tmp_path_factory.mktemp(name))
    gemeinsam = tmp_path_factory.getbasetemp().parent  # pytest-N/, darin popen-gw0/, popen-gw1/
    with (gemeinsam / f"{name}.sperre").open("w") as sperre:
        fcntl.flock(sperre, fcntl.LOCK_EX)
        datei = gemeinsam / f"{name}.pickle"
        if not datei.exists():
            datei.write_bytes(pickle.dumps(rechnen(tmp_path_factory.mktemp(name))))
        return pickle.loads(datei.read_bytes())
