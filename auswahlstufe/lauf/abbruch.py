"""SIGINT/SIGTERM während eines Laufs: merken statt sterben.

Ein Lauf (Auswahl wie Extraktion) prüft ``Abbruch.signal`` nach jedem Stapel
oder jeder Seite, schreibt, was fertig ist, und endet mit Exit 130.
"""

from __future__ import annotations

import signal


class Abbruch:
    """Merkt sich SIGINT/SIGTERM; der Lauf hört nach dem laufenden Stapel auf."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._alt: dict[int, object] = {}

    def __enter__(self) -> Abbruch:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._alt[sig] = signal.signal(sig, self._merken)
        return self

    def _merken(self, sig, _frame) -> None:
        self.signal = sig

    def __exit__(self, *_) -> None:
        for sig, alt in self._alt.items():
            signal.signal(sig, alt)
