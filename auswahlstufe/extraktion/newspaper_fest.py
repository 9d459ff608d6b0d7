"""newspaper4k 0.9.6 deterministisch: zwei Mengen in fester Reihenfolge.

``ArticleBodyExtractor`` ordnet Kandidatenknoten über ``set(...)`` (``nodes_to_check`` und
``compute_gravity_scores``); lxml-Elemente hashen nach ihrer Adresse, der Text hängt so an der
Vorgeschichte des Prozesses. Beide Stock-Methoden laufen unverändert, ein Umschlag ordnet nur ihr
Ergebnis fest – eingespielt nur bei geprüfter Fassung (``fassungen.newspaper_fest_pruefen``).
Warum, wie gemessen und getestet: docs/extraktion.md, „Deterministisch: newspaper4k ordnet seine
Kandidaten fest“.
"""

from __future__ import annotations

import functools

from auswahlstufe.extraktion import fassungen


def umschlag_nodes_to_check(stock):
    """``nodes_to_check`` mit den ``div``-Kandidaten in Dokumentreihenfolge."""

    def nodes_to_check(self, doc):
        knoten = stock(self, doc)
        # Stock: [p…, pre…, td…, article…] aus XPath, dahinter list(set(divs)). Nur die letzte
        # Gruppe hat das Tag "div"; sie kommt in Dokumentreihenfolge.
        divs = [k for k in knoten if k.tag == "div"]
        if len(divs) < 2:
            return knoten
        stelle = {element: i for i, element in enumerate(doc.iter("div"))}
        return [k for k in knoten if k.tag != "div"] + sorted(divs, key=stelle.__getitem__)

    nodes_to_check._stock = stock
    nodes_to_check.__doc__ = stock.__doc__
    return nodes_to_check


def umschlag_compute_gravity_scores(stock):
    """``compute_gravity_scores`` mit den Elternknoten in der Reihenfolge ihres ersten Auftretens."""

    def compute_gravity_scores(self, nodes_with_text):
        eltern = stock(self, nodes_with_text)
        # Stock: [x for x in set(parent_nodes) if x is not None], parent_nodes je Knoten
        # (Eltern, Großeltern). Dieselben Knoten wie dict.fromkeys(parent_nodes).
        if len(eltern) < 2:
            return eltern
        stelle: dict = {}
        for node in nodes_with_text:
            parent = node.getparent()
            stelle.setdefault(parent, len(stelle))
            stelle.setdefault(parent.getparent() if parent is not None else None, len(stelle))
        return sorted(eltern, key=stelle.__getitem__)

    compute_gravity_scores._stock = stock
    compute_gravity_scores.__doc__ = stock.__doc__
    return compute_gravity_scores


@functools.cache
def einspielen() -> None:
    """Macht newspaper4k deterministisch. Einmal je Prozess, weitere Aufrufe tun nichts;
    scheitert laut (``FassungUngeprueft``) bei einer anderen Fassung oder anderem Quelltext."""
    fassungen.newspaper_fest_pruefen()
    from newspaper.extractors.articlebody_extractor import ArticleBodyExtractor as abe

    abe.nodes_to_check = umschlag_nodes_to_check(abe.nodes_to_check)
    abe.compute_gravity_scores = umschlag_compute_gravity_scores(abe.compute_gravity_scores)
