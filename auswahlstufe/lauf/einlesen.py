"""--einlesen: Kandidaten aus einer Datei im Stapelformat nach ``extraktionen``.

Eine eigene Betriebsart neben den Läufen der Stufe (stufe.py): sie schreibt
nicht ``selected_extractor``, sondern die Eingabe der Stufe. Die Datei wird
wie im Stapelbetrieb gelesen (jsoneingabe.py); jeder Artikel trägt eine
ganzzahlige ``item_id`` aus ``raw_items``.

Die ganze Datei geht in einer Transaktion hinein: ein Fehler lässt
``extraktionen`` und ``seiten`` unverändert. Darin geht sie in Stücken hinein –
je Stück ein Upsert, die Zeilen als Arrays (Stuecke) –, damit keine einzelne
Anweisung lange dauert: das ``statement_timeout`` gilt hängenden Anweisungen,
nicht der Größe der Datei (Issue 19.10). Eine temporäre Tabelle braucht es dafür
nicht mehr.
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

``--einlesen ORDNER`` lädt einen Ordner mit ``.html``- und ``.html.gz``-Seiten
nach ``seiten`` (ordner_einlesen): der Dateiname sagt das Item – ``<item_id>.html``
oder ``<SHA-256 der URL>.html`` (64 Hexziffern, wie im article-extraction-benchmark);
die Bytes bleiben, wie sie in der Datei stehen. Gelesen wird der Ordner mit dem
Code des Stapels der Extraktion (``extraktion/stapel.py``), den ``cli`` hereinreicht.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click

import db
from auswahlstufe.anzeige import hinweis, zahl
from auswahlstufe.betrieb import migrationen
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
    ist_item_id,
    kein_zeitpunkt,
    lesen,
    parsen,
    typname,
    zeitpunkt,
)
from version import PRIORITAET

# Stücke (Issue 19.10): ein Stück endet nach so vielen Zeilen oder so vielen Zeichen (Texte,
# Fehler, HTML), was zuerst kommt; je Stück ein Upsert. Seine Zeilen gehen als Arrays mit der
# Anweisung hinaus (unnest), binär (%(…)b: kein Array-Literal, das der Server zerlegen müsste):
# die Anweisung beginnt erst, wenn das Stück gelesen ist, und dauert nur, was der Server tut –
# auf zwei voll belegten Kernen unter 1 s (docs/kommandozeile.md#gemessen).
STUECK_ZEILEN = 1000
STUECK_ZEICHEN = 2**20
# So viele item_ids höchstens in einer Abfrage (welche gibt es?) und einem Löschen.
STUECK_ITEMS = 5000

# Welche der genannten Items gibt es in raw_items (und mit welcher URL)?
SQL_BEKANNTE_ITEMS = "select id, url from raw_items where id = any(%s)"
# Seiten eines Ordners, die nach der SHA-256 ihrer URL heißen: die Items dazu. Liest
# raw_items einmal ganz (einen Index auf die Prüfsumme der URL gibt es nicht).
SQL_ITEMS_NACH_URL = """
select id, url, encode(sha256(convert_to(url, 'UTF8')), 'hex')
from raw_items
where url is not null and encode(sha256(convert_to(url, 'UTF8')), 'hex') = any(%s)
"""
# Die Kandidaten eines Stücks eintragen; gleiche Zeilen bleiben unberührt (extrahiert_am
# bleibt). Neu oder geändert sagt der Vergleich mit dem Stand zu Beginn der Anweisung
# (bisher), nicht xmax – wie schreiben.SQL_UPSERT.
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
# Die Seiten eines Stücks (Artikel mit html oder Dateien eines Ordners): ein Upsert, kein
# „ändern, dann fehlende einfügen“ – der Abholer schreibt seiten zur selben Zeit. Gleiche
# Seiten bleiben unberührt; ohne geholt_am in der Datei gilt für neue oder geänderte Seiten
# „jetzt“, für gleiche das alte geholt_am. Neu heißt: zu Beginn der Anweisung gab es die
# Seite nicht (bisher). Schrieb der Abholer sie erst danach, überschreibt der Upsert seine
# Zeile und zählt sie als neu.
SPALTEN_SEITEN = ("item_ids", "html", "urls", "content_types", "geholt_am")
SQL_UPSERT_SEITEN = """
with stueck as (
    select * from unnest(%(item_ids)b::bigint[], %(html)b::bytea[], %(urls)b::text[],
                         %(content_types)b::text[], %(geholt_am)b::timestamptz[])
        as s(item_id, html, url, content_type, geholt_am)
), bisher as materialized (
    select s.item_id, s.html_sha256, s.url, s.content_type, s.geholt_am
    from seiten s join stueck a using (item_id)
)
insert into seiten as s (item_id, html, url, content_type, geholt_am)
select a.item_id, a.html, a.url, a.content_type,
       coalesce(
           a.geholt_am,
           (select b.geholt_am from bisher b
            where b.item_id = a.item_id
              and (b.html_sha256, b.url, b.content_type)
                  is not distinct from (sha256(a.html), a.url, a.content_type)),
           now())
from stueck a
on conflict (item_id) do update set
    html = excluded.html, url = excluded.url, content_type = excluded.content_type,
    geholt_am = excluded.geholt_am
where (s.html_sha256, s.url, s.content_type, s.geholt_am)
      is distinct from (sha256(excluded.html), excluded.url, excluded.content_type, excluded.geholt_am)
returning not exists (select 1 from bisher b where b.item_id = s.item_id)
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


class Stuecke:
    """Zeilen sammeln und Stück für Stück upserten; zählt neu und geändert.

    Ein Stück endet nach STUECK_ZEILEN Zeilen oder STUECK_ZEICHEN Zeichen; seine Zeilen gehen
    spaltenweise als Arrays in eine Anweisung (``spalten`` sind die Namen ihrer Parameter).
    So ist jede Anweisung kurz, und das Lesen der Datei zählt zu keiner. Die Transaktion darum
    hält der Aufrufer; ``schreiben()`` am Ende schreibt den Rest.
    """

    def __init__(self, cur, upsert: str, spalten: tuple[str, ...]) -> None:
        self.cur, self.upsert, self.spalten = cur, upsert, spalten
        self.zeilen: list[tuple] = []
        self.zeichen = self.neu = self.geaendert = 0

    def dazu(self, zeile: tuple, zeichen: int) -> None:
        self.zeilen.append(zeile)
        self.zeichen += zeichen
        if len(self.zeilen) >= STUECK_ZEILEN or self.zeichen >= STUECK_ZEICHEN:
            self.schreiben()

    def schreiben(self) -> None:
        if not self.zeilen:
            return
        spalten = zip(*self.zeilen, strict=True)
        self.cur.execute(self.upsert, dict(zip(self.spalten, map(list, spalten), strict=True)))
        for (ist_neu,) in self.cur.fetchall():
            self.neu += ist_neu
            self.geaendert += not ist_neu
        self.zeilen, self.zeichen = [], 0


def teile(werte: list, groesse: int) -> Iterator[list]:
    for anfang in range(0, len(werte), groesse):
        yield werte[anfang : anfang + groesse]


def bekannte_items(conn, ids: list[int]) -> dict[int, str | None]:
    """item_id -> url für die ids, die es in raw_items gibt (je Abfrage STUECK_ITEMS ids)."""
    bekannt: dict[int, str | None] = {}
    for teil in teile(ids, STUECK_ITEMS):
        bekannt.update(conn.execute(SQL_BEKANNTE_ITEMS, (teil,)).fetchall())
    return bekannt


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
    for teil in teile(sorted(bilanz.items & bekannt.keys()), STUECK_ITEMS):
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
    _einlesen_berichten(bilanz, name, time.perf_counter() - start)
    return bilanz


# --- Ein Ordner mit Seiten ---------------------------------------------------------------

# Wie der Name einer Seite ihr Item sagt: die item_id selbst oder die SHA-256 der URL
# (UTF-8, hex; so heißen die Seiten des article-extraction-benchmark).
NAME_ITEM_ID = re.compile(r"-?[0-9]{1,19}")
NAME_URL_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def ordner_einlesen(
    ordner: str, dateien: list[tuple[str, Path]], lesen: Callable[[Path], bytes]
) -> Einlesebilanz:
    """Die Seiten eines Ordners nach ``seiten``, in einer Transaktion und in Stücken.

    ``dateien`` (Name ohne Endung, Pfad) und ``lesen`` (die Bytes einer Datei, ``.gz``
    entpackt) sind die des Stapels der Extraktion; ``cli`` reicht sie herein, damit ein
    Ordner überall gleich gelesen wird. Der Name sagt das Item: ``<item_id>`` oder
    ``<SHA-256 der URL>`` (dann jedes Item mit dieser URL). Die Bytes bleiben, wie sie in
    der Datei stehen; ``content_type`` bleibt leer, die URL kommt aus ``raw_items``.
    """
    start = time.perf_counter()
    nach_id: dict[int, Path] = {}
    nach_url: dict[str, Path] = {}
    for seiten_name, pfad in dateien:
        if NAME_URL_SHA256.fullmatch(seiten_name):
            ziel, schluessel = nach_url, seiten_name.lower()
        elif NAME_ITEM_ID.fullmatch(seiten_name) and ist_item_id(int(seiten_name)):
            ziel, schluessel = nach_id, int(seiten_name)
        else:
            raise EingabeFehler(
                f"{pfad}: der Name sagt nicht, zu welchem Item die Seite gehört – erwartet wird "
                "<item_id>.html oder <SHA-256 der URL>.html (64 Hexziffern), auch mit .gz; nichts eingelesen."
            )
        if schluessel in ziel:
            raise EingabeFehler(
                f"{ordner}: {ziel[schluessel].name} und {pfad.name} meinen dasselbe Item; nichts eingelesen."
            )
        ziel[schluessel] = pfad
    bilanz = Einlesebilanz(artikel=len(dateien), seiten=len(dateien))
    url = db.datenbank_url()
    with db.fehler_uebersetzen(url), db.verbinden(url, "einlesen") as conn:
        migrationen.voraussetzungen(conn)
        items: dict[Path, list[tuple[int, str | None]]] = {}
        for item_id, item_url in bekannte_items(conn, sorted(nach_id)).items():
            items[nach_id[item_id]] = [(item_id, item_url)]
        if nach_url:
            for item_id, item_url, pruefsumme in conn.execute(SQL_ITEMS_NACH_URL, (sorted(nach_url),)):
                items.setdefault(nach_url[pruefsumme], []).append((item_id, item_url))
        wessen: dict[int, Path] = {}
        for pfad, liste in items.items():
            for item_id, _ in liste:
                if item_id in wessen:
                    raise EingabeFehler(
                        f"{ordner}: {wessen[item_id].name} und {pfad.name} gehören beide zu Item {item_id}; "
                        "nichts eingelesen."
                    )
                wessen[item_id] = pfad
        bilanz.unbekannte_dateien = [pfad.name for _, pfad in dateien if pfad not in items]
        with (
            conn.transaction(),
            conn.cursor() as cur,
            fortschritt(len(dateien), "Einlesen", einheit="Seiten") as weiter,
        ):
            stuecke = Stuecke(cur, SQL_UPSERT_SEITEN, SPALTEN_SEITEN)
            for _, pfad in dateien:  # jede Datei erst, wenn sie an der Reihe ist
                if pfad in items:
                    html = lesen(pfad)
                    for item_id, item_url in items[pfad]:
                        stuecke.dazu((item_id, html, item_url, None, None), len(html))
                        bilanz.seiten_geschrieben += 1
                weiter(1)
            stuecke.schreiben()
            bilanz.seiten_neu, bilanz.seiten_geaendert = stuecke.neu, stuecke.geaendert
    _ordner_berichten(bilanz, ordner, time.perf_counter() - start)
    return bilanz


def _aufzaehlen(werte: list, hoechstens: int = 20) -> str:
    mehr = f" und {len(werte) - hoechstens} weitere" if len(werte) > hoechstens else ""
    return ", ".join(map(str, werte[:hoechstens])) + mehr


def _einlesen_berichten(bilanz: Einlesebilanz, name: str, sekunden: float) -> None:
    if bilanz.unbekannte_items:
        click.echo(
            f"Warnung: {len(bilanz.unbekannte_items)} item_id(s) aus {name} gibt es nicht in raw_items "
            f"und wurden übergangen: {_aufzaehlen(bilanz.unbekannte_items)}.",
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
    click.echo(
        f"eingelesen: {bilanz.artikel} Artikel, {bilanz.zeilen} Kandidaten – neu {bilanz.neu}, "
        f"geändert {bilanz.geaendert}, unverändert {unveraendert}, entfernt {bilanz.entfernt}, "
        f"unbekannte Items {len(bilanz.unbekannte_items)} in {zahl(sekunden, 1)} s"
    )
    if bilanz.seiten:
        _seiten_berichten(bilanz)


def _ordner_berichten(bilanz: Einlesebilanz, ordner: str, sekunden: float) -> None:
    if bilanz.unbekannte_dateien:
        click.echo(
            f"Warnung: {len(bilanz.unbekannte_dateien)} Seite(n) aus {ordner} gehören zu keinem Item in "
            f"raw_items und wurden übergangen: {_aufzaehlen(bilanz.unbekannte_dateien)}.",
            err=True,
        )
    click.echo(
        f"eingelesen: {bilanz.artikel} Dateien aus {ordner}, ohne Item {len(bilanz.unbekannte_dateien)} "
        f"in {zahl(sekunden, 1)} s"
    )
    _seiten_berichten(bilanz)


def _seiten_berichten(bilanz: Einlesebilanz) -> None:
    unveraendert = bilanz.seiten_geschrieben - bilanz.seiten_neu - bilanz.seiten_geaendert
    click.echo(
        f"Seiten: {bilanz.seiten_geschrieben} – neu {bilanz.seiten_neu}, geändert "
        f"{bilanz.seiten_geaendert}, unverändert {unveraendert}"
    )
