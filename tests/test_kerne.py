"""Ohne ``--prozesse``: so viele Worker wie Kerne, die der Prozess nutzen darf.

``os.cpu_count()`` zählt alle Kerne der Maschine, auch die, die ``taskset``, ein
cgroup-cpuset oder ``AllowedCPUs=`` einer systemd-Einheit verbieten; die Stufe nimmt die
CPU-Affinität (``auswahlstufe/kerne.py``). Geprüft an echten Unterprozessen, die auf einen
Kern gebunden sind (``os.sched_setaffinity`` vor dem Start, wie ``taskset -c``).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.hilfen import PROJEKT

ERLAUBT = sorted(os.sched_getaffinity(0))


def _auf_einem_kern() -> None:
    os.sched_setaffinity(0, {ERLAUBT[0]})


@pytest.fixture(autouse=True)
def mehr_als_ein_kern():
    if len(ERLAUBT) < 2:
        pytest.skip("braucht mindestens zwei erlaubte Kerne, um einen davon zu verbieten")


def _python(*args: str, gebunden: bool, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=PROJEKT,
        env={**os.environ, **(env or {})},
        preexec_fn=_auf_einem_kern if gebunden else None,
        capture_output=True,
        text=True,
        timeout=300,
    )


VORGABE = (
    "from auswahlstufe import kerne; from auswahlstufe.extraktion.seiten import Extraktion; "
    "print(kerne.nutzbar(), Extraktion().prozesse)"
)


def test_die_extraktion_nimmt_so_viele_worker_wie_erlaubte_kerne():
    gebunden = _python("-c", VORGABE, gebunden=True)
    assert gebunden.returncode == 0, gebunden.stderr
    assert gebunden.stdout.split() == ["1", "1"]
    frei = _python("-c", VORGABE, gebunden=False)
    assert frei.stdout.split() == [str(len(ERLAUBT))] * 2


def test_der_lauf_nimmt_so_viele_worker_wie_erlaubte_kerne(db_url, daten):
    """``auswahl_laeufe.prozesse`` hält fest, mit wie vielen Workern ein Lauf rechnete."""
    for item in (1, 2):
        daten.item(item)
        daten.kandidaten(item, {"trafilatura": "Ein Text über die Stadt.", "readability": "Ein Text."})
    for gebunden in (True, False):
        lauf = _python("auswahl.py", "--backfill", gebunden=gebunden, env={"DATABASE_URL": db_url})
        assert lauf.returncode == 0, lauf.stderr
    prozesse = [zeile[0] for zeile in daten.abfrage("select prozesse from auswahl_laeufe order by id")]
    assert prozesse == [1, len(ERLAUBT)]
