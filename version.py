"""coder_version: aus allen Bestandteilen, die eine Entscheidung oder ein
gespeichertes Ergebnis ändern können.

Wer eine dieser Größen ändert, bekommt eine neue coder_version; alte Zeilen in
``selected_extractor`` bleiben unter ihrer alten Version stehen und werden
nicht überschrieben.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Fassung der Entscheidungsregeln in regeln.py (Klassen, Aktivmenge,
# Gleichstand, Rangfolge, Median) und dessen, was sie je Entscheidung
# speichern (metriken). Bei jeder Änderung an einem von beiden hochzählen (docs/aenderungen.md).
REGELWERK = 2
# Fassung von normalisierung.tokens() und shingles(): der Vergleichsschlüssel.
NORMALISIERUNG = 1
# Der Vergleichsschlüssel wörtlich nach Quelle 000, ohne die Abweichung des
# Projekts (Formatzeichen löschen): nur als Variante (``quelle000``).
NORMALISIERUNG_QUELLE_000 = 0
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


@dataclass(frozen=True)
class Variante:
    """Eine Abweichung von den Voreinstellungen der Regeln, neben der Voreinstellung kodiert.

    Jede Variante hat ihre eigene coder_version und überschreibt darum nichts.
    ``bewertung.py --variante`` und die Datenbankmodi leiten sie beide hier ab.
    """

    k: int = K
    toleranz: float = TOLERANZ
    quelle000: bool = False  # Vergleichsschlüssel wie Quelle 000: Formatzeichen bleiben

    @property
    def name(self) -> str:
        """Die Schreibweise der Kommandozeile, z. B. ``k4:0.03+quelle000``."""
        teile = [f"k{self.k}:{self.toleranz!r}"] if (self.k, self.toleranz) != (K, TOLERANZ) else []
        return "+".join([*teile, *(["quelle000"] if self.quelle000 else [])]) or "voreinstellung"

    @property
    def coder_version(self) -> str:
        normalisierung = NORMALISIERUNG_QUELLE_000 if self.quelle000 else NORMALISIERUNG
        return coder_version(normalisierung=normalisierung, k=self.k, toleranz=self.toleranz)

    def argumente(self) -> dict[str, object]:
        """Die Schlüsselwörter für ``regeln.waehle``."""
        return {"k": self.k, "toleranz": self.toleranz, "formatzeichen_loeschen": not self.quelle000}


_K_TOLERANZ = re.compile(r"k?(\d+):(\d+(?:[.,]\d*)?|[.,]\d+)")


def variante_lesen(text: str) -> Variante:
    """``k4:0.03``, ``4:0.03``, ``quelle000`` oder beides mit ``+`` → Variante.

    Unsinn wird ein ValueError mit deutschem Satz (die Kommandozeile macht
    daraus einen Aufruffehler).
    """
    k, toleranz, quelle000 = K, TOLERANZ, False
    for teil in text.strip().lower().split("+"):
        treffer = _K_TOLERANZ.fullmatch(teil)
        if teil == "quelle000":
            quelle000 = True
        elif treffer:
            k, toleranz = int(treffer[1]), float(treffer[2].replace(",", "."))
            if k < 1 or not 0 <= toleranz < 1:
                raise ValueError(f"{text!r}: k ab 1, Toleranz zwischen 0 und 1")
        else:
            raise ValueError(f"{text!r}: erwartet K:TOLERANZ (z. B. k4:0.03), quelle000 oder beides mit +")
    return Variante(k, toleranz, quelle000)


if __name__ == "__main__":
    print(CODER_VERSION)
