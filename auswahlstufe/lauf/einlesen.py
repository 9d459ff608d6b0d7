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

Artikel mit ``html`` (Zeichenkette, wahlweise ``url`` und ``geholt_am``) gehen
in die Tabelle ``seiten`` (aw-006) – für Tests und Vorführungen, sonst füllt sie
der Abholer. Ein Artikel darf ``extractions``, ``html`` oder beides tragen; ein
Artikel nur mit ``html`` lässt die Kandidaten seines Items unberührt. Das HTML
wird als UTF-8 gespeichert, mit ``content_type`` „text/html; charset=utf-8“,
damit die Zeichensatzregel (zeichensatz.dekodieren) es so liest, wie es in der
Datei stand – auch wenn das Dokument selbst etwas anderes deklariert.
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
from datetime import datetime
from pathlib import Path

import click

import db
from auswahlstufe.anzeige import hinweis, zahl
from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.fortschritt import BALKEN_AB_BYTES, MB, fortschritt
from auswahlstufe.jsoneingabe import (
    STDIO,
    STUECK,
    DoppelteMelder,
    Unregelmaessig,
    anzeigename,
    artikel_einzeln,
    dekodieren,
    lesen,
    parsen,
    typname,
)
from auswahlstufe.lauf import migrationen
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
# Die Seiten der Datei (Artikel mit html); eine Zeile je Item, die letzte gilt.
SQL_TEMP_SEITEN = """
create temp table aw_seiten (
    item_id bigint primary key,
    html bytea not null,
    url text,
    content_type text,
    geholt_am timestamptz
) on commit drop
"""
SQL_COPY_SEITEN = "copy aw_seiten (item_id, html, url, content_type, geholt_am) from stdin"
# Geänderte Seiten überschreiben; ohne geholt_am in der Datei gilt „jetzt“, aber
# nur, wenn sich sonst etwas ändert – gleiche Seiten bleiben unberührt.
SQL_SEITEN_AENDERN = """
update seiten s
set html = a.html, url = a.url, content_type = a.content_type, geholt_am = coalesce(a.geholt_am, now())
from aw_seiten a
where s.item_id = a.item_id
  and (s.html_sha256 <> sha256(a.html)
       or (s.url, s.content_type) is distinct from (a.url, a.content_type)
       or (a.geholt_am is not null and a.geholt_am <> s.geholt_am))
"""
SQL_SEITEN_NEU = """
insert into seiten (item_id, html, url, content_type, geholt_am)
select a.item_id, a.html, a.url, a.content_type, coalesce(a.geholt_am, now())
from aw_seiten a
where not exists (select 1 from seiten s where s.item_id = a.item_id)
"""
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
    if geholt_am is not None:
        try:
            geholt_am = datetime.fromisoformat(geholt_am) if isinstance(geholt_am, str) else None
        except ValueError:
            geholt_am = None
        if geholt_am is None or geholt_am.tzinfo is None:
            raise EingabeFehler(
                f"{wo}: „geholt_am“ ist kein Zeitpunkt mit Zeitzone (gefunden: {eintrag['geholt_am']!r:.40}; "
                "erwartet etwa „2026-12-01T08:00:00+01:00“); nichts eingelesen."
            )
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


def seiten_schreiben(cur, durchgang: Durchgang, bilanz: Einlesebilanz, bekannt: set[int]) -> None:
    """Ein eigener Durchgang nur für die Seiten (eine Verbindung kann nur ein COPY zugleich):
    so liegt auch hier nie mehr als ein Artikel im Speicher."""
    dritter = Einlesebilanz()
    with cur.copy(SQL_COPY_SEITEN) as copy, gleich_geblieben(durchgang.name):
        for index, eintrag in durchgang.artikel():
            for _ in kandidaten(eintrag, index, durchgang.name, dritter):
                pass  # prüft die item_id, wie im ersten Durchgang
            zeile = seite(eintrag, index, durchgang.name, dritter)
            if zeile is not None and zeile[0] in bekannt and bilanz.letzte_seite[zeile[0]] == index:
                copy.write_row(zeile)
                bilanz.seiten_geschrieben += 1
        if dritter.seiten != bilanz.seiten or dritter.namen != bilanz.namen:
            raise Unregelmaessig


def einlesen(datei: str) -> Einlesebilanz:
    """Kandidaten aus einer Datei im Stapelformat nach extraktionen (Upsert).

    Die ganze Datei geht in einer Transaktion hinein: ein Fehler lässt
    extraktionen unverändert. Unbekannte item_ids werden gemeldet, nicht eingefügt.
    Kandidaten eines genannten Items, die die Datei nicht nennt, werden gelöscht.

    Zwei Durchgänge Artikel für Artikel: der erste prüft die ganze Datei, bevor
    die Datenbank gefragt wird, der zweite schreibt per COPY. Im Speicher liegen
    nie alle Texte zugleich, nur die Schlüssel (item_id, extraktor).
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
            bekannt = {i for (i,) in conn.execute(SQL_BEKANNTE_ITEMS, (ids,))}
            bilanz.unbekannte_items = [i for i in ids if i not in bekannt]
            zweiter = Einlesebilanz()  # zählt nur, was der erste Durchgang schon gezählt hat
            with conn.transaction(), conn.cursor() as cur:
                cur.execute(SQL_TEMP_EINLESEN)
                cur.execute(SQL_TEMP_SEITEN)
                with (
                    cur.copy(SQL_COPY_EINLESEN) as copy,
                    fortschritt(bilanz.artikel, "Einlesen", einheit="Artikel", balken=balken) as weiter,
                    gleich_geblieben(name),
                ):
                    for index, eintrag in durchgang.artikel():
                        for (item_id, extraktor), (text, fehler) in kandidaten(eintrag, index, name, zweiter):
                            if item_id in bekannt and letzte[(item_id, extraktor)] == index:
                                copy.write_row((item_id, extraktor, text, fehler))
                                bilanz.zeilen += 1
                        zweiter.artikel += 1
                        weiter(1)
                    if zweiter.artikel != bilanz.artikel or zweiter.namen != bilanz.namen:
                        raise Unregelmaessig
                if bilanz.seiten:
                    seiten_schreiben(cur, durchgang, bilanz, bekannt)
                    cur.execute(SQL_SEITEN_AENDERN)
                    bilanz.seiten_geaendert = cur.rowcount
                    cur.execute(SQL_SEITEN_NEU)
                    bilanz.seiten_neu = cur.rowcount
                cur.execute(SQL_UPSERT_EINLESEN)
                for (ist_neu,) in cur.fetchall():
                    if ist_neu:
                        bilanz.neu += 1
                    else:
                        bilanz.geaendert += 1
                cur.execute(SQL_ENTFERNEN_EINLESEN, (sorted(bekannt & bilanz.items),))
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
    if bilanz.seiten:
        unveraendert = bilanz.seiten_geschrieben - bilanz.seiten_neu - bilanz.seiten_geaendert
        click.echo(
            f"Seiten: {bilanz.seiten_geschrieben} – neu {bilanz.seiten_neu}, geändert "
            f"{bilanz.seiten_geaendert}, unverändert {unveraendert}"
        )
