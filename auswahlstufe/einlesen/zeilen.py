"""Aus einem Artikel die Zeilen für die Datenbank: Kandidaten und Seite, dazu die Bilanz.

Für ``extraktionen`` je Kandidat ``(item_id, extraktor) → (text, fehler)``, für ``seiten``
je Artikel mit ``html`` eine Zeile ``(item_id, html, url, content_type, geholt_am)``.
Formfehler brechen mit Ort ab (Datei, Artikelindex, item_id). Was PostgreSQL in ``text``
nicht annimmt (NUL, einzelne Surrogate), wird U+FFFD und gezählt. Warum das HTML als UTF-8
mit „charset=utf-8“ gespeichert wird: docs/extraktion.md, „Seiten mit ``--einlesen``“.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.jsoneingabe import ist_item_id, kein_zeitpunkt, typname, zeitpunkt

HTML = "html"
# So liegt das HTML aus der Datei in seiten: UTF-8, und das sagt der Kopf.
CONTENT_TYPE = "text/html; charset=utf-8"
ERSATZ = "\ufffd"  # für NUL und einzelne Surrogate, die PostgreSQL in text nicht annimmt


@dataclass
class Einlesebilanz:
    artikel: int = 0
    zeilen: int = 0
    neu: int = 0
    geaendert: int = 0
    entfernt: int = 0  # Kandidaten, die die Datei für ihre Items nicht mehr nennt
    unbekannte_items: list[int] = field(default_factory=list)
    unbekannte_dateien: list[str] = field(default_factory=list)  # Seiten eines Ordners ohne Item
    ersetzt: int = 0  # Kandidaten mit NUL oder einzelnem Surrogat
    doppelt: int = 0
    namen: Counter = field(default_factory=Counter)
    items: set[int] = field(default_factory=set)  # item_ids der Artikel mit extractions
    seiten: int = 0  # Artikel mit html
    seiten_geschrieben: int = 0
    seiten_neu: int = 0
    seiten_geaendert: int = 0
    seiten_items: set[int] = field(default_factory=set)  # item_ids der Artikel mit html
    letzte_seite: dict[int, int] = field(default_factory=dict)  # item_id -> Index des letzten Artikels


def _fuer_postgres(wert: str, bilanz: Einlesebilanz) -> str:
    """NUL und einzelne Surrogate durch U+FFFD ersetzen (und zählen). U+FFFD ist wie sie kein
    Wortzeichen und kein Leerraum: die Entscheidung bleibt die des Stapelbetriebs."""
    neu = wert.replace("\x00", ERSATZ)
    try:
        neu.encode("utf-8")
    except UnicodeEncodeError:
        neu = "".join(ERSATZ if 0xD800 <= ord(z) <= 0xDFFF else z for z in neu)
    if neu != wert:
        bilanz.ersetzt += 1
    return neu


def _fehlertext(wert: object) -> str | None:
    # Wie die Regeln: null und "" heißen „kein Fehler“; alles andere ist einer.
    if wert is None or isinstance(wert, str):
        return wert
    return json.dumps(wert, ensure_ascii=False)


def kandidaten(eintrag: dict, index: int, name: str, bilanz: Einlesebilanz) -> Iterator[tuple]:
    """((item_id, extraktor), (text, fehler)) je Kandidat eines Artikels; Formfehler brechen mit Ort ab."""
    item_id = eintrag.get("item_id")
    if not ist_item_id(item_id):
        raise EingabeFehler(
            f"{name}: Artikel [{index}] hat keine ganzzahlige item_id (gefunden: {item_id!r:.40}); "
            "nichts eingelesen."
        )
    if "extractions" not in eintrag and HTML in eintrag:
        return  # nur eine Seite (seite())
    bilanz.items.add(item_id)
    extraktionen = eintrag.get("extractions")
    if not isinstance(extraktionen, dict):
        raise EingabeFehler(
            f"{name}: Artikel [{index}] (item_id {item_id}) hat kein Objekt „extractions“"
            + ("" if "extractions" in eintrag else " und kein „html“")
            + "; nichts eingelesen."
        )
    for extraktor, kandidat in extraktionen.items():
        extraktor = _fuer_postgres(extraktor, bilanz)
        if isinstance(kandidat, dict):
            text = kandidat.get("text")
            text = _fuer_postgres(text, bilanz) if isinstance(text, str) else None
            fehler = _fehlertext(kandidat.get("error"))
            fehler = _fuer_postgres(fehler, bilanz) if fehler else fehler
        else:  # die Regeln nennen das „nicht verfügbar“; text NULL sagt dasselbe
            text, fehler = None, _fuer_postgres(f"kein Objekt: {_fehlertext(kandidat)}"[:200], bilanz)
        bilanz.namen[extraktor] += 1
        yield (item_id, extraktor), (text, fehler)


def seite(eintrag: dict, index: int, name: str, bilanz: Einlesebilanz) -> tuple | None:
    """(item_id, html, url, content_type, geholt_am) für einen Artikel mit ``html``, sonst None.

    Die item_id hat kandidaten() schon geprüft. Formfehler brechen mit Ort ab.
    """
    if HTML not in eintrag:
        return None
    item_id = eintrag["item_id"]
    wo = f"{name}: Artikel [{index}] (item_id {item_id})"
    html = eintrag[HTML]
    if not isinstance(html, str):
        raise EingabeFehler(
            f"{wo}: „html“ ist {typname(html)}; erwartet wird das HTML der Seite als Zeichenkette. "
            "Nichts eingelesen."
        )
    url = eintrag.get("url")
    if url is not None and not isinstance(url, str):
        raise EingabeFehler(f"{wo}: „url“ ist {typname(url)}, keine Zeichenkette; nichts eingelesen.")
    geholt_am = eintrag.get("geholt_am")
    if geholt_am is not None and (geholt_am := zeitpunkt(geholt_am)) is None:
        raise EingabeFehler(kein_zeitpunkt(wo, "geholt_am", eintrag["geholt_am"], "nichts eingelesen"))
    bilanz.seiten += 1
    bilanz.seiten_items.add(item_id)
    try:
        roh = html.encode("utf-8")
    except UnicodeEncodeError:  # einzelne Surrogate
        roh = "".join(ERSATZ if 0xD800 <= ord(z) <= 0xDFFF else z for z in html).encode("utf-8")
        bilanz.ersetzt += 1
    if url is not None:
        url = _fuer_postgres(url, bilanz)
    return item_id, roh, url, CONTENT_TYPE, geholt_am
