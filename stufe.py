"""Datenbankmodi: --backfill, --slot, --trocken, --stichprobe, --teil, --einlesen.

Ablauf eines Laufs
------------------
* Eine Leseverbindung liest je Item seine Kandidaten (als Arrays) und die
  Prüfsumme seiner bisherigen Kodierung über einen serverseitigen Cursor,
  Stapel für Stapel – nie den ganzen Bestand.
* Der Server bildet je Item die Prüfsumme der Eingabe (SHA-256 über die
  bekannten Kandidaten). Ist sie gleich der gespeicherten, ist nichts zu tun –
  unter derselben coder_version folgt die Zeile allein aus der Eingabe –, und
  die Texte werden gar nicht erst übertragen.
* Worker-Prozesse entscheiden (``waehle``) und bereinigen den Text der Wahl
  für die übrigen Items. Die Texte reisen als UTF-8-Bytes hin, die Zeilen als
  fertige COPY-Daten zurück: der Hauptprozess reicht nur Bytes weiter.
  Höchstens ``2 × Prozesse`` Stapel sind gleichzeitig unterwegs: der Speicher
  bleibt flach, wie groß der Bestand auch ist (``Pool.imap`` läse die Eingabe
  gierig).
* Eine Schreibverbindung hält die Sperre des Laufs und schreibt je Stapel in
  einer Transaktion: Items ohne bisherige Kodierung per COPY direkt in die
  Tabelle, geänderte per COPY in eine temporäre Tabelle und ein ``INSERT … ON
  CONFLICT … DO UPDATE … WHERE ergebnissumme IS DISTINCT FROM …``, dazu das
  Löschen von Kodierungen, deren Item keine Kandidaten mehr hat. Ein
  abgebrochener Lauf hinterlässt jede Zeile alt oder neu; ein zweiter Lauf
  macht den Rest.
* ``--trocken`` vergleicht nur Prüfsummen (lesend) und schreibt nichts.

Sperren (Session-Advisory-Locks auf der Schreibverbindung): ein ganzer Lauf
(``--backfill``, ``--slot``) hält die Sperre seiner coder_version exklusiv; ein
``--teil K/N`` hält sie geteilt und dazu die Sperre seines Teils exklusiv. So
laufen die N Teile nebeneinander, aber nie neben einem ganzen Lauf.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import multiprocessing
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

import click
import psycopg
from psycopg import sql

import db
import migrationen
import stichprobe as stichprobe_modul
from einlesen import Einlesebilanz, kandidatenzeilen  # noqa: F401 – für bench/tempo_db, bench/teile_stufe
from fehler import Abgebrochen, EingabeFehler, LaufGesperrt, StufenFehler, VoraussetzungFehlt
from normalisierung import bereinigen
from regeln import waehle
from version import CODER_VERSION, PRIORITAET

BERLIN = ZoneInfo("Europe/Berlin")
STAPEL = 200  # Items je Stapel = je Schreibtransaktion
STAPEL_JE_PROZESS = 2  # so viele Stapel je Worker gleichzeitig unterwegs
SPERR_PRAEFIX = "wurzelwerk-auswahl"

# --- SQL ---------------------------------------------------------------------------
# Je Item der Auswahl: die Zahl seiner Kandidatenzeilen, die Namen unbekannter
# Extraktoren, die Prüfsumme seiner Eingabe und die seiner bisherigen
# Kodierung. Die Eingabe-Summe ist SHA-256 über Name, SHA-256 des Texts
# (extraktionen.text_sha256, beim Schreiben berechnet) und Fehler der bekannten
# Kandidaten; NULL steht als N, nur der Fehler (freier Text) trägt seine Länge
# davor – Name und Hex-Summe haben feste Form –, so bleiben NULL, '' und
# Feldgrenzen eindeutig; sie kommt ohne die Texte aus. Die Texte selbst liest die zweite
# Unterabfrage nur, wenn die Summen sich unterscheiden oder %(alle)s gilt – ein
# erneuter Lauf überträgt so 100 Byte je Item statt der Volltexte, und jeder
# Text wird genau einmal entpackt. Die Texte kommen als UTF-8-Bytes (bytea):
# der Hauptprozess reicht sie nur an die Worker weiter, und Bytes gehen ohne
# Umkodieren durch die Pipe; dekodiert wird einmal, im Worker.
SQL_LESEN = """
select r.id, s.pruefsumme, s.ergebnissumme, k.summe, k.zeilen, k.unbekannt, t.namen, t.texte, t.fehler
from raw_items r
left join lateral (
    select count(*) as zeilen,
           array_agg(e.extraktor order by e.extraktor) filter (where e.extraktor <> all(%(bekannt)s)) as unbekannt,
           sha256(convert_to(coalesce(string_agg(
               e.extraktor || ':' || coalesce(encode(e.text_sha256, 'hex'), 'N') || ':'
               || coalesce(length(e.fehler)::text || ':' || e.fehler, 'N') || ';',
               '' order by e.extraktor) filter (where e.extraktor = any(%(bekannt)s)), ''), 'UTF8')) as summe
    from extraktionen e
    where e.item_id = r.id
) k on true
left join selected_extractor s on s.item_id = r.id and s.coder_version = %(version)s
left join lateral (
    select array_agg(e.extraktor order by e.extraktor) as namen,
           array_agg(convert_to(e.text, 'UTF8') order by e.extraktor) as texte,
           array_agg(e.fehler order by e.extraktor) as fehler
    from extraktionen e
    where e.item_id = r.id and e.extraktor = any(%(bekannt)s)
      and (%(alle)s or k.summe is distinct from s.pruefsumme)
) t on true
where {bedingung}
order by r.id
"""
# Wie viele Items der Lauf ansieht (für den Fortschrittsbalken und „Slot leer“).
SQL_ZAHL = "select count(*) from raw_items r where {bedingung}"
# Die Bedingungen der Betriebsarten; werden mit " and " verbunden.
BEDINGUNG_ALLE = sql.SQL("true")
BEDINGUNG_SLOT = sql.SQL("r.slot = %(slot)s")
# mod() ist bei negativen ids negativ; so landet jede id in genau einem Teil.
BEDINGUNG_TEIL = sql.SQL("mod(mod(r.id, %(n)s) + %(n)s, %(n)s) = %(k)s")

# Zwischenablage eines Stapels auf der Schreibverbindung; leert sich bei jedem Commit.
SQL_TEMP = """
create temp table if not exists aw_stapel (
    item_id bigint primary key,
    coder_version text not null,
    extraktor text not null,
    regel text not null,
    konsens integer not null,
    metriken jsonb not null,
    text text,
    pruefsumme bytea not null,
    ergebnissumme bytea not null
) on commit delete rows;
-- wie in selected_extractor: nicht zweimal komprimieren (als eigene Anweisung: PostgreSQL 15)
alter table aw_stapel alter column text set storage external
"""
# Die Zeilen eines Stapels, wie die Worker sie als COPY-Daten bauen. Items, die
# beim Lesen keine Kodierung dieser Version hatten, gehen ohne Umweg direkt in
# selected_extractor: die Sperre des Laufs (oder seines Teils) schließt aus,
# dass jemand anders sie inzwischen schrieb – außer einem --teil mit anderem N,
# den die Sperren nicht sehen. Ein Backfill in eine neue coder_version schreibt
# so jede Zeile nur einmal. Geänderte gehen über aw_stapel und den Upsert,
# ebenso neue, falls doch jemand zuvorkam (stapel_schreiben).
SQL_COPY = """
copy {tabelle}
    (item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme)
from stdin
"""
ZIEL = sql.Identifier("selected_extractor")
ZWISCHENABLAGE = sql.Identifier("aw_stapel")
# Schreibt nur, was sich im Ergebnis unterscheidet: eine gleiche Ergebnissumme
# lässt die Zeile unberührt (keine neue Zeilenversion, kodiert_am bleibt) –
# auch wenn sich die Eingabe änderte, etwa der Fehlertext eines Kandidaten,
# der nicht aktiv war. xmax = 0: neu eingefügt.
SQL_UPSERT = """
insert into selected_extractor as s
    (item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme)
select item_id, coder_version, extraktor, regel, konsens, metriken, text, pruefsumme, ergebnissumme
from aw_stapel
on conflict (item_id, coder_version) do update set
    extraktor = excluded.extraktor,
    regel = excluded.regel,
    konsens = excluded.konsens,
    metriken = excluded.metriken,
    text = excluded.text,
    pruefsumme = excluded.pruefsumme,
    ergebnissumme = excluded.ergebnissumme,
    kodiert_am = now()
where s.ergebnissumme is distinct from excluded.ergebnissumme
returning (s.xmax = 0) as neu
"""
# Entfernt Kodierungen dieser Version, deren Item keine Kandidaten mehr hat –
# mit erneuter Prüfung, falls inzwischen wieder Kandidaten kamen.
SQL_ENTFERNEN = """
delete from selected_extractor s
where s.coder_version = %(version)s and s.item_id = any(%(ids)s)
  and not exists (select 1 from extraktionen e where e.item_id = s.item_id)
"""
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


# --- Eingaben ----------------------------------------------------------------------


def slot_parsen(text: str) -> datetime:
    """``2026-09-07T08:00`` (Europe/Berlin) oder mit Offset ``…+02:00``/``…Z``."""
    try:
        zeitpunkt = datetime.fromisoformat(text.strip())
    except ValueError:
        raise EingabeFehler(
            f"--slot „{text}“ ist kein Zeitpunkt; erwartet z. B. 2026-09-07T08:00 "
            "(Europe/Berlin) oder 2026-09-07T08:00+02:00."
        ) from None
    if zeitpunkt.tzinfo is None:
        # In der Stunde der Zeitumstellung im Herbst gilt das erste Auftreten
        # (fold=0, Sommerzeit); wer die zweite meint, gibt den Offset an.
        zeitpunkt = zeitpunkt.replace(tzinfo=BERLIN)
    return zeitpunkt


def teil_parsen(text: str) -> tuple[int, int]:
    """``K/N`` mit 1 ≤ K ≤ N."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise EingabeFehler(f"--teil „{text}“: erwartet K/N, z. B. 1/4.") from None
    if not 1 <= k <= n:
        raise EingabeFehler(f"--teil „{text}“: K muss zwischen 1 und N liegen.")
    return k, n


# --- Rechnen (in den Worker-Prozessen) -----------------------------------------------


@dataclass(frozen=True, slots=True)
class Zeile:
    """Eine zu schreibende Kodierung (alles außer coder_version und kodiert_am)."""

    item_id: int
    extraktor: str
    regel: str
    konsens: int
    metriken: str  # JSON
    text: str | None
    pruefsumme: bytes  # der Eingabe
    ergebnissumme: bytes  # dieser Zeile: Wahl, Regel, Konsens, Metriken, Text


def ergebnissumme(*teile: str | None) -> bytes:
    """SHA-256 über die Teile, je mit Länge davor (NULL und '' bleiben verschieden)."""
    summe = hashlib.sha256()
    for teil in teile:
        if teil is None:
            summe.update(b"N;")
        else:
            roh = teil.encode("utf-8", "surrogatepass")
            summe.update(b"%d:" % len(roh))
            summe.update(roh)
    return summe.digest()


def kodieren(item_id: int, namen: Sequence[str], texte: Sequence, fehler: Sequence, summe: bytes):
    """Entscheidung und fertige Zeile eines Items."""
    extraktionen = {n: {"text": t, "error": f} for n, t, f in zip(namen, texte, fehler, strict=True)}
    e = waehle(extraktionen)
    gewaehlt = extraktionen.get(e.extraktor)
    roh = gewaehlt["text"] if gewaehlt else None
    text = bereinigen(roh) if isinstance(roh, str) else None
    metriken = e.metriken_json()
    ergebnis = ergebnissumme(e.extraktor, e.regel, str(e.konsens), metriken, text)
    return e, Zeile(item_id, e.extraktor, e.regel, e.konsens, metriken, text, summe, ergebnis)


# COPY im Textformat (PostgreSQL-Doku, „COPY – Text Format“): Tab trennt die
# Spalten, \N ist NULL, Backslash, Tab, Zeilenumbruch und Wagenrücklauf werden
# maskiert; bytea steht als \x mit Hex-Ziffern, dessen Backslash selbst maskiert.
_COPY_MASKEN = (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r"))


def copy_feld(wert: str | int | bytes | None) -> str:
    """Ein Wert im Textformat von COPY."""
    if wert is None:
        return "\\N"
    if isinstance(wert, bytes):
        return "\\\\x" + wert.hex()
    if isinstance(wert, int):
        return str(wert)
    for zeichen, maske in _COPY_MASKEN:  # replace nur, wo nötig: schneller als translate
        if zeichen in wert:
            wert = wert.replace(zeichen, maske)
    return wert


def copy_zeile(*werte: str | int | bytes | None) -> str:
    return "\t".join(map(copy_feld, werte)) + "\n"


@dataclass
class Stapelergebnis:
    # Fertige COPY-Daten (UTF-8), in den Workern gebaut: der Hauptprozess
    # reicht sie nur weiter. „neu“ geht direkt nach selected_extractor (mit
    # coder_version), „geändert“ über aw_stapel und den Upsert.
    neu_daten: bytes = b""
    geaendert_daten: bytes = b""
    neu: int = 0
    geaendert: int = 0
    unveraendert: int = 0
    entfernen: list[int] = field(default_factory=list)  # Items ohne Kandidaten, mit alter Zeile
    ohne_kandidaten: int = 0
    unbekannte_zeilen: Counter = field(default_factory=Counter)
    faelle: list = field(default_factory=list)  # die zweifelhaftesten Fälle dieses Stapels

    def dazu(self, anderes: Stapelergebnis) -> Stapelergebnis:
        self.neu_daten += anderes.neu_daten
        self.geaendert_daten += anderes.geaendert_daten
        self.neu += anderes.neu
        self.geaendert += anderes.geaendert
        self.unveraendert += anderes.unveraendert
        self.entfernen += anderes.entfernen
        self.ohne_kandidaten += anderes.ohne_kandidaten
        self.unbekannte_zeilen.update(anderes.unbekannte_zeilen)
        self.faelle += anderes.faelle
        return self


def vorsortieren(zeilen: Sequence[tuple], alle: bool) -> tuple[list[tuple], Stapelergebnis]:
    """Im Hauptprozess: was zu rechnen ist, und was sich ohne Rechnen erledigt.

    Items ohne Kandidatenzeilen werden gezählt (und ihre alte Zeile
    vorgemerkt); Items, deren Eingabe-Summe gleich blieb, sind unverändert –
    außer ``alle`` (die Stichprobe braucht jede Entscheidung). Unter derselben
    coder_version folgt die Zeile allein aus der Eingabe. Hat sich die Eingabe
    geändert, entscheidet erst die Ergebnissumme, ob die Zeile sich ändert.
    """
    ergebnis = Stapelergebnis()
    auftrag = []
    for item_id, alt, alt_ergebnis, summe, anzahl, unbekannt, namen, texte, fehler in zeilen:
        if not anzahl:
            ergebnis.ohne_kandidaten += 1
            if alt is not None:
                ergebnis.entfernen.append(item_id)
            continue
        if unbekannt:
            ergebnis.unbekannte_zeilen.update(unbekannt)
        alt, summe = (bytes(alt) if alt is not None else None), bytes(summe)
        if alt == summe and not alle:
            ergebnis.unveraendert += 1
            continue
        # nur unbekannte Extraktoren: die Regeln sehen nichts Verfügbares (Rückfall)
        alt_ergebnis = bytes(alt_ergebnis) if alt_ergebnis is not None else None
        auftrag.append((item_id, alt_ergebnis, summe, namen or [], texte or [], fehler or []))
    return auftrag, ergebnis


def stapel_kodieren(auftrag: Sequence[tuple], version: str, stichprobe_n: int | None) -> Stapelergebnis:
    """Entscheidet einen Auftrag aus ``vorsortieren``; läuft im Worker (oder im Hauptprozess).

    Zurück kommen die Zeilen als fertige COPY-Daten, dazu die Zählung.
    """
    ergebnis = Stapelergebnis()
    neu: list[str] = []
    geaendert: list[str] = []
    auswahl = stichprobe_modul.Stichprobe(stichprobe_n) if stichprobe_n else None
    for item_id, alt_ergebnis, summe, namen, roh, fehler in auftrag:
        texte = [t.decode("utf-8") if t is not None else None for t in roh]
        entscheidung, z = kodieren(item_id, namen, texte, fehler, summe)
        werte = (z.extraktor, z.regel, z.konsens, z.metriken, z.text, z.pruefsumme, z.ergebnissumme)
        if z.ergebnissumme == alt_ergebnis:
            ergebnis.unveraendert += 1
        elif alt_ergebnis is None:
            neu.append(copy_zeile(item_id, version, *werte))
        else:
            geaendert.append(copy_zeile(item_id, version, *werte))
        if auswahl is not None:
            # Die ganzen Texte: die Seite zeigt sie und markiert den Konsens darin.
            # Zurück in den Hauptprozess reisen nur die N behaltenen Fälle.
            texte_je_name = {n: t for n, t in zip(namen, texte, strict=True) if n in PRIORITAET}
            auswahl.beachte(stichprobe_modul.Fall(str(item_id), entscheidung, texte_je_name))
    ergebnis.neu, ergebnis.geaendert = len(neu), len(geaendert)
    ergebnis.neu_daten = "".join(neu).encode("utf-8")
    ergebnis.geaendert_daten = "".join(geaendert).encode("utf-8")
    if auswahl is not None:
        ergebnis.faelle = auswahl.faelle()
    return ergebnis


def _worker_start() -> None:
    # Strg-C trifft die ganze Prozessgruppe, systemd schickt SIGTERM an alle
    # Prozesse der Einheit. Nur der Hauptprozess entscheidet, wann Schluss ist
    # (nach dem laufenden Stapel); ein Worker, der jetzt stürbe, nähme seinen
    # Stapel mit, und der Hauptprozess wartete ewig auf dessen Ergebnis.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


# --- Bilanz ------------------------------------------------------------------------


@dataclass
class Bilanz:
    neu: int = 0
    geaendert: int = 0
    unveraendert: int = 0
    entfernt: int = 0
    ohne_kandidaten: int = 0
    unbekannte_zeilen: Counter = field(default_factory=Counter)
    stapel: int = 0
    sekunden: float = 0.0

    def zaehlung(self) -> dict[str, int]:
        """Die Zählung des Laufs für den Kopf der Stichprobenseite."""
        return {
            "neu": self.neu,
            "geändert": self.geaendert,
            "unverändert": self.unveraendert,
            "entfernt": self.entfernt,
            "ohne Kandidaten": self.ohne_kandidaten,
        }

    def zeile(self) -> str:
        dauer = f"{self.sekunden:.1f}".replace(".", ",")
        return (
            f"neu {self.neu}, geändert {self.geaendert}, unverändert {self.unveraendert}, "
            f"entfernt {self.entfernt}, ohne Kandidaten {self.ohne_kandidaten} in {dauer} s"
        )


# --- Datenbank ---------------------------------------------------------------------


def voraussetzungen(conn: psycopg.Connection) -> None:
    """Bricht mit VoraussetzungFehlt ab, wenn raw_items oder eine Migration fehlt."""
    if not conn.execute(migrationen.SQL_GIBT_ES, ("raw_items",)).fetchone()[0]:
        raise VoraussetzungFehlt(
            "Die Tabelle raw_items fehlt (sie gehört Ingest). Prüfen mit: python check_db.py"
        )
    schon = migrationen.angewandt(conn)
    fehlt = [d.stem for d in migrationen.migrationsdateien() if d.stem not in schon]
    if fehlt:
        raise VoraussetzungFehlt(
            f"Migration(en) fehlen: {', '.join(fehlt)}. Anwenden mit: python check_db.py --migrieren"
        )


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


def _freigeben(conn: psycopg.Connection) -> None:
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


def _copy(cur: psycopg.Cursor, tabelle: sql.Identifier, daten: bytes) -> None:
    with cur.copy(sql.SQL(SQL_COPY).format(tabelle=tabelle)) as copy:
        copy.write(daten)


def stapel_schreiben(
    conn: psycopg.Connection, version: str, ergebnis: Stapelergebnis
) -> tuple[int, int, int]:
    """Schreibt einen Stapel in einer Transaktion; gibt (neu, geändert, entfernt) zurück."""
    neu = geaendert = entfernt = 0
    ueber_upsert = [ergebnis.geaendert_daten] if ergebnis.geaendert_daten else []
    with conn.transaction(), conn.cursor() as cur:
        if ergebnis.neu_daten:
            try:
                with conn.transaction():  # Savepoint: bei Konflikt nur dies zurück
                    _copy(cur, ZIEL, ergebnis.neu_daten)
                neu = cur.rowcount
            except psycopg.errors.UniqueViolation:
                # Jemand schrieb eines dieser Items, seit wir lasen – etwa ein
                # --teil mit anderem N (die Sperren trennen nur gleiche N).
                ueber_upsert.append(ergebnis.neu_daten)
        if ueber_upsert:
            for daten in ueber_upsert:
                _copy(cur, ZWISCHENABLAGE, daten)
            cur.execute(SQL_UPSERT)
            for (ist_neu,) in cur.fetchall():
                if ist_neu:
                    neu += 1
                else:
                    geaendert += 1
        if ergebnis.entfernen:
            cur.execute(SQL_ENTFERNEN, {"version": version, "ids": ergebnis.entfernen})
            entfernt = cur.rowcount
    return neu, geaendert, entfernt


def stapel_lesen(
    conn: psycopg.Connection, bedingung: sql.Composable, params: dict, groesse: int
) -> Iterator[list[tuple]]:
    """Die Items in Stapeln über einen serverseitigen Cursor (binär: schneller zu laden)."""
    cur = conn.cursor(name="aw_lesen", binary=True)
    try:
        cur.itersize = groesse
        cur.execute(sql.SQL(SQL_LESEN).format(bedingung=bedingung), params)
        while zeilen := cur.fetchmany(groesse):
            yield zeilen
    finally:
        # Ist die Verbindung weg (Server angehalten), scheitert auch das Schließen;
        # der eigentliche Fehler ist dann schon gemeldet. Ohne dies druckte das
        # Einsammeln des Generators ein „Exception ignored …“ samt Traceback.
        with contextlib.suppress(psycopg.Error):
            cur.close()


class _Balken:
    """Fortschritt auf stderr, nur an einem Terminal."""

    def __init__(self, gesamt: int) -> None:
        self.balken = None
        if sys.stderr.isatty() and gesamt:
            self.balken = click.progressbar(length=gesamt, label="Kodieren", file=sys.stderr, show_pos=True)
            self.balken.__enter__()

    def weiter(self, n: int) -> None:
        if self.balken is not None:
            self.balken.update(n)

    def ende(self) -> None:
        if self.balken is not None:
            self.balken.__exit__(None, None, None)
            self.balken = None


class _Abbruch:
    """Merkt sich SIGINT/SIGTERM; der Lauf hört nach dem laufenden Stapel auf."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._alt: dict[int, object] = {}

    def __enter__(self) -> _Abbruch:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._alt[sig] = signal.signal(sig, self._merken)
        return self

    def _merken(self, sig, _frame) -> None:
        self.signal = sig

    def __exit__(self, *_) -> None:
        for sig, alt in self._alt.items():
            signal.signal(sig, alt)


# --- Einstieg: Lauf ------------------------------------------------------------------


def lauf(
    slot: str | None,
    trocken: bool,
    stichprobe: int | None,
    teil: str | None,
    prozesse: int | None,
) -> Bilanz:
    """Ein Lauf: ``slot=None`` heißt --backfill."""
    start = time.perf_counter()
    version = CODER_VERSION
    bedingungen: list[sql.Composable] = [BEDINGUNG_ALLE]
    params: dict[str, object] = {"version": version, "bekannt": list(PRIORITAET), "alle": bool(stichprobe)}
    if slot is not None:
        params["slot"] = slot_parsen(slot)
        bedingungen.append(BEDINGUNG_SLOT)
    teil_kn = teil_parsen(teil) if teil else None
    if teil_kn:
        params["k"], params["n"] = teil_kn[0] - 1, teil_kn[1]
        bedingungen.append(BEDINGUNG_TEIL)
    bedingung = sql.SQL(" and ").join(bedingungen)
    url = db.datenbank_url()
    prozesse = prozesse or os.cpu_count() or 1

    # Der Pool entsteht vor den Verbindungen: geforkte Worker sollen keine
    # Verbindung erben (ein geerbter Socket, den ein Kind schließt, träfe den Lauf).
    pool = multiprocessing.get_context("fork").Pool(prozesse, _worker_start) if prozesse > 1 else None
    bilanz = Bilanz()
    auswahl = stichprobe_modul.Stichprobe(stichprobe) if stichprobe else None
    try:
        with db.fehler_uebersetzen(url), _Abbruch() as abbruch:
            leser = db.verbinden(url, "lesen")
            schreiber = None if trocken else db.verbinden(url, "schreiben", autocommit=True)
            try:
                voraussetzungen(leser)
                if schreiber is not None:
                    sperren(schreiber, version, teil_kn)
                    schreiber.execute(SQL_TEMP)
                gesamt = leser.execute(sql.SQL(SQL_ZAHL).format(bedingung=bedingung), params).fetchone()[0]
                if slot is not None and gesamt == 0:
                    click.echo(
                        f"Hinweis: Slot {params['slot'].isoformat()} hat keine Items in raw_items "
                        f"{'(in diesem Teil) ' if teil_kn else ''}– nichts zu tun.",
                        err=True,
                    )
                try:
                    _verarbeiten(
                        leser, schreiber, pool, bedingung, params, prozesse, bilanz, auswahl, abbruch, gesamt
                    )
                except (psycopg.Error, StufenFehler):
                    # Was bis hierher geschrieben ist, bleibt (ganze Stapel); das soll man sehen.
                    if bilanz.stapel and not trocken:
                        bilanz.sekunden = time.perf_counter() - start
                        click.echo(f"Bis zum Fehler geschrieben: {bilanz.zeile()}", err=True)
                    raise
                leser.rollback()  # nur gelesen
            finally:
                leser.close()
                if schreiber is not None:
                    _freigeben(schreiber)
    finally:
        if pool is not None:
            # Höchstens 2 × Prozesse Stapel sind noch unterwegs; die Worker
            # rechnen sie zu Ende und gehen dann (sie überhören SIGTERM).
            pool.close()
            pool.join()
    bilanz.sekunden = time.perf_counter() - start
    _berichten(bilanz, trocken, auswahl, version)
    if abbruch.signal is not None:
        raise Abgebrochen(
            f"Abgebrochen ({signal.Signals(abbruch.signal).name}) nach {bilanz.stapel} Stapeln; "
            "jede Zeile ist alt oder neu, ein erneuter Lauf macht den Rest."
        )
    return bilanz


def _verarbeiten(
    leser, schreiber, pool, bedingung, params, prozesse, bilanz, auswahl, abbruch, gesamt
) -> None:
    # Kleine Bestände (ein Slot) in so viele Stapel teilen, dass jeder Worker
    # zwei bekommt; große in Stapel von STAPEL Items.
    groesse = max(1, min(STAPEL, -(-gesamt // (prozesse * STAPEL_JE_PROZESS))))
    version = params["version"]
    n = auswahl.n if auswahl is not None else None
    balken = _Balken(gesamt)
    unterwegs: collections.deque = collections.deque()

    def abschliessen(ergebnis: Stapelergebnis, anzahl: int) -> None:
        if schreiber is not None:
            neu, geaendert, entfernt = stapel_schreiben(schreiber, version, ergebnis)
        else:
            neu, geaendert, entfernt = ergebnis.neu, ergebnis.geaendert, len(ergebnis.entfernen)
        # Was die Datenbank nicht schrieb, war schon so (oder kam ihr zuvor).
        bilanz.neu += neu
        bilanz.geaendert += geaendert
        bilanz.unveraendert += ergebnis.unveraendert + ergebnis.neu + ergebnis.geaendert - neu - geaendert
        bilanz.entfernt += entfernt
        bilanz.ohne_kandidaten += ergebnis.ohne_kandidaten
        bilanz.unbekannte_zeilen.update(ergebnis.unbekannte_zeilen)
        bilanz.stapel += 1
        if auswahl is not None:
            for fall in ergebnis.faelle:
                auswahl.beachte(fall)
        balken.weiter(anzahl)

    # Ein Stapel, der schon fertig ist (nichts zu rechnen oder ohne Pool), reiht
    # sich wie ein Auftrag ein: geschrieben wird in Lesereihenfolge.
    grenze = prozesse * STAPEL_JE_PROZESS if pool is not None else 1
    try:
        for zeilen in stapel_lesen(leser, bedingung, params, groesse):
            if abbruch.signal is not None:
                break
            auftrag, lokal = vorsortieren(zeilen, alle=n is not None)
            anzahl = len(zeilen)
            del zeilen
            if pool is not None and auftrag:
                unterwegs.append(
                    (pool.apply_async(stapel_kodieren, (auftrag, version, n)).get, lokal, anzahl)
                )
            else:
                fertig = stapel_kodieren(auftrag, version, n) if auftrag else Stapelergebnis()
                unterwegs.append((lambda fertig=fertig: fertig, lokal, anzahl))
            del auftrag
            # Höchstens so viele Stapel unterwegs, wie die Worker gerade brauchen.
            while len(unterwegs) >= grenze and abbruch.signal is None:
                holen, lokal, anzahl = unterwegs.popleft()
                abschliessen(lokal.dazu(holen()), anzahl)
        while unterwegs and abbruch.signal is None:
            holen, lokal, anzahl = unterwegs.popleft()
            abschliessen(lokal.dazu(holen()), anzahl)
    finally:
        balken.ende()


def _berichten(bilanz: Bilanz, trocken: bool, auswahl, version: str) -> None:
    if bilanz.unbekannte_zeilen:
        namen = ", ".join(f"„{n}“ {z}" for n, z in sorted(bilanz.unbekannte_zeilen.items()))
        click.echo(
            f"Hinweis: {sum(bilanz.unbekannte_zeilen.values())} Kandidatenzeilen unbekannter "
            f"Extraktoren übergangen ({namen}).",
            err=True,
        )
    if trocken:
        click.echo(f"trocken, nichts geschrieben – würde: {bilanz.zeile()}")
    else:
        click.echo(bilanz.zeile())
    if auswahl is not None:
        pfad = stichprobe_modul.schreiben(auswahl, version, zaehlung=bilanz.zaehlung())
        click.echo(f"Stichprobe: {pfad}")
