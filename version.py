"""coder_version: aus allen Bestandteilen, die eine Entscheidung oder ein
gespeichertes Ergebnis ändern können.

Wer eine dieser Größen ändert, bekommt eine neue coder_version; alte Zeilen in
``selected_extractor`` bleiben unter ihrer alten Version stehen und werden
nicht überschrieben.
"""

from __future__ import annotations

# Fassung der Entscheidungsregeln in regeln.py (Klassen, Aktivmenge,
# Gleichstand, Rangfolge, Median) und dessen, was sie je Entscheidung
# speichern (metriken). Bei jeder Änderung an einem von beiden hochzählen.
# 2: metriken je aktivem Kandidaten mit „abstand“ (Jaccard-Abstand zur Wahl,
#    daraus das Zweifelsmaß); dieselben Wahlen, aber eine andere Ergebnissumme.
REGELWERK = 2
# Fassung von normalisierung.tokens() und shingles(): der Vergleichsschlüssel.
NORMALISIERUNG = 1
# Fassung von normalisierung.bereinigen(): bestimmt den gespeicherten Text.
BEREINIGUNG = 1
# Länge der Shingles in Tokens.
K = 5
# Gleichstandstoleranz auf dem F1-Score (Spezifikation §3: 0,03).
TOLERANZ = 0.03
# Feste Rangfolge der bekannten Extraktoren, höchste zuerst.
PRIORITAET = ("newspaper4k", "readability", "trafilatura")

KUERZEL = {"newspaper4k": "n4k", "readability": "rd", "trafilatura": "tf"}


def coder_version(
    regelwerk: int = REGELWERK,
    normalisierung: int = NORMALISIERUNG,
    bereinigung: int = BEREINIGUNG,
    k: int = K,
    toleranz: float = TOLERANZ,
    prioritaet: tuple[str, ...] = PRIORITAET,
) -> str:
    """Lesbare Kennung, z. B. ``auswahl-2+norm-1+rein-1+k5+t0.03+n4k>rd>tf``."""
    rangfolge = ">".join(KUERZEL.get(name, name) for name in prioritaet)
    return f"auswahl-{regelwerk}+norm-{normalisierung}+rein-{bereinigung}+k{k}+t{toleranz!r}+{rangfolge}"


CODER_VERSION = coder_version()

if __name__ == "__main__":
    print(CODER_VERSION)
