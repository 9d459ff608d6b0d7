"""Rauchtest der Datenbank und Migrationen.

    .venv/bin/python check_db.py              Anmeldung, Voraussetzungen, Bestand
    .venv/bin/python check_db.py --migrieren  fehlende Migrationen der Reihe nach anwenden
    .venv/bin/python check_db.py --modus einlesen  die Rechte für --einlesen prüfen
    .venv/bin/python check_db.py --modus alle      jede Betriebsart der Betriebsrolle (ohne migrieren)

Exit-Codes wie auswahl.py; welche: ``check_db.py -h``.

Die Migrationen selbst (finden, anwenden, Sperre) stehen in migrationen.py,
die Rechte je Betriebsart in rechte.py, ihre Prüfung und Vergabe in vergabe.py.
"""

from __future__ import annotations

import auswahlstufe.pakete  # noqa: F401 – zuerst: das richtige Python? (sonst Exit 4, ein Satz)

import click
import psycopg

import db
from auswahlstufe import kerne
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.betrieb import migrationen
from auswahlstufe.extraktion import stufe as extraktion_stufe
from auswahlstufe.fehler import VoraussetzungFehlt
from auswahlstufe.lauf import rechte, vergabe
from version import CODER_VERSION, PRIORITAET

# Spalten von raw_items, die die Stufe liest (Pflicht) und die die Sicht zeigt.
RAW_ITEMS_PFLICHT = {"id": "bigint", "slot": "timestamp with time zone"}
RAW_ITEMS_SICHT = ("haus", "titel", "url", "veroeffentlicht_am")

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
# Darf die Rolle das Buch der Migrationen lesen (oder gibt es keins)? Sonst bleibt der Stand offen.
SQL_BUCH_LESBAR = (
    "select to_regclass('schema_migrationen') is null or has_table_privilege('schema_migrationen', 'SELECT')"
)
# Liest die Rolle eine Tabelle der Stufe, die der Betrieb braucht (nicht nur die Sichten)?
SQL_LIEST_TABELLEN = "select has_table_privilege('extraktionen', 'SELECT') or has_table_privilege('selected_extractor', 'SELECT')"
# Wem gehören die Datenbank, raw_items (Ingest) und die Tabellen der Stufe (der Admin)?
SQL_EIGENTUEMER = """
select (select pg_get_userbyid(datdba) from pg_database where datname = current_database()),
       (select pg_get_userbyid(relowner) from pg_class where oid = to_regclass('raw_items')),
       (select pg_get_userbyid(relowner) from pg_class where oid = to_regclass('selected_extractor'))
"""
# Bestand.
SQL_SEITEN_LESBAR = "select to_regclass('seiten') is not null and has_table_privilege('seiten', 'SELECT')"
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

# Was die Quellenwache jetzt auffällig findet (Migration aw-013, docs/quellenwache.md).
SQL_BEFUNDE = "select satz from auswahl_quellenwache where coder_version = %s"


# --- Rauchtest -------------------------------------------------------------------


def fehlende_voraussetzungen(
    conn: psycopg.Connection, modi: tuple[str, ...] = ("lauf", "check_db")
) -> tuple[list[str], list[str]]:
    """(fehlt, hinweise): was die ``modi`` brauchen und nicht haben; was anderen Modi fehlt oder bremst."""
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
                "raw_items hat keinen Index auf slot – ein Slot-Lauf und die Kennzahlen der Quellenwache lesen "
                "dann die ganze Tabelle (docs/betrieb.md, Schritt 2)"
            )
    # Das Buch liest nur, wer es darf (blick braucht es nicht); fehlt das Recht, nennt es die Liste
    # der Rechte unten, und der Stand der Migrationen bleibt hier offen.
    offen = migrationen.fehlende(conn) if conn.execute(SQL_BUCH_LESBAR).fetchone()[0] else []
    if "migrieren" in modi:  # was --migrieren gleich selbst anwendet, ist kein Mangel
        if offen:
            hinweise.append(
                "nicht angewandt: " + ", ".join(d.stem for d in offen) + " – --migrieren wendet sie an, "
                "sobald nichts mehr fehlt"
            )
    else:
        fehlt += [f"Migration {datei.name} (nicht angewandt)" for datei in offen]
    # Was anderen Modi fehlt, ist ein Hinweis für die Betriebsrolle – nicht für den Admin (der
    # migriert), nicht für eine Rolle nur zum Lesen, nicht für Ingest: denen sagt es nichts.
    andere = "migrieren" not in modi and set(modi) != {"blick"} and rolle_der_stufe(conn) == "betrieb"
    je_eintrag: dict[str, list[str]] = {}  # dasselbe fehlende Recht einmal, mit allen Modi, die es brauchen
    for name in rechte.MODI:
        fehlt_hier = vergabe.fehlende(conn, name)
        if name in modi:
            for eintrag in fehlt_hier:
                je_eintrag.setdefault(eintrag, []).append(name)
        elif fehlt_hier and name != "migrieren" and andere:
            hinweise.append(f"für {name} fehlt: " + "; ".join(fehlt_hier) + f" (prüfen: --modus {name})")
    fehlt += [f"{eintrag} (für {', '.join(namen)})" for eintrag, namen in je_eintrag.items()]
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
    befunde = conn.execute(SQL_BEFUNDE, (CODER_VERSION,)).fetchall()
    zeilen.append(
        f"Offene Befunde der Quellenwache: {len(befunde)}"
        + (" (Sicht auswahl_quellenwache; docs/quellenwache.md)" if befunde else "")
    )
    zeilen += [f"  {satz}" for (satz,) in befunde]
    if conn.execute(SQL_SEITEN_LESBAR).fetchone()[0]:
        vorhaben = extraktion_stufe.plan_des_bestands(conn)
        zeilen.append(
            f"Extraktion über den Bestand (--extrahieren --backfill): {vorhaben.satz(kerne.nutzbar())}"
        )
    return zeilen


def pruefen(url: str, *, modi: tuple[str, ...] = ("lauf", "check_db"), ausgabe=print) -> list[str]:
    """Der Rauchtest für ``modi``; gibt die Liste des Fehlenden zurück (leer = alles da)."""
    with db.verbinden(url, "check_db", autocommit=True) as conn, db.fehler_uebersetzen(url):
        rolle, datenbank, version = conn.execute(SQL_ANMELDUNG).fetchone()
        ausgabe(f"Angemeldet als {rolle} an {datenbank} ({db.maskieren(url)}), PostgreSQL {version}")
        if hinweis := db.versionshinweis(conn.info.server_version):
            ausgabe(f"Hinweis: {hinweis}")
        fehlt, hinweise = fehlende_voraussetzungen(conn, modi)
        if "migrieren" not in modi and ist_admin(conn):
            hinweise.insert(
                0,
                f"{rolle} ist der Admin der Stufe (Eigentümer ihrer Tabellen); seine Probe ist --modus "
                "migrieren. check_db.py ohne --modus, Läufe und cron gehören der Betriebsrolle (im Rezept "
                "aw_stufe): DATABASE_URL aus .env im Klon (docs/betrieb.md, Einrichtung, Schritt 5).",
            )
        for hinweis in hinweise:
            ausgabe(f"Hinweis: {hinweis}")
        if not fehlt:
            if "check_db" in modi:  # den Bestand zählen darf nur, wer check_db darf
                for zeile in bestand(conn):
                    ausgabe(zeile)
            ausgabe("Alle Voraussetzungen erfüllt (" + ", ".join(modi) + ").")
        else:
            ausgabe("Es fehlt:")
            for eintrag in fehlt:
                ausgabe(f"  - {eintrag}")
            schritte = weitere_schritte(conn, modi, fehlt)
            # Ingest und eine Rolle nur zum Lesen bekommen kein Rezept: es gäbe ihnen die Rechte des Betriebs.
            if "migrieren" in modi or rolle_der_stufe(conn) == "betrieb":
                schritte += vergabe.abhilfe(
                    conn, [luecke for name in modi for luecke in vergabe.luecken(conn, name)]
                )
            schritte = list(dict.fromkeys(schritte))
            if schritte:
                ausgabe("So zu beheben (docs/betrieb.md, Einrichtung):")
                for schritt in schritte:
                    ausgabe(f"  - {schritt}")
        return fehlt


def ist_admin(conn: psycopg.Connection) -> bool:
    """Ist die angemeldete Rolle der Admin der Stufe (Eigentümer von selected_extractor, kein Superuser)?"""
    zeile = conn.execute(migrationen.SQL_ROLLE, ("SELECT",)).fetchone()
    return bool(zeile and zeile[2])


def rolle_der_stufe(conn: psycopg.Connection) -> str:
    """Wofür die angemeldete Rolle da ist: ``ingest`` (Eigentümer von raw_items, nicht der Admin),
    ``blick`` (liest die Sichten, aber keine Tabelle des Betriebs), sonst ``betrieb`` (auch der Admin)."""
    ich = conn.execute(vergabe.SQL_ICH).fetchone()[0]
    _, ingest, admin = conn.execute(SQL_EIGENTUEMER).fetchone()
    if ich == ingest and ich != admin:
        return "ingest"
    if (
        admin is not None
        and not vergabe.luecken(conn, "blick")
        and not conn.execute(SQL_LIEST_TABELLEN).fetchone()[0]
    ):
        return "blick"
    return "betrieb"


def weitere_schritte(conn: psycopg.Connection, modi: tuple[str, ...], fehlt: list[str]) -> list[str]:
    """Was sonst zu tun ist und wer es tut – neben den Rechten (``vergabe.abhilfe``): raw_items
    anlegen, migrieren, die richtige Rolle nehmen."""
    ich, datenbank = conn.execute(vergabe.SQL_ICH).fetchone()
    besitzer, _, admin = conn.execute(SQL_EIGENTUEMER).fetchone()
    schritte = []
    if "Tabelle raw_items (gehört Ingest)" in fehlt:
        schritte.append(
            f"als {besitzer} (Eigentümer der Datenbank, Ingest): raw_items anlegen und dem Admin der Stufe "
            "die Rechte geben – Schritt 2"
        )
    if any(eintrag.startswith("Migration ") for eintrag in fehlt):
        schritte.append(f"{migrationen.als_admin_migrieren(admin, ich, datenbank)} – Schritt 3")
    rolle = rolle_der_stufe(conn)
    if "migrieren" not in modi and rolle == "ingest":
        schritte.append(
            f"{ich} ist Ingest (Eigentümer von raw_items), keine Rolle der Stufe: check_db.py prüft die "
            "Betriebsrolle (DATABASE_URL aus .env im Klon) oder, mit --modus migrieren, den Admin"
            + (f" ({admin})" if admin else "")
        )
    if "migrieren" not in modi and set(modi) != {"blick"} and rolle == "blick":
        schritte.append(
            f"{ich} ist eine Rolle nur zum Lesen (Rechte von blick): für sie ist .venv/bin/python check_db.py "
            "--modus blick die Probe. check_db.py ohne --modus, Läufe und cron gehören der Betriebsrolle "
            f"(im Rezept aw_stufe), nicht {ich}: DATABASE_URL aus .env im Klon (Schritt 5)"
        )
    return schritte


def vor_dem_migrieren(url: str) -> bool:
    """Hat die Rolle, was Migrieren braucht? Sonst nichts anfangen (lieber als mitten in aw-001)."""
    with db.verbinden(url, "check_db", autocommit=True) as conn, db.fehler_uebersetzen(url):
        return not vergabe.luecken(conn, "migrieren")


@click.command(cls=DeutscherBefehl)
@click.option(
    "--migrieren",
    "anwenden_",
    is_flag=True,
    help="Fehlende Migrationen aus migrations/ der Reihe nach anwenden. Prüft vorher die Rechte fürs "
    "Migrieren (fehlt eines, wird nichts angewandt) und danach sie und check_db, wenn kein --modus "
    "angegeben ist.",
)
@click.option(
    "--modus",
    "modi",
    multiple=True,
    type=click.Choice([*rechte.MODI, "alle"]),
    help="Die Rechte dieser Betriebsart prüfen (mehrfach möglich; Voreinstellung: lauf und check_db; "
    "alle: jede Betriebsart außer migrieren, das Sache des Admins ist). Was anderen Modi fehlt, "
    "steht als Hinweis da.",
)
def main(anwenden_: bool, modi: tuple[str, ...]) -> None:
    """Rauchtest: Anmeldung, Voraussetzungen (raw_items, Migrationen, Rechte je Modus) und Bestand.

    DATABASE_URL kommt aus der Umgebung oder aus .env. Exit-Codes: 0 alles da,
    1 Migration schon angewandt, 3 Datenbank nicht erreichbar, 4 Voraussetzung fehlt,
    5 ein anderer Migrationslauf hält die Sperre, 6 Tabellensperre nicht vor dem
    lock_timeout, 7 DATABASE_URL oder Grenze kaputt.
    """
    url = db.datenbank_url()
    if "alle" in modi:
        modi = tuple(dict.fromkeys([*rechte.BETRIEBSARTEN, *(m for m in modi if m != "alle")]))
    if anwenden_:
        if not vor_dem_migrieren(url):
            pruefen(url, modi=("migrieren",))
            raise VoraussetzungFehlt("Der Rolle fehlen Rechte fürs Migrieren (Liste oben); nichts angewandt.")
        migrationen.migrieren(url)
    fehlt = pruefen(url, modi=modi or (("migrieren", "check_db") if anwenden_ else ("lauf", "check_db")))
    if fehlt:
        raise VoraussetzungFehlt(f"{len(fehlt)} Voraussetzung(en) fehlen (Liste oben).")


if __name__ == "__main__":
    main()
