"""``--einlesen DATEI.json``: Kandidaten aus einer Datei im Stapelformat nach ``extraktionen``.

Gelesen wie im Stapelbetrieb (``jsoneingabe``), geschrieben in einer Transaktion aus Stücken
(``stuecke``). Für die Items, die sie nennt, ist die Datei die ganze Wahrheit – damit die
Datenbank genauso entscheidet wie der Stapelbetrieb über dieselbe Datei. Artikel mit ``html``
gehen nach ``seiten``: docs/extraktion.md, „Seiten mit ``--einlesen``“.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import db
from auswahlstufe.betrieb import migrationen
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

# Die Kandidaten eines Stücks eintragen; gleiche Zeilen bleiben unberührt. Neu oder geändert sagt
# der Stand zu Beginn der Anweisung (bisher), nicht xmax (docs/betrieb-lauf.md, „Prüfsummen“).
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
# Kandidaten, die die Datei für ein genanntes Item nicht (mehr) nennt, gehen (die Datei ist die
# ganze Wahrheit); je Anweisung höchstens STUECK_ITEMS Items, mit den Schlüsseln der Datei.
SQL_ENTFERNEN_EINLESEN = """
delete from extraktionen e
where e.item_id = any(%(item_ids)s)
  and not exists (
      select 1 from unnest(%(schluessel_ids)s::bigint[], %(schluessel_namen)s::text[]) as k(item_id, extraktor)
      where k.item_id = e.item_id and k.extraktor = e.extraktor)
"""


def _geaendert(name: str) -> EingabeFehler:
    return EingabeFehler(f"{name} hat sich während des Einlesens geändert; nichts eingelesen.")


def _kaputt_melden(pfad: str, name: str) -> NoReturn:
    """Die Meldung für eine Datei, die der Weg Artikel für Artikel ablehnt: wo und was, sagt
    ``parsen`` über die ganze Datei – dieselbe Meldung wie im Stapelbetrieb."""
    parsen(dekodieren(lesen(pfad), name), name)
    raise RuntimeError(f"{name}: artikel_einzeln lehnt ab, was parsen annimmt")


def _erster_durchgang(pfad: str, name: str, melder: DoppelteMelder, weiter) -> Iterator[tuple[int, dict]]:
    """(Index, Artikel), einer nach dem anderen; eine kaputte Datei endet mit der genauen Meldung."""
    try:
        yield from artikel_einzeln(pfad, melder, weiter)
    except Unregelmaessig:
        _kaputt_melden(pfad, name)


def _zweiter_durchgang(
    pfad: str, name: str, zweiter: Einlesebilanz
) -> Iterator[tuple[int, list, tuple | None]]:
    """(Index, Kandidaten, Seite) je Artikel, mit denselben Prüfungen wie im ersten Durchgang;
    scheitert jetzt etwas, wurde die Datei dazwischen neu geschrieben (ein Satz, die Transaktion
    rollt zurück). ``zweiter`` zählt, was der erste schon gezählt hat."""
    try:
        for index, eintrag in artikel_einzeln(pfad):
            yield index, list(kandidaten(eintrag, index, name, zweiter)), seite(eintrag, index, name, zweiter)
            zweiter.artikel += 1
    except (Unregelmaessig, EingabeFehler):
        raise _geaendert(name) from None


def vorpruefen(pfad: str, name: str, balken: bool) -> tuple[Einlesebilanz, dict[tuple[int, str], int]]:
    """Erster Durchgang, noch ohne Datenbank: jede Form prüfen, zählen und für jedes
    (item_id, extraktor) merken, in welchem Artikel es zuletzt steht (der gilt)."""
    bilanz = Einlesebilanz()
    letzte: dict[tuple[int, str], int] = {}
    melder = DoppelteMelder()
    groesse = Path(pfad).stat().st_size
    with fortschritt(groesse, "Prüfen", einheit="MB", teiler=MB, balken=balken) as weiter:
        for index, eintrag in _erster_durchgang(pfad, name, melder, weiter):
            for paar, _ in kandidaten(eintrag, index, name, bilanz):
                if paar in letzte:
                    bilanz.doppelt += 1
                letzte[paar] = index
            if (zeile := seite(eintrag, index, name, bilanz)) is not None:
                if zeile[0] in bilanz.letzte_seite:
                    bilanz.doppelt += 1
                bilanz.letzte_seite[zeile[0]] = index
            bilanz.artikel += 1
    melder.zeigen()
    return bilanz, letzte


def schreiben(cur, pfad: str, name: str, bilanz: Einlesebilanz, letzte: dict, bekannt: dict, weiter) -> None:
    """Zweiter Durchgang: die Kandidaten und Seiten, die gelten (bekanntes Item, letzter Artikel).

    Nennt die Datei jetzt für ein bekanntes Item ein Paar, das der erste Durchgang nicht sah,
    oder stimmen am Ende Artikel, Seiten und Kandidaten je Name nicht, hat sie sich geändert.
    """
    kandidatenstuecke = Stuecke(cur, SQL_UPSERT_EINLESEN, SPALTEN_EINLESEN)
    seitenstuecke = Stuecke(cur, SQL_UPSERT_SEITEN, SPALTEN_SEITEN)
    zweiter = Einlesebilanz()
    for index, zeilen, zeile in _zweiter_durchgang(pfad, name, zweiter):
        for (item_id, extraktor), (text, fehler) in zeilen:
            if item_id not in bekannt:
                continue
            if (item_id, extraktor) not in letzte:
                raise _geaendert(name)
            if letzte[(item_id, extraktor)] == index:
                kandidatenstuecke.dazu(
                    (item_id, extraktor, text, fehler), len(text or "") + len(fehler or "")
                )
                bilanz.zeilen += 1
        if zeile is not None and zeile[0] in bekannt:
            if zeile[0] not in bilanz.letzte_seite:
                raise _geaendert(name)
            if bilanz.letzte_seite[zeile[0]] == index:
                seitenstuecke.dazu(zeile, len(zeile[1]))
                bilanz.seiten_geschrieben += 1
        weiter(1)
    if (zweiter.artikel, zweiter.seiten, zweiter.namen) != (bilanz.artikel, bilanz.seiten, bilanz.namen):
        raise _geaendert(name)
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
    """Kandidaten aus einer Datei im Stapelformat nach extraktionen (Upsert), in einer Transaktion.

    Zwei Durchgänge Artikel für Artikel über dieselben Bytes (``quelle``): der erste prüft, bevor
    die Datenbank gefragt wird, der zweite schreibt in Stücken (``Stuecke``); docs/kommandozeile.md,
    „``--einlesen``“.
    """
    start = time.perf_counter()
    name = anzeigename(datei)
    with zweimal_lesbar(datei) as pfad:
        balken = Path(pfad).stat().st_size >= BALKEN_AB_BYTES
        bilanz, letzte = vorpruefen(pfad, name, balken)
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
                schreiben(cur, pfad, name, bilanz, letzte, bekannt, weiter)
                entfernen(cur, bilanz, letzte, bekannt)
    datei_berichten(bilanz, name, time.perf_counter() - start)
    return bilanz
