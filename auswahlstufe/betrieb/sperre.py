"""Wer welche Arbeit nimmt: Session-Advisory-Locks auf der Schreibverbindung, genommen mit Try-Lock.

Ein Backfill nimmt Blöcke fester id-Breite (``block``), ein Tick die Sperre seines Slots
(``slot``); keiner wartet auf einen anderen, ``--teil K/N`` gehört zum Namen jeder Sperre.
Warum das genügt und was Überlappen kostet: docs/betrieb-lauf.md, „Viele Rechner, ein Bestand“.
Alles Geschriebene geht über die Verbindung, die die Sperre hält; stirbt sie, sagt ``verloren``,
ob nur die Sperre weg ist (Exit 5) oder der Server (Exit 3).
"""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg

import db
from auswahlstufe.betrieb import laeufe
from auswahlstufe.fehler import LaufGesperrt

SPERR_PRAEFIX = "wurzelwerk-auswahl"

SQL_SPERRE = "select pg_try_advisory_lock(hashtextextended(%s, 0))"
SQL_LOESEN = "select pg_advisory_unlock(hashtextextended(%s, 0))"
# Alle Session-Sperren dieser Verbindung lösen (vor dem Schließen).
SQL_FREIGEBEN = "select pg_advisory_unlock_all()"
# Wer hält die Sperre? Je haltender Sitzung (außer dieser) ihr offener Lauf, falls es einen gibt.
# Die Sitzung steht in pg_locks, ihr Lauf in auswahl_laeufe (backend_pid) – beides sieht
# jede Rolle; application_name zeigt pg_stat_activity auch für fremde Rollen.
_SQL_HALTER = """
with s as (select hashtextextended(%(name)s, 0) as k)
select l.pid, a.application_name, b.id
from pg_locks l
cross join s
left join pg_stat_activity a on a.pid = l.pid
left join lateral ({lauf}) b on true
where l.locktype = 'advisory' and l.objsubid = 1 and l.granted and l.pid <> pg_backend_pid()
  and l.classid = ((s.k >> 32) & 4294967295)::oid and l.objid = (s.k & 4294967295)::oid
order by b.id nulls last, l.pid
limit 3
"""
SQL_SPERRE_WER = _SQL_HALTER.format(
    lauf="select lf.id from auswahl_laeufe lf where lf.backend_pid = l.pid and lf.beendet_am is null "
    "order by lf.id desc limit 1"
)
# Dasselbe ohne auswahl_laeufe (der Rolle fehlt das Recht darauf): nur die Sitzungen.
SQL_SPERRE_SITZUNGEN = _SQL_HALTER.format(lauf="select null::bigint as id")


def _name(teil: tuple[int, int] | None, *worte: object) -> str:
    return " ".join([SPERR_PRAEFIX, *map(str, worte)] + ([f"teil {teil[0]}/{teil[1]}"] if teil else []))


def block(art: str, breite: int, nummer: int, teil: tuple[int, int] | None = None) -> str:
    """Die Sperre eines Blocks (``betrieb.keyset.bloecke``): ids ``nummer × breite + 1`` bis
    ``(nummer + 1) × breite``. ``art``:
    die coder_version (Auswahl) oder ``extraktion``."""
    return _name(teil, art, "block", f"{breite}:{nummer}")


def slot(version: str, zeitpunkt: datetime, teil: tuple[int, int] | None = None) -> str:
    """Die Sperre eines Slots für die Ticks einer coder_version: der Zeitpunkt in UTC, am Rand des
    Kalenders (vor 0001-01-01 UTC) wie gegeben."""
    try:
        return _name(teil, version, "slot", zeitpunkt.astimezone(UTC).isoformat())
    except OverflowError:
        return _name(teil, version, "slot", zeitpunkt.isoformat())


def nehmen(conn: psycopg.Connection, name: str) -> bool:
    """Die Sperre ``name`` nehmen, ohne zu warten; False, wenn ein anderer sie hält."""
    return conn.execute(SQL_SPERRE, (name,)).fetchone()[0]


def loesen(conn: psycopg.Connection, name: str) -> None:
    conn.execute(SQL_LOESEN, (name,))


# Der nächste Schritt nach Exit 5 für einen Lauf von Hand (--slot).
WIEDERHOLEN = (
    "Sobald jener endet (solange er läuft, steht er in auswahl_offene_laeufe), denselben Aufruf wiederholen."
)


def gesperrt(conn: psycopg.Connection, name: str, was: str, weiter: str = "") -> LaufGesperrt:
    """Der Fehler für ``was`` („Slot …“), dessen Sperre ``name`` ein anderer hält; nennt ihn.
    ``LaufGesperrt.seit``: Beginn des ältesten haltenden Laufs (None: keiner bekannt)."""
    halter, seit = halter_von(conn, name)
    fehler = LaufGesperrt(
        f"{was} bearbeitet gerade ein anderer Lauf (Sperre „{name}“){halter}. "
        f"Dieser Lauf bricht ab, ohne etwas zu schreiben. {weiter}".rstrip()
    )
    fehler.seit = seit
    return fehler


def halter_von(conn: psycopg.Connection, name: str) -> tuple[str, datetime | None]:
    """„: Lauf 17 (--slot …, Prozess 19423 auf rechner, begonnen …)“ oder die Sitzung ohne Lauf;
    dazu der Beginn des ältesten haltenden Laufs, den das Protokoll kennt."""
    teile, seit = [], None
    try:
        halter = conn.execute(SQL_SPERRE_WER, {"name": name}).fetchall()
    except psycopg.errors.InsufficientPrivilege:
        halter = conn.execute(SQL_SPERRE_SITZUNGEN, {"name": name}).fetchall()
    for pid, anwendung, lauf_id in halter:
        if lauf_id is not None:
            text, beginn = laeufe.beschreiben(conn, lauf_id)
            teile.append(text)
            seit = beginn if seit is None or (beginn is not None and beginn < seit) else seit
        else:
            # Eine Sitzung ohne offenen Lauf: ein Lauf ohne Recht auf auswahl_laeufe, oder jemand
            # hält die Sperre von Hand.
            teile.append(
                f"die Datenbanksitzung mit PID {pid}"
                + (f" („{anwendung}“)" if anwendung else "")
                + ", zu der kein offener Lauf in auswahl_laeufe steht"
            )
    if any(not t.startswith("Lauf ") for t in teile):
        seit = None  # eine Sitzung ohne Lauf hält mit: niemand weiß, wie lange schon
    return ((": " + "; ".join(teile)) if teile else ""), seit


def freigeben(conn: psycopg.Connection) -> None:
    """Sperren ausdrücklich lösen, dann schließen: sonst fände ein direkt folgender Lauf sie noch
    belegt (der Serverprozess endet erst einen Augenblick nach dem Schließen)."""
    try:
        if not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            conn.execute(SQL_FREIGEBEN)
    except psycopg.Error:
        pass  # Verbindung schon verloren: der Server löst die Sperre mit ihrem Ende
    finally:
        conn.close()


# Warum die Verbindung weg ist, so weit der Server es sagte (er sagt es der ersten Anfrage danach).
_GRUENDE = {
    "57P05": "der Server beendete sie nach seinem idle_session_timeout",
    "57P01": "der Server beendete sie (pg_terminate_backend oder ein Neustart)",
}


def verloren(fehler: psycopg.OperationalError, conn: psycopg.Connection, url: str) -> None:
    """Ein Fehler auf der Verbindung ``conn``, die die Sperre hält – wirft immer. Ist sie weg und
    antwortet der Server einer neuen Verbindung, ging nur die Sperre verloren: ``LaufGesperrt``
    (Exit 5). Sonst ``fehler`` selbst (Server weg: Exit 3; die Verbindung lebt: etwa die Platte
    voll)."""
    if not (conn.broken or conn.closed):
        raise fehler
    try:
        with db.verbinden(url, "pruefen", autocommit=True):
            pass
    except (db.Fehler, psycopg.Error):
        raise fehler from None
    grund = _GRUENDE.get(fehler.sqlstate or "", "die Verbindung riss ab")
    raise LaufGesperrt(
        f"Die Verbindung, die die Sperre des Laufs hielt, ist weg: {grund}. Ein anderer Lauf kann "
        "die Sperre inzwischen haben; dieser hört auf, bevor er weiter schreibt. Was geschrieben ist, "
        "bleibt (ganze Stapel), der nächste Lauf macht den Rest."
    ) from None
