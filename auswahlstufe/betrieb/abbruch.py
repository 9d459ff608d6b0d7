"""SIGINT und SIGTERM während eines Laufs: das erste Signal bittet, das zweite beendet.

Das erste merkt sich ``Abbruch.signal`` (der Lauf endet nach dem laufenden Stapel bzw. der
laufenden Seite), das zweite wirft ``SofortAbbruch`` – ein ``KeyboardInterrupt``: kein
``except Exception`` fängt es ab, und psycopg bricht bei ihm die laufende Anfrage am Server ab.
Was der Betreiber sieht: docs/betrieb-lauf.md, „Wie ein Lauf arbeitet“.
"""

from __future__ import annotations

import signal

SIGNALE = (signal.SIGINT, signal.SIGTERM)


class SofortAbbruch(KeyboardInterrupt):
    """Das zweite SIGINT/SIGTERM: der Lauf endet jetzt (Exit 130)."""

    def __init__(self, sig: int, wann: str = "zweites Signal") -> None:
        super().__init__(sig)
        self.signal = sig
        self.wann = wann


class Abbruch:
    """``with Abbruch() as abbruch:`` – ``abbruch.signal`` ist das erste Signal (sonst None)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._vorher: dict[int, object] = {}

    def __enter__(self) -> Abbruch:
        for sig in SIGNALE:
            self._vorher[sig] = signal.signal(sig, self._empfangen)
        return self

    def __exit__(self, *_) -> None:
        for sig, vorher in self._vorher.items():
            signal.signal(sig, vorher)

    @property
    def gesetzt(self) -> bool:
        return self.signal is not None

    def name(self) -> str:
        return signal.Signals(self.signal).name if self.signal is not None else ""

    def _empfangen(self, sig: int, _frame) -> None:
        if self.signal is None:
            self.signal = sig
            return
        raise SofortAbbruch(sig)
