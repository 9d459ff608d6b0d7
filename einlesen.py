"""--einlesen: Kandidaten aus einer Datei im Stapelformat nach ``extraktionen``.

Eine eigene Betriebsart neben den Läufen der Stufe (stufe.py): sie schreibt
nicht ``selected_extractor``, sondern die Eingabe der Stufe. Die Datei wird
wie im Stapelbetrieb gelesen (jsoneingabe.py); jeder Artikel trägt eine
ganzzahlige ``item_id`` aus ``raw_items``.

Die ganze Datei geht in einer Transaktion hinein (COPY in eine temporäre
Tabelle, dann ein Upsert): ein Fehler lässt ``extraktionen`` unverändert.
Für die Items, die sie nennt, ist die Datei die ganze Wahrheit – Kandidaten,
die sie nicht (mehr) nennt, gehen –, damit die Datenbank genauso entscheidet
wie der Stapelbetrieb über dieselbe Datei.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click

import db
from anzeige import BALKEN_AB_BYTES, balken, hinweis, zahl
from fehler import EingabeFehler
from jsoneingabe import (
    STDIO,
    STUECK,
    DoppelteMelder,
    Unregelmaessig,
    anzeigename,
    artikel_einzeln,
    dekodieren,
    lesen,
    parsen,
)
from version import PRIORITAET

# Zwischenablage für --einlesen; eine Transaktion für die ganze Datei.
SQL_TEMP_EINLESEN = """
create temp table aw_einlesen (
    item_id bigint not null,
    extraktor text not null,
    text text,
    fehler text,
    primary key (item_id, extraktor)
) on commit drop
"""
SQL_COPY_EINLESEN = "copy aw_einlesen (item_id, extraktor, text, fehler) from stdin"
# Welche der genannten Items gibt es in raw_items?
SQL_BEKANNTE_ITEMS = "select id from raw_items where id = any(%s)"
# Kandidaten eintragen; gleiche Zeilen bleiben unberührt (extrahiert_am bleibt).
SQL_UPSERT_EINLESEN = """
insert into extraktionen as e (item_id, extraktor, text, fehler)
select item_id, extraktor, text, fehler from aw_einlesen
on conflict (item_id, extraktor) do update set
    text = excluded.text, fehler = excluded.fehler, extrahiert_am = now()
where (e.text, e.fehler) is distinct from (excluded.text, excluded.fehler)
returning (e.xmax = 0) as neu
"""
# Für die Items, die sie nennt, ist die Datei die ganze Wahrheit: Kandidaten,
# die sie für ein solches Item nicht (mehr) nennt, gehen – sonst entschiede die
# Datenbank anders als der Stapelbetrieb über dieselbe Datei.
SQL_ENTFERNEN_EINLESEN = """
delete from extraktionen e
where e.item_id = any(%s)
  and not exists (select 1 from aw_einlesen a where a.item_id = e.item_id and a.extraktor = e.extraktor)
"""
ERSATZ = "\ufffd"  # für NUL und einzelne Surrogate, die PostgreSQL in text nicht annimmt


@dataclass
class Einlesebilanz:
    artikel: int = 0
    zeilen: int = 0
    neu: int = 0
    geaendert: int = 0
    entfernt: int = 0  # Kandidaten, die die Datei für ihre Items nicht mehr nennt
    unbekannte_items: list[int] = field(default_factory=list)
    ersetzt: int = 0  # Kandidaten mit NUL oder einzelnem Surrogat
    doppelt: int = 0
    namen: Counter = field(default_factory=Counter)
    items: set[int] = field(default_factory=set)  # alle item_ids der Datei


def _fuer_postgres(wert: str, bilanz: Einlesebilanz) -> str:
    """NUL und einzelne Surrogate durch U+FFFD ersetzen (und zählen).

    U+FFFD verhält sich in beiden Normalisierungen wie das ersetzte Zeichen:
    kein Wortzeichen, kein Leerraum. Die Entscheidung bleibt also dieselbe wie
    im Stapelbetrieb über dieselbe Datei.
    """
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
    if not isinstance(item_id, int) or isinstance(item_id, bool) or not -(2**63) <= item_id < 2**63:
        raise EingabeFehler(
            f"{name}: Artikel [{index}] hat keine ganzzahlige item_id (gefunden: {item_id!r:.40}); "
            "nichts eingelesen."
        )
    bilanz.items.add(item_id)
    extraktionen = eintrag.get("extractions")
    if not isinstance(extraktionen, dict):
        raise EingabeFehler(
            f"{name}: Artikel [{index}] (item_id {item_id}) hat kein Objekt „extractions“; nichts eingelesen."
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


def kandidatenzeilen(artikel: list[dict], name: str, bilanz: Einlesebilanz) -> dict[tuple[int, str], tuple]:
    """(item_id, extraktor) -> (text, fehler) für eine Liste von Artikeln (der letzte gilt)."""
    zeilen: dict[tuple[int, str], tuple] = {}
    for index, eintrag in enumerate(artikel):
        for paar, werte in kandidaten(eintrag, index, name, bilanz):
            if paar in zeilen:
                bilanz.doppelt += 1
            zeilen[paar] = werte
    return zeilen


@contextlib.contextmanager
def zweimal_lesbar(datei: str) -> Iterator[str]:
    """Ein Pfad, der sich zweimal lesen lässt: die Datei selbst oder, für stdin,
    eine FIFO oder <(…), eine temporäre Kopie auf der Platte (nicht im Speicher)."""
    if datei != STDIO and Path(datei).is_file():
        yield datei
        return
    try:
        quelle = sys.stdin.buffer if datei == STDIO else open(datei, "rb")  # noqa: SIM115
    except OSError:
        lesen(datei)  # dieselbe Meldung wie sonst (gibt es nicht, nicht lesbar …)
        raise
    with tempfile.NamedTemporaryFile(prefix="aw-einlesen-", suffix=".json") as kopie:
        with quelle if datei != STDIO else contextlib.nullcontext():
            shutil.copyfileobj(quelle, kopie, STUECK)
        kopie.flush()
        yield kopie.name


class Durchgang:
    """Artikel für Artikel über die Datei – oder, wenn der Weg Artikel für Artikel
    scheitert, über die ganz gelesene Liste, damit die Meldung dieselbe ist wie
    im Stapelbetrieb (Zeile, Spalte, Artikel)."""

    def __init__(self, pfad: str, name: str) -> None:
        self.pfad, self.name = pfad, name
        self.liste: list[dict] | None = None

    def artikel(self, melder: DoppelteMelder | None = None, fortschritt=None) -> Iterator[tuple[int, dict]]:
        if self.liste is not None:
            yield from enumerate(self.liste)
            return
        try:
            yield from artikel_einzeln(self.pfad, melder, fortschritt)
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


def vorpruefen(durchgang: Durchgang, sichtbar: bool) -> tuple[Einlesebilanz, dict[tuple[int, str], int]]:
    """Erster Durchgang, noch ohne Datenbank: jede Form prüfen, zählen und für jedes
    (item_id, extraktor) merken, in welchem Artikel es zuletzt steht (der gilt)."""
    groesse = Path(durchgang.pfad).stat().st_size
    while True:
        bilanz = Einlesebilanz()
        letzte: dict[tuple[int, str], int] = {}
        melder = DoppelteMelder()
        try:
            with balken(groesse, "Prüfen", sichtbar=sichtbar) as fortschritt:
                for index, eintrag in durchgang.artikel(melder, fortschritt.update):
                    for paar, _ in kandidaten(eintrag, index, durchgang.name, bilanz):
                        if paar in letzte:
                            bilanz.doppelt += 1
                        letzte[paar] = index
                    bilanz.artikel += 1
        except Unregelmaessig:
            continue  # noch einmal, jetzt über die ganz gelesene Liste (Durchgang.liste)
        if durchgang.liste is None:
            melder.zeigen()  # über die ganze Liste hat parsen() sie schon gezeigt
        return bilanz, letzte


def einlesen(datei: str) -> Einlesebilanz:
    """Kandidaten aus einer Datei im Stapelformat nach extraktionen (Upsert).

    Die ganze Datei geht in einer Transaktion hinein: ein Fehler lässt
    extraktionen unverändert. Unbekannte item_ids werden gemeldet, nicht eingefügt.
    Kandidaten eines genannten Items, die die Datei nicht nennt, werden gelöscht.

    Zwei Durchgänge Artikel für Artikel: der erste prüft die ganze Datei, bevor
    die Datenbank gefragt wird, der zweite schreibt per COPY. Im Speicher liegen
    nie alle Texte zugleich, nur die Schlüssel (item_id, extraktor).
    """
    from stufe import voraussetzungen  # erst hier: stufe.py liest Einlesebilanz aus diesem Modul

    start = time.perf_counter()
    name = anzeigename(datei)
    with zweimal_lesbar(datei) as pfad:
        durchgang = Durchgang(pfad, name)
        sichtbar = Path(pfad).stat().st_size >= BALKEN_AB_BYTES
        bilanz, letzte = vorpruefen(durchgang, sichtbar)
        url = db.datenbank_url()
        with db.fehler_uebersetzen(url), db.verbinden(url, "einlesen") as conn:
            voraussetzungen(conn)
            ids = sorted(bilanz.items)
            bekannt = {i for (i,) in conn.execute(SQL_BEKANNTE_ITEMS, (ids,))}
            bilanz.unbekannte_items = [i for i in ids if i not in bekannt]
            zweiter = Einlesebilanz()  # zählt nur, was der erste Durchgang schon gezählt hat
            with conn.transaction(), conn.cursor() as cur:
                cur.execute(SQL_TEMP_EINLESEN)
                with (
                    cur.copy(SQL_COPY_EINLESEN) as copy,
                    balken(bilanz.artikel, "Einlesen", sichtbar=sichtbar) as fortschritt,
                    gleich_geblieben(name),
                ):
                    for index, eintrag in durchgang.artikel():
                        for (item_id, extraktor), (text, fehler) in kandidaten(eintrag, index, name, zweiter):
                            if item_id in bekannt and letzte[(item_id, extraktor)] == index:
                                copy.write_row((item_id, extraktor, text, fehler))
                                bilanz.zeilen += 1
                        zweiter.artikel += 1
                        fortschritt.update(1)
                    if zweiter.artikel != bilanz.artikel or zweiter.namen != bilanz.namen:
                        raise Unregelmaessig
                cur.execute(SQL_UPSERT_EINLESEN)
                for (ist_neu,) in cur.fetchall():
                    if ist_neu:
                        bilanz.neu += 1
                    else:
                        bilanz.geaendert += 1
                cur.execute(SQL_ENTFERNEN_EINLESEN, (sorted(bekannt),))
                bilanz.entfernt = cur.rowcount
    _einlesen_berichten(bilanz, name, time.perf_counter() - start)
    return bilanz


def _einlesen_berichten(bilanz: Einlesebilanz, name: str, sekunden: float) -> None:
    if bilanz.unbekannte_items:
        zeige = ", ".join(map(str, bilanz.unbekannte_items[:20]))
        mehr = (
            f" und {len(bilanz.unbekannte_items) - 20} weitere" if len(bilanz.unbekannte_items) > 20 else ""
        )
        click.echo(
            f"Warnung: {len(bilanz.unbekannte_items)} item_id(s) aus {name} gibt es nicht in raw_items "
            f"und wurden übergangen: {zeige}{mehr}.",
            err=True,
        )
    if bilanz.ersetzt:
        click.echo(
            f"Hinweis: {bilanz.ersetzt} Werte enthielten NUL-Zeichen oder einzelne Surrogate, die "
            f"PostgreSQL nicht speichert; sie wurden durch U+FFFD ersetzt.",
            err=True,
        )
    if bilanz.doppelt:
        click.echo(
            f"Warnung: {bilanz.doppelt} Kandidaten standen doppelt in {name}; der letzte gilt.", err=True
        )
    fremde = sorted(n for n in bilanz.namen if n not in PRIORITAET)
    if fremde:
        click.echo(
            "Hinweis: unbekannte Extraktornamen werden eingelesen, von der Auswahl aber übergangen: "
            + ", ".join(f"„{n}“{hinweis(n)}" for n in fremde),
            err=True,
        )
    unveraendert = bilanz.zeilen - bilanz.neu - bilanz.geaendert
    dauer = zahl(sekunden, 1)
    click.echo(
        f"eingelesen: {bilanz.artikel} Artikel, {bilanz.zeilen} Kandidaten – neu {bilanz.neu}, "
        f"geändert {bilanz.geaendert}, unverändert {unveraendert}, entfernt {bilanz.entfernt}, "
        f"unbekannte Items {len(bilanz.unbekannte_items)} in {dauer} s"
    )
