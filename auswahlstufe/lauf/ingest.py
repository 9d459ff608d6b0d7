"""Die Tabelle von Ingest, wie diese Stufe sie erwartet: ``raw_items`` – und Items für ein Testhaus.

Sie gehört Ingest, nicht dieser Stufe; die Stufe liest sie nur. Hier steht ihr
Schema an einer Stelle für alle, die eine Datenbank ohne Ingest brauchen: die
Vorführung, eine lokale Datenbank, die Tests und die Benchmarks. Pflicht sind
``id`` (bigint) und ``slot`` (timestamptz); die übrigen Spalten lesen die Sicht
``auswahl_uebersicht`` und die psql-Abfragen der Dokumentation.

**Nur für ein Testhaus** trägt ``python -m auswahlstufe.lauf.ingest [DATEI.json]``
die Items einer Datei im Stapelformat in ``raw_items`` ein, unter der Rolle von
Ingest (``DATABASE_URL``; sie besitzt die Tabelle): ``item_id``, ``slot``,
``haus``, ``titel``, ``url`` je Artikel, ohne Datei die Beispiele
(``beispiele/artikel.json``). Fehlt ``raw_items`` (ein Testhaus ohne Schritt 2 der
Einrichtung), legt es die Tabelle an wie oben, mit Index; steht sie schon, bleibt sie, wie
sie ist. Unter einer anderen Rolle als Ingest schreibt es nichts und nennt Ingest. Ein
Artikel ohne ``item_id`` bekommt seine Nummer in der Datei (ab 1, mit ``--erste-id N`` ab
N), ohne ``slot`` je 400 Artikel eine Stunde ab 2026-09-01 06:00 Berliner Zeit – so wie
``bench.bestand``. Items, die es schon gibt, bleiben; gibt es eines schon mit anderen
Werten, endet es mit Exit 1 und trägt nichts ein. Die Stufe selbst schreibt ``raw_items``
nie (docs/betrieb.md#eigene-testdaten-in-ein-frisches-haus).
"""

from __future__ import annotations

import shlex
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import click

import db
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.fehler import EingabeFehler, VoraussetzungFehlt
from auswahlstufe.jsoneingabe import anzeigename, ist_item_id, kein_zeitpunkt, laden, typname, zeitpunkt

# Wörtlich so in docs/betrieb.md, Einrichtung, Schritt 2 (ein Test vergleicht beide): die Tabelle
# und ihr Index auf slot (ein Slot-Lauf liest sonst die ganze Tabelle); steht sie schon, nichts.
RAW_ITEMS = """\
create table if not exists raw_items (
    id bigint primary key,
    slot timestamptz not null,
    haus text,
    titel text,
    teaser text,
    url text,
    veroeffentlicht_am timestamptz
);
create index if not exists raw_items_slot on raw_items (slot);
"""

RAW_ITEMS_COPY = "copy raw_items (id, slot, haus, titel, url) from stdin"
SQL_GIBT_ES_RAW_ITEMS = "select to_regclass('raw_items') is not null"
# Darf die Rolle raw_items lesen und schreiben – oder, wenn es fehlt, anlegen? Und wer ist Ingest?
SQL_ROLLE_VON_INGEST = """
select current_user, current_database(), to_regclass('raw_items') is not null,
       has_table_privilege(to_regclass('raw_items'), 'SELECT'),
       has_table_privilege(to_regclass('raw_items'), 'INSERT'),
       has_schema_privilege('public', 'CREATE'),
       coalesce((select pg_get_userbyid(relowner) from pg_class where oid = to_regclass('raw_items')),
                (select pg_get_userbyid(datdba) from pg_database where datname = current_database()))
"""
SQL_RAW_ITEMS_DA = "select id, slot, haus, titel, url from raw_items where id = any(%s)"

BEISPIELE = Path(__file__).resolve().parents[2] / "beispiele" / "artikel.json"
# Ein Poll-Slot fasst etwa so viele Items wie im Betrieb (etwa 400 je Slot); ohne slot
# in der Datei bekommt je ITEMS_JE_SLOT Artikel eine Stunde, ab ERSTER_SLOT (auch der Erzeuger).
ITEMS_JE_SLOT = 400
ERSTER_SLOT = datetime(2026, 9, 1, 6, 0, tzinfo=timezone(timedelta(hours=2)))
SPALTEN = ("haus", "titel", "url")


def slot_von(index: int) -> datetime:
    """Poll-Slot des index-ten Artikels ohne eigenen slot: stündlich, je ITEMS_JE_SLOT Artikel."""
    return ERSTER_SLOT + timedelta(hours=index // ITEMS_JE_SLOT)


def item_zeile(eintrag: dict, index: int, name: str, erste: int = 1) -> tuple:
    """(id, slot, haus, titel, url) eines Artikels; ohne item_id seine Nummer in der Datei (ab
    ``erste``), ohne slot slot_von(index). Formfehler brechen mit Ort ab."""
    wo = f"{name}: Artikel [{index}]"
    item_id = eintrag.get("item_id")
    if item_id is None:
        item_id = erste + index
    elif not ist_item_id(item_id):
        raise EingabeFehler(
            f"{wo}: item_id ist keine ganze Zahl (gefunden: {item_id!r:.40}); nichts eingetragen."
        )
    slot = eintrag.get("slot")
    if slot is None:
        slot = slot_von(index)
    elif (slot := zeitpunkt(slot)) is None:
        raise EingabeFehler(kein_zeitpunkt(wo, "slot", eintrag["slot"], "nichts eingetragen"))
    werte = []
    for spalte in SPALTEN:
        wert = eintrag.get(spalte)
        if wert is not None and not isinstance(wert, str):
            raise EingabeFehler(
                f"{wo}: „{spalte}“ ist {typname(wert)}, keine Zeichenkette; nichts eingetragen."
            )
        werte.append(wert)
    return (item_id, slot, *werte)


def item_zeilen(artikel: list[dict], name: str, erste: int = 1) -> list[tuple]:
    """item_zeile je Artikel; steht ein Item mehrmals in der Datei, zählt es einmal – mit anderen
    Werten ist das ein Fehler."""
    zeilen: dict[int, tuple] = {}
    for index, eintrag in enumerate(artikel):
        zeile = item_zeile(eintrag, index, name, erste)
        item_id = zeile[0]
        if zeilen.get(item_id, zeile) != zeile:
            wo = f"{name}: Artikel [{index}]"
            raise EingabeFehler(
                f"{wo}: item_id {item_id} steht schon weiter oben, mit anderen Werten; nichts eingetragen."
            )
        zeilen[item_id] = zeile
    return list(zeilen.values())


def items_eintragen(conn, zeilen: list[tuple]) -> tuple[int, int]:
    """Trägt die Zeilen ein, die fehlen (COPY); gibt (neu, schon da) zurück.

    Gibt es ein Item schon mit anderen Werten, ist das kein Testhaus für diese Datei:
    EingabeFehler, nichts eingetragen.
    """
    da = {zeile[0]: zeile for zeile in conn.execute(SQL_RAW_ITEMS_DA, ([z[0] for z in zeilen],))}
    for zeile in zeilen:
        alt = da.get(zeile[0], zeile)
        for spalte, dort, hier in zip(("slot", *SPALTEN), alt[1:], zeile[1:], strict=True):
            if dort != hier:
                raise EingabeFehler(
                    f"Item {zeile[0]} gibt es in raw_items schon, mit anderem Wert in {spalte} (dort "
                    f"{_zeigen(dort)}, in der Datei {_zeigen(hier)}); nichts eingetragen. Die Items "
                    "der Datei gehören in ein Testhaus; für Artikel ohne item_id wählt --erste-id N "
                    "freie Nummern."
                )
    neu = [zeile for zeile in zeilen if zeile[0] not in da]
    with conn.cursor().copy(RAW_ITEMS_COPY) as copy:
        for zeile in neu:
            copy.write_row(zeile)
    return len(neu), len(zeilen) - len(neu)


def _zeigen(wert: object) -> str:
    if wert is None:
        return "leer"
    if isinstance(wert, datetime):
        return wert.isoformat()
    return f"„{wert:.60}“"


def als_ingest(conn) -> None:
    """Läuft der Helfer unter der Rolle von Ingest? Sonst VoraussetzungFehlt (Exit 4) mit der
    Rolle, die es ist (Eigentümer von raw_items, oder der Datenbank, solange es fehlt), und dem
    Aufruf wie in docs/betrieb.md – bevor irgendetwas geschrieben ist."""
    ich, datenbank, gibt_es, lesen, schreiben, anlegen, ingest = conn.execute(SQL_ROLLE_VON_INGEST).fetchone()
    if (lesen and schreiben) if gibt_es else anlegen:
        return
    wem = (
        f"dem Eigentümer von raw_items ({ingest})" if gibt_es else f"dem Eigentümer der Datenbank ({ingest})"
    )
    if not gibt_es:
        was = "raw_items anzulegen (CREATE im Schema public)"
    elif lesen:
        was = "in raw_items zu schreiben (INSERT; lesen darf sie)"
    elif schreiben:
        was = "raw_items zu lesen (SELECT)"
    else:
        was = "raw_items zu lesen und zu schreiben (SELECT, INSERT)"
    raise VoraussetzungFehlt(
        f"Der Rolle {ich} fehlt das Recht, {was}. Der Helfer trägt Items für Ingest ein und läuft "
        f"als Ingest, {wem}: DATABASE_URL='user={ingest} dbname={datenbank}' .venv/bin/python -m "
        f"auswahlstufe.lauf.ingest {shlex.join(sys.argv[1:])}".rstrip()
        + " (docs/betrieb.md, Eigene Testdaten in ein frisches Haus). Nichts eingetragen."
    )


@click.command(cls=DeutscherBefehl)
@click.argument(
    "datei", metavar="[DATEI.json]", required=False, type=click.Path(allow_dash=True, readable=False)
)
@click.option(
    "--erste-id",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="Artikel ohne item_id bekommen ihre Stelle in der Datei als Nummer, gezählt ab N (der erste "
    "Artikel der Datei N, der zweite N+1 …).",
)
def main(datei: str | None, erste_id: int) -> None:
    """Nur für ein Testhaus: die Items einer Datei im Stapelformat nach raw_items eintragen.

    Als Rolle von Ingest (DATABASE_URL), die raw_items besitzt; ohne DATEI die
    Beispiele (beispiele/artikel.json). Fehlt raw_items, wird es angelegt wie bei
    Ingest. Die Stufe selbst schreibt raw_items nie.
    """
    datei = datei or str(BEISPIELE)
    name = anzeigename(datei)
    artikel, _ = laden(datei)
    zeilen = item_zeilen(artikel, name, erste_id)
    url = db.datenbank_url()
    with db.fehler_uebersetzen(url), db.verbinden(url, "testhaus") as conn:
        als_ingest(conn)
        if not conn.execute(SQL_GIBT_ES_RAW_ITEMS).fetchone()[0]:
            conn.execute(RAW_ITEMS)
            click.echo("raw_items angelegt, mit Index auf slot (wie Schritt 2 der Einrichtung).")
        neu, da = items_eintragen(conn, zeilen)
    click.echo(f"raw_items: {len(zeilen)} Items aus {name} – neu {neu}, schon da {da}")


if __name__ == "__main__":
    main()
