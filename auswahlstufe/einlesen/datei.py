"""``--einlesen DATEI.json``: Kandidaten aus einer Datei im Stapelformat nach ``extraktionen``.

Die Datei wird wie im Stapelbetrieb gelesen (``jsoneingabe``); jeder Artikel trägt eine
ganzzahlige ``item_id`` aus ``raw_items``. Die ganze Datei geht in einer Transaktion
hinein: ein Fehler lässt ``extraktionen`` und ``seiten`` unverändert. Darin geht sie in
Stücken hinein (``stuecke``), damit keine einzelne Anweisung lange dauert.

Für die Items, die sie nennt, ist die Datei die ganze Wahrheit – Kandidaten, die sie nicht
(mehr) nennt, gehen –, damit die Datenbank genauso entscheidet wie der Stapelbetrieb über
dieselbe Datei.

Artikel mit ``html`` (Zeichenkette, wahlweise ``url`` und ``geholt_am``) gehen in die
Tabelle ``seiten`` (aw-006) – für Tests und Vorführungen, sonst füllt sie der Abholer. Ein
Artikel darf ``extractions``, ``html`` oder beides tragen; ein Artikel nur mit ``html``
lässt die Kandidaten seines Items unberührt.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import db
from auswahlstufe.einlesen.bericht import datei_berichten
from auswahlstufe.einlesen.quelle import zweimal_lesbar
from auswahlstufe.einlesen.stuecke import SPALTEN_SEITEN, SQL_UPSERT_SEITEN, Stuecke, bekannte_items, teile
from auswahlstufe.einlesen.zeilen import Einlesebilanz, kandidaten, seite
from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.fortschritt import BALKEN_AB_BYTES, MB, fortschritt
from auswahlstufe.jsoneingabe import (
    DoppelteMelder,
    Unregelmaessig,
    anzeigename,
    artikel_einzeln,
    dekodieren,
    lesen,
    parsen,
)
from auswahlstufe.lauf import migrationen

# Die Kandidaten eines Stücks eintragen; gleiche Zeilen bleiben unberührt (extrahiert_am
# bleibt). Neu oder geändert sagt der Vergleich mit dem Stand zu Beginn der Anweisung
# (bisher), nicht xmax – wie lauf.schreiben.SQL_UPSERT.
SPALTEN_EINLESEN = ("item_ids", "extraktoren", "texte", "fehler")
SQL_UPSERT_EINLESEN = """
with stueck as (
    select * from unnest(%(item_ids)b::bigint[], %(extraktoren)b::text[], %(texte)b::text[], %(fehler)b::text[])
        as s(item_id, extraktor, text, fehler)
), bisher as materialized (
    select e.item_id, e.extraktor
    from extraktionen e join stueck s using (item_id, extraktor)
)
insert into extraktionen as e (item_id, extraktor, text, fehler)
select item_id, extraktor, text, fehler from stueck
on conflict (item_id, extraktor) do update set
    text = excluded.text, fehler = excluded.fehler, extrahiert_am = now()
where (e.text, e.fehler) is distinct from (excluded.text, excluded.fehler)
returning not exists (select 1 from bisher b where b.item_id = e.item_id and b.extraktor = e.extraktor)
"""
# Für die Items, die sie nennt, ist die Datei die ganze Wahrheit: Kandidaten,
# die sie für ein solches Item nicht (mehr) nennt, gehen – sonst entschiede die
# Datenbank anders als der Stapelbetrieb über dieselbe Datei. Je Anweisung
# höchstens STUECK_ITEMS Items, mit den Schlüsseln, die die Datei für sie nennt.
SQL_ENTFERNEN_EINLESEN = """
delete from extraktionen e
where e.item_id = any(%(item_ids)s)
  and not exists (
      select 1 from unnest(%(schluessel_ids)s::bigint[], %(schluessel_namen)s::text[]) as k(item_id, extraktor)
      where k.item_id = e.item_id and k.extraktor = e.extraktor)
"""


class Durchgang:
    """Artikel für Artikel über die Datei – oder, wenn der Weg Artikel für Artikel
    scheitert, über die ganz gelesene Liste, damit die Meldung dieselbe ist wie
    im Stapelbetrieb (Zeile, Spalte, Artikel)."""

    def __init__(self, pfad: str, name: str) -> None:
        self.pfad, self.name = pfad, name
        self.liste: list[dict] | None = None

    def artikel(self, melder: DoppelteMelder | None = None, weiter=None) -> Iterator[tuple[int, dict]]:
        if self.liste is not None:
            yield from enumerate(self.liste)
            return
        try:
            yield from artikel_einzeln(self.pfad, melder, weiter)
        except Unregelmaessig:
            # wirft fast immer die genaue EingabeFehler-Meldung; sonst gilt die ganze Liste
            self.liste = parsen(dekodieren(lesen(self.pfad), self.name), self.name)
            raise


@contextlib.contextmanager
def gleich_geblieben(name: str) -> Iterator[None]:
    """Der zweite Durchgang muss lesen, was der erste prüfte. Schrieb jemand die
    Datei dazwischen neu, wird daraus ein Satz statt eines Tracebacks – und die
    Transaktion rollt zurück."""
    try:
        yield
    except (Unregelmaessig, KeyError, EingabeFehler):
        raise EingabeFehler(f"{name} hat sich während des Einlesens geändert; nichts eingelesen.") from None


def vorpruefen(durchgang: Durchgang, balken: bool) -> tuple[Einlesebilanz, dict[tuple[int, str], int]]:
    """Erster Durchgang, noch ohne Datenbank: jede Form prüfen, zählen und für jedes
    (item_id, extraktor) merken, in welchem Artikel es zuletzt steht (der gilt)."""
    groesse = Path(durchgang.pfad).stat().st_size
    while True:
        bilanz = Einlesebilanz()
        letzte: dict[tuple[int, str], int] = {}
        melder = DoppelteMelder()
        try:
            with fortschritt(groesse, "Prüfen", einheit="MB", teiler=MB, balken=balken) as weiter:
                for index, eintrag in durchgang.artikel(melder, weiter):
                    for paar, _ in kandidaten(eintrag, index, durchgang.name, bilanz):
                        if paar in letzte:
                            bilanz.doppelt += 1
                        letzte[paar] = index
                    if (zeile := seite(eintrag, index, durchgang.name, bilanz)) is not None:
                        if zeile[0] in bilanz.letzte_seite:
                            bilanz.doppelt += 1
                        bilanz.letzte_seite[zeile[0]] = index
                    bilanz.artikel += 1
        except Unregelmaessig:
            continue  # noch einmal, jetzt über die ganz gelesene Liste (Durchgang.liste)
        if durchgang.liste is None:
            melder.zeigen()  # über die ganze Liste hat parsen() sie schon gezeigt
        return bilanz, letzte


def schreiben(cur, durchgang: Durchgang, bilanz: Einlesebilanz, letzte: dict, bekannt: dict, weiter) -> None:
    """Zweiter Durchgang: die Kandidaten und Seiten, die gelten (bekanntes Item, letzter Artikel)."""
    kandidatenstuecke = Stuecke(cur, SQL_UPSERT_EINLESEN, SPALTEN_EINLESEN)
    seitenstuecke = Stuecke(cur, SQL_UPSERT_SEITEN, SPALTEN_SEITEN)
    zweiter = Einlesebilanz()  # zählt nur, was der erste Durchgang schon gezählt hat
    for index, eintrag in durchgang.artikel():
        for (item_id, extraktor), (text, fehler) in kandidaten(eintrag, index, durchgang.name, zweiter):
            if item_id in bekannt and letzte[(item_id, extraktor)] == index:
                kandidatenstuecke.dazu(
                    (item_id, extraktor, text, fehler), len(text or "") + len(fehler or "")
                )
                bilanz.zeilen += 1
        zeile = seite(eintrag, index, durchgang.name, zweiter)
        if zeile is not None and zeile[0] in bekannt and bilanz.letzte_seite[zeile[0]] == index:
            seitenstuecke.dazu(zeile, len(zeile[1]))
            bilanz.seiten_geschrieben += 1
        zweiter.artikel += 1
        weiter(1)
    if (zweiter.artikel, zweiter.seiten, zweiter.namen) != (bilanz.artikel, bilanz.seiten, bilanz.namen):
        raise Unregelmaessig
    kandidatenstuecke.schreiben()
    seitenstuecke.schreiben()
    bilanz.neu, bilanz.geaendert = kandidatenstuecke.neu, kandidatenstuecke.geaendert
    bilanz.seiten_neu, bilanz.seiten_geaendert = seitenstuecke.neu, seitenstuecke.geaendert


def entfernen(cur, bilanz: Einlesebilanz, letzte: dict, bekannt: dict) -> None:
    """Was die Datei für ihre Items nicht (mehr) nennt, geht – je Anweisung STUECK_ITEMS Items."""
    genannt: dict[int, list[str]] = {}
    for item_id, extraktor in letzte:
        genannt.setdefault(item_id, []).append(extraktor)
    for teil in teile(sorted(bilanz.items & bekannt.keys())):
        schluessel = [(i, n) for i in teil for n in genannt.get(i, ())]
        cur.execute(
            SQL_ENTFERNEN_EINLESEN,
            {
                "item_ids": teil,
                "schluessel_ids": [i for i, _ in schluessel],
                "schluessel_namen": [n for _, n in schluessel],
            },
        )
        bilanz.entfernt += cur.rowcount


def einlesen(datei: str) -> Einlesebilanz:
    """Kandidaten aus einer Datei im Stapelformat nach extraktionen (Upsert).

    Die ganze Datei geht in einer Transaktion hinein: ein Fehler lässt
    extraktionen unverändert. Unbekannte item_ids werden gemeldet, nicht eingefügt.
    Kandidaten eines genannten Items, die die Datei nicht nennt, werden gelöscht.

    Zwei Durchgänge Artikel für Artikel: der erste prüft die ganze Datei, bevor
    die Datenbank gefragt wird, der zweite schreibt in Stücken (Stuecke). Im
    Speicher liegen nie alle Texte zugleich, nur die Schlüssel (item_id, extraktor)
    und höchstens ein Stück.
    """
    start = time.perf_counter()
    name = anzeigename(datei)
    with zweimal_lesbar(datei) as pfad:
        durchgang = Durchgang(pfad, name)
        balken = Path(pfad).stat().st_size >= BALKEN_AB_BYTES
        bilanz, letzte = vorpruefen(durchgang, balken)
        url = db.datenbank_url()
        with db.fehler_uebersetzen(url), db.verbinden(url, "einlesen") as conn:
            migrationen.voraussetzungen(conn)
            ids = sorted(bilanz.items | bilanz.seiten_items)
            bekannt = bekannte_items(conn, ids)
            bilanz.unbekannte_items = [i for i in ids if i not in bekannt]
            with (
                conn.transaction(),
                conn.cursor() as cur,
                fortschritt(bilanz.artikel, "Einlesen", einheit="Artikel", balken=balken) as weiter,
            ):
                with gleich_geblieben(name):
                    schreiben(cur, durchgang, bilanz, letzte, bekannt, weiter)
                entfernen(cur, bilanz, letzte, bekannt)
    datei_berichten(bilanz, name, time.perf_counter() - start)
    return bilanz
