"""Testdaten: Items und Kandidaten anlegen, Tabellen lesen, Fingerabdrücke, der Slot der Tests
und die SQL-Konstanten der Stufe."""

from __future__ import annotations

import importlib
import random
from datetime import UTC, datetime, timedelta

import psycopg
from psycopg import sql

from auswahlstufe.server import RAW_ITEMS
from version import CODER_VERSION

SLOT = datetime(2026, 9, 7, 6, 0, tzinfo=UTC)  # 08:00 in Berlin (Sommerzeit)
SLOT_TEXT = "2026-09-07T08:00"  # = SLOT in Berliner Zeit


def raw_items_anlegen(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(RAW_ITEMS)


class Daten:
    """Legt Items und Kandidaten an und liest Tabellen – für Tests."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn = psycopg.connect(url, autocommit=True)

    def item(self, item_id: int, slot: datetime = SLOT, **spalten) -> int:
        spalten = {"id": item_id, "slot": slot, **spalten}
        self.conn.execute(
            sql.SQL("insert into raw_items ({}) values ({})").format(
                sql.SQL(", ").join(map(sql.Identifier, spalten)),
                sql.SQL(", ").join(sql.Placeholder() * len(spalten)),
            ),
            list(spalten.values()),
        )
        return item_id

    def kandidat(self, item_id: int, extraktor: str, text: str | None, fehler: str | None = None) -> None:
        self.conn.execute(
            "insert into extraktionen (item_id, extraktor, text, fehler) values (%s, %s, %s, %s) "
            "on conflict (item_id, extraktor) do update set text = excluded.text, fehler = excluded.fehler",
            (item_id, extraktor, text, fehler),
        )

    def kandidaten(self, item_id: int, texte: dict[str, str | tuple | None]) -> None:
        """``{"trafilatura": "text", "readability": ("text", "Fehler")}``"""
        for name, wert in texte.items():
            text, fehler = wert if isinstance(wert, tuple) else (wert, None)
            self.kandidat(item_id, name, text, fehler)

    def kandidat_loeschen(self, item_id: int, extraktor: str | None = None) -> None:
        if extraktor is None:
            self.conn.execute("delete from extraktionen where item_id = %s", (item_id,))
        else:
            self.conn.execute(
                "delete from extraktionen where item_id = %s and extraktor = %s", (item_id, extraktor)
            )

    def ausfuehren(self, anfrage, params=None) -> int:
        """Eine Anweisung ohne Ergebnis; gibt die Zahl der betroffenen Zeilen zurück."""
        return self.conn.execute(anfrage, params).rowcount

    def abfrage(self, anfrage, params=None) -> list[tuple]:
        return self.conn.execute(anfrage, params).fetchall()

    def kodierungen(self, mit_zeit: bool = False) -> list[tuple]:
        """Alle Zeilen von selected_extractor, sortiert; ohne kodiert_am, wenn nicht verlangt."""
        # pruefsumme fehlt mit Absicht: sie merkt sich die Eingabe der letzten Änderung,
        # nicht das Ergebnis; ändert sich die Eingabe ohne Folgen, bleibt sie stehen.
        spalten = "item_id, coder_version, extraktor, regel, konsens, metriken, text, ergebnissumme"
        if mit_zeit:
            spalten += ", kodiert_am, xmin::text"
        return self.abfrage(f"select {spalten} from selected_extractor order by item_id, coder_version")

    def schliessen(self) -> None:
        self.conn.close()


SATZ = (
    "Der Stadtrat hat am Montag den Haushalt beschlossen und die Sanierung der Schule vertagt. "
    "Die Opposition kritisierte die neuen Schulden scharf. "
)
# Fingerabdruck von allem, was ein Lauf nicht ändern darf: die Eingabetabellen
# Zeile für Zeile (mit extrahiert_am), das Migrationsbuch und die Liste der
# Relationen in public.
SQL_FINGERABDRUCK = """
select
    (select sha256(convert_to(coalesce(string_agg(r::text, '|' order by r.id), ''), 'UTF8')) from raw_items r),
    (select sha256(convert_to(coalesce(string_agg(e::text, '|' order by e.item_id, e.extraktor), ''), 'UTF8'))
     from extraktionen e),
    (select string_agg(name, ',' order by name) from schema_migrationen),
    (select string_agg(relname || ':' || relkind::text, ',' order by relname)
     from pg_class where relnamespace = 'public'::regnamespace)
"""
SQL_COPY_ITEMS = "copy raw_items (id, slot, haus) from stdin"


def basistext(i: int) -> str:
    zufall = random.Random(i)
    return " ".join(f"Absatz {i}.{j}: " + SATZ * zufall.randint(1, 3) for j in range(5))


def kandidaten(n: int, zustand: str) -> list[tuple[int, str, str | None, str | None]]:
    """Die Kandidaten eines Stands: A wie üblich; B ändert jedes dritte Item
    (trafilatura bekommt den ganzen Text: andere Maße, oft eine andere Wahl) und
    nimmt jedem siebten alle Kandidaten (seine Kodierung wird entfernt)."""
    zeilen = []
    for i in range(1, n + 1):
        if zustand == "B" and i % 7 == 0:
            continue
        basis = basistext(i)
        trafilatura = basis if zustand == "B" and i % 3 == 0 else basis[: len(basis) * 2 // 3]
        zeilen += [
            (i, "newspaper4k", "Jetzt abonnieren! " + basis, None),
            (i, "readability", basis, None),
            (i, "trafilatura", trafilatura, "timeout" if i % 11 == 0 else None),
        ]
    return zeilen


def bestand_anlegen(url: str, n: int) -> None:
    """Items 1..n im SLOT."""
    with psycopg.connect(url) as conn, conn.cursor() as cur, cur.copy(SQL_COPY_ITEMS) as copy:
        for i in range(1, n + 1):
            copy.write_row((i, SLOT, "haus"))


def zustand_setzen(url: str, n: int, zustand: str) -> None:
    """extraktionen ganz auf Stand A oder B setzen."""
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.execute("delete from extraktionen")
        with cur.copy("copy extraktionen (item_id, extraktor, text, fehler) from stdin") as copy:
            for zeile in kandidaten(n, zustand):
                copy.write_row(zeile)


def fingerabdruck(url: str) -> tuple:
    with psycopg.connect(url) as conn:
        return conn.execute(SQL_FINGERABDRUCK).fetchone()


def slotsperre(slot: datetime = SLOT, teil: tuple[int, int] | None = None) -> str:
    """Der Name der Sperre eines Slots, wie ein Tick sie nimmt (``betrieb.sperre.slot``)."""
    from auswahlstufe.betrieb import sperre

    return sperre.slot(CODER_VERSION, slot, teil)


# Wie viele Advisory-Sperren halten andere Sitzungen? Nach einem Lauf: keine.
SQL_FREMDE_SPERREN = "select count(*) from pg_locks where locktype = 'advisory' and pid <> pg_backend_pid()"


def zeit(jahr=2026, monat=9, tag=7, stunde=6, minute=0) -> datetime:
    return datetime(jahr, monat, tag, stunde, minute, tzinfo=UTC)


def slot_plus(stunden: int) -> datetime:
    return SLOT + timedelta(hours=stunden)


def sql_konstanten() -> dict[str, str]:
    """Jede benannte SQL-Konstante der Stufe (``SQL_*``, ``BEDINGUNG_*``), wo sie auch steht:
    ``modul.NAME`` → Text, aus allen Modulen des Pakets und den Skripten an der Wurzel."""
    import pkgutil

    import auswahlstufe

    namen = [m.name for m in pkgutil.walk_packages(auswahlstufe.__path__, "auswahlstufe.")]
    gefunden = {}
    for name in [*namen, "check_db", "db"]:
        modul = importlib.import_module(name)
        for konstante, wert in vars(modul).items():
            if konstante.startswith(("SQL_", "BEDINGUNG_")):
                gefunden[f"{name}.{konstante}"] = wert if isinstance(wert, str) else str(wert)
    return gefunden
