"""Items für ein Testhaus: ``raw_items`` füllen, wie Ingest es täte.

**Nur für ein Testhaus** trägt ``.venv/bin/python -m bench.ingest [DATEI.json]`` (im Klon)
die Items einer Datei im Stapelformat in ``raw_items`` ein, unter der Rolle von
Ingest (``DATABASE_URL``; sie besitzt die Tabelle): ``item_id``, ``slot``,
``haus``, ``titel``, ``url`` je Artikel, ohne Datei die Beispiele
(``beispiele/artikel.json``). Fehlt ``raw_items`` (ein Testhaus ohne Schritt 2 der
Einrichtung), legt es die Tabelle an wie Ingest (``auswahlstufe.server.RAW_ITEMS``), mit
Index; steht sie schon, bleibt sie, wie sie ist. Unter einer anderen Rolle als Ingest schreibt
es nichts und nennt Ingest. Ein Artikel ohne ``item_id`` bekommt seine Nummer in der Datei (ab
1, mit ``--erste-id N`` ab N), ohne ``slot`` je 400 Artikel eine Stunde ab 2026-09-01 06:00
Berliner Zeit – so wie der Erzeuger (``auswahlstufe.referenz.erzeugen.slot_zeit``) und
``bench.bestand``. Items, die es schon gibt, bleiben; gibt es eines schon mit anderen Werten,
endet es mit Exit 1 und trägt nichts ein. Die Stufe selbst schreibt ``raw_items`` nie
(docs/betrieb.md#eigene-testdaten-in-ein-frisches-haus).
"""

from __future__ import annotations

import shlex
import sys
from datetime import datetime

import click

import db
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.fehler import EingabeFehler, VoraussetzungFehlt
from auswahlstufe.jsoneingabe import anzeigename, ist_item_id, kein_zeitpunkt, laden, typname, zeitpunkt
from auswahlstufe.referenz.erzeugen import slot_zeit
from auswahlstufe.server import BEISPIEL, RAW_ITEMS, RAW_ITEMS_COPY, SQL_GIBT_ES_RAW_ITEMS

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

SPALTEN = ("haus", "titel", "url")


def item_zeile(eintrag: dict, index: int, name: str, erste: int = 1) -> tuple:
    """(id, slot, haus, titel, url) eines Artikels; ohne item_id seine Nummer in der Datei (ab
    ``erste``), ohne slot ``slot_zeit(index)``. Formfehler brechen mit Ort ab."""
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
        slot = slot_zeit(index)
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
        f"bench.ingest {shlex.join(sys.argv[1:])}".rstrip()
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
    datei = datei or str(BEISPIEL)
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
