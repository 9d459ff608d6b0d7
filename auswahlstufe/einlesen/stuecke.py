"""Zeilen Stück für Stück in die Datenbank: je Stück ein kurzer Upsert, alle in einer Transaktion.

Das ``statement_timeout`` gilt hängenden Anweisungen, nicht der Größe einer Datei: darum
trägt keine Anweisung mehr als ein Stück (docs/kommandozeile.md, „In Stücken, alles oder
nichts“). Die Transaktion darum hält der Aufrufer (``datei``, ``ordner``); ein Fehler in
irgendeinem Stück lässt ``extraktionen`` und ``seiten`` unverändert.
"""

from __future__ import annotations

from collections.abc import Iterator

# Ein Stück endet nach so vielen Zeilen oder so vielen Zeichen (Texte, Fehler, HTML), was zuerst
# kommt; seine Zeilen gehen binär als Arrays mit der Anweisung hinaus (``%(…)b``, ``unnest``).
STUECK_ZEILEN = 1000
STUECK_ZEICHEN = 2**20
# So viele item_ids höchstens in einer Abfrage (welche gibt es?) und einem Löschen.
STUECK_ITEMS = 5000

# Welche der genannten Items gibt es in raw_items (und mit welcher URL)?
SQL_BEKANNTE_ITEMS = "select id, url from raw_items where id = any(%s)"
# Die Seiten eines Stücks: ein Upsert, weil der Abholer seiten zur selben Zeit schreibt (was
# gleich bleibt und wann geholt_am „jetzt“ ist: docs/extraktion.md, „Seiten mit --einlesen“). Neu
# heißt: zu Beginn der Anweisung gab es die Seite nicht (bisher).
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


class Stuecke:
    """Zeilen sammeln und Stück für Stück upserten, spaltenweise als Arrays (``spalten``: die Namen
    der Parameter); zählt neu und geändert. ``schreiben()`` am Ende schreibt den Rest."""

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


def teile(werte: list) -> Iterator[list]:
    """``werte`` in Teilen von höchstens STUECK_ITEMS."""
    for anfang in range(0, len(werte), STUECK_ITEMS):
        yield werte[anfang : anfang + STUECK_ITEMS]


def bekannte_items(conn, ids: list[int]) -> dict[int, str | None]:
    """item_id -> url für die ids, die es in raw_items gibt (je Abfrage STUECK_ITEMS ids)."""
    bekannt: dict[int, str | None] = {}
    for teil in teile(ids):
        bekannt.update(conn.execute(SQL_BEKANNTE_ITEMS, (teil,)).fetchall())
    return bekannt
