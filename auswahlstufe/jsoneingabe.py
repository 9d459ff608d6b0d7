"""Die Eingabe im Stapelformat lesen: eine JSON-Liste von Artikeln, gehärtet.

Stapelbetrieb (``stapel``) und ``--einlesen`` (``einlesen/datei.py``) lesen hier; jede Abweichung
wird ein deutscher Satz mit Ort (docs/zuverlaessigkeit.md, „Schlechte und extreme Eingaben“).
"""

from __future__ import annotations

import codecs
import functools
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import click

from auswahlstufe.anzeige import os_fehler
from auswahlstufe.fehler import EingabeFehler

STDIO = "-"
# So viele Funde doppelter Schlüssel werden einzeln gemeldet, der Rest gezählt.
HOECHSTENS_WARNUNGEN = 20

# Die Meldungen des json-Moduls auf Deutsch; Unbekanntes bleibt im Original stehen.
JSON_MELDUNGEN = {
    "Expecting value": "Wert erwartet",
    "Expecting ',' delimiter": "Komma erwartet",
    "Expecting ':' delimiter": "Doppelpunkt erwartet",
    "Expecting property name enclosed in double quotes": "Schlüssel in doppelten Anführungszeichen erwartet",
    "Unterminated string starting at": "Zeichenkette ohne Ende",
    "Invalid control character at": "Steuerzeichen in einer Zeichenkette (als \\u00XX schreiben)",
    "Invalid \\escape": "ungültige Escape-Folge",
    "Invalid \\uXXXX escape": "ungültige \\uXXXX-Folge",
    "Extra data": "weitere Daten nach dem Ende des JSON-Werts",
}

# Zeichen ab U+0100 in UTF-8: ein Startbyte C4–F4 und seine Folgebytes, als Lauf.
_BREIT = re.compile(rb"(?:[\xc4-\xf4][\x80-\xbf]+)+")
# Ein Backslash direkt davor ist ohnehin ungültiges JSON; dann den genauen Weg gehen.
_BACKSLASH_VOR_BREIT = re.compile(rb"\\[\xc4-\xf4]")

JSON_TYPEN = {dict: "ein Objekt", list: "eine Liste", str: "eine Zeichenkette", bool: "ein Wahrheitswert"}


def anzeigename(pfad: str) -> str:
    return "stdin" if pfad == STDIO else pfad


# --- Lesen und prüfen ------------------------------------------------------------------


def lesen(datei: str) -> bytes:
    if datei == STDIO:
        return sys.stdin.buffer.read()
    try:
        with open(datei, "rb") as f:
            return f.read()
    except OSError as e:
        raise lesefehler(datei, e) from None


def lesefehler(datei: str, fehler: OSError) -> EingabeFehler:
    """Der Satz, wenn sich die Eingabedatei nicht öffnen oder lesen lässt."""
    if isinstance(fehler, FileNotFoundError):
        return EingabeFehler(f"Die Eingabedatei {datei} gibt es nicht.")
    if isinstance(fehler, IsADirectoryError):
        return EingabeFehler(f"{datei} ist ein Verzeichnis, keine JSON-Datei.")
    return EingabeFehler(f"Die Eingabedatei {datei} ist nicht lesbar: {os_fehler(fehler)}.")


def dekodieren(roh: bytes, name: str) -> str:
    """UTF-8, ein Byte-Order-Mark am Anfang ist erlaubt (Windows-Werkzeuge schreiben ihn)."""
    try:
        return roh.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        zeile = roh.count(b"\n", 0, e.start) + 1
        raise EingabeFehler(
            f"{name} ist kein gültiges UTF-8: Byte {e.start} (Zeile {zeile}) "
            f"ist 0x{roh[e.start]:02x} ({e.reason})."
        ) from None


@functools.lru_cache(maxsize=4096)  # typografische Zeichen wiederholen sich ständig
def _maske(lauf: bytes) -> bytes:
    return json.dumps(lauf.decode("utf-8"))[1:-1].encode("ascii")


def _maskieren(roh: bytes, stueck: int = 2**20) -> bytearray:
    """Zeichen ab U+0100 als \\u-Escapes, stückweise in ein bytearray: re.sub über
    alles auf einmal hielte Millionen Teilstücke gleichzeitig im Speicher."""
    ergebnis = bytearray()
    anfang = 0
    while anfang < len(roh):
        ende = min(anfang + stueck, len(roh))
        while ende < len(roh) and roh[ende] >= 0x80:  # nicht mitten in einem Zeichen schneiden
            ende += 1
        ergebnis += _BREIT.sub(lambda t: _maske(t.group()), roh[anfang:ende])
        anfang = ende
    return ergebnis


def sparsam_dekodieren(roh: bytes) -> str | None:
    """Der Text mit allen Zeichen ab U+0100 als ``\\uXXXX`` – oder None, wo dieser
    Weg nicht sicher ist (Backslash vor einem breiten Zeichen) oder scheitert."""
    if _BACKSLASH_VOR_BREIT.search(roh):
        return None
    try:
        return _maskieren(roh).decode("utf-8-sig")
    except UnicodeDecodeError:
        return None  # kaputtes UTF-8: die genaue Stelle findet dekodieren()


def laden(datei: str) -> tuple[list[dict], int]:
    """Liest und prüft die Eingabe; gibt die Artikel und die Größe in Bytes zurück.

    Erst sparsam (``sparsam_dekodieren``; warum: docs/messungen.md, „Stapelbetrieb: Speicher und
    Zeit“); scheitert das, über die Originalbytes – deren Meldung nennt Zeile, Spalte und Byte, wie
    sie in der Datei stehen.
    """
    name = anzeigename(datei)
    roh = lesen(datei)
    groesse = len(roh)
    text = sparsam_dekodieren(roh)
    if text is not None:
        if datei != STDIO and Path(datei).is_file():
            # Nur noch für eine Fehlermeldung nötig; eine gewöhnliche Datei lässt sich
            # dafür neu lesen. Eine FIFO oder <(…) ist dann leer – deren Bytes bleiben.
            roh = None
        try:
            return parsen(text, name), groesse
        except EingabeFehler:
            del text  # die Meldung mit den Stellen der Datei gibt der Weg unten
            roh = roh if roh is not None else lesen(datei)
    text = dekodieren(roh, name)
    del roh
    return parsen(text, name), groesse


class _Doppelte:
    """object_pairs_hook: baut Objekte wie json selbst (der letzte Wert gilt) und
    merkt sich die, in denen ein Schlüssel doppelt stand."""

    def __init__(self) -> None:
        self.objekte: dict[int, tuple[dict, list[str]]] = {}

    def __call__(self, paare: list[tuple[str, object]]) -> dict:
        objekt = dict(paare)
        if len(objekt) != len(paare):
            schluessel = [s for s, n in Counter(s for s, _ in paare).items() if n > 1]
            # das Objekt selbst mit ablegen, damit seine id nicht neu vergeben wird
            self.objekte[id(objekt)] = (objekt, schluessel)
        return objekt

    def fundstellen(self, wert: object) -> Iterator[tuple[str, list[str]]]:
        """(Pfad im Artikel, doppelte Schlüssel) für jedes betroffene Objekt darin,
        in Dokumentreihenfolge. Ohne Rekursion: der Artikel darf so tief sein,
        wie json.loads ihn las."""
        offen: list[tuple[object, str]] = [(wert, "")]
        while offen:
            wert, pfad = offen.pop()
            if isinstance(wert, dict):
                if id(wert) in self.objekte:
                    yield pfad or "(Artikel)", self.objekte[id(wert)][1]
                kinder = [(w, f"{pfad}.{s}" if pfad else s) for s, w in wert.items()]
            elif isinstance(wert, list):
                kinder = [(w, f"{pfad}[{i}]") for i, w in enumerate(wert)]
            else:
                continue
            offen.extend(reversed(kinder))


class _KeineJsonZahl(ValueError):
    """Ein Zahlwert, der sich nicht als gültiges JSON zurückschreiben ließe."""


def _konstante(text: str) -> float:
    # parse_constant: json liest NaN, Infinity und -Infinity sonst still mit.
    raise _KeineJsonZahl(f"{text} ist keine JSON-Zahl (nur endliche Zahlen sind gültiges JSON)")


def _kommazahl(text: str) -> float:
    """parse_float: 1e400 wird in Python ±inf und ginge als ``Infinity`` hinaus."""
    wert = float(text)
    if math.isinf(wert):
        kurz = text if len(text) <= 24 else f"{text[:20]}…"
        raise _KeineJsonZahl(
            f"die Zahl {kurz} ist größer als eine Gleitkommazahl fasst (etwa 1,8e308) "
            "und ließe sich nicht als JSON zurückschreiben"
        )
    return wert


_LEERRAUM = re.compile(r"[ \t\n\r]*")


def _artikel_mit_zahlfehler(text: str) -> int | None:
    """Nur im Fehlerfall: liest die Artikel einzeln, bis einer an einer Zahl scheitert,
    und gibt seinen Index – None, wenn oben keine Liste steht."""
    decoder = json.JSONDecoder(parse_float=_kommazahl, parse_constant=_konstante)
    pos = _LEERRAUM.match(text).end()
    if not text.startswith("[", pos):
        return None
    pos = _LEERRAUM.match(text, pos + 1).end()
    index = 0
    while True:
        try:
            _, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return None
        except ValueError:
            return index
        except RecursionError:
            return None
        pos = _LEERRAUM.match(text, pos).end()
        if not text.startswith(",", pos):
            return None
        pos = _LEERRAUM.match(text, pos + 1).end()
        index += 1


def zahlfehler(text: str, name: str, grund: str) -> EingabeFehler:
    index = _artikel_mit_zahlfehler(text)
    ort = f"{name}: Artikel [{index}]" if index is not None else name
    return EingabeFehler(f"{ort}: {grund}.")


def ist_item_id(wert: object) -> bool:
    """Taugt der Wert als item_id (bigint in raw_items)? true und false zählen nicht als Zahl."""
    return isinstance(wert, int) and not isinstance(wert, bool) and -(2**63) <= wert < 2**63


def zeitpunkt(wert: object) -> datetime | None:
    """Ein ISO-Zeitpunkt mit Zeitzone („2026-12-01T08:00:00+01:00“); alles andere None."""
    try:
        zeit = datetime.fromisoformat(wert) if isinstance(wert, str) else None
    except ValueError:
        return None
    return zeit if zeit is not None and zeit.tzinfo is not None else None


def kein_zeitpunkt(wo: str, feld: str, wert: object, folge: str) -> str:
    """Die Meldung, wenn ``feld`` kein Zeitpunkt mit Zeitzone ist; ``folge`` etwa „nichts eingelesen“."""
    return (
        f"{wo}: „{feld}“ ist kein Zeitpunkt mit Zeitzone (gefunden: {wert!r:.40}; "
        f"erwartet etwa „2026-12-01T08:00:00+01:00“); {folge}."
    )


def typname(wert: object) -> str:
    if wert is None:
        return "null"
    return JSON_TYPEN.get(type(wert), "eine Zahl")


def _json(text: str, name: str, **haken) -> object:
    """``json.loads`` mit den Prüfungen der Zahlen; jeder Fehler wird ein Satz mit Ort."""
    try:
        return json.loads(text, parse_float=_kommazahl, parse_constant=_konstante, **haken)
    except json.JSONDecodeError as e:
        meldung = JSON_MELDUNGEN.get(e.msg, e.msg)
        raise EingabeFehler(
            f"{name} ist kein gültiges JSON: Zeile {e.lineno}, Spalte {e.colno}: {meldung}."
        ) from None
    except _KeineJsonZahl as e:
        raise zahlfehler(text, name, str(e)) from None
    except ValueError:
        # int() verweigert Zahlen mit mehr als sys.get_int_max_str_digits() Stellen
        raise zahlfehler(
            text,
            name,
            f"eine ganze Zahl mit mehr als {sys.get_int_max_str_digits()} Stellen wird nicht gelesen",
        ) from None
    except RecursionError:
        raise EingabeFehler(
            f"{name} ist zu tief verschachtelt (mehr als etwa {sys.getrecursionlimit()} Ebenen); "
            "so tiefe Artikel werden nicht verarbeitet."
        ) from None


def json_lesen(datei: str) -> object:
    """Eine JSON-Datei beliebiger Form (Referenz, Urteile), gelesen und geprüft wie die Eingabe."""
    name = anzeigename(datei)
    return _json(dekodieren(lesen(datei), name), name)


def parsen(text: str, name: str) -> list[dict]:
    """JSON-Liste von Objekten; jede Abweichung wird ein Satz mit Ort."""
    if not text.strip():
        raise EingabeFehler(f"{name} ist leer; erwartet wird eine JSON-Liste von Artikeln.")
    doppelte = _Doppelte()
    artikel = _json(text, name, object_pairs_hook=doppelte)
    if not isinstance(artikel, list):
        raise EingabeFehler(
            f"{name}: oben steht {typname(artikel)}; erwartet wird eine JSON-Liste von Artikeln."
        )
    for index, eintrag in enumerate(artikel):
        if not isinstance(eintrag, dict):
            raise EingabeFehler(f"{name}: Artikel [{index}] ist kein Objekt, sondern {typname(eintrag)}.")
    if doppelte.objekte:
        warnen_doppelte(artikel, doppelte)
    return artikel


def warnen_doppelte(artikel: list[dict], doppelte: _Doppelte) -> None:
    """Doppelte Schlüssel sind gültiges JSON, aber fast immer ein Fehler beim Erzeugen.
    Die ersten Funde einzeln, der Rest als Zahl – stderr soll lesbar bleiben."""
    melder = DoppelteMelder()
    for index, eintrag in enumerate(artikel):
        if len(melder.saetze) == HOECHSTENS_WARNUNGEN:
            break
        melder.beachte(index, eintrag, doppelte)
    melder.weitere = len(doppelte.objekte) - len(melder.saetze)
    melder.zeigen()


# --- Artikel einzeln: Speicher nach dem größten Artikel, nicht nach der Datei ---------------

STUECK = 2**20  # so viel wird auf einmal gelesen (und bei einem langen Artikel jeweils verdoppelt)


class Unregelmaessig(Exception):
    """Der Weg Artikel für Artikel traf etwas, das eine Fehlermeldung verdient;
    die schreibt der gewöhnliche Weg über die ganze Datei (``parsen``)."""


class DoppelteMelder:
    """Sammelt die Warnungen zu doppelten Schlüsseln Artikel für Artikel – dieselben
    Sätze wie ``warnen_doppelte``; gezeigt erst, wenn die ganze Datei gelesen ist."""

    def __init__(self) -> None:
        self.saetze: list[str] = []
        self.weitere = 0

    def beachte(self, index: int, eintrag: dict, doppelte: _Doppelte) -> None:
        for pfad, schluessel in doppelte.fundstellen(eintrag):
            if len(self.saetze) < HOECHSTENS_WARNUNGEN:
                namen = ", ".join(f"„{s}“" for s in schluessel)
                self.saetze.append(
                    f"Warnung: Artikel [{index}], {pfad}: Schlüssel {namen} doppelt – der letzte Wert gilt."
                )
            else:
                self.weitere += 1

    def zeigen(self) -> None:
        for satz in self.saetze:
            click.echo(satz, err=True)
        if self.weitere:
            click.echo(
                f"Warnung: doppelte Schlüssel in {self.weitere} weiteren Objekten, nicht einzeln gezeigt.",
                err=True,
            )


def artikel_einzeln(
    pfad: str, melder: DoppelteMelder | None = None, fortschritt=None, stueck: int = STUECK
) -> Iterator[tuple[int, dict]]:
    """(Index, Artikel) einer Datei im Stapelformat, einer nach dem anderen.

    Liest in Stücken und dekodiert jeden Artikel für sich mit demselben
    Decoder wie ``parsen`` (dieselben Werte, dieselben Prüfungen der Zahlen).
    Im Speicher liegt nur der Artikel, der gerade gelesen wird. ``pfad`` muss
    sich ein zweites Mal lesen lassen (keine FIFO, nicht stdin); ``fortschritt``
    bekommt die Zahl der gelesenen Bytes je Stück.

    Bei allem, was nicht glatt ist (kein UTF-8, kein JSON, oben keine Liste,
    ein Artikel kein Objekt, NaN, zu tief …), endet der Weg mit
    ``Unregelmaessig`` – die genaue Meldung mit Zeile und Spalte gibt dann
    ``parsen`` über die ganze Datei.
    """
    doppelte = _Doppelte()
    decoder = json.JSONDecoder(object_pairs_hook=doppelte, parse_float=_kommazahl, parse_constant=_konstante)
    utf8 = codecs.getincrementaldecoder("utf-8-sig")()
    with open(pfad, "rb") as datei:
        puffer = ""
        pos = 0
        ende = False

        def nachlesen(mindestens: int = 0) -> None:
            nonlocal puffer, pos, ende
            roh = datei.read(max(stueck, mindestens))
            if fortschritt is not None:
                fortschritt(len(roh))
            try:
                puffer = puffer[pos:] + utf8.decode(roh, final=not roh)
            except UnicodeDecodeError:
                raise Unregelmaessig from None
            pos = 0
            ende = not roh

        def leerraum() -> str:
            """Überspringt Leerraum und gibt das nächste Zeichen ('' am Ende der Datei)."""
            nonlocal pos
            while True:
                pos = _LEERRAUM.match(puffer, pos).end()
                if pos < len(puffer) or ende:
                    return puffer[pos : pos + 1]
                nachlesen()

        if leerraum() != "[":
            raise Unregelmaessig
        pos += 1
        if leerraum() == "]":
            pos += 1
            if leerraum() != "":
                raise Unregelmaessig
            return
        index = 0
        while True:
            if leerraum() == "":
                raise Unregelmaessig
            while True:
                try:
                    eintrag, bis = decoder.raw_decode(puffer, pos)
                except json.JSONDecodeError:
                    if ende:
                        raise Unregelmaessig from None
                    nachlesen(len(puffer) - pos)  # ein langer Artikel: doppelt so viel nachlesen
                    continue
                except (ValueError, RecursionError):
                    raise Unregelmaessig from None
                if bis == len(puffer) and not ende and not isinstance(eintrag, dict):
                    nachlesen()  # eine Zahl oder ein Wort, das im nächsten Stück weitergehen könnte
                    continue
                break
            if not isinstance(eintrag, dict):
                raise Unregelmaessig
            pos = bis
            if doppelte.objekte:
                if melder is not None:
                    melder.beachte(index, eintrag, doppelte)
                doppelte.objekte.clear()
            yield index, eintrag
            index += 1
            zeichen = leerraum()
            pos += 1
            if zeichen == "]":
                if leerraum() != "":
                    raise Unregelmaessig
                return
            if zeichen != ",":
                raise Unregelmaessig
