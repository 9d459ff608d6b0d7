"""Die Tabelle von Ingest, wie diese Stufe sie erwartet: ``raw_items``.

Sie gehört Ingest, nicht dieser Stufe; die Stufe liest sie nur. Hier steht ihr
Schema an einer Stelle für alle, die eine Datenbank ohne Ingest brauchen: die
Vorführung, eine lokale Datenbank, die Tests und die Benchmarks. Pflicht sind
``id`` (bigint) und ``slot`` (timestamptz); die übrigen Spalten lesen die Sicht
``auswahl_uebersicht`` und die psql-Abfragen der Dokumentation.
"""

RAW_ITEMS = """
create table raw_items (
    id bigint primary key,
    slot timestamptz not null,
    haus text,
    titel text,
    teaser text,
    url text,
    veroeffentlicht_am timestamptz
)
"""

RAW_ITEMS_EINFUEGEN = "insert into raw_items (id, slot, haus, titel, url) values (%s, %s, %s, %s, %s)"
RAW_ITEMS_COPY = "copy raw_items (id, slot, haus, titel, url) from stdin"
