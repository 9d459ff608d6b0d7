"""Stichprobe schreiben: die zweifelhaftesten Entscheidungen eines Laufs als CSV und Prüfseite.

Welche Fälle es sind, hält ``auslese.Stichprobe`` (ohne Ein- und Ausgabe, in den
Workern); ``schreiben`` legt die CSV-Datei im aktuellen Verzeichnis an und gibt
ihren Pfad zurück; daneben, mit demselben Stamm, die Prüfseite zum Lesen und
Beurteilen im Browser (``pruefseite.seite``). Beide enthalten volle Texte und sind
nur für den Eigentümer lesbar (0600, gleich welche umask) – wie ``.env``.
"""

from __future__ import annotations

import csv
import itertools
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from auswahlstufe.anzeige import berlin
from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.pruefung.auslese import Fall, Stichprobe
from auswahlstufe.regeln import zweifel
from version import PRIORITAET

if TYPE_CHECKING:
    from auswahlstufe.pruefung.pruefseite import Art

ANFANG_ZEICHEN = 200  # so viel Text je Kandidat in der CSV

__all__ = ["Fall", "Stichprobe", "schreiben", "schreiben_csv", "zeile"]
# Die Dateien tragen volle Texte: nur der Eigentümer liest sie.
MODUS = 0o600


def _pruefseite():
    """Die Prüfseite (HTML) lädt erst, wer eine Stichprobe schreibt – nicht jeder Lauf, der dieses
    Modul kennt."""
    from auswahlstufe.pruefung import pruefseite

    return pruefseite


def zeile(csv_pfad: Path) -> str:
    """Die Zeile für die Ausgabe: beide Dateien, die CSV und die Prüfseite daneben."""
    return f"Stichprobe: {csv_pfad} und {csv_pfad.with_suffix('.html')}"


def _neu_anlegen(pfad: Path) -> None:
    """Legt ``pfad`` leer an, exklusiv (FileExistsError, wenn es ihn gibt), mit MODUS."""
    fd = os.open(pfad, os.O_WRONLY | os.O_CREAT | os.O_EXCL, MODUS)
    try:
        os.fchmod(fd, MODUS)  # die umask nimmt beim Anlegen nur weg; so gilt MODUS genau
    finally:
        os.close(fd)


def dateiname(
    coder_version: str, zeitpunkt: datetime, endung: str, nummer: int = 1, praefix: str = "stichprobe"
) -> str:
    """``stichprobe-<version>-<zeit>.<endung>``; ab der zweiten in derselben Sekunde ``…-<nummer>``.

    Die Zeit ist Europe/Berlin mit ihrem Offset (``20261202T074200+0100``), wie jede Zeit der
    Stufe – auch in einem Prozess, der in UTC läuft (cron)."""
    # '>' ist in Dateinamen lästig (Shell-Umleitung); sonst bleibt die Version lesbar.
    version = coder_version.replace(">", "-")
    zusatz = f"-{nummer}" if nummer > 1 else ""
    return f"{praefix}-{version}-{berlin(zeitpunkt):%Y%m%dT%H%M%S%z}{zusatz}.{endung}"


def _freie_namen(
    verzeichnis: Path, coder_version: str, zeitpunkt: datetime, praefix: str
) -> tuple[Path, Path]:
    """Legt CSV und Seite leer an (exklusiv, 0600) unter dem ersten freien Stamm.

    Zwei Läufe in derselben Sekunde – auch gleichzeitig – bekommen so
    verschiedene Dateien; keiner überschreibt den anderen.
    """
    for nummer in itertools.count(1):
        csv_pfad = verzeichnis / dateiname(coder_version, zeitpunkt, "csv", nummer, praefix)
        html_pfad = csv_pfad.with_suffix(".html")
        try:
            _neu_anlegen(csv_pfad)
        except FileExistsError:
            continue
        try:
            _neu_anlegen(html_pfad)
        except FileExistsError:
            csv_pfad.unlink()
            continue
        return csv_pfad, html_pfad
    raise AssertionError("unerreichbar")


KOPF = ("rang", "schluessel", "extraktor", "regel", "zweifel", "zweifel_grund", "naechster", "fast_gleich")


def _zeile(rang: int, fall: Fall) -> dict[str, object]:
    e = fall.entscheidung
    z = zweifel(e)
    zeile: dict[str, object] = {
        "rang": rang,
        "schluessel": fall.schluessel,
        "extraktor": e.extraktor,
        "regel": e.regel,
        "zweifel": f"{z.wert:.4f}",
        "zweifel_grund": z.grund,
        "naechster": z.nachbar or "",
        "fast_gleich": "ja" if z.fast_gleich else "nein",
        "warum": _pruefseite().warum(z, e),
        "konsens": e.konsens,
        "marge": "" if e.marge is None else f"{e.marge:.4f}",
    }
    zeile.update(fall.info)
    for k in e.kandidaten:
        zeile[f"{k.extraktor}_klasse"] = k.klasse
        zeile[f"{k.extraktor}_shingles"] = k.shingles
        for mass in ("abdeckung", "stuetzung", "score", "abstand"):
            wert = getattr(k, mass)
            zeile[f"{k.extraktor}_{mass}"] = "" if wert is None else f"{wert:.4f}"
        text = fall.texte.get(k.extraktor)
        zeile[f"{k.extraktor}_anfang"] = text[:ANFANG_ZEICHEN] if isinstance(text, str) else ""
    return zeile


def schreiben_csv(faelle: list[Fall], pfad: Path) -> Path:
    """Schreibt die Fälle als CSV (UTF-8, Komma, Kopfzeile)."""
    zeilen = [_zeile(rang, fall) for rang, fall in enumerate(faelle, 1)]
    spalten = [*KOPF, "warum", "konsens", "marge"]
    for zeile in zeilen:
        spalten += [s for s in zeile if s not in spalten]
    if not zeilen:  # auch eine leere Stichprobe hat eine Kopfzeile
        spalten += [f"{name}_{s}" for name in PRIORITAET for s in ("klasse", "shingles", "score")]
    # Ein einzelnes Surrogat (gültiges JSON, kein UTF-8) erscheint als \ud800.
    with pfad.open("w", newline="", encoding="utf-8", errors="backslashreplace") as datei:
        schreiber = csv.DictWriter(datei, fieldnames=spalten)
        schreiber.writeheader()
        schreiber.writerows(zeilen)
    return pfad


def schreiben(
    stichprobe: Stichprobe,
    coder_version: str,
    *,
    verzeichnis: Path | None = None,
    zeitpunkt: datetime | None = None,
    zaehlung: Mapping[str, int] | None = None,
    art: Art | None = None,
) -> Path:
    """Schreibt die Stichprobe nach ``stichprobe-<coder_version>-<zeit>.csv`` und
    daneben ``….html`` (ist der Name schon vergeben: ``…-2``, ``…-3`` …); gibt den
    Pfad der CSV zurück. ``art`` (``pruefseite.vergleich``): ein Vergleich zweier Fassungen,
    ``vergleich-…`` mit eigener Überschrift."""
    zeitpunkt = berlin(zeitpunkt)
    art = art or _pruefseite().STICHPROBE
    faelle = stichprobe.faelle()
    geschrieben: list[Path] = []
    try:
        verzeichnis = verzeichnis or Path.cwd()
        csv_pfad, html_pfad = _freie_namen(verzeichnis, coder_version, zeitpunkt, art.praefix)
        geschrieben += [csv_pfad, html_pfad]
        schreiben_csv(faelle, csv_pfad)
        html_pfad.write_text(
            _pruefseite().seite(
                faelle, coder_version, zeitpunkt=zeitpunkt, zaehlung=zaehlung, stamm=csv_pfad.stem, art=art
            ),
            encoding="utf-8",
            errors="backslashreplace",
        )
    except OSError as fehler:
        # Keine halbe Stichprobe: was schon dasteht, geht wieder.
        for pfad in geschrieben:
            if pfad.is_file():
                pfad.unlink()
        ort = fehler.filename or verzeichnis or "das Arbeitsverzeichnis"
        raise EingabeFehler(
            f"Die Stichprobe ließ sich nicht schreiben ({ort}): {fehler.strerror or fehler}."
        ) from None
    return csv_pfad
