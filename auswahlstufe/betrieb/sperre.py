"""Die Sperren eines Laufs: Session-Advisory-Locks auf der Schreibverbindung.

Ein ganzer Lauf (``--backfill``, ``--slot``, ``--nachholen``) hält die Sperre
seiner coder_version exklusiv; ein ``--teil K/N`` hält sie geteilt und dazu die
Sperre seines Teils exklusiv. So laufen die N Teile nebeneinander, aber nie
neben einem ganzen Lauf. Wer die Sperre nicht bekommt, bricht ab
(``LaufGesperrt``, Exit 5) und nennt den Lauf, der sie hält, aus
``auswahl_laeufe``: id, Modus, Prozess, Rechner und Beginn.

Eine Ausnahme, damit frische Slots nie auf einen langen Lauf warten: hält ein
``--backfill`` die Sperre (er kann Stunden dauern, etwa eine neue Extraktion des
ganzen Bestands), **wartet** ein kurzer Lauf (``--slot``, ``--nachholen``) in der
Schlange des Servers (``warten``), und der Backfill **weicht**: zwischen zwei
Stapeln sieht er den Wartenden (``wartet_jemand``, auf die Sperre der Version oder,
bei ``--teil``, die seines Teils), schreibt, was unterwegs ist, gibt diese Sperre
frei und nimmt sie wieder, sobald der kurze Lauf fertig ist (``weichen``).
Dazwischen schreibt er nichts; was er danach liest, liest er neu. Gefunden wird er
über ``pg_locks.pid`` = ``auswahl_laeufe.backend_pid``; beides sieht jede Rolle (``pg_stat_activity`` verbirgt Startzeit und Anfrage
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

import time
from datetime import datetime

import psycopg

import db
from auswahlstufe.betrieb import laeufe
from auswahlstufe.fehler import LaufGesperrt

SPERR_PRAEFIX = "wurzelwerk-auswahl"

SQL_SPERRE = "select pg_try_advisory_lock(hashtextextended(%s, 0))"
SQL_SPERRE_GETEILT = "select pg_try_advisory_lock_shared(hashtextextended(%s, 0))"
# Warten, bis die Sperre frei ist – in der Schlange des Servers (wer zuerst wartet, kommt zuerst).
SQL_WARTEN = "select pg_advisory_lock(hashtextextended(%s, 0))"
SQL_WARTEN_GETEILT = "select pg_advisory_lock_shared(hashtextextended(%s, 0))"
SQL_LOESEN = "select pg_advisory_unlock(hashtextextended(%s, 0))"
SQL_LOESEN_GETEILT = "select pg_advisory_unlock_shared(hashtextextended(%s, 0))"
# Die Grenze des Wartens gilt nur für diese Transaktion (die Sperre selbst hält die Sitzung).
SQL_WARTEGRENZE = "select set_config('lock_timeout', %s, true), set_config('statement_timeout', '0', true)"
# Wartet jemand auf diese Sperre (eine Anfrage, die der Server noch nicht gewährt hat)?
SQL_WARTET_JEMAND = """
with s as (select hashtextextended(%s, 0) as k)
select exists (
    select 1 from pg_locks l cross join s
    where l.locktype = 'advisory' and l.objsubid = 1 and not l.granted
      and l.classid = ((s.k >> 32) & 4294967295)::oid and l.objid = (s.k & 4294967295)::oid
)
"""
# Alle Session-Sperren dieser Verbindung lösen (vor dem Schließen).
SQL_FREIGEBEN = "select pg_advisory_unlock_all()"
# Wer hält die Sperre? Je haltender Sitzung (außer dieser) ihr offener Lauf, falls es einen gibt.
# Die Sitzung steht in pg_locks, ihr Lauf in auswahl_laeufe (backend_pid) – beides sieht
# jede Rolle; application_name zeigt pg_stat_activity auch für fremde Rollen.
SQL_SPERRE_WER = """
with s as (select hashtextextended(%(name)s, 0) as k)
select l.pid, a.application_name, b.id, b.modus
from pg_locks l
cross join s
left join pg_stat_activity a on a.pid = l.pid
left join lateral (
    select lf.id, lf.modus from auswahl_laeufe lf
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
select l.pid, a.application_name, null::bigint, null::text
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
) -> list[tuple[str, bool]]:
    """Session-Advisory-Locks nehmen oder sofort mit LaufGesperrt abbrechen (``weiter``: der nächste
    Schritt am Ende der Meldung); gibt sie zurück (Name, exklusiv). ``LaufGesperrt.weicht``: jeder,
    der sie hält, ist ein langer Lauf, der für kurze weicht (``weichen``)."""
    genommen = []
    for name, exklusiv in namen(version, teil):
        if not conn.execute(SQL_SPERRE if exklusiv else SQL_SPERRE_GETEILT, (name,)).fetchone()[0]:
            halter, seit, weicht = _halter(conn, name)
            fehler = LaufGesperrt(
                f"Ein anderer Lauf von {version} hält die Sperre „{name}“{halter}. "
                f"Dieser Lauf bricht ab, ohne etwas zu schreiben. {weiter}".rstrip()
            )
            fehler.seit = seit  # Beginn des ältesten haltenden Laufs (None: keiner bekannt)
            fehler.weicht = weicht
            raise fehler
        genommen.append((name, exklusiv))
    return genommen


def warten(
    conn: psycopg.Connection, version: str, teil: tuple[int, int] | None, sekunden: float
) -> list[tuple[str, bool]] | None:
    """Auf die Sperren warten, höchstens ``sekunden`` – in der Schlange des Servers, vor dem langen
    Lauf, der sie freigibt und danach wieder will. None, wenn sie nicht kamen (dann hält diese
    Verbindung keine)."""
    gewollt = namen(version, teil)
    conn.execute(SQL_FREIGEBEN)  # was der Versuch vorher schon bekam: sonst hielte sie es doppelt
    try:
        with conn.transaction():
            conn.execute(SQL_WARTEGRENZE, (f"{int(sekunden * 1000)}ms",))
            for name, exklusiv in gewollt:
                conn.execute(SQL_WARTEN if exklusiv else SQL_WARTEN_GETEILT, (name,))
    except psycopg.errors.LockNotAvailable:
        conn.execute(SQL_FREIGEBEN)  # eine Session-Sperre bleibt auch nach dem Rollback
        return None
    return gewollt


def wartet_jemand(conn: psycopg.Connection, name: str) -> bool:
    return conn.execute(SQL_WARTET_JEMAND, (name,)).fetchone()[0]


# So oft versucht ein Lauf, der gewichen ist, die Sperre wieder zu nehmen (Sekunden).
WIEDER_VERSUCHEN = 0.5


def weichen(conn: psycopg.Connection, sperren: list[tuple[str, bool]], abgebrochen) -> float | None:
    """Die Sperren ``sperren`` (die der Version oder die eines Teils – worauf ein kurzer Lauf
    wartet; die übrigen bleiben) kurz freigeben, damit der Wartende sie bekommt, und sie in ihrer
    Reihenfolge wieder nehmen, sobald er fertig ist. Gibt die Sekunden zurück, die das dauerte –
    None, wenn ``abgebrochen()`` (ein Signal) vorher kam: dann hält der Lauf sie nicht mehr alle
    und darf nichts mehr schreiben."""
    for name, exklusiv in sperren:
        conn.execute(SQL_LOESEN if exklusiv else SQL_LOESEN_GETEILT, (name,))
    start = time.monotonic()
    for name, exklusiv in sperren:
        while not conn.execute(SQL_SPERRE if exklusiv else SQL_SPERRE_GETEILT, (name,)).fetchone()[0]:
            if abgebrochen():
                return None
            time.sleep(WIEDER_VERSUCHEN)
    return time.monotonic() - start


# Lange Läufe (über den ganzen Bestand) weichen kurzen (ein Slot, --nachholen) zwischen zwei Stapeln.
WEICHENDE_MODI = ("backfill",)


def _halter(conn: psycopg.Connection, name: str) -> tuple[str, datetime | None, bool]:
    """„: Lauf 17 (--slot …, Prozess 19423 auf rechner, begonnen …)“ oder die Sitzung ohne Lauf;
    dazu der Beginn des ältesten haltenden Laufs, den das Protokoll kennt, und ob jeder Halter ein
    langer Lauf ist, der weicht (``--backfill``)."""
    teile, seit, weicht = [], None, True
    try:
        halter = conn.execute(SQL_SPERRE_WER, {"name": name}).fetchall()
    except psycopg.errors.InsufficientPrivilege:
        halter = conn.execute(SQL_SPERRE_SITZUNGEN, {"name": name}).fetchall()
    for pid, anwendung, lauf_id, modus in halter:
        weicht = weicht and modus in WEICHENDE_MODI
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
    return ((": " + "; ".join(teile)) if teile else ""), seit, weicht and bool(halter)


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
