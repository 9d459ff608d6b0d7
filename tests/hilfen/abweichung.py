"""Eine Extraktion, deren Worker einen Quelltext als abweichend sehen – wie nach einem Update.

Ob die Beschleuniger laufen, prüft jeder Worker beim Start selbst (``worker.anfang``). Ein Test
lässt ihn dort eine Abweichung finden: ``mit_abweichung(pfad)`` ersetzt die Vorbereitung, die
``seiten.Extraktion`` ihrem Pool gibt, durch ``anfang_mit_abweichung`` (im Worker ausgeführt,
darum hier als Funktion eines Moduls, das der Worker importieren kann).
"""

from __future__ import annotations

import functools


def anfang_mit_abweichung(pfad: str, speichergrenze_mb: int) -> str | None:
    """``worker.anfang``, nur dass der Quelltext ``pfad`` einen anderen sha256 hat als geprüft."""
    from auswahlstufe.extraktion import fassungen, worker

    fassungen.QUELLTEXT[pfad] = "0" * 64
    return worker.anfang(speichergrenze_mb)


def mit_abweichung(pfad: str) -> None:
    """Ab jetzt sieht jeder Worker jeder ``seiten.Extraktion`` in diesem Prozess die Abweichung."""
    from auswahlstufe.extraktion import seiten

    echt = seiten.Pool

    def pool(*args, **kwargs):
        return echt(*args, **{**kwargs, "vorbereitung": functools.partial(anfang_mit_abweichung, pfad)})

    seiten.Pool = pool
