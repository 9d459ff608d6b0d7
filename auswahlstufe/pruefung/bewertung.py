"""Bewertung: Auswahl und Extraktoren gegen eine Handreferenz.

Das Maß des article-extraction-benchmark (4-Token-Shingles als Multimenge, Präzision über Seiten
mit Ausgabe, Recall über Seiten mit Referenz, F1 aus den Mitteln) und die zwei Festlegungen, wo
seine Beschreibung schweigt: docs/messungen.md, „Güte gegen die Handreferenz“.

Aufruf im Klon: ``.venv/bin/python bewertung.py AUSWAHL.json WAHRHEIT.json``.
"""

from __future__ import annotations

import functools
import random
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import click

from auswahlstufe import anzeige
from auswahlstufe.anzeige import kurz
from auswahlstufe.befehl import VARIANTE, Aufruffehler, DeutscherBefehl
from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.jsoneingabe import json_lesen, laden, typname
from version import PRIORITAET, Variante

SHINGLE_LAENGE = 4
_WORT = re.compile(r"\w+")
AUSWAHL = "Auswahl"
ORAKEL = "Orakel (bester je Seite)"
LAENGSTER = "immer der längste"


# --- das Maß ---------------------------------------------------------------


def shingles(text: str) -> Counter:
    """4-Token-Shingles als Multimenge; 1–3 Tokens sind ein einziges Shingle."""
    woerter = _WORT.findall(text)
    if len(woerter) < SHINGLE_LAENGE:
        return Counter([tuple(woerter)]) if woerter else Counter()
    return Counter(zip(*(woerter[i:] for i in range(SHINGLE_LAENGE)), strict=False))


@dataclass(frozen=True, slots=True)
class Seite:
    """Das Maß einer Ausgabe auf einer Seite."""

    praezision: float
    recall: float
    mit_ausgabe: bool  # zählt zum Mittel der Präzision
    mit_referenz: bool  # zählt zum Mittel des Recalls

    @property
    def f1(self) -> float:
        summe = self.praezision + self.recall
        return 2 * self.praezision * self.recall / summe if summe else 0.0


def messen(ausgabe: str, referenz: str) -> Seite:
    """Präzision und Recall einer Ausgabe gegen die Referenz einer Seite."""
    aus, ref = shingles(ausgabe), shingles(referenz)
    tp = sum((aus & ref).values())
    fp = sum((aus - ref).values())
    fn = sum((ref - aus).values())
    if fp == fn == 0:  # auch: beide leer – nichts zu finden, nichts falsch
        return Seite(1.0, 1.0, bool(aus), bool(ref))
    praezision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return Seite(praezision, recall, bool(aus), bool(ref))


@dataclass(frozen=True, slots=True)
class Guete:
    f1: float
    praezision: float
    recall: float
    mit_ausgabe: int
    mit_referenz: int


def guete(seiten: Sequence[Seite]) -> Guete:
    """Mittel der Präzision (Seiten mit Ausgabe), des Recalls (mit Referenz), F1 daraus."""
    p = [s.praezision for s in seiten if s.mit_ausgabe]
    r = [s.recall for s in seiten if s.mit_referenz]
    mp = sum(p) / len(p) if p else 0.0
    mr = sum(r) / len(r) if r else 0.0
    f1 = 2 * mp * mr / (mp + mr) if mp + mr else 0.0
    return Guete(f1, mp, mr, len(p), len(r))


def bootstrap(zeilen: Mapping[str, Sequence[Seite]], n: int, seed: int) -> dict[str, list[float]]:
    """F1 je Zeile über n Stichproben der Seiten (mit Zurücklegen).

    Alle Zeilen ziehen dieselben Seiten (gepaart), damit sich auch die
    Differenz zweier Zeilen je Stichprobe ablesen lässt.
    """
    anzahl = len(next(iter(zeilen.values()), []))
    zufall = random.Random(seed)
    werte: dict[str, list[float]] = {name: [] for name in zeilen}
    for _ in range(n):
        auswahl = [zufall.randrange(anzahl) for _ in range(anzahl)]
        for name, seiten in zeilen.items():
            werte[name].append(guete([seiten[i] for i in auswahl]).f1)
    return werte


def intervall(werte: Sequence[float], anteil: float = 0.95) -> tuple[float, float]:
    """Zentrales Perzentil-Intervall (Voreinstellung 95 %)."""
    sortiert = sorted(werte)
    rand = (1 - anteil) / 2
    unten = sortiert[int(rand * (len(sortiert) - 1))]
    oben = sortiert[round((1 - rand) * (len(sortiert) - 1))]
    return unten, oben


# --- Zeilen: Extraktoren, Auswahl, Orakel, längster --------------------------


def text_von(artikel: Mapping, extraktor: object) -> str:
    """Der Rohtext eines Extraktors; was kein String ist, gilt als leere Ausgabe.

    Wie bei ``regeln.waehle``: ``extractions`` ohne Mapping heißt „keine
    Kandidaten“; ein Eintrag ohne Mapping oder ohne Text als String ist leer.
    """
    extraktionen = artikel.get("extractions")
    if not isinstance(extraktionen, Mapping) or not isinstance(extraktor, str):
        return ""
    eintrag = extraktionen.get(extraktor)
    text = eintrag.get("text") if isinstance(eintrag, Mapping) else None
    return text if isinstance(text, str) else ""


def ohne_erste_zeile(text: str) -> str:
    """Die Referenz ohne ihre erste Zeile (im Benchmark die Überschrift)."""
    return text.split("\n", 1)[1] if "\n" in text else ""


def zeilen_messen(
    artikel: Sequence[Mapping], referenzen: Sequence[str], extraktoren: Sequence[str] = PRIORITAET
) -> dict[str, list[Seite]]:
    """Je Zeile der Tabelle das Maß auf jeder Seite, in Artikelreihenfolge."""
    zeilen: dict[str, list[Seite]] = {name: [] for name in (*extraktoren, AUSWAHL, ORAKEL, LAENGSTER)}
    for art, ref in zip(artikel, referenzen, strict=True):
        je_extraktor = {name: messen(text_von(art, name), ref) for name in extraktoren}
        for name, seite in je_extraktor.items():
            zeilen[name].append(seite)
        zeilen[AUSWAHL].append(messen(text_von(art, art.get("selected_extractor")), ref))
        # max() nimmt bei Gleichstand den ersten: die Rangfolge entscheidet.
        zeilen[ORAKEL].append(max(je_extraktor.values(), key=lambda s: s.f1))
        laengster = max(extraktoren, key=lambda name: len(text_von(art, name)))
        zeilen[LAENGSTER].append(je_extraktor[laengster])
    return zeilen


def variante_name(variante: Variante) -> str:
    name = f"Auswahl k{variante.k} t{kurz(variante.toleranz)}"
    return name + (" quelle000" if variante.quelle000 else "")


def varianten_messen(
    artikel: Sequence[Mapping], referenzen: Sequence[str], varianten: Sequence[Variante]
) -> dict[str, list[Seite]]:
    """Die Auswahl einer Variante (anderes k, andere Toleranz, Schlüssel wie Quelle 000), neu entschieden."""
    from auswahlstufe.regeln import waehle

    zeilen = {}
    for variante in varianten:
        zeilen[variante_name(variante)] = [
            messen(text_von(art, waehle(art.get("extractions"), **variante.argumente()).extraktor), ref)
            for art, ref in zip(artikel, referenzen, strict=True)
        ]
    return zeilen


# --- Einlesen ----------------------------------------------------------------


def extraktor_pruefen(pfad: str, index: int, art: Mapping) -> None:
    """selected_extractor muss einer der Extraktoren der Rangfolge sein.

    Der Stapelbetrieb schreibt nie etwas anderes. Ein unbekannter Name, null
    oder ein Wert, der kein Text ist, heißt: die Datei stammt nicht von hier
    oder ist verdorben – das ist ein Eingabefehler, keine leere Ausgabe,
    sonst würde die Zeile „Auswahl“ still schlechter gemessen.
    """
    wert = art["selected_extractor"]
    if isinstance(wert, str) and wert in PRIORITAET:
        return
    was = f"„{wert}“" if isinstance(wert, str) else typname(wert)
    raise EingabeFehler(
        f"{pfad}: Artikel {index} (id {art['id']}): selected_extractor ist {was}, "
        f"erwartet einer von {', '.join(PRIORITAET)}."
    )


def artikel_laden(pfad: str, waehlen: Callable[[object], str]) -> list[Mapping]:
    """Die Artikel eines Stapelergebnisses; fehlt selected_extractor, wird gewählt.

    ``extractions`` darf fehlen oder kein Objekt sein (dann: keine Kandidaten);
    ein vorhandenes ``selected_extractor`` muss ein Name der Rangfolge sein
    (siehe ``extraktor_pruefen``).
    """
    daten, _ = laden(pfad)
    artikel: list[Mapping] = []
    nachgewaehlt = 0
    for index, art in enumerate(daten):
        if not isinstance(art.get("id"), str | int):
            raise EingabeFehler(f"{pfad}: Artikel {index} hat keine id.")
        if "selected_extractor" not in art:
            art = {**art, "selected_extractor": waehlen(art.get("extractions"))}
            nachgewaehlt += 1
        extraktor_pruefen(pfad, index, art)
        artikel.append(art)
    if nachgewaehlt:
        click.echo(
            f"{pfad}: {nachgewaehlt} Artikel ohne selected_extractor – mit regeln.waehle gewählt.",
            err=True,
        )
    return artikel


def referenzen_laden(pfad: str, artikel: Sequence[Mapping], ohne_titel: bool) -> list[str]:
    """Je Artikel der Referenztext aus ``{id: {"articleBody": …}}``."""
    daten = json_lesen(pfad)
    if not isinstance(daten, dict):
        raise EingabeFehler(f'{pfad}: erwartet ein JSON-Objekt {{id: {{"articleBody": …}}}}.')
    referenzen = []
    for index, art in enumerate(artikel):
        schluessel = str(art["id"])
        if schluessel not in daten:
            raise EingabeFehler(f"{pfad}: keine Referenz für Artikel {index} (id {art['id']}).")
        eintrag = daten[schluessel]
        if not isinstance(eintrag, dict):
            raise EingabeFehler(
                f"{pfad}: Referenz für Artikel {index} (id {art['id']}) ist {typname(eintrag)}, "
                'erwartet ein Objekt {"articleBody": …}.'
            )
        text = eintrag.get("articleBody")
        if not isinstance(text, str):
            statt = f" (sondern {typname(text)})" if "articleBody" in eintrag else ""
            raise EingabeFehler(
                f"{pfad}: id {art['id']} (Artikel {index}) hat kein articleBody als Text{statt}."
            )
        referenzen.append(ohne_erste_zeile(text) if ohne_titel else text)
    ueberzaehlig = len(set(daten) - {str(a["id"]) for a in artikel})
    if ueberzaehlig:
        click.echo(f"{pfad}: {ueberzaehlig} Referenzen ohne Artikel – nicht gewertet.", err=True)
    return referenzen


# --- Ausgabe -----------------------------------------------------------------


zahl = functools.partial(anzeige.zahl, stellen=3)  # drei Nachkommastellen mit Dezimalkomma


def tabelle(zeilen: Mapping[str, Sequence[Seite]], streuung: Mapping[str, list[float]] | None) -> str:
    breite = max(len(name) for name in zeilen)
    kopf = f"{'':<{breite}}  F1     Präz.  Recall"
    if streuung:
        kopf += "  F1 95-%-Intervall"
    linien = [kopf]
    for name, seiten in zeilen.items():
        g = guete(seiten)
        linie = f"{name:<{breite}}  {zahl(g.f1)}  {zahl(g.praezision)}  {zahl(g.recall)}"
        if streuung:
            unten, oben = intervall(streuung[name])
            linie += f"  {zahl(unten)} – {zahl(oben)}"
        linien.append(linie)
    return "\n".join(linien)


def differenzen(
    zeilen: Mapping[str, Sequence[Seite]],
    streuung: Mapping[str, list[float]],
    paare: Sequence[tuple[str, str]],
) -> str:
    """F1 von a minus F1 von b je Paar, gepaart über dieselben Stichproben."""
    linien = []
    for a, b in paare:
        punkt = guete(zeilen[a]).f1 - guete(zeilen[b]).f1
        diff = [x - y for x, y in zip(streuung[a], streuung[b], strict=True)]
        unten, oben = intervall(diff)
        mit = functools.partial(anzeige.zahl, stellen=3, vorzeichen=True)
        linien.append(f"{a} − {b}: {mit(punkt)} (95 %: {mit(unten)} … {mit(oben)})")
    return "\n".join(linien)


@click.command(cls=DeutscherBefehl)
@click.argument("auswahl_datei", metavar="AUSWAHL.json", required=False)
@click.argument("wahrheit_datei", metavar="WAHRHEIT.json", required=False)
@click.option(
    "--urteile",
    "urteile_datei",
    metavar="URTEILE.json",
    help="Statt AUSWAHL.json und WAHRHEIT.json: Urteile von der Prüfseite einer Stichprobe auswerten "
    "(wie oft die Wahl richtig war).",
)
@click.option(
    "--ohne-titel",
    is_flag=True,
    help="Die erste Zeile jeder Referenz weglassen (für Referenzen, die mit der Überschrift beginnen).",
)
@click.option(
    "--bootstrap",
    "stichproben",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    metavar="N",
    help="Stichproben für das 95-%-Intervall des F1 (0: ohne).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    metavar="ZAHL",
    help="Startwert des Zufalls (Bootstrap).",
)
@click.option(
    "--variante",
    "varianten",
    multiple=True,
    metavar="VARIANTE",
    type=VARIANTE,
    help="Zusätzlich die Auswahl einer Variante neu entscheiden und messen (mehrfach möglich): "
    "K:TOLERANZ wie k4:0.03, quelle000 (Vergleichsschlüssel wie Quelle 000, Formatzeichen bleiben) "
    "oder beides, k4:0.03+quelle000. Jede nennt ihre coder_version.",
)
def cli(auswahl_datei, wahrheit_datei, urteile_datei, ohne_titel, stichproben, seed, varianten):
    """Bewertet ein Stapelergebnis gegen eine Handreferenz.

    AUSWAHL.json ist die Ausgabe des Stapelbetriebs (Artikel mit id,
    extractions und selected_extractor; fehlt selected_extractor, wählt
    bewertung.py selbst; ein anderer Wert als newspaper4k, readability oder
    trafilatura ist ein Eingabefehler). WAHRHEIT.json ist {id: {"articleBody": …}}.

    Zeilen: jeder Extraktor, die Auswahl, der beste Kandidat je Seite (Orakel),
    immer der längste und je --variante die neu entschiedene Auswahl. Maß wie im article-extraction-benchmark:
    4-Token-Shingles, Präzision über Seiten mit Ausgabe, Recall über Seiten mit
    Referenz, F1 aus den Mitteln.

    Mit --urteile URTEILE.json (von der Prüfseite einer Stichprobe
    heruntergeladen): wie oft die Wahl nach Urteil von Hand richtig war, mit
    95-%-Intervall, und welcher Kandidat sonst besser gewesen wäre.
    """
    if urteile_datei is not None:
        if auswahl_datei is not None:
            raise Aufruffehler("--urteile gilt allein, ohne AUSWAHL.json und WAHRHEIT.json.")
        from auswahlstufe.pruefung import urteile

        click.echo(urteile.bericht(*urteile.lesen(urteile_datei)))
        return
    if wahrheit_datei is None:
        fehlt = (
            "Es fehlen die Argumente AUSWAHL.json und WAHRHEIT.json"
            if auswahl_datei is None
            else "Es fehlt das Argument WAHRHEIT.json"
        )
        raise Aufruffehler(f"{fehlt} (oder --urteile URTEILE.json).", click.get_current_context())
    from auswahlstufe.regeln import waehle

    artikel = artikel_laden(auswahl_datei, lambda ex: waehle(ex).extraktor)
    referenzen = referenzen_laden(wahrheit_datei, artikel, ohne_titel)
    zeilen = zeilen_messen(artikel, referenzen)
    zeilen.update(varianten_messen(artikel, referenzen, varianten))
    streuung = bootstrap(zeilen, stichproben, seed) if stichproben and artikel else None
    click.echo(f"{len(artikel)} Seiten{', Referenz ohne erste Zeile' if ohne_titel else ''}")
    click.echo(tabelle(zeilen, streuung))
    for variante in varianten:
        click.echo(f"{variante_name(variante)}: coder_version {variante.coder_version}")
    if streuung:
        click.echo(f"\nBootstrap: {stichproben} Stichproben der Seiten, seed {seed}, gepaart")
        paare = [(AUSWAHL, name) for name in PRIORITAET]
        paare += [(variante_name(v), AUSWAHL) for v in varianten]
        click.echo(differenzen(zeilen, streuung, paare))
