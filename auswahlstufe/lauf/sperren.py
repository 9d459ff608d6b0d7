"""Die Sperren eines Laufs: Session-Advisory-Locks auf der Schreibverbindung.

Ein ganzer Lauf (``--backfill``, ``--slot``) hält die Sperre seiner
coder_version exklusiv; ein ``--teil K/N`` hält sie geteilt und dazu die
Sperre seines Teils exklusiv. So laufen die N Teile nebeneinander, aber nie
neben einem ganzen Lauf. Wer die Sperre nicht sofort bekommt, bricht ab
(``LaufGesperrt``, Exit 5) – nie wartet ein Lauf auf einen anderen.
"""

from __future__ import annotations

import psycopg

from auswahlstufe.fehler import LaufGesperrt

SPERR_PRAEFIX = "wurzelwerk-auswahl"

SQL_SPERRE = "select pg_try_advisory_lock(hashtextextended(%s, 0))"
SQL_SPERRE_GETEILT = "select pg_try_advisory_lock_shared(hashtextextended(%s, 0))"
# Alle Session-Sperren dieser Verbindung lösen (vor dem Schließen).
SQL_FREIGEBEN = "select pg_advisory_unlock_all()"
# Wer hält die Sperre? (für die Meldung; sichtbar für dieselbe Rolle)
SQL_SPERRE_WER = """
with s as (select hashtextextended(%s, 0) as k)
select a.pid, a.application_name, a.backend_start
from pg_locks l join pg_stat_activity a on a.pid = l.pid, s
where l.locktype = 'advisory' and l.objsubid = 1 and l.granted
  and l.classid = ((s.k >> 32) & 4294967295)::oid and l.objid = (s.k & 4294967295)::oid
order by a.backend_start
limit 1
"""


def sperren(conn: psycopg.Connection, version: str, teil: tuple[int, int] | None) -> None:
    """Session-Advisory-Locks nehmen oder sofort mit LaufGesperrt abbrechen."""
    ganz = f"{SPERR_PRAEFIX} {version}"
    if teil is None:
        schluessel = [(SQL_SPERRE, ganz)]
    else:
        schluessel = [(SQL_SPERRE_GETEILT, ganz), (SQL_SPERRE, f"{ganz} teil {teil[0]}/{teil[1]}")]
    for anfrage, name in schluessel:
        if not conn.execute(anfrage, (name,)).fetchone()[0]:
            wer = conn.execute(SQL_SPERRE_WER, (name,)).fetchone()
            halter = ""
            if wer:
                # Sitzungen anderer Rollen zeigt pg_stat_activity ohne Namen und Startzeit.
                halter = f" – gehalten von PID {wer[0]}" + (
                    f" ({wer[1]}, seit {wer[2]:%H:%M:%S})" if wer[2] is not None else " (andere Rolle)"
                )
            raise LaufGesperrt(
                f"Ein anderer Lauf von {version} hält die Sperre „{name}“{halter}. "
                "Dieser Lauf bricht ab, ohne etwas zu schreiben."
            )


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
