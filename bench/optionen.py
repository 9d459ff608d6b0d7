"""Die click-Optionen, die mehrere Bench-Skripte gleich deklarieren: ``-n/--anzahl``, ``--seed`` und
die Größen der Skala (``million``, ``nachholen``).

Nur wo Bedeutung, Grenze und Hilfe wirklich gleich sind (erzeugte Items des
Generators, sein Startwert); wer anders zählt oder einen anderen Startwert
meint (erzeugen.py, zweifel.py, fuzzen.py, extraktion.py), deklariert selbst.
"""

from __future__ import annotations

import click


def anzahl(voreinstellung: int):
    """``-n/--anzahl``: so viele Items erzeugt der Generator (bench/erzeugen.py)."""
    return click.option(
        "-n",
        "--anzahl",
        type=click.IntRange(min=1),
        default=voreinstellung,
        show_default=True,
        metavar="N",
        help="Erzeugte Items.",
    )


seed = click.option(
    "--seed", type=int, default=1, show_default=True, metavar="N", help="Startwert des Generators."
)


# Die Größen der Skala: Zahl der Items je Messung, aufsteigend (bench/million.py, bench/nachholen.py).
GROESSEN = (100000, 1000000)
groessen = click.argument("groessen", metavar="[GRÖSSE]...", nargs=-1, type=click.IntRange(min=1))
