"""Findet die Zweifelsordnung die Fehlgriffe? Gemessen an der Handreferenz.

Je Seite des Benchmarks: die Entscheidung von ``regeln.waehle``, das Seiten-F1
jedes Extraktors gegen die Handreferenz (Maß von ``bewertung.py``) und der
Verlust der Wahl gegen den besten Kandidaten der Seite. Ein Fehlgriff ist
eine Seite mit Verlust über der Schwelle (0,05). Gezählt wird, wie viele
Fehlgriffe unter den ersten 10 % einer Ordnung stehen (20 von 181) – für die
Ordnung bis auswahl-1 („heute“: Rückfall, ohne Konsens, kleinste Marge), für
das Zweifelsmaß ``regeln.zweifel`` („neu“), für andere einfache Signale aus der
Entscheidung und für den Zufall (Erwartungswert und Wahrscheinlichkeit, mit
einer zufälligen Stichprobe mindestens so viele zu treffen).

Robustheit: mehrere Schwellen; je Hälfte der Seiten gemessen (zufällige
Teilungen); und eine Kreuzvalidierung der Wahl des Signals: auf einer Hälfte
das beste Signal wählen, auf der anderen messen – so viel kostet es, ein Maß
nach Ansicht derselben Seiten zu wählen.

Aufruf::

    python -m bench.zweifel
    python -m bench.zweifel --teilungen 500 --seed 1
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from auswahlstufe.anzeige import zahl
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.jsoneingabe import json_lesen
from auswahlstufe.pruefung.bewertung import messen, text_von
from auswahlstufe.regeln import (
    EINZIGER,
    OHNE_KONSENS_GROESSTER,
    OHNE_KONSENS_MEDIAN,
    RUECKFALL,
    Entscheidung,
    waehle,
    zweifel,
)
from version import PRIORITAET

AEB = Path(__file__).resolve().parent / "aeb"
SCHWELLEN = (0.02, 0.03, 0.05, 0.1)


@dataclass(frozen=True)
class Seite:
    id: str
    entscheidung: Entscheidung
    verlust: float  # bestes Seiten-F1 eines Kandidaten minus Seiten-F1 der Wahl


def seiten_laden(kandidaten: Path, wahrheit: Path) -> list[Seite]:
    artikel = json_lesen(str(kandidaten))
    referenzen = json_lesen(str(wahrheit))
    seiten = []
    for art in artikel:
        referenz = referenzen[str(art["id"])]["articleBody"]
        e = waehle(art["extractions"])
        f1 = {name: messen(text_von(art, name), referenz).f1 for name in PRIORITAET}
        seiten.append(Seite(str(art["id"]), e, max(f1.values()) - f1[e.extraktor]))
    return seiten


# --- Ordnungen: Schlüssel aufsteigend = zweifelhafteste zuerst -----------------


def heute(e: Entscheidung) -> tuple:
    """Die Ordnung bis auswahl-1 (regeln.zweifel bis Commit 116cfe7), wörtlich."""
    if e.regel == RUECKFALL:
        return (0, 0.0)
    if e.regel in (OHNE_KONSENS_MEDIAN, OHNE_KONSENS_GROESSTER):
        return (1, 0.0)
    if e.marge is None:
        return (3, 0.0)
    return (2, abs(e.marge))


def neu(e: Entscheidung) -> tuple:
    return zweifel(e).schluessel()


def _signal(wert: Callable[[Entscheidung], float]) -> Callable[[Entscheidung], tuple]:
    """Ein Signal aus den Maßen der aktiven Kandidaten; ohne Konsens zuerst."""

    def schluessel(e: Entscheidung) -> tuple:
        if e.regel in (RUECKFALL, EINZIGER) or e.konsens == 0:
            return (0, 0.0)
        return (1, -wert(e))

    return schluessel


def _aktive(e: Entscheidung) -> list:
    return [k for k in e.kandidaten if k.aktiv]


def _nur_einer(e: Entscheidung) -> float:
    """Anteil der Shingles, die nur ein Kandidat hat, an allen (dünner Konsens)."""
    aktive = _aktive(e)
    eigene = sum(k.shingles - round(k.abdeckung * e.konsens) for k in aktive)
    return eigene / (e.konsens + eigene)


ORDNUNGEN: dict[str, Callable[[Entscheidung], tuple]] = {
    "heute (Marge)": heute,
    "neu (Abstand zum nächsten)": neu,
    "1 − Score der Wahl": _signal(lambda e: 1 - e.kandidat(e.extraktor).score),
    "1 − kleinster Score": _signal(lambda e: 1 - min(k.score for k in _aktive(e))),
    "Anteil nur eines Kandidaten": _signal(_nur_einer),
    "größter Abstand zur Wahl": _signal(lambda e: max(k.abstand for k in _aktive(e))),
}


def treffer(
    seiten: Sequence[Seite], ordnung: Callable, schwelle: float, anteil: float = 0.11
) -> tuple[int, int]:
    """Fehlgriffe unter den ersten ``anteil`` der Ordnung, und wie viele es gibt.

    Bei gleichem Schlüssel gilt die Reihenfolge der Seiten (wie in der Stichprobe).
    """
    n = round(len(seiten) * anteil)
    oben = sorted(seiten, key=lambda s: ordnung(s.entscheidung))[:n]
    return sum(s.verlust > schwelle for s in oben), sum(s.verlust > schwelle for s in seiten)


def zufall(gesamt: int, fehlgriffe: int, n: int, mindestens: int) -> tuple[float, float]:
    """Erwartete Treffer einer Zufallsstichprobe von n und P(mindestens so viele) (hypergeometrisch)."""
    erwartet = n * fehlgriffe / gesamt
    p = sum(
        math.comb(fehlgriffe, k) * math.comb(gesamt - fehlgriffe, n - k)
        for k in range(mindestens, fehlgriffe + 1)
    ) / math.comb(gesamt, n)
    return erwartet, p


@click.command(cls=DeutscherBefehl)
@click.option(
    "--kandidaten",
    type=click.Path(dir_okay=False, path_type=Path),
    default=AEB / "candidates.json",
    help="Die veröffentlichten Kandidaten  [Voreinstellung: bench/aeb/candidates.json]",
)
@click.option(
    "--wahrheit",
    type=click.Path(dir_okay=False, path_type=Path),
    default=AEB / "ground-truth.json",
    help="Die Handreferenz  [Voreinstellung: bench/aeb/ground-truth.json]",
)
@click.option(
    "--teilungen",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    metavar="N",
    help="Zufällige Teilungen in zwei Hälften.",
)
@click.option("--seed", type=int, default=0, show_default=True, metavar="N", help="Startwert der Teilungen.")
def main(kandidaten: Path, wahrheit: Path, teilungen: int, seed: int) -> None:
    """Misst, wie viele Fehlgriffe der Auswahl in den ersten 10 % der Zweifelsordnung stehen."""
    seiten = seiten_laden(kandidaten, wahrheit)
    oben = round(len(seiten) * 0.11)
    click.echo(f"{len(seiten)} Seiten, geprüft werden die ersten {oben} jeder Ordnung.")
    click.echo("Fehlgriff: Verlust der Wahl gegen den besten Kandidaten über der Schwelle (Seiten-F1).\n")
    kopf = "".join(f"  > {zahl(s, 2)}" for s in SCHWELLEN)
    click.echo(f"{'Ordnung':<30}{kopf}")
    for name, ordnung in ORDNUNGEN.items():
        zellen = "".join(f"{'{}/{}'.format(*treffer(seiten, ordnung, s)):>8}" for s in SCHWELLEN)
        click.echo(f"{name:<30}{zellen}")
    zellen = ""
    for s in SCHWELLEN:
        gesamt = sum(x.verlust > s for x in seiten)
        zellen += f"{zahl(oben * gesamt / len(seiten), 1):>8}"
    click.echo(f"{'Zufall (Erwartung)':<30}{zellen}")

    t_neu, gesamt = treffer(seiten, neu, 0.05)
    t_heute, _ = treffer(seiten, heute, 0.05)
    erwartet, p_neu = zufall(len(seiten), gesamt, oben, t_neu)
    _, p_heute = zufall(len(seiten), gesamt, oben, t_heute)
    click.echo(
        f"\nSchwelle 0,05: neu {t_neu} von {gesamt}, heute {t_heute}, Zufall {zahl(erwartet, 1)}; "
        f"eine Zufallsstichprobe trifft mindestens {t_neu} mit P = {zahl(p_neu, 4)}, "
        f"mindestens {t_heute} mit P = {zahl(p_heute, 4)}."
    )
    fast = [s for s in seiten if zweifel(s.entscheidung).fast_gleich]
    click.echo(
        f"Fast gleich (ganz hinten): {len(fast)} Seiten, größter Verlust darunter "
        f"{zahl(max((s.verlust for s in fast), default=0.0), 3)}."
    )

    # Robustheit: je Hälfte messen, und die Wahl des Signals kreuzvalidieren
    rand = random.Random(seed)
    namen = list(ORDNUNGEN)
    summe = dict.fromkeys([*namen, "gewählt auf der anderen Hälfte"], 0)
    moeglich = 0
    for _ in range(teilungen):
        reihe = seiten[:]
        rand.shuffle(reihe)
        haelfte = len(reihe) // 2
        for lernen, messen_auf in ((reihe[:haelfte], reihe[haelfte:]), (reihe[haelfte:], reihe[:haelfte])):
            ergebnis = {name: treffer(messen_auf, ORDNUNGEN[name], 0.05) for name in namen}
            for name in namen:
                summe[name] += ergebnis[name][0]
            moeglich += ergebnis[namen[0]][1]
            gelernt = {name: treffer(lernen, ORDNUNGEN[name], 0.05)[0] for name in namen}
            beste = max(gelernt.values())
            kandidaten_liste = [name for name in namen[1:] if gelernt[name] == beste] or [namen[0]]
            summe["gewählt auf der anderen Hälfte"] += ergebnis[rand.choice(kandidaten_liste)][0]
    click.echo(
        f"\n{teilungen} zufällige Teilungen in zwei Hälften (seed {seed}); je Hälfte die ersten 11 %, "
        f"Schwelle 0,05: Anteil der Fehlgriffe, die oben stehen (Zufall 11 %)"
    )
    for name, wert in summe.items():
        click.echo(f"  {name:<34}{zahl(100 * wert / moeglich, 0):>4} %")


if __name__ == "__main__":
    main()
