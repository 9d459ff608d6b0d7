"""Das richtige Python, die richtige Installation? Jeder Einstieg importiert dieses Modul zuerst.

Fehlen die Pakete (das Python des Systems) oder passt die Installation nicht zum Code im Klon
(``auswahlstufe.VERSION``), endet es mit Exit 4 und einem Satz mit dem Befehl, der es behebt
(docs/kommandozeile.md, „Falsches Python“); ohne Terminal mit Zeilenkopf (``AUSWAHL_ZEILENKOPF``
wie in ``betrieb.protokoll``). Nur Standardbibliothek: das Modul muss gerade dort laufen, wo die
Pakete fehlen. Dass es zuerst kommt, hält ruff (``[tool.ruff.lint.isort]``, Abschnitt ``pakete``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shlex
import sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

# Import-Name → Paket, wie in pyproject.toml (dependencies).
PAKETE = {"click": "click", "psycopg": "psycopg", "dotenv": "python-dotenv"}
# = fehler.EXIT_VORAUSSETZUNG; fehler.py braucht click, darum hier die Zahl (ein Test vergleicht).
EXIT_FALSCHES_PYTHON = 4
WURZEL = Path(__file__).resolve().parents[1]
INSTALLATION = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[demo]'"  # README, Schnellstart


def fehlende() -> list[str]:
    """Die Pakete der Stufe, die dieses Python nicht findet."""
    return [paket for modul, paket in PAKETE.items() if importlib.util.find_spec(modul) is None]


def installiert() -> str | None:
    """Die Fassung, die pip zuletzt installierte (None: die Stufe ist nicht installiert)."""
    try:
        return importlib.metadata.version("wurzelwerk-auswahl")
    except importlib.metadata.PackageNotFoundError:
        return None


def veraltet() -> str | None:
    """Der Satz, wenn die Installation nicht zum Code im Klon passt; sonst None."""
    from auswahlstufe import VERSION

    fassung = installiert()
    if fassung == VERSION:
        return None
    wie = f"installiert ist {fassung}" if fassung else "die Stufe ist in diesem Python nicht installiert"
    # Mit dem Extra extraktion eingerichtet, mit ihm erneuert: sonst blieben die Extraktoren auf
    # ihren alten Fassungen, auch wenn die neue Fassung der Stufe andere pinnt.
    ziel = "'.[extraktion]'" if importlib.util.find_spec("trafilatura") is not None else "."
    return (
        f"Fehler: Die Installation passt nicht zum Code im Klon ({wie}, der Code ist {VERSION}) – nach "
        f"dem Holen des Codes muss pip noch einmal laufen. Im Klon ({WURZEL}): .venv/bin/pip install -q -e {ziel} – dann "
        "denselben Aufruf wiederholen (docs/betrieb.md, Aktualisieren).\n"
    )


def melden(satz: str) -> None:
    """``satz`` auf stderr; ohne Terminal (oder mit AUSWAHL_ZEILENKOPF=an) mit Zeit und Aufruf davor,
    etwa ``2026-12-04T17:05:02+01:00 aufruf=auswahl.py --nachholen | Fehler: …``."""
    einstellung = os.environ.get("AUSWAHL_ZEILENKOPF", "auto")
    if einstellung == "an" or (einstellung != "aus" and not sys.stderr.isatty()):
        zeit = datetime.now(ZoneInfo("Europe/Berlin")).isoformat(timespec="seconds")
        satz = f"{zeit} aufruf={shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]])} | {satz}"
    sys.stderr.write(satz)


def pruefen() -> None:
    """Fehlt ein Paket oder ist die Installation veraltet: ein Satz auf stderr und Exit 4, bevor
    irgendetwas anderes importiert wird."""
    fehlt = fehlende()
    if not fehlt:
        if satz := veraltet():
            melden(satz)
            raise SystemExit(EXIT_FALSCHES_PYTHON)
        return
    python = (
        ".venv/bin/python" if Path.cwd().resolve() == WURZEL else str(WURZEL / ".venv" / "bin" / "python")
    )
    aufruf = shlex.join([python, *sys.argv])
    melden(
        f"Fehler: Diesem Python ({sys.executable}) {'fehlt' if len(fehlt) == 1 else 'fehlen'} "
        f"{', '.join(fehlt)}. Die Stufe läuft mit dem Python "
        f"ihrer Umgebung im Klon: {aufruf} – gibt es .venv noch nicht, vorher im Klon (README, "
        f"Schnellstart): {INSTALLATION}\n"
    )
    raise SystemExit(EXIT_FALSCHES_PYTHON)


pruefen()
