"""Stapelmodus der Extraktion: ``auswahl.py --extrahieren SEITEN.json|ORDNER [-o AUSGABE.json]``.

Jeder Artikel bekommt ``extractions`` und ``selected_extractor``; Lesen, Prüfen, Entscheiden und
das atomare Schreiben sind die des Stapelbetriebs (``stapel.py``). Ein Ordner liefert je
``.html``/``.html.gz``-Datei einen Artikel, gelesen erst, wenn er an der Reihe ist. Fehler der
Umgebung versucht der Stapel am Ende einmal nach (``VERSUCHE``). Format und Meldungen:
docs/extraktion.md, „Stapel“ und „Ein Ordner als Eingabe“.
"""

from __future__ import annotations

import dataclasses
import gzip
import time
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import click

from auswahlstufe import jsoneingabe, stapel
from auswahlstufe.anzeige import os_fehler
from auswahlstufe.extraktion import seiten as extraktion
from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.fortschritt import BALKEN_AB_BYTES, fortschritt
from auswahlstufe.jsoneingabe import typname
from auswahlstufe.pruefung import stichprobe as stichprobe_modul
from auswahlstufe.pruefung.auslese import schluessel

HTML = "html"
EXTRACTIONS = "extractions"
ENDUNGEN = (".html.gz", ".html")  # die längere zuerst: „a.html.gz“ hat die id „a“
VERSUCHE = 2  # je Extraktor und Seite, wenn er an der Umgebung scheitert: der erste und einer am Ende


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


def ordner_seite(dateien: list[tuple[str, Path]]) -> Callable[[int], extraktion.Seite]:
    """Die Seite des i-ten Artikels aus dem Ordner, erst gelesen, wenn sie dran ist."""

    def seite(index: int) -> extraktion.Seite:
        seiten_id, pfad = dateien[index]
        return extraktion.Seite(seite_lesen(pfad), None, seiten_id)

    return seite


def pruefen(artikel: list[dict], name: str) -> None:
    """Jeder Artikel braucht ``html`` als Zeichenkette; ``url`` ist Zeichenkette oder fehlt."""
    for index, eintrag in enumerate(artikel):
        wo = f"{name}: Artikel [{index}]"
        if "id" in eintrag:
            wo += f" (id {schluessel(eintrag, index)})"
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
    seite: Callable[[int], extraktion.Seite] | None = None,
    *,
    zeitlimit_s: float = extraktion.ZEITLIMIT_S,
) -> None:
    """Füllt ``extractions`` je Artikel, parallel auf Worker-Prozessen.

    ``seite(index)``: die Seite des Artikels; ohne sie gilt das Feld ``html``.
    Kandidaten mit einem Fehler der Umgebung (``seiten.voruebergehend``) kommen am
    Ende ein zweites Mal dran, nur mit ihren Extraktoren.
    """
    if seite is None:

        def seite(index: int) -> extraktion.Seite:
            eintrag = artikel[index]
            return extraktion.Seite(eintrag[HTML], eintrag.get("url"), schluessel(eintrag, index))

    nochmal: dict[int, tuple[str, ...]] = {}  # Artikel → Extraktoren, die an der Umgebung scheiterten
    with (
        extraktion.Extraktion(prozesse, zeitlimit_s=zeitlimit_s) as ex,
        fortschritt(len(artikel), "Extraktion", einheit="Seiten") as weiter,
    ):
        for index, kandidaten in ex.seiten(seite(i) for i in range(len(artikel))):
            artikel[index][EXTRACTIONS] = kandidaten
            namen = tuple(n for n, k in kandidaten.items() if extraktion.voruebergehend(k["error"]))
            if namen:
                nochmal[index] = namen
            weiter(1)
        wieder = list(nochmal)
        zweite = (dataclasses.replace(seite(index), extraktoren=nochmal[index]) for index in wieder)
        for nr, kandidaten in ex.seiten(zweite):
            for name, ergebnis in kandidaten.items():
                bilanz["wiederholt"] += 1
                if extraktion.voruebergehend(ergebnis["error"]):
                    bilanz["aufgegeben"] += 1
                    fehler = f"{ergebnis['error']} – nach {VERSUCHE} Versuchen aufgegeben"
                    ergebnis = {"text": None, "error": fehler}
                artikel[wieder[nr]][EXTRACTIONS][name] = ergebnis
        bilanz["zeitlimits"] = ex.statistik.zeitlimits
        bilanz["abstuerze"] = ex.statistik.abstuerze
        bilanz["keine_html"] = ex.statistik.keine_html
    for eintrag in artikel:
        bilanz["fehler"] += sum(k["error"] is not None for k in eintrag[EXTRACTIONS].values())


def stapel_extrahieren(
    datei: str,
    ausgabe: str | None,
    *,
    stichprobe: int | None = None,
    prozesse: int | None = None,
    zeitlimit_s: float = extraktion.ZEITLIMIT_S,
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
            extrahieren(artikel, prozesse, extraktionsbilanz, ordner_seite(dateien), zeitlimit_s=zeitlimit_s)
        else:
            artikel, groesse = jsoneingabe.laden(datei)
            pruefen(artikel, jsoneingabe.anzeigename(datei))
            extrahieren(artikel, prozesse, extraktionsbilanz, zeitlimit_s=zeitlimit_s)
        auswahl = stichprobe_modul.Stichprobe(stichprobe) if stichprobe else None
        stapel.entscheiden(artikel, bilanz, auswahl, groesse >= BALKEN_AB_BYTES)
        stapel.ausgeben(bilanz, artikel, auswahl)
    bilanz.sekunden = time.perf_counter() - start
    click.echo(f"Extrahiert: {bilanz.artikel} Seiten, {zeile(extraktionsbilanz)}", err=True)
    click.echo(stapel.zusammenfassung(bilanz), err=True)
    return bilanz


def zeile(extraktionsbilanz: Counter) -> str:
    """Die Kandidaten mit Fehler und was die Umgebung dazu tat, für die Bilanzzeile."""
    teile = [
        f"{extraktionsbilanz['fehler']} Kandidaten mit Fehler (Zeitlimit {extraktionsbilanz['zeitlimits']}×, "
        f"Worker abgestürzt {extraktionsbilanz['abstuerze']}×)"
    ]
    if extraktionsbilanz["wiederholt"]:
        teile.append(
            f"{extraktionsbilanz['wiederholt']} Kandidaten gleich noch einmal versucht, davon "
            f"{extraktionsbilanz['aufgegeben']} nach {VERSUCHE} Versuchen aufgegeben"
        )
    if extraktionsbilanz["keine_html"]:
        teile.append(f"{extraktionsbilanz['keine_html']} Seiten sind keine HTML-Seiten")
    return ", ".join(teile)
