"""Die Grundlinie: die Regeln von Quelle 000 wörtlich, ohne jede Abkürzung.

Nur der Maßstab für die Benchmarks, nie im Betrieb. Normalisierung genau in
der Reihenfolge der Quelle (html.unescape, Markdown-Bilder, Markdown-Links,
Tags, NFKC, lower, ``\\s+`` zusammenfassen, findall), Shingles als Mengen von
Token-Tupeln aus einer Comprehension, Konsens über einen Counter, Maße je
Kandidat, dann die Auswahlregeln.

Mit der einen dokumentierten Abweichung des Projekts: die Formatzeichen
U+200B U+200C U+200D U+2060 U+FEFF U+00AD werden nach dem Entfernen der Tags
und vor NFKC gelöscht. Sonst müsste die Grundlinie anders entscheiden als
``auswahl.waehle``, und der Vergleich wäre keiner.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from auswahlstufe.regeln import Entscheidung
from auswahlstufe.regeln import waehle as stufe_waehle

PRIORITAET = ("newspaper4k", "readability", "trafilatura")
K = 5
TOLERANZ = 0.03

_BILD = re.compile(r"!\s*\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")
_TAG = re.compile(r"<[^>]+>")
_FORMAT = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_LEERRAUM = re.compile(r"\s+")
_WORT = re.compile(r"[\w]+", flags=re.UNICODE)


def tokens(text: str) -> list[str]:
    text = html.unescape(text)
    text = _BILD.sub(" ", text)
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub(" ", text)
    text = _FORMAT.sub("", text)  # die Abweichung des Projekts
    text = unicodedata.normalize("NFKC", text)
    text = text.lower()
    text = _LEERRAUM.sub(" ", text).strip()
    return _WORT.findall(text)


def shingles(toks: list[str], k: int = K) -> set[tuple[str, ...]]:
    if len(toks) >= k:
        return {tuple(toks[i : i + k]) for i in range(len(toks) - k + 1)}
    if toks:
        return {tuple(toks)}
    return set()


def einordnen(eintrag: object) -> tuple[str, set]:
    if not isinstance(eintrag, dict):
        return "nicht_verfuegbar", set()
    text = eintrag.get("text")
    if not isinstance(text, str):
        return "nicht_verfuegbar", set()
    menge = shingles(tokens(text))
    if not menge:
        return "nicht_verfuegbar", set()
    if eintrag.get("error") is None or eintrag.get("error") == "":
        return "nutzbar", menge
    return "beeintraechtigt", menge


def waehle(extraktionen: object) -> dict:
    """Entscheidung als dict: extraktor, regel, konsens, unbekannt, kandidaten.

    ``kandidaten`` hat die Form von ``Entscheidung.metriken()``.
    """
    if not isinstance(extraktionen, dict):
        extraktionen = {}
    unbekannt = tuple(sorted(str(n) for n in extraktionen if n not in PRIORITAET))
    klassen = {}
    mengen = {}
    for name in PRIORITAET:
        klassen[name], mengen[name] = einordnen(extraktionen.get(name))

    nutzbar = [n for n in PRIORITAET if klassen[n] == "nutzbar"]
    beeintraechtigt = [n for n in PRIORITAET if klassen[n] == "beeintraechtigt"]
    aktive = nutzbar if nutzbar else beeintraechtigt

    kandidaten = {
        n: {
            "klasse": klassen[n],
            "aktiv": n in aktive,
            "shingles": len(mengen[n]),
            "abdeckung": None,
            "stuetzung": None,
            "score": None,
            "abstand": None,
        }
        for n in PRIORITAET
    }

    def ergebnis(extraktor: str, regel: str, konsens: int) -> dict:
        # Jaccard-Abstand jedes aktiven Kandidaten zur Wahl, aus den Mengen selbst
        for n in aktive:
            kandidaten[n]["abstand"] = 1 - len(mengen[n] & mengen[extraktor]) / len(
                mengen[n] | mengen[extraktor]
            )
        return {
            "extraktor": extraktor,
            "regel": regel,
            "konsens": konsens,
            "unbekannt": unbekannt,
            "kandidaten": kandidaten,
        }

    if not aktive:
        return ergebnis("newspaper4k", "rueckfall", 0)
    if len(aktive) == 1:
        return ergebnis(aktive[0], "einziger", 0)

    zaehler = Counter()
    for n in aktive:
        zaehler.update(mengen[n])
    konsens = {s for s, anzahl in zaehler.items() if anzahl >= 2}

    if len(konsens) == 0:
        anzahlen = sorted(len(mengen[n]) for n in aktive)
        if len(aktive) == 3:
            ziel, regel = anzahlen[1], "ohne_konsens_median"
        else:
            ziel, regel = anzahlen[-1], "ohne_konsens_groesster"
        wahl = next(n for n in aktive if len(mengen[n]) == ziel)
        return ergebnis(wahl, regel, 0)

    scores = {}
    for n in aktive:
        schnitt = len(mengen[n] & konsens)
        cobertura = schnitt / len(konsens)
        suporte = schnitt / len(mengen[n])
        score = 0.0 if cobertura + suporte == 0 else 2 * cobertura * suporte / (cobertura + suporte)
        scores[n] = score
        kandidaten[n].update(abdeckung=cobertura, stuetzung=suporte, score=score)

    s_max = max(scores.values())
    gruppe = [n for n in aktive if s_max - scores[n] <= TOLERANZ + 1e-9]
    if len(gruppe) == 1:
        return ergebnis(gruppe[0], "bester_score", len(konsens))
    wenigste = min(len(mengen[n]) for n in gruppe)
    kuerzeste = [n for n in gruppe if len(mengen[n]) == wenigste]
    if len(kuerzeste) == 1:
        return ergebnis(kuerzeste[0], "gleichstand_kuerzester", len(konsens))
    return ergebnis(kuerzeste[0], "gleichstand_rang", len(konsens))


# --- bereinigen: die neun Schritte von Quelle 003, wörtlich ----------------------

_ZEILENENDE = re.compile("\r\n|\r|[\u2028\u2029\u0085]")
_EXOTISCH = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
_WAAGRECHT = re.compile(r"[^\S\n]+")
_UMBRUECHE = re.compile(r"\n{3,}")


def bereinigen(text: str) -> str:
    """Lesetext wie normalisierung.bereinigen, ohne Abkürzungen."""
    text = _ZEILENENDE.sub("\n", text)
    text = _TAG.sub("", text)
    text = html.unescape(text)
    text = _FORMAT.sub("", text)
    text = _EXOTISCH.sub(" ", text)
    text = "\n".join(zeile.strip() for zeile in text.split("\n"))
    text = _WAAGRECHT.sub(" ", text)
    text = _UMBRUECHE.sub("\n\n", text)
    # Dubletten: erste behalten, Leerzeilen nie als Dubletten; fällt eine Zeile
    # zwischen zwei Leerzeilen weg, bleibt eine Leerzeile; keine Leerzeilen am Rand.
    gesehen = set()
    zeilen = []
    for zeile in text.split("\n"):
        if zeile == "":
            if len(zeilen) > 0 and zeilen[-1] != "":
                zeilen.append(zeile)
        elif zeile not in gesehen:
            gesehen.add(zeile)
            zeilen.append(zeile)
    while len(zeilen) > 0 and zeilen[-1] == "":
        zeilen.pop()
    return "\n".join(zeilen)


# --- Vergleich mit der Stufe ------------------------------------------------------


def als_dict(e: Entscheidung) -> dict:
    """Eine Entscheidung in der Form der Grundlinie."""
    return {
        "extraktor": e.extraktor,
        "regel": e.regel,
        "konsens": e.konsens,
        "unbekannt": e.unbekannt,
        "kandidaten": e.metriken(),
    }


def abweichungen(items: Iterable[dict]) -> list[tuple[object, dict, dict]]:
    """Items, bei denen waehle anders entscheidet als die Grundlinie.

    ``repr`` vergleicht Gleitkommazahlen bitgenau (kürzeste eindeutige
    Darstellung) und unterscheidet 0 von 0.0.
    """
    falsch = []
    for item in items:
        soll = waehle(item["extractions"])
        ist = als_dict(stufe_waehle(item["extractions"]))
        if repr(soll) != repr(ist):
            falsch.append((item.get("id"), soll, ist))
    return falsch
