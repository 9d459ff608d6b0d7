"""Fuzzing in groß: die Eigenschaften aus auswahlstufe/referenz/eigenschaften.py mit vielen Beispielen.

CI prüft je Eigenschaft 200 Beispiele (test_fuzz.py); dieses Skript dieselben
Eigenschaften (bereinigen, tokens, tokens idempotent, waehle, JSON-Lader) mit
``-n`` Beispielen je Eigenschaft – Voreinstellung 20 000, zusammen 100 000 –
und zählt, wie viele wirklich geprüft wurden. Ein Gegenbeispiel bricht ab und
steht mit hypothesis' Minimierung auf stderr (Exit 1).

\b
    python -m bench.fuzzen                 # 5 × 20 000 = 100 000 Beispiele (~4 min)
    python -m bench.fuzzen -n 1000         # schneller Überblick
    python -m bench.fuzzen -n 50000 --nur waehle --nur lader
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
from hypothesis import HealthCheck, given, settings

from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.referenz.eigenschaften import EIGENSCHAFTEN


def pruefen(name: str, beispiele: int) -> int:
    """Prüft eine Eigenschaft mit ``beispiele`` Beispielen; gibt die Zahl der geprüften zurück."""
    strategie, pruefung = EIGENSCHAFTEN[name]
    gezaehlt = 0

    def zaehlend(wert) -> None:
        nonlocal gezaehlt
        gezaehlt += 1
        pruefung(wert)

    lauf = settings(
        max_examples=beispiele,
        deadline=None,
        database=None,  # keine 100 000 Einträge in .hypothesis/
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )(given(strategie)(zaehlend))
    try:
        # Warnungen des Laders (doppelte Schlüssel) gingen sonst zu Tausenden nach stderr.
        with contextlib.redirect_stderr(io.StringIO()):
            lauf()
    except Exception:  # das Gegenbeispiel zeigen, nicht verschlucken
        print(f"{name}: Gegenbeispiel nach {gezaehlt} Beispielen", file=sys.stderr)
        raise
    return gezaehlt


@click.command(cls=DeutscherBefehl, help=__doc__)
@click.option(
    "-n",
    "--beispiele",
    type=click.IntRange(min=1),
    default=20_000,
    show_default=True,
    metavar="N",
    help="Beispiele je Eigenschaft.",
)
@click.option(
    "--nur",
    type=click.Choice(list(EIGENSCHAFTEN)),
    multiple=True,
    help="Nur diese Eigenschaft (mehrfach angeben für mehrere).",
)
def main(beispiele: int, nur: tuple[str, ...]) -> None:
    gesamt_start = time.perf_counter()
    summe = 0
    for name in nur or EIGENSCHAFTEN:
        start = time.perf_counter()
        gezaehlt = pruefen(name, beispiele)
        summe += gezaehlt
        print(f"{name:<20}{gezaehlt:>9} Beispiele  {time.perf_counter() - start:7.1f} s", flush=True)
    print(
        f"{'zusammen':<20}{summe:>9} Beispiele  {time.perf_counter() - gesamt_start:7.1f} s, kein Gegenbeispiel"
    )


if __name__ == "__main__":
    main()
