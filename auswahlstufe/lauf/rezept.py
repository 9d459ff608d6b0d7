"""Das Rollenrezept ``rollen/aw-rolle-stufe.sql`` und die Tabelle der Rechte in docs/betrieb.md.

Beides folgt aus den Modi in ``rechte.py``. Das SQL des Rezepts steht als Vorlage in
``rezept.sql`` neben diesem Modul; eingesetzt werden dort nur die Marken ``«betrieb»``
und ``«werte»`` (der Kopf der Vorlage erklärt sie). Erzeugt wird beides mit
``python -m auswahlstufe.lauf.rechte --rezept`` bzw. ``--tabelle`` – so nennt es der Kopf
des Rezepts; Tests vergleichen Datei und Doku damit (``tests/test_zuverlaessigkeit_rechte.py``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from auswahlstufe.lauf.rechte import BETRIEB, MODI, ZUSCHALTBAR, Recht

VORLAGE = Path(__file__).with_name("rezept.sql")
# Bis einschließlich dieser Zeile erklärt sich die Vorlage selbst; ins Rezept geht der Rest.
ANFANG = "-- «Anfang des Rezepts»\n"
MARKE = re.compile(r"«(\w+)»")


def rechte_je_teil() -> list[tuple[str, Recht]]:
    """(Teil, Recht) für das Rezept: Betrieb, Blick, dann die zuschaltbaren Modi (nur, was dazukommt)."""
    betrieb = _vereinigt(tuple(m for m in BETRIEB if m != "blick"))
    teile = [("betrieb", r) for r in betrieb] + [("blick", r) for r in _vereinigt(("blick",))]
    schon = {(r.art, r.objekt, x) for r in betrieb for x in r.rechte}
    for variable, (modus, _aufruf) in ZUSCHALTBAR.items():
        for recht in _vereinigt((modus,)):
            dazu = tuple(x for x in recht.rechte if (recht.art, recht.objekt, x) not in schon)
            if dazu:
                teile.append((variable, Recht(recht.art, recht.objekt, dazu, "", recht.wenn_vorhanden)))
    return teile


def _vereinigt(modi: tuple[str, ...]) -> list[Recht]:
    """Die Rechte mehrerer Modi, je Objekt zusammengefasst, in der Reihenfolge des ersten Auftretens."""
    je_objekt: dict[tuple[str, str, bool], list[str]] = {}
    for name in modi:
        for recht in MODI[name].rechte:
            liste = je_objekt.setdefault((recht.art, recht.objekt, recht.wenn_vorhanden), [])
            liste += [r for r in recht.rechte if r not in liste]
    return [Recht(art, objekt, tuple(rechte), "", wenn) for (art, objekt, wenn), rechte in je_objekt.items()]


def _einsetzen(werte: dict[str, str]) -> str:
    """Die Vorlage ohne ihren Kopf, jede Marke ``«name»`` durch ``werte[name]`` ersetzt.

    Jede Marke muss genau einmal dastehen und jede bekannt sein – sonst ein Fehler statt
    eines Rezepts mit einer Lücke oder einer übrig gebliebenen Marke.
    """
    _kopf, gefunden, vorlage = VORLAGE.read_text(encoding="utf-8").partition(ANFANG)
    if not gefunden:
        raise ValueError(f"{VORLAGE}: die Zeile {ANFANG.strip()!r} fehlt")
    marken = MARKE.findall(vorlage)
    if sorted(marken) != sorted(werte):
        raise ValueError(f"{VORLAGE}: Marken {sorted(marken)}, erwartet je einmal {sorted(werte)}")
    return MARKE.sub(lambda treffer: werte[treffer.group(1)], vorlage)


def rezept() -> str:
    """Der Text von rollen/aw-rolle-stufe.sql."""
    werte = ",\n".join(
        f"            ('{teil}', '{recht.art}', '{recht.objekt}', '{einzeln.lower()}', "
        f"{'true' if recht.wenn_vorhanden else 'false'})"
        for teil, recht in rechte_je_teil()
        for einzeln in recht.rechte
    )
    return _einsetzen({"betrieb": ", ".join(BETRIEB), "werte": werte})


def tabelle() -> str:
    """Markdown-Tabelle: je Modus der Aufruf und die Rechte."""
    zeilen = ["| Modus | Aufruf | braucht |", "|---|---|---|"]
    for modus in MODI.values():
        rechte = "; ".join(
            ("Recht " if r.art != "eigentuemer" else "")
            + r.text()
            + (f" (oder auf die Spalten {', '.join(r.spalten)})" if r.spalten else "")
            + (" (falls vorhanden)" if r.wenn_vorhanden else "")
            for r in modus.rechte
        )
        zeilen.append(f"| {modus.name} | `{modus.aufruf}` | {rechte} |")
    return "\n".join(zeilen) + "\n"


def main(argumente: list[str]) -> None:
    """``--rezept`` oder ``--tabelle`` nach stdout (``.venv/bin/python -m auswahlstufe.lauf.rechte``)."""
    if argumente == ["--rezept"]:
        sys.stdout.write(rezept())
    elif argumente == ["--tabelle"]:
        sys.stdout.write(tabelle())
    else:
        sys.exit("Aufruf im Klon: .venv/bin/python -m auswahlstufe.lauf.rechte --rezept | --tabelle")
