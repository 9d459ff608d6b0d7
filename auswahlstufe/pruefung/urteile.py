"""Urteile von Hand über die Wahlen einer Stichprobe: Format, Einlesen, Auswertung.

Die Prüfseite (``pruefseite.py``) lädt die Urteile als JSON herunter (``URTEILE_FORMAT``),
``bewertung.py --urteile`` rechnet daraus, wie oft die Auswahl richtig lag. Format und Ausgabe:
docs/stichprobe.md, „Urteile: eine Handreferenz für Wahlen“.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.jsoneingabe import json_lesen
from version import PRIORITAET

URTEILE_FORMAT = "wurzelwerk-urteile/1"
RICHTIG = "richtig"
ANDERER = "anderer"


@dataclass(frozen=True, slots=True)
class Urteil:
    schluessel: str
    wahl: str
    richtig: bool
    besser: str | None  # bei „anderer“ der bessere Kandidat
    grund: str | None  # Grund des Zweifels, wenn die Datei ihn nennt


def lesen(pfad: str) -> tuple[str, list[Urteil]]:
    """Die coder_version und die Urteile einer Urteilsdatei."""
    daten = json_lesen(pfad)
    if not isinstance(daten, Mapping) or daten.get("format") != URTEILE_FORMAT:
        raise EingabeFehler(
            f"{pfad}: keine Urteilsdatei (erwartet ein Objekt mit „format“: „{URTEILE_FORMAT}“)."
        )
    liste = daten.get("urteile")
    if not isinstance(liste, list):
        raise EingabeFehler(f"{pfad}: „urteile“ fehlt oder ist keine Liste.")
    urteile: list[Urteil] = []
    gesehen: set[str] = set()
    for index, eintrag in enumerate(liste):
        wo = f"{pfad}: Urteil {index}"
        if not isinstance(eintrag, Mapping):
            raise EingabeFehler(f"{wo} ist kein Objekt.")
        schluessel, wahl, urteil, besser = (
            eintrag.get(n) for n in ("schluessel", "wahl", "urteil", "besser")
        )
        if not isinstance(schluessel, str) or not schluessel:
            raise EingabeFehler(f"{wo} hat keinen Schlüssel.")
        wo += f" ({schluessel})"
        if schluessel in gesehen:
            raise EingabeFehler(f"{wo} steht doppelt in der Datei.")
        gesehen.add(schluessel)
        if wahl not in PRIORITAET:
            raise EingabeFehler(f"{wo}: „wahl“ ist keiner von {', '.join(PRIORITAET)}.")
        if not (
            (urteil == RICHTIG and besser is None)
            or (urteil == ANDERER and besser in PRIORITAET and besser != wahl)
        ):
            raise EingabeFehler(
                f"{wo}: erwartet „urteil“: „{RICHTIG}“ ohne „besser“, oder „{ANDERER}“ mit einem anderen "
                f"Kandidaten als „besser“."
            )
        grund = eintrag.get("grund")
        urteile.append(
            Urteil(schluessel, wahl, urteil == RICHTIG, besser, grund if isinstance(grund, str) else None)
        )
    version = daten.get("coder_version")
    return version if isinstance(version, str) else "?", urteile


def wilson(treffer: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95-%-Intervall eines Anteils nach Wilson (hält auch bei 0 oder n Treffern)."""
    if n == 0:
        return 0.0, 1.0
    p = treffer / n
    nenner = 1 + z * z / n
    mitte = (p + z * z / (2 * n)) / nenner
    rand = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / nenner
    return max(0.0, mitte - rand), min(1.0, mitte + rand)


def _prozent(wert: float) -> str:
    return f"{100 * wert:.0f} %"


def bericht(version: str, urteile: Sequence[Urteil]) -> str:
    """Wie oft die Wahl richtig war, mit Intervall; welcher Kandidat sonst besser war; je Grund."""
    n = len(urteile)
    richtig = sum(u.richtig for u in urteile)
    zeilen = [f"{n} Urteile über Wahlen von coder_version {version}"]
    if not n:
        return "\n".join([*zeilen, "Keine Urteile – nichts zu messen."])
    unten, oben = wilson(richtig, n)
    zeilen.append(
        f"Wahl richtig: {richtig} von {n} ({_prozent(richtig / n)}, 95 %: {_prozent(unten)} – {_prozent(oben)})"
    )
    besser = Counter(u.besser for u in urteile if not u.richtig)
    if besser:
        zeilen.append(
            "Anderer Kandidat besser: " + ", ".join(f"{name} {z}" for name, z in sorted(besser.items()))
        )
    je_wahl = Counter(u.wahl for u in urteile)
    zeilen.append(
        "Je gewähltem Extraktor richtig: "
        + ", ".join(
            f"{name} {sum(u.richtig for u in urteile if u.wahl == name)}/{z}"
            for name, z in sorted(je_wahl.items())
        )
    )
    gruende = Counter(u.grund for u in urteile if u.grund)
    if gruende:
        zeilen.append(
            "Je Grund des Zweifels richtig: "
            + ", ".join(
                f"{g} {sum(u.richtig for u in urteile if u.grund == g)}/{z}"
                for g, z in sorted(gruende.items())
            )
        )
    zeilen.append(
        "Hinweis: eine Stichprobe der zweifelhaftesten Entscheidungen ist keine Zufallsstichprobe; "
        "die Genauigkeit gilt für diese Fälle, auf dem ganzen Bestand liegt sie eher höher."
    )
    return "\n".join(zeilen)
