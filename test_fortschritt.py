"""Fortschritt auf stderr: am Terminal click's Balken, sonst eine schlichte Zeile je Abstand."""

from __future__ import annotations

import io

from fortschritt import dauer_text, fortschritt


class Uhr:
    """Eine Uhr, die nur weitergeht, wenn der Test es sagt."""

    def __init__(self) -> None:
        self.jetzt = 1000.0

    def __call__(self) -> float:
        return self.jetzt


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_ohne_terminal_eine_zeile_je_abstand_mit_rate_und_rest():
    datei, uhr = io.StringIO(), Uhr()
    with fortschritt(1000, "Kodieren", datei=datei, abstand=10, uhr=uhr) as weiter:
        uhr.jetzt += 4
        weiter(100)  # vor dem ersten Abstand: keine Zeile
        assert datei.getvalue() == ""
        uhr.jetzt += 6
        weiter(100)  # 200 Items in 10 s
        uhr.jetzt += 30  # eine lange Pause: danach eine Zeile, nicht drei
        weiter(200)
        uhr.jetzt += 1
        weiter(100)
    zeilen = datei.getvalue().splitlines()
    assert zeilen[0].startswith(
        "Kodieren: 200 von 1000 Items (20 %), 20 Items/s, noch etwa 40 s (Ende gegen "
    )
    assert zeilen[1].startswith("Kodieren: 400 von 1000 Items (40 %), 10 Items/s, noch etwa 1 min 0 s ")
    assert len(zeilen) == 2


def test_ohne_terminal_keine_zeile_am_ende_und_keine_bei_null_items():
    datei, uhr = io.StringIO(), Uhr()
    with fortschritt(10, datei=datei, abstand=1, uhr=uhr) as weiter:
        uhr.jetzt += 5
        weiter(10)  # fertig: die Bilanzzeile des Laufs sagt den Rest
    with fortschritt(0, datei=datei, abstand=1, uhr=uhr) as weiter:
        weiter(0)
    assert datei.getvalue() == ""


def test_am_terminal_der_balken_von_click():
    datei = Terminal()
    with fortschritt(50, "Kodieren", datei=datei) as weiter:
        weiter(25)
        weiter(25)
    assert "Kodieren" in datei.getvalue() and "50/50" in datei.getvalue()


def test_dauer_text():
    assert [dauer_text(s) for s in (0.4, 45, 75, 3600, 7500)] == [
        "0 s",
        "45 s",
        "1 min 15 s",
        "1 h 00 min",
        "2 h 05 min",
    ]
