"""Was ein Lauf der Auswahl zählt (``Bilanz``, die Zeile am Ende und im Protokoll) und wo ein
Stapel steht (``Stapel``, für Meldungen)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields

from auswahlstufe.anzeige import zahl


@dataclass
class Bilanz:
    neu: int = 0
    geaendert: int = 0
    unveraendert: int = 0
    entfernt: int = 0
    ohne_kandidaten: int = 0
    # Eingabe geändert, Ergebnis gleich: nur die Eingabe-Summe nachgetragen (zählt
    # unter „unverändert“; Inhalt und kodiert_am bleiben, die Zeilenversion nicht).
    nachgetragen: int = 0
    # Items, die Ingest löschte, nachdem der Lauf sie las: nicht geschrieben.
    entfallen: int = 0
    items: int = 0  # Items im Bereich, als die Auswahl begann
    gerechnet: int = 0  # Items, die waehle sah
    unbekannte_zeilen: Counter = field(default_factory=Counter)
    stapel: int = 0
    sekunden: float = 0.0
    extraktion: dict[str, int] | None = None  # die Zählung des Vorlaufs (--extrahieren), fürs Protokoll

    def zaehlung(self) -> dict[str, int]:
        """Die Zählung des Laufs für den Kopf der Stichprobenseite."""
        return {
            "neu": self.neu,
            "geändert": self.geaendert,
            "unverändert": self.unveraendert,
            "entfernt": self.entfernt,
            "ohne Kandidaten": self.ohne_kandidaten,
        }

    def dazu(self, andere: Bilanz) -> None:
        """Die Bilanz eines Slots zur Summe eines Aufrufs von --nachholen."""
        for feld in fields(self):
            if feld.name == "extraktion":
                if andere.extraktion is not None:
                    summe = Counter(self.extraktion or {})
                    summe.update(andere.extraktion)
                    self.extraktion = dict(summe)
            elif feld.name != "sekunden":
                setattr(self, feld.name, getattr(self, feld.name) + getattr(andere, feld.name))

    def zeile(self) -> str:
        dauer = zahl(self.sekunden)
        entfallen = f", entfallen {self.entfallen}" if self.entfallen else ""
        nachgetragen = f", Eingabe-Summe nachgetragen {self.nachgetragen}" if self.nachgetragen else ""
        return (
            f"neu {self.neu}, geändert {self.geaendert}, unverändert {self.unveraendert}, "
            f"entfernt {self.entfernt}, ohne Kandidaten {self.ohne_kandidaten}{entfallen}{nachgetragen} "
            f"in {dauer} s"
        )


@dataclass(frozen=True)
class Stapel:
    """Wo ein Stapel im Lauf steht – für Meldungen."""

    nummer: int  # ab 1, in Lesereihenfolge
    erste_id: int
    letzte_id: int
    items: int

    def __str__(self) -> str:
        return f"Stapel {self.nummer} (Items {self.erste_id}–{self.letzte_id}, {self.items} Stück)"
