"""Die Rechenarbeit eines Laufs: aus den gelesenen Zeilen eines Stapels fertige COPY-Daten.

* ``vorsortieren`` (im Hauptprozess) trennt, was zu rechnen ist, von dem, was
  sich ohne Rechnen erledigt: Items ohne Kandidaten und Items, deren
  Eingabe-Summe gleich der gespeicherten ist.
* ``stapel_kodieren`` (in einem Worker oder im Hauptprozess) entscheidet je
  Item mit ``regeln.waehle``, bereinigt den Text der Wahl und baut die Zeilen
  als COPY-Daten im Textformat; der Hauptprozess reicht sie nur weiter.

Dieses Modul kennt keine Datenbankverbindung: Zeilen hinein, Bytes heraus.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from auswahlstufe.pruefung import auslese
from auswahlstufe.regeln import waehle
from normalisierung import bereinigen
from version import PRIORITAET


@dataclass(frozen=True, slots=True)
class Zeile:
    """Eine zu schreibende Kodierung (alles außer coder_version und kodiert_am)."""

    item_id: int
    extraktor: str
    regel: str
    konsens: int
    metriken: str  # JSON
    text: str | None
    pruefsumme: bytes  # der Eingabe
    ergebnissumme: bytes  # dieser Zeile: Wahl, Regel, Konsens, Metriken, Text


def ergebnissumme(*teile: str | None) -> bytes:
    """SHA-256 über die Teile, je mit Länge davor (NULL und '' bleiben verschieden)."""
    summe = hashlib.sha256()
    for teil in teile:
        if teil is None:
            summe.update(b"N;")
        else:
            roh = teil.encode("utf-8", "surrogatepass")
            summe.update(b"%d:" % len(roh))
            summe.update(roh)
    return summe.digest()


def kodieren(
    item_id: int,
    namen: Sequence[str],
    texte: Sequence,
    fehler: Sequence,
    summe: bytes,
    argumente: Mapping[str, object] | None = None,
):
    """Entscheidung und fertige Zeile eines Items; ``argumente``: die einer Variante für ``waehle``."""
    extraktionen = {n: {"text": t, "error": f} for n, t, f in zip(namen, texte, fehler, strict=True)}
    e = waehle(extraktionen, **(argumente or {}))
    gewaehlt = extraktionen.get(e.extraktor)
    roh = gewaehlt["text"] if gewaehlt else None
    text = bereinigen(roh) if isinstance(roh, str) else None
    metriken = e.metriken_json()
    ergebnis = ergebnissumme(e.extraktor, e.regel, str(e.konsens), metriken, text)
    return e, Zeile(item_id, e.extraktor, e.regel, e.konsens, metriken, text, summe, ergebnis)


# COPY im Textformat (PostgreSQL-Doku, „COPY – Text Format“).
_COPY_MASKEN = (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r"))


def copy_feld(wert: str | int | bytes | None) -> str:
    """Ein Wert im Textformat von COPY."""
    if wert is None:
        return "\\N"
    if isinstance(wert, bytes):
        return "\\\\x" + wert.hex()
    if isinstance(wert, int):
        return str(wert)
    for zeichen, maske in _COPY_MASKEN:  # replace nur, wo nötig: schneller als translate
        if zeichen in wert:
            wert = wert.replace(zeichen, maske)
    return wert


def copy_zeile(*werte: str | int | bytes | None) -> str:
    return "\t".join(map(copy_feld, werte)) + "\n"


@dataclass
class Stapelergebnis:
    # Fertige COPY-Daten (UTF-8) aus den Workern: „neu“ direkt nach selected_extractor,
    # „geändert“ über aw_stapel und den Upsert.
    neu_daten: bytes = b""
    geaendert_daten: bytes = b""
    neu: int = 0
    geaendert: int = 0
    unveraendert: int = 0
    gerechnet: int = 0  # Items, die waehle sah (der Rest erledigte sich über die Eingabe-Summe)
    # (item_id, neue Eingabe-Summe, Ergebnissumme): Eingabe geändert, Ergebnis gleich – nachtragen.
    nachtragen: list[tuple[int, bytes, bytes]] = field(default_factory=list)
    entfernen: list[int] = field(default_factory=list)  # Items ohne Kandidaten, mit alter Zeile
    ohne_kandidaten: int = 0
    unbekannte_zeilen: Counter = field(default_factory=Counter)
    faelle: list = field(default_factory=list)  # die zweifelhaftesten Fälle dieses Stapels
    ids: list[int] = field(default_factory=list)  # alle Items des Stapels (Kennzahlen je Haus und Slot)

    def dazu(self, anderes: Stapelergebnis) -> Stapelergebnis:
        self.neu_daten += anderes.neu_daten
        self.geaendert_daten += anderes.geaendert_daten
        self.neu += anderes.neu
        self.geaendert += anderes.geaendert
        self.unveraendert += anderes.unveraendert
        self.gerechnet += anderes.gerechnet
        self.nachtragen += anderes.nachtragen
        self.entfernen += anderes.entfernen
        self.ohne_kandidaten += anderes.ohne_kandidaten
        self.unbekannte_zeilen.update(anderes.unbekannte_zeilen)
        self.faelle += anderes.faelle
        self.ids += anderes.ids
        return self


def vorsortieren(zeilen: Sequence[tuple], alle: bool) -> tuple[list[tuple], Stapelergebnis]:
    """Im Hauptprozess: was zu rechnen ist, und was sich ohne Rechnen erledigt – Items ohne
    Kandidatenzeilen (gezählt, ihre alte Zeile vorgemerkt) und, außer mit ``alle`` (die Stichprobe
    braucht jede Entscheidung), Items mit unveränderter Eingabe-Summe."""
    ergebnis = Stapelergebnis(ids=[zeile[0] for zeile in zeilen])
    auftrag = []
    for item_id, alt, alt_ergebnis, summe, anzahl, unbekannt, namen, texte, fehler in zeilen:
        if not anzahl:
            ergebnis.ohne_kandidaten += 1
            if alt is not None:
                ergebnis.entfernen.append(item_id)
            continue
        if unbekannt:
            ergebnis.unbekannte_zeilen.update(unbekannt)
        alt, summe = (bytes(alt) if alt is not None else None), bytes(summe)
        if alt == summe and not alle:
            ergebnis.unveraendert += 1
            continue
        # nur unbekannte Extraktoren: die Regeln sehen nichts Verfügbares (Rückfall)
        alt_ergebnis = bytes(alt_ergebnis) if alt_ergebnis is not None else None
        auftrag.append((item_id, alt, alt_ergebnis, summe, namen or [], texte or [], fehler or []))
    return auftrag, ergebnis


def stapel_kodieren(
    auftrag: Sequence[tuple],
    version: str,
    stichprobe_n: int | None,
    argumente: Mapping[str, object] | None = None,
) -> Stapelergebnis:
    """Entscheidet einen Auftrag aus ``vorsortieren`` (im Worker oder im Hauptprozess): die Zeilen
    als fertige COPY-Daten, dazu die Zählung. ``version`` und ``argumente`` gehören zusammen."""
    ergebnis = Stapelergebnis(gerechnet=len(auftrag))
    neu: list[str] = []
    geaendert: list[str] = []
    auswahl = auslese.Stichprobe(stichprobe_n) if stichprobe_n else None
    for item_id, alt, alt_ergebnis, summe, namen, roh, fehler in auftrag:
        texte = [t.decode("utf-8") if t is not None else None for t in roh]
        entscheidung, z = kodieren(item_id, namen, texte, fehler, summe, argumente)
        zeichen = len(z.text) if z.text is not None else None  # wie char_length(text) (aw-014)
        werte = (z.extraktor, z.regel, z.konsens, z.metriken, z.text, z.pruefsumme, z.ergebnissumme, zeichen)
        if z.ergebnissumme == alt_ergebnis:
            ergebnis.unveraendert += 1
            if alt != summe:
                ergebnis.nachtragen.append((item_id, summe, z.ergebnissumme))
        elif alt_ergebnis is None:
            neu.append(copy_zeile(item_id, version, *werte))
        else:
            geaendert.append(copy_zeile(item_id, version, *werte))
        if auswahl is not None:
            # Die ganzen Texte: die Seite zeigt sie und markiert den Konsens darin.
            # Zurück in den Hauptprozess reisen nur die N behaltenen Fälle.
            texte_je_name = {n: t for n, t in zip(namen, texte, strict=True) if n in PRIORITAET}
            auswahl.beachte(auslese.Fall(str(item_id), entscheidung, texte_je_name))
    ergebnis.neu, ergebnis.geaendert = len(neu), len(geaendert)
    ergebnis.neu_daten = "".join(neu).encode("utf-8")
    ergebnis.geaendert_daten = "".join(geaendert).encode("utf-8")
    if auswahl is not None:
        ergebnis.faelle = auswahl.faelle()
    return ergebnis
