"""Fuzzing in groß: die Eigenschaften aus test_fuzz.py mit vielen Beispielen.

CI prüft je Eigenschaft 200 Beispiele; dieses Skript dieselben Eigenschaften
(bereinigen, tokens, tokens idempotent, waehle, JSON-Lader) mit ``-n``
Beispielen je Eigenschaft – Voreinstellung 20 000, zusammen 100 000 – und
zählt, wie viele wirklich geprüft wurden. Ein Gegenbeispiel bricht ab und
steht mit hypothesis' Minimierung auf stderr (Exit 1).

    python -m bench.fuzzen                 # 5 × 20 000 = 100 000 Beispiele (~4 min)
    python -m bench.fuzzen -n 1000         # schneller Überblick
    python -m bench.fuzzen -n 50000 --nur waehle lader
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

EIGENSCHAFTEN = {
    "bereinigen": "test_bereinigen_wirft_nie_und_ist_deterministisch",
    "tokens": "test_tokens_wirft_nie_deterministisch_und_zeilenweise_gleich",
    "tokens-idempotent": "test_tokens_idempotent_auf_eigenem_ergebnis",
    "waehle": "test_waehle_wirft_nie_und_entscheidet_stabil",
    "lader": "test_lader_gibt_artikel_oder_eingabefehler",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", "--beispiele", type=int, default=20_000, help="Beispiele je Eigenschaft")
    parser.add_argument("--nur", nargs="+", choices=list(EIGENSCHAFTEN), help="nur diese Eigenschaften")
    args = parser.parse_args(argv)

    # Vor dem Import: test_fuzz liest die Zahl beim Laden in seine settings.
    os.environ["AW_FUZZ_BEISPIELE"] = str(args.beispiele)
    os.environ["AW_FUZZ_OHNE_DATENBANK"] = "1"  # keine 100 000 Einträge in .hypothesis/
    import test_fuzz

    gesamt_start = time.perf_counter()
    for name in args.nur or EIGENSCHAFTEN:
        start = time.perf_counter()
        # Warnungen des Laders (doppelte Schlüssel) gehen sonst zu Tausenden nach stderr.
        with contextlib.redirect_stderr(io.StringIO()):
            try:
                getattr(test_fuzz, EIGENSCHAFTEN[name])()
                fehler = None
            except Exception as e:  # das Gegenbeispiel zeigen, nicht verschlucken
                fehler = e
        if fehler is not None:
            print(f"{name}: Gegenbeispiel nach {test_fuzz.ZAEHLER[name]} Beispielen", file=sys.stderr)
            raise fehler
        sekunden = time.perf_counter() - start
        print(f"{name:<20}{test_fuzz.ZAEHLER[name]:>9} Beispiele  {sekunden:7.1f} s", flush=True)
    summe = sum(test_fuzz.ZAEHLER.values())
    print(
        f"{'zusammen':<20}{summe:>9} Beispiele  {time.perf_counter() - gesamt_start:7.1f} s, kein Gegenbeispiel"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
