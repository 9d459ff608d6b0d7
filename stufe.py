"""Datenbankmodi: --backfill, --slot, --trocken, --stichprobe, --teil (und --einlesen, unten).

Dieses Modul ist der Ablauf eines Laufs; die Teile stehen je in ihrem Modul:

* ``lesen``: die Items in Keyset-Seiten, jede Seite eine eigene kurze
  Transaktion; die Eingabe-Summe bildet der Server, die Texte kommen nur, wo
  sie sich änderte.
* ``kodierung``: ``vorsortieren`` (was ohne Rechnen erledigt ist) und
  ``stapel_kodieren`` (``waehle`` und ``bereinigen`` je Item, Zeilen als
  fertige COPY-Daten) – in den Workern.
* ``arbeiter``: die Worker-Prozesse, das Zeitlimit je Stapel, tote Worker,
  SIGINT/SIGTERM. Höchstens ``2 × Prozesse`` Stapel sind unterwegs: der
  Speicher bleibt flach, wie groß der Bestand auch ist.
* ``schreiben``: je Stapel eine Transaktion (COPY, Upsert, Eingabe-Summe
  nachtragen, Entfernen); ein abgebrochener Lauf hinterlässt jede Zeile alt
  oder neu, ein zweiter macht den Rest.
* ``sperren``: die Advisory-Locks (ganzer Lauf exklusiv, ``--teil`` geteilt
  plus die Sperre seines Teils).
* ``laeufe``: das Protokoll in ``auswahl_laeufe``; ``fortschritt``: der
  Fortschritt auf stderr, am Terminal und ohne.

``--trocken`` vergleicht nur (lesend) und schreibt nichts, auch kein Protokoll.

Länge: über 500 Zeilen nur, solange der Abschnitt --einlesen am Ende hier
steht; er zieht in ein eigenes Modul um.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import click
import psycopg
from psycopg import sql

import check_db
import db
import laeufe
import lesen
import stichprobe as stichprobe_modul
from arbeiter import ZEITLIMIT, Abbruch, Arbeiter, Stapel
from fehler import Abgebrochen, EingabeFehler, StufenFehler, VoraussetzungFehlt
from fortschritt import fortschritt
from kodierung import Stapelergebnis, stapel_kodieren, vorsortieren
from schreiben import SQL_TEMP, stapel_schreiben
from sperren import SQL_FREIGEBEN, SQL_SPERRE, freigeben, sperren
from version import CODER_VERSION, PRIORITAET

BERLIN = ZoneInfo("Europe/Berlin")
STAPEL = 200  # Items je Stapel = je Schreibtransaktion = je Leseseite
STAPEL_JE_PROZESS = 2  # so viele Stapel je Worker gleichzeitig unterwegs

# Für Tests anderer Module, die die Sperre von außen halten.
__all__ = ["SQL_FREIGEBEN", "SQL_SPERRE", "Bilanz", "einlesen", "lauf", "slot_parsen", "teil_parsen"]


# --- Eingaben ----------------------------------------------------------------------


def slot_parsen(text: str) -> datetime:
    """``2026-09-07T08:00`` (Europe/Berlin) oder mit Offset ``…+02:00``/``…Z``.

    An der Zeitumstellung ist eine Ortszeit ohne Offset nicht immer ein
    Zeitpunkt: 02:30 am letzten Sonntag im März gibt es nicht (Lücke), 02:30 am
    letzten Sonntag im Oktober gibt es zweimal. Beides ist ein Eingabefehler mit
    den Schreibweisen, die es gibt – ein Slot, der still verschoben oder in der
    falschen Stunde gelesen wird, fiele im Betrieb niemandem auf; ein Fehler
    (Exit 1) steht im Protokoll und im cron-Log.
    """
    try:
        zeitpunkt = datetime.fromisoformat(text.strip())
    except ValueError:
        raise EingabeFehler(
            f"--slot „{text}“ ist kein Zeitpunkt; erwartet z. B. 2026-09-07T08:00 "
            "(Europe/Berlin) oder 2026-09-07T08:00+02:00."
        ) from None
    if zeitpunkt.tzinfo is not None:
        return zeitpunkt
    erste = zeitpunkt.replace(tzinfo=BERLIN, fold=0)
    zweite = zeitpunkt.replace(tzinfo=BERLIN, fold=1)
    if erste.utcoffset() == zweite.utcoffset():
        return erste
    ohne = f"{zeitpunkt:%Y-%m-%dT%H:%M}"
    # In der Lücke führt der Weg über UTC zu einer anderen Wanduhrzeit zurück.
    if erste.astimezone(UTC).astimezone(BERLIN).replace(tzinfo=None) != zeitpunkt:
        danach = erste.astimezone(UTC).astimezone(BERLIN)
        davor = (erste.astimezone(UTC) - timedelta(hours=1)).astimezone(BERLIN)
        raise EingabeFehler(
            f"--slot „{text}“ gibt es in Europe/Berlin nicht (Beginn der Sommerzeit: die Uhr springt "
            f"von 02:00 auf 03:00). Gemeint ist eine Stunde davor oder danach, mit Offset eindeutig: "
            f"{davor:%Y-%m-%dT%H:%M}{_offset(davor)} oder {danach:%Y-%m-%dT%H:%M}{_offset(danach)}."
        )
    raise EingabeFehler(
        f"--slot „{text}“ gibt es in Europe/Berlin zweimal (Ende der Sommerzeit). Bitte mit Offset "
        f"angeben: {ohne}{_offset(erste)} (Sommerzeit, das erste Mal) oder {ohne}{_offset(zweite)} "
        "(Winterzeit, das zweite Mal)."
    )


def _offset(zeitpunkt: datetime) -> str:
    """``+02:00`` (strftime kann ``%:z`` erst ab Python 3.12)."""
    minuten = int(zeitpunkt.utcoffset().total_seconds()) // 60
    return f"{'+' if minuten >= 0 else '-'}{abs(minuten) // 60:02d}:{abs(minuten) % 60:02d}"


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


# --- Bilanz ------------------------------------------------------------------------


@dataclass
class Bilanz:
    neu: int = 0
    geaendert: int = 0
    unveraendert: int = 0
    entfernt: int = 0
    ohne_kandidaten: int = 0
    # Eingabe geändert, Ergebnis gleich: nur die Eingabe-Summe nachgetragen (zählt
    # unter „unverändert“; Inhalt und kodiert_am bleiben, die Zeilenversion nicht).
    nachgetragen: int = 0
    gerechnet: int = 0  # Items, die waehle sah
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
        nachgetragen = f", Eingabe-Summe nachgetragen {self.nachgetragen}" if self.nachgetragen else ""
        return (
            f"neu {self.neu}, geändert {self.geaendert}, unverändert {self.unveraendert}, "
            f"entfernt {self.entfernt}, ohne Kandidaten {self.ohne_kandidaten}{nachgetragen} in {dauer} s"
        )


# --- Datenbank ---------------------------------------------------------------------


def voraussetzungen(conn: psycopg.Connection) -> None:
    """Bricht mit VoraussetzungFehlt ab, wenn raw_items oder eine Migration fehlt."""
    if not conn.execute(check_db.SQL_GIBT_ES, ("raw_items",)).fetchone()[0]:
        raise VoraussetzungFehlt(
            "Die Tabelle raw_items fehlt (sie gehört Ingest). Prüfen mit: python check_db.py"
        )
    schon = check_db.angewandt(conn)
    fehlt = [d.stem for d in check_db.migrationsdateien() if d.stem not in schon]
    if fehlt:
        raise VoraussetzungFehlt(
            f"Migration(en) fehlen: {', '.join(fehlt)}. Anwenden mit: python check_db.py --migrieren"
        )


# --- Einstieg: Lauf ------------------------------------------------------------------


@dataclass
class _Lauf:
    """Was ein Lauf über sich weiß, während er läuft."""

    version: str
    bedingung: sql.Composable
    params: dict
    slot: datetime | None
    teil: tuple[int, int] | None
    trocken: bool
    stichprobe: int | None
    prozesse: int
    bilanz: Bilanz = field(default_factory=Bilanz)
    auswahl: stichprobe_modul.Stichprobe | None = None
    start: float = field(default_factory=time.perf_counter)


def lauf(
    slot: str | None,
    trocken: bool,
    stichprobe: int | None,
    teil: str | None,
    prozesse: int | None,
    stapel_zeitlimit: float = ZEITLIMIT,
) -> Bilanz:
    """Ein Lauf: ``slot=None`` heißt --backfill."""
    version = CODER_VERSION
    bedingungen: list[sql.Composable] = [lesen.BEDINGUNG_ALLE]
    params: dict[str, object] = {"version": version, "bekannt": list(PRIORITAET), "alle": bool(stichprobe)}
    slot_zeit = slot_parsen(slot) if slot is not None else None
    if slot_zeit is not None:
        params["slot"] = slot_zeit
        bedingungen.append(lesen.BEDINGUNG_SLOT)
    teil_kn = teil_parsen(teil) if teil else None
    if teil_kn:
        params["k"], params["n"] = teil_kn[0] - 1, teil_kn[1]
        bedingungen.append(lesen.BEDINGUNG_TEIL)
    url = db.datenbank_url()
    prozesse = prozesse or os.cpu_count() or 1
    dieser = _Lauf(
        version,
        sql.SQL(" and ").join(bedingungen),
        params,
        slot_zeit,
        teil_kn,
        trocken,
        stichprobe,
        prozesse,
        auswahl=stichprobe_modul.Stichprobe(stichprobe) if stichprobe else None,
    )

    # Die Worker entstehen vor den Verbindungen: geforkte Worker sollen keine
    # Verbindung erben (ein geerbter Socket, den ein Kind schließt, träfe den Lauf).
    arbeiter = Arbeiter(prozesse, stapel_zeitlimit) if prozesse > 1 else None
    ausgang: BaseException | None = None
    try:
        with db.fehler_uebersetzen(url), Abbruch() as abbruch:
            leser = db.verbinden(url, "lesen", autocommit=True)
            try:
                voraussetzungen(leser)
                if trocken:
                    _ablauf(dieser, leser, None, arbeiter, abbruch)
                else:
                    _protokolliert(dieser, url, leser, arbeiter, abbruch)
            finally:
                leser.close()
    except BaseException as fehler:
        ausgang = fehler
        raise
    finally:
        if arbeiter is not None and not arbeiter.beenden():
            _hart_beenden(ausgang)
    return dieser.bilanz


def _hart_beenden(ausgang: BaseException | None) -> None:
    """Melden und den Prozess ohne Aufräumen beenden: der Executor kam nicht zur Ruhe."""
    if isinstance(ausgang, StufenFehler):
        ausgang.show()
        code = ausgang.exit_code
    elif ausgang is None:
        code = 0
    else:
        click.echo(f"Fehler: {type(ausgang).__name__}: {ausgang}", err=True)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _protokolliert(dieser: _Lauf, url: str, leser, arbeiter, abbruch: Abbruch) -> None:
    """Der schreibende Lauf: Sperre, Protokoll am Anfang und am Ende."""
    schreiber = db.verbinden(url, "schreiben", autocommit=True)
    try:
        lauf_id = laeufe.beginnen(
            schreiber,
            slot=dieser.slot,
            teil=dieser.teil,
            version=dieser.version,
            prozesse=dieser.prozesse,
            stichprobe=dieser.stichprobe,
        )
        code, meldung = 0, None
        try:
            with db.fehler_uebersetzen(url):
                sperren(schreiber, dieser.version, dieser.teil)
                schreiber.execute(SQL_TEMP)
                _ablauf(dieser, leser, schreiber, arbeiter, abbruch)
        except StufenFehler as fehler:
            code, meldung = fehler.exit_code, fehler.format_message()
            raise
        except BaseException as fehler:
            code, meldung = 1, f"{type(fehler).__name__}: {fehler}"
            raise
        finally:
            if lauf_id is not None:
                _abmelden(url, schreiber, lauf_id, dieser.bilanz, code, meldung)
    finally:
        freigeben(schreiber)


def _abmelden(url: str, schreiber, lauf_id: int, bilanz: Bilanz, code: int, meldung: str | None) -> None:
    """Das Ende ins Protokoll; ist die Schreibverbindung verloren, über eine neue."""
    try:
        if schreiber.closed or schreiber.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            raise psycopg.OperationalError("Schreibverbindung verloren")
        laeufe.beenden(schreiber, lauf_id, bilanz, code, meldung)
        return
    except psycopg.Error:
        pass
    # Ist der Server weg, bleibt der Eintrag offen (ohne beendet_am); die Meldung
    # des Laufs sagt schon, dass die Datenbank nicht erreichbar ist.
    with (
        contextlib.suppress(psycopg.Error, StufenFehler),
        db.verbinden(url, "protokoll", autocommit=True) as conn,
    ):
        laeufe.beenden(conn, lauf_id, bilanz, code, meldung)


def _ablauf(dieser: _Lauf, leser, schreiber, arbeiter, abbruch: Abbruch) -> None:
    bilanz = dieser.bilanz
    gesamt = lesen.zahl(leser, dieser.bedingung, dieser.params)
    if dieser.slot is not None and gesamt == 0:
        click.echo(
            f"Hinweis: Slot {dieser.slot.isoformat()} hat keine Items in raw_items "
            f"{'(in diesem Teil) ' if dieser.teil else ''}– nichts zu tun.",
            err=True,
        )
    try:
        _verarbeiten(dieser, leser, schreiber, arbeiter, abbruch, gesamt)
    except (psycopg.Error, StufenFehler):
        # Was bis hierher geschrieben ist, bleibt (ganze Stapel); das soll man sehen.
        if bilanz.stapel and schreiber is not None:
            bilanz.sekunden = time.perf_counter() - dieser.start
            click.echo(f"Bis zum Fehler geschrieben: {bilanz.zeile()}", err=True)
        raise
    bilanz.sekunden = time.perf_counter() - dieser.start
    _berichten(bilanz, dieser.trocken, dieser.auswahl, dieser.version)
    if abbruch.signal is not None:
        raise Abgebrochen(
            f"Abgebrochen ({signal.Signals(abbruch.signal).name}) nach {bilanz.stapel} Stapeln; "
            "jede Zeile ist alt oder neu, ein erneuter Lauf macht den Rest."
        )


def _verarbeiten(dieser: _Lauf, leser, schreiber, arbeiter, abbruch: Abbruch, gesamt: int) -> None:
    # Kleine Bestände (ein Slot) in so viele Stapel teilen, dass jeder Worker
    # zwei bekommt; große in Stapel von STAPEL Items.
    groesse = max(1, min(STAPEL, -(-gesamt // (dieser.prozesse * STAPEL_JE_PROZESS))))
    version, bilanz, auswahl = dieser.version, dieser.bilanz, dieser.auswahl
    n = auswahl.n if auswahl is not None else None
    # (Stapel, Future oder fertiges Ergebnis, lokal Erledigtes, abgegeben um)
    unterwegs: collections.deque = collections.deque()
    letzte_fertig = time.monotonic()

    def abschliessen(stapel: Stapel, ergebnis: Stapelergebnis) -> None:
        if schreiber is not None:
            neu, geaendert, entfernt, nachgetragen = stapel_schreiben(schreiber, version, ergebnis)
        else:
            neu, geaendert = ergebnis.neu, ergebnis.geaendert
            entfernt, nachgetragen = len(ergebnis.entfernen), len(ergebnis.nachtragen)
        # Was die Datenbank nicht schrieb, war schon so (oder kam ihr zuvor).
        bilanz.neu += neu
        bilanz.geaendert += geaendert
        bilanz.unveraendert += ergebnis.unveraendert + ergebnis.neu + ergebnis.geaendert - neu - geaendert
        bilanz.entfernt += entfernt
        bilanz.nachgetragen += nachgetragen
        bilanz.gerechnet += ergebnis.gerechnet
        bilanz.ohne_kandidaten += ergebnis.ohne_kandidaten
        bilanz.unbekannte_zeilen.update(ergebnis.unbekannte_zeilen)
        bilanz.stapel += 1
        if auswahl is not None:
            for fall in ergebnis.faelle:
                auswahl.beachte(fall)
        weiter(stapel.items)

    def naechster() -> bool:
        """Den ältesten Stapel abschließen; False nach SIGINT/SIGTERM."""
        nonlocal letzte_fertig
        stapel, auftrag, lokal, abgegeben = unterwegs.popleft()
        if isinstance(auftrag, Stapelergebnis):
            fertig = auftrag
        else:
            seit = max(abgegeben, letzte_fertig)
            fertig = arbeiter.ergebnis(auftrag, stapel, seit, abbruch, len(unterwegs))
            if fertig is None:
                return False
        abschliessen(stapel, lokal.dazu(fertig))
        letzte_fertig = time.monotonic()
        return True

    # Ein Stapel, der schon fertig ist (nichts zu rechnen oder ohne Worker), reiht
    # sich wie ein Auftrag ein: geschrieben wird in Lesereihenfolge.
    grenze = dieser.prozesse * STAPEL_JE_PROZESS if arbeiter is not None else 1
    with fortschritt(gesamt, "Kodieren") as weiter:
        for nummer, zeilen in enumerate(
            lesen.seiten_lesen(leser, dieser.bedingung, dieser.params, groesse), 1
        ):
            if abbruch.signal is not None:
                break
            stapel = Stapel(nummer, zeilen[0][0], zeilen[-1][0], len(zeilen))
            auftrag, lokal = vorsortieren(zeilen, alle=n is not None)
            del zeilen
            if arbeiter is not None and auftrag:
                unterwegs.append((stapel, arbeiter.abgeben(auftrag, version, n), lokal, time.monotonic()))
            else:
                fertig = stapel_kodieren(auftrag, version, n) if auftrag else Stapelergebnis()
                unterwegs.append((stapel, fertig, lokal, time.monotonic()))
            del auftrag
            # Höchstens so viele Stapel unterwegs, wie die Worker gerade brauchen.
            while len(unterwegs) >= grenze and abbruch.signal is None:
                if not naechster():
                    break
        while unterwegs and abbruch.signal is None:
            if not naechster():
                break


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


# --- Einstieg: Einlesen ----------------------------------------------------------------

# Zwischenablage für --einlesen; eine Transaktion für die ganze Datei.
SQL_TEMP_EINLESEN = """
create temp table aw_einlesen (
    item_id bigint not null,
    extraktor text not null,
    text text,
    fehler text,
    primary key (item_id, extraktor)
) on commit drop
"""
SQL_COPY_EINLESEN = "copy aw_einlesen (item_id, extraktor, text, fehler) from stdin"
# Welche der genannten Items gibt es in raw_items?
SQL_BEKANNTE_ITEMS = "select id from raw_items where id = any(%s)"
# Kandidaten eintragen; gleiche Zeilen bleiben unberührt (extrahiert_am bleibt).
SQL_UPSERT_EINLESEN = """
insert into extraktionen as e (item_id, extraktor, text, fehler)
select item_id, extraktor, text, fehler from aw_einlesen
on conflict (item_id, extraktor) do update set
    text = excluded.text, fehler = excluded.fehler, extrahiert_am = now()
where (e.text, e.fehler) is distinct from (excluded.text, excluded.fehler)
returning (e.xmax = 0) as neu
"""
# Für die Items, die sie nennt, ist die Datei die ganze Wahrheit: Kandidaten,
# die sie für ein solches Item nicht (mehr) nennt, gehen – sonst entschiede die
# Datenbank anders als der Stapelbetrieb über dieselbe Datei.
SQL_ENTFERNEN_EINLESEN = """
delete from extraktionen e
where e.item_id = any(%s)
  and not exists (select 1 from aw_einlesen a where a.item_id = e.item_id and a.extraktor = e.extraktor)
"""
ERSATZ = "\ufffd"  # für NUL und einzelne Surrogate, die PostgreSQL in text nicht annimmt


@dataclass
class Einlesebilanz:
    artikel: int = 0
    zeilen: int = 0
    neu: int = 0
    geaendert: int = 0
    entfernt: int = 0  # Kandidaten, die die Datei für ihre Items nicht mehr nennt
    unbekannte_items: list[int] = field(default_factory=list)
    ersetzt: int = 0  # Kandidaten mit NUL oder einzelnem Surrogat
    doppelt: int = 0
    namen: Counter = field(default_factory=Counter)
    items: set[int] = field(default_factory=set)  # alle item_ids der Datei


def _fuer_postgres(wert: str, bilanz: Einlesebilanz) -> str:
    """NUL und einzelne Surrogate durch U+FFFD ersetzen (und zählen).

    U+FFFD verhält sich in beiden Normalisierungen wie das ersetzte Zeichen:
    kein Wortzeichen, kein Leerraum. Die Entscheidung bleibt also dieselbe wie
    im Stapelbetrieb über dieselbe Datei.
    """
    neu = wert.replace("\x00", ERSATZ)
    try:
        neu.encode("utf-8")
    except UnicodeEncodeError:
        neu = "".join(ERSATZ if 0xD800 <= ord(z) <= 0xDFFF else z for z in neu)
    if neu != wert:
        bilanz.ersetzt += 1
    return neu


def _fehlertext(wert: object) -> str | None:
    # Wie die Regeln: null und "" heißen „kein Fehler“; alles andere ist einer.
    if wert is None or isinstance(wert, str):
        return wert
    return json.dumps(wert, ensure_ascii=False)


def kandidatenzeilen(artikel: list[dict], name: str, bilanz: Einlesebilanz) -> dict[tuple[int, str], tuple]:
    """(item_id, extraktor) -> (text, fehler); Formfehler brechen mit Ort ab."""
    zeilen: dict[tuple[int, str], tuple] = {}
    for index, eintrag in enumerate(artikel):
        item_id = eintrag.get("item_id")
        if not isinstance(item_id, int) or isinstance(item_id, bool) or not -(2**63) <= item_id < 2**63:
            raise EingabeFehler(
                f"{name}: Artikel [{index}] hat keine ganzzahlige item_id (gefunden: {item_id!r:.40}); "
                "nichts eingelesen."
            )
        bilanz.items.add(item_id)
        extraktionen = eintrag.get("extractions")
        if not isinstance(extraktionen, dict):
            raise EingabeFehler(
                f"{name}: Artikel [{index}] (item_id {item_id}) hat kein Objekt „extractions“; nichts eingelesen."
            )
        for extraktor, kandidat in extraktionen.items():
            extraktor = _fuer_postgres(extraktor, bilanz)
            if isinstance(kandidat, dict):
                text = kandidat.get("text")
                text = _fuer_postgres(text, bilanz) if isinstance(text, str) else None
                fehler = _fehlertext(kandidat.get("error"))
                fehler = _fuer_postgres(fehler, bilanz) if fehler else fehler
            else:  # die Regeln nennen das „nicht verfügbar“; text NULL sagt dasselbe
                text, fehler = None, _fuer_postgres(f"kein Objekt: {_fehlertext(kandidat)}"[:200], bilanz)
            if (item_id, extraktor) in zeilen:
                bilanz.doppelt += 1
            zeilen[(item_id, extraktor)] = (text, fehler)
            bilanz.namen[extraktor] += 1
    return zeilen


def einlesen(datei: str) -> Einlesebilanz:
    """Kandidaten aus einer Datei im Stapelformat nach extraktionen (Upsert).

    Die ganze Datei geht in einer Transaktion hinein: ein Fehler lässt
    extraktionen unverändert. Unbekannte item_ids werden gemeldet, nicht eingefügt.
    Kandidaten eines genannten Items, die die Datei nicht nennt, werden gelöscht.
    """
    import stapel

    start = time.perf_counter()
    name = stapel.anzeigename(datei)
    artikel = stapel.parsen(stapel.dekodieren(stapel.lesen(datei), name), name)
    bilanz = Einlesebilanz(artikel=len(artikel))
    zeilen = kandidatenzeilen(artikel, name, bilanz)
    del artikel
    url = db.datenbank_url()
    with db.fehler_uebersetzen(url), db.verbinden(url, "einlesen") as conn:
        voraussetzungen(conn)
        ids = sorted(bilanz.items)
        bekannt = {i for (i,) in conn.execute(SQL_BEKANNTE_ITEMS, (ids,))}
        bilanz.unbekannte_items = [i for i in ids if i not in bekannt]
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(SQL_TEMP_EINLESEN)
            with cur.copy(SQL_COPY_EINLESEN) as copy:
                for (item_id, extraktor), (text, fehler) in zeilen.items():
                    if item_id in bekannt:
                        copy.write_row((item_id, extraktor, text, fehler))
                        bilanz.zeilen += 1
            cur.execute(SQL_UPSERT_EINLESEN)
            for (ist_neu,) in cur.fetchall():
                if ist_neu:
                    bilanz.neu += 1
                else:
                    bilanz.geaendert += 1
            cur.execute(SQL_ENTFERNEN_EINLESEN, (sorted(bekannt),))
            bilanz.entfernt = cur.rowcount
    _einlesen_berichten(bilanz, name, time.perf_counter() - start)
    return bilanz


def _einlesen_berichten(bilanz: Einlesebilanz, name: str, sekunden: float) -> None:
    import stapel

    if bilanz.unbekannte_items:
        zeige = ", ".join(map(str, bilanz.unbekannte_items[:20]))
        mehr = (
            f" und {len(bilanz.unbekannte_items) - 20} weitere" if len(bilanz.unbekannte_items) > 20 else ""
        )
        click.echo(
            f"Warnung: {len(bilanz.unbekannte_items)} item_id(s) aus {name} gibt es nicht in raw_items "
            f"und wurden übergangen: {zeige}{mehr}.",
            err=True,
        )
    if bilanz.ersetzt:
        click.echo(
            f"Hinweis: {bilanz.ersetzt} Werte enthielten NUL-Zeichen oder einzelne Surrogate, die "
            f"PostgreSQL nicht speichert; sie wurden durch U+FFFD ersetzt.",
            err=True,
        )
    if bilanz.doppelt:
        click.echo(
            f"Warnung: {bilanz.doppelt} Kandidaten standen doppelt in {name}; der letzte gilt.", err=True
        )
    fremde = sorted(n for n in bilanz.namen if n not in PRIORITAET)
    if fremde:
        click.echo(
            "Hinweis: unbekannte Extraktornamen werden eingelesen, von der Auswahl aber übergangen: "
            + ", ".join(f"„{n}“{stapel.hinweis(n)}" for n in fremde),
            err=True,
        )
    unveraendert = bilanz.zeilen - bilanz.neu - bilanz.geaendert
    dauer = f"{sekunden:.1f}".replace(".", ",")
    click.echo(
        f"eingelesen: {bilanz.artikel} Artikel, {bilanz.zeilen} Kandidaten – neu {bilanz.neu}, "
        f"geändert {bilanz.geaendert}, unverändert {unveraendert}, entfernt {bilanz.entfernt}, "
        f"unbekannte Items {len(bilanz.unbekannte_items)} in {dauer} s"
    )
