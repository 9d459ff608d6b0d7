"""Die Migrationen dieser Stufe: finden, den Stand lesen, anwenden.

Genutzt von ``check_db.py`` (``--migrieren`` und Rauchtest) und von der Stufe (vor jedem Lauf:
sind alle angewandt?). Jede Datei geht als ein Stück über das einfache Abfrageprotokoll, im
Autocommit, damit ihr ``begin``/``commit`` gilt; Grenzen und Sperre eines Migrationslaufs:
docs/betrieb.md, „Migrationen von Hand“ und „Migrationen im Betrieb“.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
from psycopg import errors

import db
from auswahlstufe.betrieb.protokoll import log
from auswahlstufe.fehler import EingabeFehler, LaufGesperrt, VoraussetzungFehlt

VERZEICHNIS = Path(__file__).resolve().parents[2] / "migrations"
# Unsere Migrationen tragen das Präfix aw-, drei Ziffern und einen Namen.
DATEINAME = re.compile(r"^aw-\d{3}-[a-z0-9-]+\.sql$")

# Schon angewandte Migrationen; leer, solange das Buch fehlt.
SQL_ANGEWANDT = "select name from schema_migrationen order by name"
# Gibt es eine Tabelle (oder Sicht) im Suchpfad?
SQL_GIBT_ES = "select to_regclass(%s) is not null"
# Die Sperre eines Migrationslaufs: wartet (unter lock_timeout), bis sie frei ist.
SPERRE = "wurzelwerk-auswahl migrationen"
SQL_SPERRE_WARTEN = "select pg_advisory_lock(hashtextextended(%s, 0))"
SQL_SPERRE_LOESEN = "select pg_advisory_unlock(hashtextextended(%s, 0))"
# Darf die Rolle Entscheidungen schreiben (trocken: lesen), ist sie der Admin? Keine Zeile vor aw-002.
SQL_ROLLE = """
select current_user, has_table_privilege(c.oid, %s),
       pg_get_userbyid(c.relowner) = current_user and not p.rolsuper
from pg_class c join pg_roles p on p.rolname = current_user
where c.oid = to_regclass('selected_extractor')
"""
# Wer angemeldet ist, wo, und wem die Tabellen der Stufe gehören (dem Admin; None vor aw-002).
SQL_WER = """
select current_user, current_database(),
       (select pg_get_userbyid(relowner) from pg_class where oid = to_regclass('selected_extractor'))
"""


def migrationsdateien() -> list[Path]:
    """Unsere Migrationen in Anwendungsreihenfolge (= Dateinamen). Keine Datei zu finden ist
    immer ein Fehler (Exit 4): „alles angewandt“ wäre dann eine Lüge."""
    dateien = sorted(p for p in VERZEICHNIS.glob("aw-*.sql"))
    if not dateien:
        raise VoraussetzungFehlt(
            f"Keine Migrationsdateien gefunden in {VERZEICHNIS}. Die Stufe läuft nur aus ihrem Klon "
            "(pip install -e . im Klon; siehe docs/betrieb.md)."
        )
    return dateien


def angewandt(conn: psycopg.Connection) -> set[str]:
    if not conn.execute(SQL_GIBT_ES, ("schema_migrationen",)).fetchone()[0]:
        return set()
    return {name for (name,) in conn.execute(SQL_ANGEWANDT)}


def fehlende(conn: psycopg.Connection) -> list[Path]:
    """Die Migrationsdateien, die in dieser Datenbank noch nicht angewandt sind."""
    schon = angewandt(conn)
    return [d for d in migrationsdateien() if d.stem not in schon]


def anwenden(conn: psycopg.Connection, datei: Path) -> None:
    """Eine Migrationsdatei als Ganzes; ``conn`` muss im Autocommit-Modus sein. Scheitert eine
    Anweisung, wird die Transaktion der Datei zurückgerollt: nichts halb angewandt."""
    text = datei.read_text(encoding="utf-8")
    try:
        conn.execute(text.encode())  # Bytes ohne Parameter: einfaches Protokoll, mehrere Anweisungen
    except psycopg.Error as fehler:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("rollback")
        # Was fehlt oder schon da ist, sagt die Datenbank selbst, nicht der Text des Fehlers.
        if isinstance(fehler, errors.DuplicateObject) and datei.stem in angewandt(conn):
            raise EingabeFehler(f"{datei.name}: Migration ist schon angewandt; nichts geändert.") from None
        if (
            isinstance(fehler, errors.UndefinedTable)
            and not conn.execute(SQL_GIBT_ES, ("raw_items",)).fetchone()[0]
        ):
            raise VoraussetzungFehlt(
                f"{datei.name}: raw_items fehlt – die Tabelle gehört Ingest und muss vorher da sein."
            ) from None
        if isinstance(fehler, errors.InsufficientPrivilege):
            satz = db.recht_fehlt_satz(fehler.diag.message_primary or "", conn.info.user, "")
            raise VoraussetzungFehlt(
                f"{datei.name}: {satz} Nichts angewandt. Was Migrieren braucht und wer es gibt: "
                ".venv/bin/python check_db.py --modus migrieren (docs/betrieb.md, Einrichtung)."
            ) from None
        if isinstance(fehler, errors.LockNotAvailable):
            raise db.Zeitlimit(
                f"{datei.name}: Sperre auf eine Tabelle nicht rechtzeitig bekommen (lock_timeout "
                f"{db.migrationsgrenzen()['lock_timeout']}; AUSWAHL_MIGRATION_LOCK_TIMEOUT) – läuft gerade "
                "ein Lauf der Stufe? Nichts angewandt; später erneut versuchen."
            ) from None
        raise db.DatenbankFehler(
            f"{datei.name}: {db.ohne_passwort(str(fehler), None).strip()} – nichts angewandt."
        ) from None


def migrieren_aufruf(admin: str | None, ich: str | None, datenbank: str | None) -> str:
    """Der Aufruf, der migriert – mit der Rolle des Admins davor, wenn nicht er angemeldet ist."""
    als = f"DATABASE_URL='user={admin} dbname={datenbank}' " if admin and admin != ich else ""
    return f"{als}{db.CHECK_DB} --migrieren"


def als_admin_migrieren(admin: str | None, ich: str | None, datenbank: str | None) -> str:
    """Wer migriert und womit, für jede Meldung, die dorthin schickt: „als aw_admin (Eigentümer
    der Tabellen der Stufe), im Klon: DATABASE_URL='user=aw_admin dbname=…' .venv/bin/python
    check_db.py --migrieren“ (docs/betrieb.md, Einrichtung, Schritt 3)."""
    wer = admin or "Admin der Stufe"
    return (
        f"als {wer} (Eigentümer der Tabellen der Stufe), im Klon: {migrieren_aufruf(admin, ich, datenbank)}"
    )


def _sperre_nehmen(conn: psycopg.Connection) -> None:
    try:
        conn.execute(SQL_SPERRE_WARTEN, (SPERRE,))
    except errors.LockNotAvailable:
        raise LaufGesperrt(
            "Ein anderer Migrationslauf hält die Sperre „" + SPERRE + "“ länger als das lock_timeout "
            "(AUSWAHL_MIGRATION_LOCK_TIMEOUT). Nichts angewandt; danach erneut versuchen."
        ) from None


def migrieren(url: str, *, ausgabe=print) -> list[str]:
    """Wendet die fehlenden Migrationen der Reihe nach an; gibt ihre Namen zurück."""
    dateien = migrationsdateien()  # vor dem Verbinden: ohne Dateien gar nicht erst anfangen
    with (
        db.verbinden(url, "migrieren", autocommit=True, grenzen=db.migrationsgrenzen()) as conn,
        db.fehler_uebersetzen(url),
    ):
        _sperre_nehmen(conn)
        try:
            # Erst unter der Sperre lesen: wer gewartet hat, sieht, was der andere anwandte.
            schon = angewandt(conn)
            neu = []
            for datei in dateien:
                if datei.stem in schon:
                    continue
                anwenden(conn, datei)
                ausgabe(f"angewandt: {datei.name}")
                neu.append(datei.stem)
            if not neu:
                ausgabe("Alle Migrationen sind schon angewandt.")
            return neu
        finally:
            if not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                conn.execute(SQL_SPERRE_LOESEN, (SPERRE,))


def voraussetzungen(conn: psycopg.Connection, modus: str | None = None) -> None:
    """Bricht mit VoraussetzungFehlt ab, wenn raw_items oder eine Migration fehlt.

    ``modus``: ein Lauf (``lauf``, ``stichprobe``, ``extrahieren``, ``trocken``). Ist die Rolle nicht
    die Betriebsrolle (etwa aw_blick oder Ingest), Exit 4 mit diesem Satz; als Admin eine Warnung."""
    if modus is not None:
        _rolle(conn, modus)
    if not conn.execute(SQL_GIBT_ES, ("raw_items",)).fetchone()[0]:
        raise VoraussetzungFehlt(
            f"Die Tabelle raw_items fehlt (sie gehört Ingest). Prüfen im Klon mit: {db.CHECK_DB} – es "
            "nennt, wer sie anlegt."
        )
    schon = angewandt(conn)
    fehlt = [d.stem for d in migrationsdateien() if d.stem not in schon]
    if fehlt:
        ich, datenbank, admin = conn.execute(SQL_WER).fetchone()
        raise VoraussetzungFehlt(
            f"Migration(en) fehlen: {', '.join(fehlt)}. Anzuwenden {als_admin_migrieren(admin, ich, datenbank)} "
            "(docs/betrieb.md, Einrichtung, Schritt 3; danach Schritt 4 für die Rechte der Betriebsrolle)."
        )


def _rolle(conn: psycopg.Connection, modus: str) -> None:
    recht, tun = ("SELECT", "lesen") if modus == "trocken" else ("INSERT", "schreiben")
    zeile = conn.execute(SQL_ROLLE, (recht,)).fetchone()
    if zeile is None:
        return  # vor aw-002: das sagt die Prüfung der Migrationen
    ich, darf, admin = zeile
    if not darf:
        raise VoraussetzungFehlt(
            f"Die Rolle {ich} darf keine Entscheidungen {tun} (kein {recht} auf selected_extractor): "
            "Läufe macht die Betriebsrolle der Stufe (im Rezept aw_stufe); eine Rolle nur zum Lesen "
            "(aw_blick) und Ingest bekommen dieses Recht nicht. DATABASE_URL in .env nennt die Betriebsrolle "
            f"(docs/betrieb.md, Einrichtung, Schritt 5); ist {ich} die Betriebsrolle, nennt {db.CHECK_DB} "
            f"--modus {modus}, was ihr fehlt."
        )
    if admin:
        log.warning(
            f"Warnung: Dieser Lauf läuft als {ich}, dem Admin der Stufe (Eigentümer ihrer Tabellen): er "
            "darf mehr, als ein Lauf braucht. Läufe und cron gehören der Betriebsrolle (im Rezept aw_stufe) – "
            "DATABASE_URL in .env nennt sie (docs/betrieb.md, Einrichtung, Schritt 5)."
        )
