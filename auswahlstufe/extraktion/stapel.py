"""Stapelmodus der Extraktion: ``auswahl.py --extrahieren SEITEN.json [-o AUSGABE.json]``.

Eine JSON-Liste von Artikeln mit ``html`` (Zeichenkette) und wahlweise ``url``
und ``id`` rein; jeder Artikel bekommt ``extractions`` (die drei Kandidaten im
Stapelformat) und ``selected_extractor``; alle anderen Felder bleiben. Lesen,
Prüfen, Entscheiden und das atomare Schreiben sind die des Stapelbetriebs
(stapel.py): die Ausgabe ist gültige Eingabe von ``auswahl.py DATEI.json`` und
gibt dort dieselben Entscheidungen. Erst wird alles geprüft, dann extrahiert,
dann geschrieben: bei einem Fehler bleibt eine bestehende Ausgabe unberührt.

Statt der JSON-Datei geht auch ein Ordner mit ``.html``- und ``.html.gz``-Dateien:
je Datei ein Artikel, ``id`` ist der Dateiname ohne Endung, das HTML sind die
Bytes der Datei (den Zeichensatz bestimmt ``zeichensatz.dekodieren``). Gelesen
wird jede Datei erst, wenn sie an der Reihe ist; in die Ausgabe
(Voreinstellung ``<ordner>_selected.json`` neben dem Ordner) kommen ``id``,
``extractions`` und ``selected_extractor``, nicht das HTML.
"""

from __future__ import annotations

import gzip
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import click

from auswahlstufe import jsoneingabe, stapel
from auswahlstufe.anzeige import os_fehler
from auswahlstufe.extraktion import seiten as extraktion
from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.fortschritt import BALKEN_AB_BYTES, fortschritt
from auswahlstufe.jsoneingabe import typname
from auswahlstufe.pruefung import stichprobe as stichprobe_modul

HTML = "html"
EXTRACTIONS = "extractions"
ENDUNGEN = (".html.gz", ".html")  # die längere zuerst: „a.html.gz“ hat die id „a“


def ordner_dateien(ordner: Path) -> list[tuple[str, Path]]:
    """(id, Pfad) je Seite im Ordner, nach id geordnet; andere Dateien zählen nicht."""
    seiten: dict[str, Path] = {}
    try:
        eintraege = sorted(ordner.iterdir())
    except OSError as fehler:
        raise EingabeFehler(
            f"{ordner}: Ordner nicht lesbar ({os_fehler(fehler)}); nichts geschrieben."
        ) from None
    for pfad in eintraege:
        endung = next((e for e in ENDUNGEN if pfad.name.endswith(e)), None)
        if endung is None or not pfad.is_file() or pfad.name == endung:
            continue
        seiten_id = pfad.name[: -len(endung)]
        if seiten_id in seiten:
            raise EingabeFehler(
                f"{ordner}: die id „{seiten_id}“ gibt es zweimal ({seiten[seiten_id].name} und "
                f"{pfad.name}); bitte eine der beiden Dateien entfernen. Nichts geschrieben."
            )
        seiten[seiten_id] = pfad
    if not seiten:
        raise EingabeFehler(
            f"{ordner}: im Ordner liegt keine .html- oder .html.gz-Datei; nichts geschrieben."
        )
    return sorted(seiten.items())


def seite_lesen(pfad: Path) -> bytes:
    """Die Bytes einer Seite; ``.html.gz`` entpackt. Scheitert es, nennt die Meldung die Datei."""
    try:
        roh = pfad.read_bytes()
    except OSError as fehler:
        raise EingabeFehler(f"{pfad}: nicht lesbar ({os_fehler(fehler)}); nichts geschrieben.") from None
    if not pfad.name.endswith(".gz"):
        return roh
    try:
        return gzip.decompress(roh)
    except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile ist ein OSError
        raise EingabeFehler(f"{pfad}: kein gültiges gzip; nichts geschrieben.") from None


def ordner_seiten(dateien: list[tuple[str, Path]]) -> Iterator[extraktion.Seite]:
    for seiten_id, pfad in dateien:
        yield extraktion.Seite(seite_lesen(pfad), None, seiten_id)


def pruefen(artikel: list[dict], name: str) -> None:
    """Jeder Artikel braucht ``html`` als Zeichenkette; ``url`` ist Zeichenkette oder fehlt."""
    for index, eintrag in enumerate(artikel):
        wo = f"{name}: Artikel [{index}]"
        if "id" in eintrag:
            wo += f" (id {stapel.schluessel(eintrag, index)})"
        if not isinstance(eintrag.get(HTML), str):
            art = "fehlt" if HTML not in eintrag else f"ist {typname(eintrag[HTML])}"
            raise EingabeFehler(
                f"{wo}: das Feld „html“ {art}; erwartet wird das HTML der Seite als Zeichenkette."
            )
        if eintrag.get("url") is not None and not isinstance(eintrag["url"], str):
            raise EingabeFehler(f"{wo}: „url“ ist {typname(eintrag['url'])}, keine Zeichenkette.")


def extrahieren(
    artikel: list[dict],
    prozesse: int | None,
    bilanz: Counter,
    seiten: Iterator[extraktion.Seite] | None = None,
) -> None:
    """Füllt ``extractions`` je Artikel, parallel auf Worker-Prozessen.

    ``seiten``: die Seiten in der Reihenfolge der Artikel; ohne sie gilt das Feld ``html``.
    """
    if seiten is None:
        seiten = (
            extraktion.Seite(eintrag[HTML], eintrag.get("url"), stapel.schluessel(eintrag, index))
            for index, eintrag in enumerate(artikel)
        )
    with (
        extraktion.Extraktion(prozesse) as ex,
        fortschritt(len(artikel), "Extraktion", einheit="Seiten") as weiter,
    ):
        for index, kandidaten in ex.seiten(seiten):
            artikel[index][EXTRACTIONS] = kandidaten
            bilanz["fehler"] += sum(k["error"] is not None for k in kandidaten.values())
            weiter(1)
        bilanz["zeitlimits"] = ex.statistik.zeitlimits
        bilanz["abstuerze"] = ex.statistik.abstuerze


def stapel_extrahieren(
    datei: str, ausgabe: str | None, *, stichprobe: int | None = None, prozesse: int | None = None
) -> stapel.Bilanz:
    """Liest ``datei``, extrahiert, entscheidet und schreibt die Ausgabe atomar."""
    start = time.perf_counter()
    ordner = Path(datei) if datei != stapel.STDIO and Path(datei).is_dir() else None
    if ordner is not None and ausgabe is None:
        ausgabe = str(ordner.resolve().with_name(f"{ordner.resolve().name}_selected.json"))
    bilanz = stapel.Bilanz(ziel=stapel.ausgabepfad(datei, ausgabe))
    extraktionsbilanz: Counter = Counter()
    with stapel.abbrechbar():
        stapel.ziel_pruefen(bilanz.ziel, datei)
        if ordner is not None:
            dateien = ordner_dateien(ordner)
            artikel = [{"id": seiten_id} for seiten_id, _ in dateien]
            groesse = 0  # kein Balken für das Entscheiden: die Ausgabe ist klein
            extrahieren(artikel, prozesse, extraktionsbilanz, ordner_seiten(dateien))
        else:
            artikel, groesse = jsoneingabe.laden(datei)
            pruefen(artikel, jsoneingabe.anzeigename(datei))
            extrahieren(artikel, prozesse, extraktionsbilanz)
        auswahl = stichprobe_modul.Stichprobe(stichprobe) if stichprobe else None
        stapel.entscheiden(artikel, bilanz, auswahl, groesse >= BALKEN_AB_BYTES)
        stapel.ausgeben(bilanz, artikel, auswahl)
    bilanz.sekunden = time.perf_counter() - start
    click.echo(
        f"Extrahiert: {bilanz.artikel} Seiten, {extraktionsbilanz['fehler']} Kandidaten mit Fehler "
        f"(davon Zeitlimit {extraktionsbilanz['zeitlimits']}, Worker abgestürzt "
        f"{extraktionsbilanz['abstuerze']})",
        err=True,
    )
    click.echo(stapel.zusammenfassung(bilanz), err=True)
    return bilanz
