"""Ein früherer Stand der Stufe als Klon mit eigener Installation – für den Test des Updates.

Ein Klon eines Stands ist ein Verzeichnis mit dem Baum des Commits (``git archive``) und seinem
``.venv``: ``python -m venv`` ohne pip, die Abhängigkeiten über eine ``.pth``-Datei aus dem venv,
in dem die Tests laufen (so dauert es eine Sekunde statt einer Installation aller Pakete), und
``.venv/bin/pip`` als Aufruf des pip von dort. ``pip install -e .`` schreibt dann, was ein
Betreiber dieses Stands hatte: die Metadaten seiner Fassung (``Stand.fassung``) und den Befehl
``wurzelwerk-auswahl`` mit seinem alten Einstieg.

``auf_den_neuen_stand`` ist ``git fetch origin && git checkout --detach origin/main`` im Klon (Schritt 3 in docs/betrieb.md): die Dateien des alten Baums gehen, die des
Projekts (der Arbeitsbaum, den die Tests prüfen) kommen; ``.venv``, ``.env`` und ``log/`` bleiben.

Fehlt die Geschichte (ein flacher Klon in CI), gibt es keinen alten Baum: ``alter_klon`` legt dann
den heutigen Code in den Klon, und ``installation_vortaeuschen`` schreibt die Installation eines
alten Stands von Hand – die Metadaten mit seiner Fassung und seinen Befehl.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg import sql

from auswahlstufe.extraktion import aufrufe
from tests.hilfen import PROJEKT

# Was im Klon nicht zum Code gehört (docs/betrieb.md: .venv, .env, das cron-Log; dazu, was
# .gitignore übergeht) – es bleibt beim Holen des Codes, und der Baum des Projekts bringt es nicht mit.
NICHT_CODE = (
    ".git", ".venv", ".env", "log", "__pycache__", "*.egg-info", "build", ".pytest_cache",
    ".hypothesis", ".ruff_cache", ".import_linter_cache", "stichprobe-*", "vergleich-*",
    "daten", "ergebnisse", ".pgdata*", "demo-pg", "demo-ergebnis",
)  # fmt: skip


def stempel(extraktor: str) -> str:
    """``extraktor_fassung`` eines Kandidaten, wie die heutige Stufe ihn extrahiert."""
    return aufrufe.extraktor_fassung(extraktor, aufrufe.versionen()[extraktor])


@dataclass(frozen=True)
class Stand:
    """Ein früherer Stand, von dem ein Haus auf den heutigen geht (tests/test_aktualisieren.py)."""

    commit: str
    notiz: str  # Überschrift seines Abschnitts in docs/aenderungen.md
    letzte_migration: str
    einstieg: str  # was sein Befehl wurzelwerk-auswahl rief (pyproject.toml jenes Stands)
    # was pip als seine Installation kennt (sein auswahlstufe.VERSION; vor 2.0.0 hieß jeder Stand 1.0.0)
    fassung: str
    # Wie er extraktor_fassung schrieb: (Muster, Ersatz, nur für diesen Extraktor) auf den heutigen Stempel.
    fassungen: tuple[tuple[str, str, str | None], ...]
    anders: dict[tuple[int, str], tuple]  # (Item, Extraktor) → (Text, Fehler), wo er anderes schrieb
    # Extraktoren, deren Textfassung sich seitdem änderte; Seiten, deren Fassung sich gar nicht änderte
    # (fassungen leer), sind weder zu extrahieren noch nachzuprüfen.
    neu_extrahiert: frozenset[str] = frozenset()
    # Seine Einrichtung waren die nummerierten Schritte seiner docs/betrieb.md (ab f2b5c16); davor fünf
    # Punkte: das Rezept als Superuser, .env mit Passwort wie .env.example, cron ohne Log.
    schritte: bool = True
    cron: dict[str, str] = field(default_factory=dict)  # leer: die Zeilen aus Schritt 7 seiner Doku

    def stempel(self, extraktor: str) -> str:
        """``extraktor_fassung``, wie dieser Stand sie schrieb."""
        ergebnis = stempel(extraktor)
        for muster, ersatz, nur in self.fassungen:
            ergebnis = re.sub(muster, ersatz, ergebnis) if nur in (None, extraktor) else ergebnis
        return ergebnis

    @property
    def veraltet(self) -> bool:
        """Stempelte er einen Kandidaten anders als der heutige Code (dann prüft die Nacht jede Seite nach)?"""
        return any(self.stempel(x) != stempel(x) for x in aufrufe.EXTRAKTOREN)


def geschichte_da(commit: str) -> bool:
    """Kennt das Repository den Commit (ein flacher Klon kennt ihn nicht, ein Baum ohne git auch nicht)?"""
    probe = ["git", "-C", str(PROJEKT), "cat-file", "-e", f"{commit}^{{commit}}"]
    try:
        return subprocess.run(probe, capture_output=True, check=False).returncode == 0
    except OSError:  # kein git
        return False


def alter_baum(commit: str, klon: Path) -> None:
    """Der Baum des Commits in den Klon (``git archive``; der Arbeitsbaum bleibt, wie er ist)."""
    archiv = subprocess.run(["git", "-C", str(PROJEKT), "archive", commit], capture_output=True, check=True)
    klon.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archiv.stdout)) as tar:
        tar.extractall(klon, filter="data")


def venv_anlegen(klon: Path) -> None:
    """``.venv`` im Klon: ohne eigene Pakete, die Abhängigkeiten aus dem venv der Tests (eine
    ``.pth``-Zeile), ``.venv/bin/pip`` ist dessen pip. Die Stufe installiert erst ``pip install -e .``."""
    venv = klon / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (ziel,) = (venv / "lib").glob("python3.*/site-packages")
    (ziel / "abhaengigkeiten.pth").write_text(sysconfig.get_path("purelib") + "\n")
    pip = venv / "bin" / "pip"
    pip.write_text(
        f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n"
    )
    pip.chmod(0o755)


def im_klon(klon: Path, befehl: str, *, timeout: float = 300) -> subprocess.CompletedProcess:
    """Ein Befehl des Betreibers im Klon (bash), mit der Umgebung der Tests ohne die Datenbank –
    pip braucht die Einstellungen des Paketindex dieser Maschine (``pip install -e .`` holt
    setuptools für den Bau)."""
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("PG")}
    return subprocess.run(
        ["bash", "-e", "-c", befehl], cwd=klon, env=umgebung, capture_output=True, text=True, timeout=timeout
    )


def auf_den_neuen_stand(klon: Path) -> None:
    """Schritt 3, den Code holen: was der alte Baum brachte, geht (außer ``NICHT_CODE``), der Baum des Projekts kommt."""
    ignoriert = shutil.ignore_patterns(*NICHT_CODE)
    klon.mkdir(parents=True, exist_ok=True)
    for eintrag in klon.iterdir():
        if ignoriert(str(klon), [eintrag.name]):
            continue
        if eintrag.is_dir() and not eintrag.is_symlink():
            shutil.rmtree(eintrag)
        else:
            eintrag.unlink()
    shutil.copytree(PROJEKT, klon, ignore=ignoriert, dirs_exist_ok=True, symlinks=True)


def alter_klon(stand: Stand, klon: Path) -> str | None:
    """Der Klon eines früheren Stands mit seiner Installation (``pip install -e .``, die Abhängigkeiten
    liegen schon im venv der Tests); zurück kommt seine docs/betrieb.md. Ohne Geschichte ``None``:
    dann liegt der heutige Code im Klon, und die Installation des Stands ist vorgetäuscht."""
    if not geschichte_da(stand.commit):
        auf_den_neuen_stand(klon)
        venv_anlegen(klon)
        installation_vortaeuschen(klon, stand.fassung, stand.einstieg)
        return None
    alter_baum(stand.commit, klon)
    venv_anlegen(klon)
    lauf = im_klon(klon, ".venv/bin/pip install -q --no-deps -e .")
    assert lauf.returncode == 0, lauf.stdout + lauf.stderr
    return (klon / "docs" / "betrieb.md").read_text(encoding="utf-8")


def installation_vortaeuschen(klon: Path, fassung: str, einstieg: str) -> None:
    """Ohne Geschichte: die Installation eines alten Stands, wie ``pip install -e .`` sie schrieb –
    die Metadaten mit ``fassung``, eine ``.pth`` mit dem Klon und der Befehl ``wurzelwerk-auswahl``,
    der ``einstieg`` (``modul:funktion``) ruft; mit RECORD, damit pip sie beim Update entfernt."""
    venv = klon / ".venv"
    (site,) = (venv / "lib").glob("python3.*/site-packages")
    info = site / f"wurzelwerk_auswahl-{fassung}.dist-info"
    info.mkdir()
    modul, funktion = einstieg.split(":")
    dateien = {
        info / "METADATA": f"Metadata-Version: 2.1\nName: wurzelwerk-auswahl\nVersion: {fassung}\n",
        info / "INSTALLER": "pip\n",
        info / "entry_points.txt": f"[console_scripts]\nwurzelwerk-auswahl = {einstieg}\n",
        site / f"__editable__.wurzelwerk_auswahl-{fassung}.pth": f"{klon}\n",
        venv / "bin" / "wurzelwerk-auswahl": (
            f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom {modul} import {funktion}\n"
            f"if __name__ == '__main__':\n    sys.exit({funktion}())\n"
        ),
    }
    for pfad, text in dateien.items():
        pfad.write_text(text)
    (venv / "bin" / "wurzelwerk-auswahl").chmod(0o755)
    zeilen = [f"{os.path.relpath(p, site)},," for p in [*dateien, info / "RECORD"]]
    (info / "RECORD").write_text("\n".join(zeilen) + "\n")


SQL_SPALTEN = """
select attname from pg_attribute
where attrelid = %s::regclass and attnum > 0 and not attisdropped and attgenerated = '' order by attnum
"""


def zeilen_kopieren(
    quelle: psycopg.Connection,
    ziel: psycopg.Connection,
    tabellen: tuple[str, ...],
    ohne: tuple[str, ...] = (),
) -> None:
    """Die Zeilen jeder Tabelle von ``quelle`` nach ``ziel`` (nach ihrer ersten Spalte geordnet), in den
    Spalten, die beide haben – ohne berechnete und ohne ``ohne``: so kommen Zeilen des heutigen
    Schemas in das eines alten Stands."""
    for tabelle in tabellen:
        dort = {s for (s,) in ziel.execute(SQL_SPALTEN, (tabelle,))}
        hier = [s for (s,) in quelle.execute(SQL_SPALTEN, (tabelle,))]
        namen = sql.SQL(", ").join(sql.Identifier(s) for s in hier if s in dort and s not in ohne)
        raus = sql.SQL("copy (select {} from {} order by {}) to stdout").format(
            namen, sql.Identifier(tabelle), sql.Identifier(hier[0])
        )
        rein = sql.SQL("copy {} ({}) from stdin").format(sql.Identifier(tabelle), namen)
        with quelle.cursor().copy(raus) as aus, ziel.cursor().copy(rein) as ein:
            for daten in aus:
                ein.write(daten)
