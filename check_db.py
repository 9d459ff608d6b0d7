"""Rauchtest der Datenbank und Migrationen.

    python check_db.py              Anmeldung, Voraussetzungen, Bestand
    python check_db.py --migrieren  fehlende Migrationen der Reihe nach anwenden

Exit-Codes wie auswahl.py: 0 alles da, 3 Datenbank nicht erreichbar,
4 Voraussetzung fehlt (die Liste steht auf stdout).

Die Migrationen sind reines SQL mit eigenem ``begin … commit``; sie laufen
genauso mit ``psql -v ON_ERROR_STOP=1 -f``. Von Python aus geht jede Datei
als ein Stück über das einfache Abfrageprotokoll (psycopg nimmt es, wenn
keine Parameter übergeben werden), auf einer Verbindung im Autocommit-Modus,
damit das ``begin``/``commit`` der Datei gilt.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import psycopg
from psycopg import errors, sql

import db
from fehler import DeutscherBefehl, EingabeFehler, VoraussetzungFehlt
from version import CODER_VERSION, PRIORITAET

MIGRATIONEN = Path(__file__).resolve().parent / "migrations"
# Unsere Migrationen tragen das Präfix aw-, drei Ziffern und einen Namen.
DATEINAME = re.compile(r"^aw-\d{3}-[a-z0-9-]+\.sql$")

# Spalten von raw_items, die die Stufe liest (Pflicht) und die die Sicht zeigt.
RAW_ITEMS_PFLICHT = {"id": "bigint", "slot": "timestamp with time zone"}
RAW_ITEMS_SICHT = ("haus", "titel", "url", "veroeffentlicht_am")

# Rechte, die ein Lauf braucht: Tabelle -> Rechte.
RECHTE = {
    "raw_items": ("SELECT",),
    "extraktionen": ("SELECT",),
    "selected_extractor": ("SELECT", "INSERT", "UPDATE", "DELETE"),
}
# Zusätzlich für --einlesen.
RECHTE_EINLESEN = {"extraktionen": ("INSERT", "UPDATE")}

# Schon angewandte Migrationen; leer, solange das Buch fehlt.
SQL_ANGEWANDT = "select name from schema_migrationen order by name"
# Gibt es eine Tabelle (oder Sicht) im Suchpfad?
SQL_GIBT_ES = "select to_regclass(%s) is not null"
# Spalten und Typen von raw_items.
SQL_SPALTEN = """
select a.attname, format_type(a.atttypid, a.atttypmod)
from pg_attribute a
where a.attrelid = to_regclass('raw_items') and a.attnum > 0 and not a.attisdropped
"""
# Hat raw_items einen Index, dessen erste Spalte slot ist? (Nur ein Hinweis.)
SQL_SLOT_INDEX = """
select exists (
    select 1 from pg_index i
    join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
    where i.indrelid = to_regclass('raw_items') and a.attname = 'slot'
)
"""
# Anmeldung: wer, wo, welche Version.
SQL_ANMELDUNG = "select current_user, current_database(), current_setting('server_version')"
# Darf die Rolle temporäre Tabellen anlegen? (Die Stufe schreibt über eine.)
SQL_TEMP = "select has_database_privilege(current_database(), 'TEMP')"
# Bestand.
SQL_ITEMS = "select count(*) from raw_items"
SQL_ITEMS_MIT_KANDIDATEN = "select count(distinct item_id) from extraktionen"
SQL_JE_EXTRAKTOR = "select extraktor, count(*) from extraktionen group by extraktor order by extraktor"
SQL_JE_VERSION = (
    "select coder_version, count(*) from selected_extractor group by coder_version order by coder_version"
)
# Items mit Kandidaten, aber ohne Kodierung der aktuellen Version.
SQL_NICHT_KODIERT = """
select count(*) from (select distinct item_id from extraktionen) e
where not exists (
    select 1 from selected_extractor s where s.item_id = e.item_id and s.coder_version = %s
)
"""


# --- Migrationen ----------------------------------------------------------------


def migrationsdateien() -> list[Path]:
    """Unsere Migrationen in Anwendungsreihenfolge (= Dateinamen)."""
    return sorted(p for p in MIGRATIONEN.glob("aw-*.sql"))


def angewandt(conn: psycopg.Connection) -> set[str]:
    if not conn.execute(SQL_GIBT_ES, ("schema_migrationen",)).fetchone()[0]:
        return set()
    return {name for (name,) in conn.execute(SQL_ANGEWANDT)}


def anwenden(conn: psycopg.Connection, datei: Path) -> None:
    """Eine Migrationsdatei als Ganzes; ``conn`` muss im Autocommit-Modus sein.

    Scheitert eine Anweisung, ist die Transaktion der Datei verloren und wird
    zurückgerollt: nichts halb angewandt, auch kein Eintrag im Buch.
    """
    text = datei.read_text(encoding="utf-8")
    try:
        conn.execute(text.encode())  # Bytes ohne Parameter: einfaches Protokoll, mehrere Anweisungen
    except psycopg.Error as fehler:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("rollback")
        if isinstance(fehler, errors.DuplicateObject) and "schon angewandt" in str(fehler):
            raise EingabeFehler(f"{datei.name}: Migration ist schon angewandt; nichts geändert.") from None
        if isinstance(fehler, errors.UndefinedTable) and "raw_items" in str(fehler):
            raise VoraussetzungFehlt(
                f"{datei.name}: raw_items fehlt – die Tabelle gehört Ingest und muss vorher da sein."
            ) from None
        raise db.DatenbankFehler(
            f"{datei.name}: {db.ohne_passwort(str(fehler), None).strip()} – nichts angewandt."
        ) from None


def migrieren(url: str, *, ausgabe=print) -> list[str]:
    """Wendet die fehlenden Migrationen der Reihe nach an; gibt ihre Namen zurück."""
    with db.verbinden(url, "migrieren", autocommit=True) as conn, db.fehler_uebersetzen(url):
        schon = angewandt(conn)
        neu = []
        for datei in migrationsdateien():
            if datei.stem in schon:
                continue
            anwenden(conn, datei)
            ausgabe(f"angewandt: {datei.name}")
            neu.append(datei.stem)
        if not neu:
            ausgabe("Alle Migrationen sind schon angewandt.")
        return neu


# --- Rauchtest -------------------------------------------------------------------


def fehlende_voraussetzungen(conn: psycopg.Connection) -> tuple[list[str], list[str]]:
    """(fehlt, hinweise): was ein Lauf braucht und nicht hat; was nur bremst."""
    fehlt: list[str] = []
    hinweise: list[str] = []
    spalten = dict(conn.execute(SQL_SPALTEN).fetchall())
    if not spalten:
        fehlt.append("Tabelle raw_items (gehört Ingest)")
    else:
        for name, typ in RAW_ITEMS_PFLICHT.items():
            if name not in spalten:
                fehlt.append(f"Spalte raw_items.{name} ({typ})")
            elif spalten[name] != typ:
                fehlt.append(f"Spalte raw_items.{name} hat Typ {spalten[name]}, erwartet {typ}")
        fehlende_sicht = [s for s in RAW_ITEMS_SICHT if s not in spalten]
        if fehlende_sicht:
            hinweise.append(
                "raw_items ohne " + ", ".join(fehlende_sicht) + " – die Sicht auswahl_uebersicht braucht sie"
            )
        if not conn.execute(SQL_SLOT_INDEX).fetchone()[0]:
            hinweise.append(
                "raw_items hat keinen Index auf slot – ein Slot-Lauf liest dann die ganze Tabelle"
            )
    schon = angewandt(conn)
    for datei in migrationsdateien():
        if datei.stem not in schon:
            fehlt.append(f"Migration {datei.name} (python check_db.py --migrieren)")
    for tabelle, rechte in (RECHTE | RECHTE_EINLESEN).items():
        if not conn.execute(SQL_GIBT_ES, (tabelle,)).fetchone()[0]:
            continue  # schon als fehlende Tabelle oder Migration gemeldet
        for recht in rechte:
            abfrage = sql.SQL("select has_table_privilege({}, {})").format(
                sql.Literal(tabelle), sql.Literal(recht)
            )
            if not conn.execute(abfrage).fetchone()[0]:
                ziel = hinweise if tabelle in RECHTE_EINLESEN and recht in RECHTE_EINLESEN[tabelle] else fehlt
                ziel.append(
                    f"Recht {recht} auf {tabelle}" + (" (nur für --einlesen)" if ziel is hinweise else "")
                )
    if not conn.execute(SQL_TEMP).fetchone()[0]:
        fehlt.append("Recht TEMP auf die Datenbank (die Stufe schreibt über eine temporäre Tabelle)")
    return fehlt, hinweise


def bestand(conn: psycopg.Connection) -> list[str]:
    """Zeilen über den Bestand; nur aufrufen, wenn die Tabellen da sind."""
    zeilen = [
        f"Items: {conn.execute(SQL_ITEMS).fetchone()[0]}",
        f"Items mit Kandidaten: {conn.execute(SQL_ITEMS_MIT_KANDIDATEN).fetchone()[0]}",
    ]
    je_extraktor = conn.execute(SQL_JE_EXTRAKTOR).fetchall()
    zeilen.append("Kandidaten je Extraktor: " + (", ".join(f"{n} {z}" for n, z in je_extraktor) or "keine"))
    unbekannt = [n for n, _ in je_extraktor if n not in PRIORITAET]
    if unbekannt:
        zeilen.append("  unbekannte Extraktoren (werden übergangen): " + ", ".join(unbekannt))
    je_version = conn.execute(SQL_JE_VERSION).fetchall()
    zeilen.append("Kodierungen je coder_version:" + ("" if je_version else " keine"))
    zeilen += [f"  {v}: {z}" + ("  (aktuell)" if v == CODER_VERSION else "") for v, z in je_version]
    offen = conn.execute(SQL_NICHT_KODIERT, (CODER_VERSION,)).fetchone()[0]
    zeilen.append(f"Noch nicht kodiert mit {CODER_VERSION}: {offen}")
    return zeilen


def pruefen(url: str, *, ausgabe=print) -> list[str]:
    """Der Rauchtest; gibt die Liste des Fehlenden zurück (leer = alles da)."""
    with db.verbinden(url, "check_db", autocommit=True) as conn, db.fehler_uebersetzen(url):
        rolle, datenbank, version = conn.execute(SQL_ANMELDUNG).fetchone()
        ausgabe(f"Angemeldet als {rolle} an {datenbank} ({db.maskieren(url)}), PostgreSQL {version}")
        if int(conn.info.server_version) < 180000:
            ausgabe(f"Hinweis: gebaut und getestet für PostgreSQL 18, der Server hat {version}")
        fehlt, hinweise = fehlende_voraussetzungen(conn)
        for hinweis in hinweise:
            ausgabe(f"Hinweis: {hinweis}")
        if not fehlt:
            for zeile in bestand(conn):
                ausgabe(zeile)
            ausgabe("Alle Voraussetzungen erfüllt.")
        else:
            ausgabe("Es fehlt:")
            for eintrag in fehlt:
                ausgabe(f"  - {eintrag}")
        return fehlt


@click.command(cls=DeutscherBefehl, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--migrieren",
    "anwenden_",
    is_flag=True,
    help="Fehlende Migrationen aus migrations/ der Reihe nach anwenden.",
)
def main(anwenden_: bool) -> None:
    """Rauchtest: Anmeldung, Voraussetzungen (raw_items, Migrationen, Rechte) und Bestand.

    DATABASE_URL kommt aus der Umgebung oder aus .env. Exit-Codes: 0 alles da,
    1 Migration schon angewandt, 3 Datenbank nicht erreichbar, 4 Voraussetzung fehlt.
    """
    url = db.datenbank_url()
    if anwenden_:
        migrieren(url)
    fehlt = pruefen(url)
    if fehlt:
        raise VoraussetzungFehlt(f"{len(fehlt)} Voraussetzung(en) fehlen (Liste oben).")


if __name__ == "__main__":
    main()
