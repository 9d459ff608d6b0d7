"""Das richtige Python? Die Skripte an der Wurzel importieren dieses Modul vor allem anderen.

Mit dem Python des Systems (``python3 auswahl.py``) fehlen click, pebble, psycopg und python-dotenv;
statt eines englischen Tracebacks (``ModuleNotFoundError``) steht dann ein deutscher Satz mit dem
Aufruf über das Python des Klons da, Exit 4 (Voraussetzung fehlt). Nur Standardbibliothek: das
Modul muss gerade dort laufen, wo die Pakete fehlen. Dass es zuerst kommt, hält ruff
(``[tool.ruff.lint.isort]``, Abschnitt ``pakete``).
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path

# Import-Name → Paket, wie in pyproject.toml (dependencies).
PAKETE = {"click": "click", "pebble": "pebble", "psycopg": "psycopg", "dotenv": "python-dotenv"}
# = fehler.EXIT_VORAUSSETZUNG; fehler.py braucht click, darum hier die Zahl (ein Test vergleicht).
EXIT_FALSCHES_PYTHON = 4
WURZEL = Path(__file__).resolve().parents[1]
INSTALLATION = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[demo]'"  # README, Schnellstart


def fehlende() -> list[str]:
    """Die Pakete der Stufe, die dieses Python nicht findet."""
    return [paket for modul, paket in PAKETE.items() if importlib.util.find_spec(modul) is None]


def pruefen() -> None:
    """Fehlt ein Paket: ein Satz auf stderr und Exit 4, bevor irgendetwas anderes importiert wird."""
    fehlt = fehlende()
    if not fehlt:
        return
    python = (
        ".venv/bin/python" if Path.cwd().resolve() == WURZEL else str(WURZEL / ".venv" / "bin" / "python")
    )
    aufruf = shlex.join([python, *sys.argv])
    sys.stderr.write(
        f"Fehler: Diesem Python ({sys.executable}) {'fehlt' if len(fehlt) == 1 else 'fehlen'} "
        f"{', '.join(fehlt)}. Die Stufe läuft mit dem Python "
        f"ihrer Umgebung im Klon: {aufruf} – gibt es .venv noch nicht, vorher im Klon (README, "
        f"Schnellstart): {INSTALLATION}\n"
    )
    raise SystemExit(EXIT_FALSCHES_PYTHON)


pruefen()
