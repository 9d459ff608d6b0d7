"""Protokoll der Läufe in ``auswahl_laeufe`` (Migrationen aw-004, aw-007).

Eintrag beim Start, Austrag mit Bilanz, Exit-Code und Meldung, je in einer eigenen kurzen
Transaktion; fehlt das Recht auf die Tabelle, läuft die Stufe und warnt. Läufe, die ihr Ende
nicht eintrugen, schließt ``verwaiste_schliessen`` als abgebrochen. Spalten und Regeln:
docs/betrieb-lauf.md, „Protokoll der Läufe“.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime

import psycopg
from psycopg.types.json import Jsonb

from auswahlstufe.anzeige import BERLIN
from auswahlstufe.betrieb.protokoll import log

SQL_BEGINN = """
insert into auswahl_laeufe
    (modus, slot, teil, coder_version, prozesse, stichprobe, rechner, pid, backend_pid,
     extrahieren, variante, aufruf)
values (%(modus)s, %(slot)s, %(teil)s, %(version)s, %(prozesse)s, %(stichprobe)s, %(rechner)s, %(pid)s,
        pg_backend_pid(), %(extrahieren)s, %(variante)s, %(aufruf)s)
returning id
"""
SQL_ENDE = """
update auswahl_laeufe set
    beendet_am = clock_timestamp(),
    items = %(items)s,
    neu = %(neu)s, geaendert = %(geaendert)s, unveraendert = %(unveraendert)s, entfernt = %(entfernt)s,
    ohne_kandidaten = %(ohne_kandidaten)s, nachgetragen = %(nachgetragen)s, entfallen = %(entfallen)s,
    exit_code = %(exit_code)s, meldung = %(meldung)s, extraktion = %(extraktion)s
where id = %(id)s
"""
# Wie weit ein Lauf ist (aw-011; die Sicht auswahl_fortschritt rechnet Rate und Ende daraus).
SQL_FORTSCHRITT = "update auswahl_laeufe set fortschritt = %(stand)s where id = %(id)s"
# Ein Lauf zum Nennen (Sperrmeldung, geschlossene Läufe).
SQL_LAUF = """
select id, modus, slot, teil, extrahieren, variante, aufruf, pid, rechner, begonnen_am
from auswahl_laeufe where id = %(id)s
"""
# Offene Läufe, deren Sitzung nicht mehr lebt, als abgebrochen schließen (woran das zu erkennen ist:
# docs/betrieb-lauf.md, „Läufe, die nie endeten“). Die Startzeit fremder Rollen zeigt
# pg_stat_activity nicht; dann gilt die Sitzung mit der PID als seine.
SQL_VERWAISTE_SCHLIESSEN = """
update auswahl_laeufe l set
    beendet_am = clock_timestamp(),
    meldung = %(meldung)s
where l.beendet_am is null
  and case
      when l.backend_pid is not null then not exists (
          select 1 from pg_stat_activity a
          where a.pid = l.backend_pid and (a.backend_start is null or a.backend_start <= l.begonnen_am)
      )
      else not exists (
          select 1
          from pg_locks k
          cross join lateral (select hashtextextended(%(praefix)s || ' ' || l.coder_version, 0) as h) s
          where k.locktype = 'advisory' and k.objsubid = 1 and k.granted and k.pid <> pg_backend_pid()
            and k.classid = ((s.h >> 32) & 4294967295)::oid and k.objid = (s.h & 4294967295)::oid
      )
  end
returning l.id, l.modus, l.slot, l.teil, l.extrahieren, l.variante, l.aufruf, l.pid, l.rechner,
          l.begonnen_am
"""


def beginnen(
    conn: psycopg.Connection,
    *,
    slot: datetime | None,
    teil: tuple[int, int] | None,
    version: str,
    prozesse: int,
    stichprobe: int | None,
    modus: str | None = None,
    extrahieren: bool = False,
    variante: str | None = None,
    aufruf: int | None = None,
) -> int | None:
    """Trägt den Lauf ein (``conn`` im Autocommit, die Verbindung, die seine Sperre hält);
    gibt seine id zurück, None ohne Recht."""
    params = {
        "modus": modus or ("backfill" if slot is None else "slot"),
        "slot": slot,
        "teil": f"{teil[0]}/{teil[1]}" if teil else None,
        "version": version,
        "prozesse": prozesse,
        "stichprobe": stichprobe,
        "rechner": socket.gethostname(),
        "pid": os.getpid(),
        "extrahieren": extrahieren,
        "variante": variante,
        "aufruf": aufruf,
    }
    try:
        return conn.execute(SQL_BEGINN, params).fetchone()[0]
    except psycopg.errors.InsufficientPrivilege:
        log.warning(
            "Warnung: der Lauf wird nicht protokolliert – der Rolle fehlt das Recht auf auswahl_laeufe "
            "(select, insert, update)."
        )
        return None


# Die Spalten der Bilanz in SQL_ENDE, je ein Feld von ``lauf.bilanz.Bilanz``.
_BILANZ = (
    *("items", "neu", "geaendert", "unveraendert"),
    *("entfernt", "ohne_kandidaten", "nachgetragen", "entfallen"),
)


def beenden(conn: psycopg.Connection, lauf_id: int, bilanz, exit_code: int, meldung: str | None) -> None:
    """Trägt das Ende ein (``conn`` im Autocommit)."""
    werte = {name: getattr(bilanz, name) for name in _BILANZ}
    # die Zählung der Extraktion davor (--extrahieren, aw-009), sonst NULL
    extraktion = Jsonb(bilanz.extraktion) if bilanz.extraktion is not None else None
    conn.execute(
        SQL_ENDE,
        {**werte, "id": lauf_id, "exit_code": exit_code, "meldung": meldung, "extraktion": extraktion},
    )


def zeit_text(zeitpunkt: datetime) -> str:
    """``07.09.2026 19:57:40 MESZ`` – in Europe/Berlin, mit Datum und Zone."""
    berlin = zeitpunkt.astimezone(BERLIN)
    zone = {"CEST": "MESZ", "CET": "MEZ"}.get(berlin.tzname(), berlin.tzname())
    return f"{berlin:%d.%m.%Y %H:%M:%S} {zone}"


def slot_text(slot: datetime) -> str:
    """``2026-09-07T08:00+02:00``: Europe/Berlin mit Offset, wie --slot es annimmt."""
    try:
        return slot.astimezone(BERLIN).isoformat(timespec="minutes")
    except OverflowError:  # am Rand des Kalenders (9999-12-31T23:59Z): wie angegeben
        return slot.isoformat(timespec="minutes")


def aufruf_text(
    modus: str, slot: datetime | None, teil: str | None, extrahieren: bool, variante: str | None
) -> str:
    """Wie der Lauf aufgerufen war: ``--extrahieren --slot 2026-09-07T08:00+02:00``."""
    teile = ["--extrahieren"] if extrahieren else []
    teile.append(f"--slot {slot_text(slot)}" if slot is not None else f"--{modus}")
    if teil:
        teile.append(f"--teil {teil}")
    if variante:
        teile.append(f"--variante {variante}")
    return " ".join(teile)


def _beschreibung(zeile: tuple) -> str:
    lauf_id, modus, slot, teil, extrahieren, variante, aufruf, pid, rechner, begonnen_am = zeile
    woher = f" aus --nachholen {aufruf}" if aufruf is not None else ""
    return (
        f"Lauf {lauf_id} ({aufruf_text(modus, slot, teil, extrahieren, variante)}{woher}, "
        f"Prozess {pid} auf {rechner}, begonnen {zeit_text(begonnen_am)})"
    )


def beschreiben(conn: psycopg.Connection, lauf_id: int) -> tuple[str, datetime | None]:
    """``Lauf 17 (--slot 2026-09-07T08:00+02:00, Prozess 19423 auf rechner, begonnen …)`` und
    sein Beginn."""
    zeile = conn.execute(SQL_LAUF, {"id": lauf_id}).fetchone()
    return (_beschreibung(zeile), zeile[-1]) if zeile else (f"Lauf {lauf_id}", None)


# Ein Lauf, dessen Sitzung starb, kann geendet haben (Exit 3, als der Server ging); so sagt es der Hinweis.
NICHT_EINGETRAGEN = (
    "trug sein Ende nicht ein (Datenbanksitzung weg: getötet, Server gestoppt oder Verbindung verloren)"
)


def verwaiste_schliessen(conn: psycopg.Connection, praefix: str, von: int | None) -> list[str]:
    """Schließt offene Läufe, deren Datenbanksitzung nicht mehr lebt, als abgebrochen; gibt
    die Beschreibungen der gemeldeten zurück (und meldet sie auf stderr: ein Lauf starb, das soll
    ein Mensch wissen – einmal, danach ist er geschlossen). Ein Aufruf von --nachholen, der mit
    einem seiner Slot-Läufe starb, steht im Hinweis des Slot-Laufs („sein Aufruf 11 ebenso“)."""
    meldung = (
        "abgebrochen: trug sein Ende nicht ein, seine Datenbanksitzung ist weg (Prozess getötet, Server "
        "gestoppt oder neu gestartet, Verbindung verloren, Rechner aus)"
        + (f"; bemerkt von Lauf {von}" if von is not None else "")
        + ". Was er geschrieben hatte, bleibt; jede Zeile ist alt oder neu."
    )
    try:
        zeilen = conn.execute(SQL_VERWAISTE_SCHLIESSEN, {"meldung": meldung, "praefix": praefix}).fetchall()
    except psycopg.errors.InsufficientPrivilege:
        return []  # ohne Recht auf das Protokoll: das hat beginnen schon gemeldet
    # Ein toter Aufruf von --nachholen und sein Slot-Lauf: ein Prozess, ein Hinweis (der Slot-Lauf).
    geschlossen = {z[0] for z in zeilen}
    mit_slot = {z[6] for z in zeilen if z[6] is not None}
    beschreibungen = []
    for zeile in sorted(zeilen):
        if zeile[0] in mit_slot:
            continue
        text = _beschreibung(zeile)
        aufruf = zeile[6]
        ebenso = f", sein Aufruf {aufruf} ebenso" if aufruf in geschlossen else ""
        log.warning(f"Hinweis: {text} {NICHT_EINGETRAGEN}; jetzt als abgebrochen geschlossen{ebenso}.")
        beschreibungen.append(text)
    return beschreibungen


def fortschritt_eintragen(
    conn: psycopg.Connection, lauf_id: int, phase: str, fertig: int, gesamt: int, seit: datetime
) -> None:
    """Den Stand einer Phase (``Extrahieren``, ``Kodieren``) eintragen; ``seit``: ihr Beginn."""
    stand = {
        "phase": phase,
        "fertig": fertig,
        "gesamt": gesamt,
        "seit": seit.isoformat(),
        "am": datetime.now(UTC).isoformat(),
    }
    conn.execute(SQL_FORTSCHRITT, {"id": lauf_id, "stand": Jsonb(stand)})
