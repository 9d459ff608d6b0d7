"""newspaper4k 0.9.6 deterministisch: zwei Mengen in fester Reihenfolge.

**Was an stock newspaper4k nicht deterministisch ist.** ``ArticleBodyExtractor`` (in
``newspaper/extractors/articlebody_extractor.py``) ordnet an zwei Stellen Kandidatenknoten
über ``set(...)``. lxml-Elemente hashen nach der Speicheradresse ihres Python-Stellvertreters;
die Reihenfolge einer solchen Menge hängt damit von der Vorgeschichte des Prozesses ab
(welche Seiten er vorher las, was er wo belegt hat, ASLR) – und mit ihr der Text:

* ``nodes_to_check`` (Zeile 216): ``items = set(items)`` ordnet die ``div``-Kandidaten. Danach
  sortiert ``compute_features`` stabil nach Baumtiefe; innerhalb einer Tiefe bleibt die
  Mengenordnung stehen. ``compute_gravity_scores`` vergibt in dieser Reihenfolge einen
  abklingenden Bonus (30, 15, 10, …), zieht dem letzten Viertel Punkte ab und summiert
  Gleitkommazahlen – die Reihenfolge ändert die Punkte und damit den Hauptknoten.
* ``compute_gravity_scores`` (Zeile 144): ``set(parent_nodes)``. ``calculate_best_node``
  sortiert danach stabil nach Punkten; bei Gleichstand gewinnt, wer in der Menge vorn steht.

Gemessen (2026-12-01): auf sechs Seiten aus WCXB (``bench/newspaper4k-zufall/``) gab derselbe
Aufruf in sechs frischen Prozessen bis zu sechs verschiedene Texte (etwa 9.648 bis 11.853
Zeichen auf derselben Seite); zwei Seiten hängen an der zweiten Stelle (Gleichstand an der
Spitze), vier an der ersten. Auf den 181 Seiten von ``bench/aeb`` zeigt es sich nicht.

**Was hier anders ist als stock.** Beide Stock-Methoden laufen unverändert; ein Umschlag
ordnet nur ihr Ergebnis fest, ohne ein Element hinzuzufügen oder wegzulassen:

* ``nodes_to_check``: die ``div``-Gruppe (stock: ``list(set(divs))`` am Ende der Liste) in
  Dokumentreihenfolge; die Gruppen davor (``p``, ``pre``, ``td``, ``article``, aus XPath,
  schon in Dokumentreihenfolge) bleiben, wie sie sind.
* ``compute_gravity_scores``: die Eltern- und Großelternknoten in der Reihenfolge, in der
  stock sie anhängt (erstes Auftreten), so wie ``dict.fromkeys(parent_nodes)`` im offenen
  Upstream-PR AndyTheFactory/newspaper4k#738.

Jede Reihenfolge, die ``set()`` liefern könnte, gibt so denselben Text – den, den stock
bei dieser einen Reihenfolge gäbe. Die Wirkung (2026-12-01, ``docs/extraktion.md``): auf den
181 aeb-Seiten ändert sich kein Text (alle 543 Kandidaten zeichengleich mit
``bench/aeb/candidates.json``, F1 der Auswahl 0,973 wie ohne den Fix), auf den sechs Seiten steht
statt eines zufälligen Texts immer derselbe. Kosten: etwa 0,1 ms je Seite.

Kein Fork: eingespielt wird nur bei genau der geprüften Fassung und unverändertem Quelltext
der Methoden (``fassungen.newspaper_fest_pruefen``); sonst ``FassungUngeprueft`` (Exit 4) –
anders als die Beschleuniger fällt der Fix nicht zurück, denn ohne ihn ist newspaper4k nicht
deterministisch. Test:
``tests/test_extraktion_schnell.py`` (jede simulierte Mengenordnung gibt denselben Text, ohne
Umschlag nicht; frische Prozesse mit verschiedener Vorgeschichte geben dieselben Texte).
"""

from __future__ import annotations

from auswahlstufe.extraktion import fassungen

_eingespielt: list[bool] = []


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


def einspielen() -> None:
    """Macht newspaper4k deterministisch. Einmal je Prozess, weitere Aufrufe tun nichts;
    scheitert laut (``FassungUngeprueft``) bei einer anderen Fassung oder anderem Quelltext."""
    if _eingespielt:
        return
    fassungen.newspaper_fest_pruefen()
    from newspaper.extractors.articlebody_extractor import ArticleBodyExtractor as abe

    abe.nodes_to_check = umschlag_nodes_to_check(abe.nodes_to_check)
    abe.compute_gravity_scores = umschlag_compute_gravity_scores(abe.compute_gravity_scores)
    _eingespielt.append(True)
