"""Die Sperren eines Laufs: Session-Advisory-Locks auf der Schreibverbindung.

Ein ganzer Lauf (``--backfill``, ``--slot``, ``--nachholen``) hält die Sperre
seiner coder_version exklusiv; ein ``--teil K/N`` hält sie geteilt und dazu die
Sperre seines Teils exklusiv. So laufen die N Teile nebeneinander, aber nie
neben einem ganzen Lauf. Wer die Sperre nicht sofort bekommt, bricht ab
(``LaufGesperrt``, Exit 5) – nie wartet ein Lauf auf einen anderen – und nennt
den Lauf, der sie hält, aus ``auswahl_laeufe``: id, Modus, Prozess, Rechner und
Beginn. Gefunden wird er über ``pg_locks.pid`` = ``auswahl_laeufe.backend_pid``;
beides sieht jede Rolle (``pg_stat_activity`` verbirgt Startzeit und Anfrage
fremder Rollen).

Eine Session-Sperre hält, solange ihre Verbindung lebt, und jeder Lauf schreibt alles über
genau diese Verbindung (``kontext.Laufkontext.schreiben``): was geschrieben wird, steht unter
der Sperre. Stirbt die Verbindung (``pg_terminate_backend``, ein Neustart des Servers, ein NAT,
das sie vergaß), scheitert das nächste Schreiben; ``verloren`` sagt dann, ob nur die Sperre
weg ist (der Server antwortet einer neuen Verbindung: Exit 5) oder der Server (Exit 3).
``idle_session_timeout`` trifft die Verbindungen eines Laufs nicht: ``db.verbinden`` setzt es
für sie auf 0.
"""

from __future__ import annotations

from datetime import datetime

import psycopg

import db
from auswahlstufe.betrieb import laeufe
from auswahlstufe.fehler import LaufGesperrt

SPERR_PRAEFIX = "wurzelwerk-auswahl"

SQL_SPERRE = "select pg_try_advisory_lock(hashtextextended(%s, 0))"
SQL_SPERRE_GETEILT = "select pg_try_advisory_lock_shared(hashtextextended(%s, 0))"
# Alle Session-Sperren dieser Verbindung lösen (vor dem Schließen).
SQL_FREIGEBEN = "select pg_advisory_unlock_all()"
# Wer hält die Sperre? Je haltender Sitzung (außer dieser) ihr offener Lauf, falls es einen gibt.
# Die Sitzung steht in pg_locks, ihr Lauf in auswahl_laeufe (backend_pid) – beides sieht
# jede Rolle; application_name zeigt pg_stat_activity auch für fremde Rollen.
SQL_SPERRE_WER = """
with s as (select hashtextextended(%(name)s, 0) as k)
select l.pid, a.application_name, b.id
from pg_locks l
cross join s
left join pg_stat_activity a on a.pid = l.pid
left join lateral (
    select lf.id from auswahl_laeufe lf
    where lf.backend_pid = l.pid and lf.beendet_am is null
    order by lf.id desc limit 1
) b on true
where l.locktype = 'advisory' and l.objsubid = 1 and l.granted and l.pid <> pg_backend_pid()
  and l.classid = ((s.k >> 32) & 4294967295)::oid and l.objid = (s.k & 4294967295)::oid
order by b.id nulls last, l.pid
limit 3
"""
# Dasselbe ohne auswahl_laeufe (der Rolle fehlt das Recht darauf): nur die Sitzungen.
SQL_SPERRE_SITZUNGEN = """
with s as (select hashtextextended(%(name)s, 0) as k)
select l.pid, a.application_name, null::bigint
from pg_locks l
cross join s
left join pg_stat_activity a on a.pid = l.pid
where l.locktype = 'advisory' and l.objsubid = 1 and l.granted and l.pid <> pg_backend_pid()
  and l.classid = ((s.k >> 32) & 4294967295)::oid and l.objid = (s.k & 4294967295)::oid
order by l.pid
limit 3
"""


def namen(version: str, teil: tuple[int, int] | None) -> list[tuple[str, bool]]:
    """Die Sperren eines Laufs: (Name, exklusiv)."""
    ganz = f"{SPERR_PRAEFIX} {version}"
    if teil is None:
        return [(ganz, True)]
    return [(ganz, False), (f"{ganz} teil {teil[0]}/{teil[1]}", True)]


# Der nächste Schritt nach Exit 5 für einen Lauf von Hand (--backfill, --slot); --nachholen sagt
# seinen eigenen (der nächste Aufruf holt nach).
WIEDERHOLEN = (
    "Sobald jener endet (solange er läuft, steht er in auswahl_offene_laeufe), denselben Aufruf wiederholen."
)


def sperren(
    conn: psycopg.Connection, version: str, teil: tuple[int, int] | None, weiter: str = ""
) -> list[str]:
    """Session-Advisory-Locks nehmen oder sofort mit LaufGesperrt abbrechen (``weiter``: der nächste
    Schritt am Ende der Meldung); gibt ihre Namen zurück."""
    genommen = []
    for name, exklusiv in namen(version, teil):
        if not conn.execute(SQL_SPERRE if exklusiv else SQL_SPERRE_GETEILT, (name,)).fetchone()[0]:
            halter, seit = _halter(conn, name)
            fehler = LaufGesperrt(
                f"Ein anderer Lauf von {version} hält die Sperre „{name}“{halter}. "
                f"Dieser Lauf bricht ab, ohne etwas zu schreiben. {weiter}".rstrip()
            )
            fehler.seit = seit  # Beginn des ältesten haltenden Laufs (None: keiner bekannt)
            raise fehler
        genommen.append(name)
    return genommen


def _halter(conn: psycopg.Connection, name: str) -> tuple[str, datetime | None]:
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
            # Eine Sitzung ohne offenen Lauf: ein Lauf vor Migration aw-007, ein Lauf ohne Recht
            # auf auswahl_laeufe, oder jemand hält die Sperre von Hand.
            teile.append(
                f"die Datenbanksitzung mit PID {pid}"
                + (f" („{anwendung}“)" if anwendung else "")
                + ", zu der kein offener Lauf in auswahl_laeufe steht"
            )
    if any(not t.startswith("Lauf ") for t in teile):
        seit = None  # eine Sitzung ohne Lauf hält mit: niemand weiß, wie lange schon
    return ((": " + "; ".join(teile)) if teile else ""), seit


def freigeben(conn: psycopg.Connection) -> None:
    """Sperren ausdrücklich lösen, dann schließen.

    Nach dem Schließen endet der Serverprozess – und mit ihm die Sperre – erst
    einen Augenblick später; ein direkt folgender Lauf fände sie sonst noch belegt.
    """
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
