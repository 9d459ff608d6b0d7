"""Das Haus mit getrennten Rollen, wie docs/betrieb.md es einrichtet: die Schritte der
Einrichtung aus der Doku, ihre sh-Blöcke ausgeführt, wie sie dastehen, pg_hba.conf und
pg_ident.conf der Doku, die crontab und die Abfragen für psql."""

from __future__ import annotations

import os
import pwd
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from tests.hilfen import PROJEKT
from tests.hilfen.prozesse import Ergebnis, ende
from tests.hilfen.server import Server, hba_zeilen_voran, ident_zeilen_dazu

HAUS_DB = "wurzelwerk"
HAUS_ROLLEN = ("aw_blick", "aw_stufe", "aw_admin", "ingest")  # in dieser Reihenfolge zu löschen
BETRIEB_DOKU = PROJEKT / "docs" / "betrieb.md"


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
    melden sich ingest, aw_admin und aw_stufe nur an, weil die Doku es sagt – nie über trust, das
    Debian ihnen nicht gibt."""
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


def haus_abreissen(server: Server) -> None:
    """Datenbank und Rollen des Hauses weg (auch nach einem Test, der mittendrin scheiterte)."""
    with server.verwalten() as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(HAUS_DB)))
        for rolle in HAUS_ROLLEN:
            conn.execute(sql.SQL("drop role if exists {}").format(sql.Identifier(rolle)))


def haus_vorbereiten(server: Server, bin_pfad: Path, klon: Path, home: Path) -> Haus:
    """Ein Haus, noch leer: wie der Admin des Servers in Schritt 1 die Zeilen der Doku nach
    pg_hba.conf und pg_ident.conf (neu gelesen erst im Block von Schritt 1, ``select
    pg_reload_conf()``); ``home`` des Betreibers wird angelegt, der Klon nicht."""
    haus_abreissen(server)
    hba_zeilen_voran(server, haus_hba(server), neu_lesen=False)
    ident_zeilen_dazu(server, haus_ident())
    home.mkdir()
    return Haus(server, bin_pfad, klon, home)


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


def einrichtung(doku: str | None = None) -> list[Schritt]:
    """Die Abschnitte von „Einrichtung gegen die eigene Datenbank“ in docs/betrieb.md, in Reihenfolge
    (``doku``: der Text einer anderen Fassung der Datei, etwa eines früheren Stands)."""
    text = doku if doku is not None else BETRIEB_DOKU.read_text(encoding="utf-8")
    abschnitt = text.split("\n## Einrichtung gegen die eigene Datenbank\n", 1)[1].split("\n## ", 1)[0]
    schritte = []
    for teil in re.split(r"^### ", abschnitt, flags=re.M)[1:]:
        titel, rest = teil.split("\n", 1)
        bloecke = re.findall(r"^```(\w*)\n(.*?)^```", rest, re.S | re.M)
        schritte.append(Schritt(titel.strip(), bloecke, rest))
    return schritte


def schritt(nummer: int | str, doku: str | None = None) -> Schritt:
    """Schritt „3. …“ (Zahl) oder ein Abschnitt, dessen Titel so beginnt (Text)."""
    anfang = f"{nummer}. " if isinstance(nummer, int) else nummer
    return next(s for s in einrichtung(doku) if s.titel.startswith(anfang))


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

    def schritt(self, nummer: int | str, doku: str | None = None) -> list[subprocess.CompletedProcess]:
        """Die sh-Blöcke eines Schritts; als Superuser nur der Schritt, dessen Titel das sagt (1).
        ``doku``: der Text einer anderen Fassung von docs/betrieb.md (ein früherer Stand)."""
        ergebnisse = []
        abschnitt = schritt(nummer, doku)
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

    def sehen(self, anfrage: str, params=None) -> list[tuple]:
        """Die Augen des Tests (Superuser), für das, was keine Rolle des Hauses zeigen soll."""
        with psycopg.connect(self.server.url(HAUS_DB), autocommit=True) as conn:
            return conn.execute(anfrage, params).fetchall()

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


def cron_zeilen(doku: str | None = None) -> dict[str, str]:
    """Die Befehle der crontab aus Schritt 7 (ohne die fünf Zeitfelder): der Tick und die Nacht."""
    block = next(text for sprache, text in schritt(7, doku).bloecke if sprache == "crontab")
    zeilen = [z.split(None, 5) for z in block.splitlines() if z and not z.startswith(("#", "MAILTO="))]
    assert [felder[:5] for felder in zeilen] == [["5-59/15", "*", "*", "*", "*"], ["30", "3", "*", "*", "*"]]
    # Die Tests führen die Zeilen mit /bin/sh aus; cron machte aus einem nackten % einen Zeilenumbruch.
    assert all("%" not in felder[5].replace("\\%", "") for felder in zeilen), block
    return {"tick": zeilen[0][5], "nacht": zeilen[1][5]}


def aktualisieren() -> dict[int, str]:
    """Die Schritte von „Aktualisieren“ in docs/betrieb.md: Nummer → Text des Schritts."""
    text = BETRIEB_DOKU.read_text(encoding="utf-8")
    abschnitt = text.split("\n## Aktualisieren\n", 1)[1].split("\n## ", 1)[0]
    teile = re.findall(r"^(\d)\. (.*?)(?=^\d\. |^\n)", abschnitt, re.S | re.M)
    return {int(nummer): " ".join(text.split()) for nummer, text in teile}


AENDERUNGEN_DOKU = PROJEKT / "docs" / "aenderungen.md"


def notizen() -> dict[str, str]:
    """Die Abschnitte von docs/aenderungen.md, die neueste Fassung zuerst: Überschrift (ohne das
    Datum in Klammern, etwa „1.0.0, Stand f2b5c16“) → Text."""
    text = AENDERUNGEN_DOKU.read_text(encoding="utf-8")
    teile = re.split(r"^## (.*?)(?: \([\d-]+\))?$", text, flags=re.M)[1:]
    return dict(zip(teile[::2], teile[1::2], strict=True))


def code_in(text: str) -> list[str]:
    """Was in einem Text der Doku als Code steht (zwischen einfachen Backticks)."""
    return re.findall(r"`([^`\n]+)`", text)


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
