"""Stapelmodus der Extraktion: ``auswahl.py --extrahieren SEITEN.json [-o AUSGABE.json]``.

Eine JSON-Liste von Artikeln mit ``html`` (Zeichenkette) und wahlweise ``url``
und ``id`` rein; jeder Artikel bekommt ``extractions`` (die drei Kandidaten im
Stapelformat) und ``selected_extractor``; alle anderen Felder bleiben. Lesen,
Prüfen, Entscheiden und das atomare Schreiben sind die des Stapelbetriebs
(stapel.py): die Ausgabe ist gültige Eingabe von ``auswahl.py DATEI.json`` und
gibt dort dieselben Entscheidungen. Erst wird alles geprüft, dann extrahiert,
dann geschrieben: bei einem Fehler bleibt eine bestehende Ausgabe unberührt.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

import click

import extraktion
import jsoneingabe
import stapel
import stichprobe as stichprobe_modul
from fehler import Abgebrochen, EingabeFehler
from version import CODER_VERSION

HTML = "html"
EXTRACTIONS = "extractions"


def pruefen(artikel: list[dict], name: str) -> None:
    """Jeder Artikel braucht ``html`` als Zeichenkette; ``url`` ist Zeichenkette oder fehlt."""
    for index, eintrag in enumerate(artikel):
        wo = f"{name}: Artikel [{index}]"
        if "id" in eintrag:
            wo += f" (id {stapel.schluessel(eintrag, index)})"
        if not isinstance(eintrag.get(HTML), str):
            art = "fehlt" if HTML not in eintrag else f"ist {jsoneingabe.typname(eintrag[HTML])}"
            raise EingabeFehler(
                f"{wo}: das Feld „html“ {art}; erwartet wird das HTML der Seite als Zeichenkette."
            )
        if eintrag.get("url") is not None and not isinstance(eintrag["url"], str):
            raise EingabeFehler(f"{wo}: „url“ ist {jsoneingabe.typname(eintrag['url'])}, keine Zeichenkette.")


def extrahieren(artikel: list[dict], prozesse: int | None, bilanz: Counter) -> None:
    """Füllt ``extractions`` je Artikel, parallel auf Worker-Prozessen."""
    seiten = (
        extraktion.Seite(eintrag[HTML], eintrag.get("url"), stapel.schluessel(eintrag, index))
        for index, eintrag in enumerate(artikel)
    )
    with (
        extraktion.Extraktion(prozesse) as ex,
        click.progressbar(
            length=len(artikel),
            label="Extraktion",
            file=sys.stderr,
            hidden=not sys.stderr.isatty(),
            show_pos=True,
        ) as fortschritt,
    ):
        for index, kandidaten in ex.seiten(seiten):
            artikel[index][EXTRACTIONS] = kandidaten
            bilanz["fehler"] += sum(k["error"] is not None for k in kandidaten.values())
            fortschritt.update(1)
        bilanz["zeitlimits"] = ex.statistik.zeitlimits
        bilanz["abstuerze"] = ex.statistik.abstuerze


def stapel_extrahieren(
    datei: str, ausgabe: str | None, *, stichprobe: int | None = None, prozesse: int | None = None
) -> stapel.Bilanz:
    """Liest ``datei``, extrahiert, entscheidet und schreibt die Ausgabe atomar."""
    start = time.perf_counter()
    bilanz = stapel.Bilanz(ziel=stapel.ausgabepfad(datei, ausgabe))
    extraktionsbilanz: Counter = Counter()
    geschrieben = False
    with stapel.sigterm_wie_strg_c():
        try:
            stapel.ziel_pruefen(bilanz.ziel, datei)
            artikel, groesse = stapel.laden(datei)
            pruefen(artikel, stapel.anzeigename(datei))
            extrahieren(artikel, prozesse, extraktionsbilanz)
            auswahl = stichprobe_modul.Stichprobe(stichprobe) if stichprobe else None
            stapel.entscheiden(artikel, bilanz, auswahl, groesse >= stapel.BALKEN_AB_BYTES)
            stapel.schreiben(bilanz.ziel, stapel.teile(artikel))
            geschrieben = True
            del artikel
            if auswahl is not None:
                bilanz.stichprobe = stichprobe_modul.schreiben(
                    auswahl, CODER_VERSION, zaehlung=stapel.zaehlung(bilanz)
                )
        except KeyboardInterrupt:
            if geschrieben:
                raise Abgebrochen(
                    f"Abgebrochen vor der Stichprobe; die Ausgabe {bilanz.ziel} ist vollständig."
                ) from None
            raise Abgebrochen(
                "Abgebrochen; nichts geschrieben, eine bestehende Ausgabe bleibt unverändert."
            ) from None
    bilanz.sekunden = time.perf_counter() - start
    click.echo(
        f"Extrahiert: {bilanz.artikel} Seiten, {extraktionsbilanz['fehler']} Kandidaten mit Fehler "
        f"(davon Zeitlimit {extraktionsbilanz['zeitlimits']}, Worker abgestürzt "
        f"{extraktionsbilanz['abstuerze']})",
        err=True,
    )
    click.echo(stapel.zusammenfassung(bilanz), err=True)
    return bilanz
