"""Ein Lauf der Auswahl in der Datenbank: --backfill, --slot, --nachholen, --trocken, --stichprobe, --teil.

Der Ablauf steht hier, die Teile je in ihrem Modul (``betrieb.kontext``, ``betrieb.bereich``,
``lesen``, ``kodierung``, ``schreiben``, ``betrieb.sperre``, ``betrieb.laeufe``, ``nachholen``):
docs/aufbau.md, „Ein Lauf“. Wie ein Lauf arbeitet und was er über Items weiß, die sich während
des Laufs ändern: docs/betrieb-lauf.md, „Wie ein Lauf arbeitet“ und „Ingest nebenan“.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import psycopg

import db
from auswahlstufe.anzeige import kurz
from auswahlstufe.betrieb import kontext, laeufe, migrationen, protokoll, sperre
from auswahlstufe.betrieb.abbruch import SofortAbbruch
from auswahlstufe.betrieb.bereich import Bereich, slot_parsen, teil_parsen
from auswahlstufe.betrieb.kontext import Laufkontext
from auswahlstufe.betrieb.pool import Auftrag, Fehlschlag, Pool
from auswahlstufe.betrieb.protokoll import log
from auswahlstufe.betrieb.sperre import SPERR_PRAEFIX, WIEDERHOLEN
from auswahlstufe.fehler import (
    Abgebrochen,
    EingabeFehler,
    StufenFehler,
    WorkerFehler,
    als_stufenfehler,
)
from auswahlstufe.fortschritt import fortschritt
from auswahlstufe.lauf import lesen, nachholen
from auswahlstufe.lauf.bilanz import Bilanz, Stapel
from auswahlstufe.lauf.kodierung import Stapelergebnis, stapel_kodieren, vorsortieren
from auswahlstufe.lauf.schreiben import SQL_TEMP, stapel_schreiben
from auswahlstufe.pruefung import stichprobe as stichprobe_modul

STAPEL = 200  # Items je Stapel = je Schreibtransaktion = je Leseseite
STAPEL_JE_PROZESS = 2  # so viele Stapel je Worker gleichzeitig unterwegs
ZEITLIMIT = 300.0  # Sekunden je Stapel (Voreinstellung von --stapel-zeitlimit)
STILL_WARTEN = timedelta(hours=6)

# --- Einstellungen und Vorlauf ------------------------------------------------------------


@dataclass(frozen=True)
class Einstellungen:
    """Wie ein Lauf rechnet: unter welcher coder_version (eine Variante: ihre eigene, mit ihren
    Schlüsselwörtern für ``waehle``), mit wie vielen Workern, trocken oder schreibend."""

    version: str
    variante: str | None = None  # Name der Variante fürs Protokoll, None für die Voreinstellung
    argumente: dict = field(default_factory=dict)  # für waehle; leer für die Voreinstellung
    prozesse: int = 1
    trocken: bool = False
    stichprobe: int | None = None
    stapel_zeitlimit: float = ZEITLIMIT


# Mit --extrahieren: die Extraktion vor der Auswahl jedes Bereichs, im Kontext des Laufs
# (docs/aufbau.md, „Ein Lauf“); sie füllt die Zählung, ihr Fehler oder Abbruch ist der des Laufs.
Vorlauf = Callable[[Laufkontext, Bereich, dict[str, int]], None]


@dataclass
class _Sitzung:
    """Ein Aufruf: sein Kontext, seine Einstellungen, sein Vorlauf."""

    k: Laufkontext
    e: Einstellungen
    vorlauf: Vorlauf | None


# --- Einstieg ------------------------------------------------------------------------------


def lauf(
    einstellungen: Einstellungen,
    *,
    slot: str | None = None,
    teil: str | None = None,
    haus: str | None = None,
    seit: str | None = None,
    nachholen_hoechstens: int | None = None,
    vorlauf: Vorlauf | None = None,
) -> Bilanz:
    """Ein Lauf: ohne ``slot`` --backfill, mit ``nachholen_hoechstens`` --nachholen. ``haus`` ohne
    ``seit``: ab dem offenen Befund der Quellenwache für dieses Haus, ohne Befund alles."""
    e = einstellungen
    bereich = Bereich(
        slot_parsen(slot) if slot is not None else None,
        teil_parsen(teil) if teil else None,
        haus,
        slot_parsen(seit, "--seit") if seit is not None else None,
    )
    if bereich.slot is not None:
        protokoll.slot_setzen(laeufe.slot_text(bereich.slot))
    url = db.datenbank_url()
    auswahlpool = (
        (lambda: Pool(e.prozesse, zeitlimit=e.stapel_zeitlimit, neustart=False)) if e.prozesse > 1 else None
    )
    try:
        with (
            db.fehler_uebersetzen(url),
            kontext.oeffnen(
                url,
                schreibend=not e.trocken,
                auswahlpool=auswahlpool,
            ) as k,
        ):
            modus = (
                "trocken"
                if e.trocken
                else "extrahieren"
                if vorlauf
                else "stichprobe"
                if e.stichprobe
                else "lauf"
            )
            migrationen.voraussetzungen(k.leser, modus)
            if haus is not None and seit is None:
                bereich = dataclasses.replace(bereich, seit=nachholen.befund_seit(k.leser, haus))
                if bereich.seit is not None:
                    log.info(f"Haus {haus} ab {laeufe.slot_text(bereich.seit)} (Befund der Quellenwache)")
            s = _Sitzung(k, e, vorlauf)
            if nachholen_hoechstens is not None:
                return _nachholen(s, nachholen_hoechstens)
            if e.trocken:
                return _einheit(s, bereich).bilanz
            return _protokolliert(s, bereich)
    except SofortAbbruch as sofort:
        raise _sofort(sofort) from None


def _sofort(sofort: SofortAbbruch) -> Abgebrochen:
    return Abgebrochen(
        f"Sofort abgebrochen ({sofort.wann}, {signal.Signals(sofort.signal).name}): "
        "die offene Transaktion ist zurückgerollt, die Worker sind beendet, die Sperren sind frei; "
        "jede Zeile ist alt oder neu, ein erneuter Lauf macht den Rest."
    )


# --- Protokoll und Sperre -------------------------------------------------------------------


def _beginnen(
    s: _Sitzung, *, modus: str | None = None, slot: datetime | None, teil=None, aufruf: int | None = None
) -> int | None:
    with s.k.verbindung_der_sperre() as conn:
        return laeufe.beginnen(
            conn,
            slot=slot,
            teil=teil,
            version=s.e.version,
            prozesse=s.e.prozesse,
            stichprobe=s.e.stichprobe,
            modus=modus,
            extrahieren=s.vorlauf is not None,
            variante=s.e.variante,
            aufruf=aufruf,
        )


@contextlib.contextmanager
def _protokolliert_als(s: _Sitzung, lauf_id: int | None, bilanz: Bilanz) -> Iterator[None]:
    """Ein Eintrag in auswahl_laeufe: am Ende mit Bilanz, Exit-Code und Meldung ausgetragen."""
    code, meldung = 0, None
    vorher, s.k.lauf_id = s.k.lauf_id, lauf_id
    try:
        with db.fehler_uebersetzen(s.k.url):
            yield
    except (StufenFehler, db.Fehler) as fehler:
        stufenfehler = als_stufenfehler(fehler)
        code, meldung = stufenfehler.exit_code, stufenfehler.format_message()
        raise
    except SofortAbbruch as sofort:
        fehler = _sofort(sofort)
        code, meldung = fehler.exit_code, fehler.format_message()
        raise
    except BaseException as fehler:
        code, meldung = 1, f"{type(fehler).__name__}: {fehler}"
        raise
    finally:
        s.k.lauf_id = vorher
        if lauf_id is not None:
            _abmelden(s, lauf_id, bilanz, code, meldung)


def _abmelden(s: _Sitzung, lauf_id: int, bilanz: Bilanz, code: int, meldung: str | None) -> None:
    """Das Ende ins Protokoll; ist die Schreibverbindung verloren, über eine neue."""
    conn = s.k.schreiber
    if not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        with contextlib.suppress(psycopg.Error):
            laeufe.beenden(conn, lauf_id, bilanz, code, meldung)
            return
    # Ist der Server weg, bleibt der Eintrag offen (docs/betrieb-lauf.md, „Protokoll der Läufe“).
    with (
        contextlib.suppress(psycopg.Error, StufenFehler, db.Fehler),
        db.verbinden(s.k.url, "protokoll", autocommit=True) as neu,
    ):
        laeufe.beenden(neu, lauf_id, bilanz, code, meldung)


def _vorbereiten(s: _Sitzung, lauf_id: int | None) -> None:
    """Läufe schließen, die nie endeten; die Zwischenablage anlegen."""
    with s.k.verbindung_der_sperre() as conn:
        laeufe.verwaiste_schliessen(conn, SPERR_PRAEFIX, lauf_id)
        conn.execute(SQL_TEMP)


def _protokolliert(s: _Sitzung, bereich: Bereich) -> Bilanz:
    """Der schreibende Lauf (--backfill, --slot): Protokoll am Anfang und am Ende; ein Slot unter
    seiner Sperre, ein Backfill nimmt sich Blöcke (``_auftraege``)."""
    lauf_id = _beginnen(s, slot=bereich.slot, teil=bereich.teil)
    bilanz = Bilanz()
    with _protokolliert_als(s, lauf_id, bilanz):
        if bereich.slot is not None:
            name = sperre.slot(s.e.version, bereich.slot, bereich.teil)
            if not s.k.nehmen(name):
                with s.k.verbindung_der_sperre() as conn:
                    raise sperre.gesperrt(conn, name, f"Slot {laeufe.slot_text(bereich.slot)}", WIEDERHOLEN)
        _vorbereiten(s, lauf_id)
        _einheit(s, bereich, bilanz)
    return bilanz


def _nachholen(s: _Sitzung, hoechstens: int) -> Bilanz:
    """--nachholen: jeden offenen Slot als eigenen Slot-Lauf, der neueste zuerst; einen, den ein
    anderer Tick gerade hat, überspringen."""
    summe = Bilanz()
    start = time.perf_counter()
    mit_seiten = s.vorlauf is not None
    if s.e.trocken:
        slots, offen = nachholen.offene_slots(s.k.leser, s.e.version, hoechstens, mit_seiten=mit_seiten)
        for slot in slots:
            with protokoll.mit_slot(laeufe.slot_text(slot)):
                summe.dazu(_einheit(s, Bereich(slot)).bilanz)
        _rest_melden(offen, len(slots))
        summe.sekunden = time.perf_counter() - start
        return summe
    aufruf = _beginnen(s, modus="nachholen", slot=None)
    with _protokolliert_als(s, aufruf, summe):
        _vorbereiten(s, aufruf)
        slots, offen = nachholen.offene_slots(s.k.leser, s.e.version, hoechstens, mit_seiten=mit_seiten)
        for slot in slots:
            with protokoll.mit_slot(laeufe.slot_text(slot)):
                name = sperre.slot(s.e.version, slot)
                if not s.k.nehmen(name):
                    _uebersprungen(s, slot, name)
                    continue
                lauf_id = _beginnen(s, slot=slot, aufruf=aufruf)
                bilanz = Bilanz()
                try:
                    with _protokolliert_als(s, lauf_id, bilanz):
                        _einheit(s, Bereich(slot), bilanz)
                finally:
                    summe.dazu(bilanz)
                s.k.loesen(name)
        _rest_melden(offen, len(slots))
        with s.k.verbindung_der_sperre() as conn:
            # neue Befunde auf stderr (cron mailt sie einmal), beendete ins Protokoll
            for neu, satz in nachholen.quellenwache(conn, s.e.version):
                (log.warning if neu else log.info)(f"Quellenwache: {satz}" if neu else satz)
    summe.sekunden = time.perf_counter() - start
    return summe


def _uebersprungen(s: _Sitzung, slot: datetime, name: str) -> None:
    """Ein anderer Tick hat den Slot: ein Hinweis im Protokoll – auf stderr, wenn jener schon
    länger als ``STILL_WARTEN`` läuft oder unbekannt ist (dann hängt vielleicht etwas)."""
    with s.k.verbindung_der_sperre() as conn:
        halter, seit = sperre.halter_von(conn, name)
    satz = f"Hinweis: Slot {laeufe.slot_text(slot)} bearbeitet gerade ein anderer Lauf{halter}; übersprungen."
    if seit is not None and datetime.now(seit.tzinfo) - seit < STILL_WARTEN:
        log.info(satz)
    else:
        log.warning(satz)


def _rest_melden(offen: int, genommen: int) -> None:
    if offen > genommen:
        log.info(
            f"Hinweis: {offen - genommen} weitere Slots sind offen (--hoechstens {genommen}); der nächste "
            "Aufruf von --nachholen macht weiter."
        )


# --- Ein Bereich ------------------------------------------------------------------------------


@dataclass
class _Einheit:
    """Ein Bereich (alles, ein Slot, ein Teil), während er läuft."""

    bereich: Bereich
    bilanz: Bilanz
    params: dict
    auswahl: stichprobe_modul.Stichprobe | None
    start: float = field(default_factory=time.perf_counter)


def _einheit(s: _Sitzung, bereich: Bereich, bilanz: Bilanz | None = None) -> _Einheit:
    """Erst extrahieren (--extrahieren), dann wählen."""
    auswahl = stichprobe_modul.Stichprobe(s.e.stichprobe) if s.e.stichprobe else None
    dieser = _Einheit(
        bereich, bilanz or Bilanz(), lesen.parameter(bereich, s.e.version, bool(s.e.stichprobe)), auswahl
    )
    if s.vorlauf is not None:
        # die Zählung füllt der Vorlauf, auch bis zu einem Fehler; sie steht im Protokoll (aw-009)
        dieser.bilanz.extraktion = {}
        s.vorlauf(s.k, bereich, dieser.bilanz.extraktion)
        dieser.start = time.perf_counter()  # die Bilanz zählt die Auswahl allein
    _ablauf(s, dieser)
    return dieser


def _ablauf(s: _Sitzung, dieser: _Einheit) -> None:
    bilanz = dieser.bilanz
    gesamt = lesen.zahl(s.k.leser, dieser.bereich, dieser.params)
    bilanz.items = gesamt
    if dieser.bereich.haus is not None and gesamt == 0:
        ab = f" ab {laeufe.slot_text(dieser.bereich.seit)}" if dieser.bereich.seit is not None else ""
        raise EingabeFehler(f"Keine Items für Haus „{dieser.bereich.haus}“ in raw_items{ab}.")
    try:
        _verarbeiten(s, dieser, gesamt)
    except (psycopg.Error, StufenFehler, db.Fehler):
        # Was bis hierher geschrieben ist, bleibt (ganze Stapel); das soll man sehen.
        if bilanz.stapel and not s.k.trocken:
            bilanz.sekunden = time.perf_counter() - dieser.start
            log.warning(f"Bis zum Fehler geschrieben: {bilanz.zeile()}")
        raise
    bilanz.sekunden = time.perf_counter() - dieser.start
    _berichten(bilanz, s.e, dieser.auswahl)
    if dieser.bereich.slot is not None and gesamt == 0:
        # Kein Fehler (ein leerer Poll) und nichts für einen Menschen: ins Protokoll.
        log.info(
            f"Hinweis: Slot {laeufe.slot_text(dieser.bereich.slot)} hat keine Items in raw_items "
            f"{'(in diesem Teil) ' if dieser.bereich.teil else ''}– nichts zu tun."
        )
    if s.k.abgebrochen:
        raise Abgebrochen(
            f"Abgebrochen ({s.k.abbruch.name()}) nach {bilanz.stapel} Stapeln; "
            "jede Zeile ist alt oder neu, ein erneuter Lauf macht den Rest."
        )


def _seiten(s: _Sitzung, dieser: _Einheit, groesse: int) -> Iterator[tuple[str | None, list[tuple]]]:
    """Die Seiten des Bereichs, je mit der Sperre, unter der sie stehen: ein schreibender Backfill
    nimmt sich Blöcke von ``groesse`` ids, die kein anderer hat (``betrieb.sperre``); ein Slot steht
    unter der Sperre seines Laufs, ein trockener Lauf unter keiner."""
    b = dieser.bereich
    if s.k.trocken or b.slot is not None:
        for zeilen in lesen.seiten_lesen(s.k.leser, b, dieser.params, groesse):
            yield None, zeilen
        return

    def name(nummer: int) -> str:
        return sperre.block(s.e.version, STAPEL, nummer, b.teil)

    # Blöcke überall STAPEL ids breit (gleiche Sperren auf jedem Rechner), in Stapel von ``groesse``
    # geteilt; die Sperre geht mit dem letzten Stapel des Blocks.
    bloecke = lesen.bloecke_lesen(
        s.k.leser, b, dieser.params, STAPEL, lambda nummer: s.k.nehmen(name(nummer))
    )
    while not s.k.abgebrochen:  # nach einem Signal keinen Block mehr nehmen
        nummer, zeilen = next(bloecke, (None, None))
        if zeilen is None:
            return
        if not zeilen:
            s.k.loesen(name(nummer))  # inzwischen gelöscht
        for ab in range(0, len(zeilen), groesse):
            yield name(nummer) if ab + groesse >= len(zeilen) else None, zeilen[ab : ab + groesse]


def _auftraege(s: _Sitzung, dieser: _Einheit, groesse: int, n: int | None) -> Iterator[Auftrag]:
    """Die Stapel des Bereichs in Lesereihenfolge, je mit ihrer Sperre: was ohne Rechnen erledigt
    ist (oder ohne Worker gerechnet wird), steht schon fest; der Rest geht an die Worker."""
    e = s.e
    for nummer, (name, zeilen) in enumerate(_seiten(s, dieser, groesse), start=1):
        if s.k.abgebrochen:
            return
        stapel = Stapel(nummer, zeilen[0][0], zeilen[-1][0], len(zeilen))
        auftrag, lokal = vorsortieren(zeilen, alle=n is not None)
        del zeilen
        argumente = (auftrag, e.version, n, e.argumente)
        if s.k.auswahlpool is not None and auftrag:
            yield Auftrag((stapel, lokal, name), stapel_kodieren, argumente)
        else:
            yield Auftrag(
                (stapel, lokal, name), ergebnis=stapel_kodieren(*argumente) if auftrag else Stapelergebnis()
            )


def _verarbeiten(s: _Sitzung, dieser: _Einheit, gesamt: int) -> None:
    # Kleine Bestände so teilen, dass jeder Worker zwei Stapel bekommt; große in Stapel von STAPEL.
    groesse = max(1, min(STAPEL, -(-gesamt // (s.e.prozesse * STAPEL_JE_PROZESS))))
    n = dieser.auswahl.n if dieser.auswahl is not None else None
    pool = s.k.auswahlpool
    auftraege = _auftraege(s, dieser, groesse, n)
    if pool is not None:
        fenster = s.e.prozesse * STAPEL_JE_PROZESS
        reihe = pool.reihe(auftraege, fenster, halt=lambda: s.k.abgebrochen)
    else:
        fenster = 1
        reihe = ((a.schluessel, a.ergebnis) for a in auftraege)
    with fortschritt(
        gesamt, "Kodieren", protokoll.fortschritt_datei(), melden=s.k.melder("Kodieren")
    ) as weiter:
        for (stapel, lokal, name), ergebnis in reihe:
            if isinstance(ergebnis, Fehlschlag):
                raise worker_fehler(s.e, stapel, ergebnis, fenster - 1)
            _abschliessen(s, dieser, lokal.dazu(ergebnis))
            if name is not None:
                s.k.loesen(name)  # geschrieben: der Block ist fertig
            weiter(stapel.items)


def worker_fehler(e: Einstellungen, stapel: Stapel, fehlschlag: Fehlschlag, unterwegs: int) -> WorkerFehler:
    """Die Meldung nennt die Ursache des Scheiterns und ihren Stapel – auch wenn der Stapel, der als
    erster an der Reihe war, nur mit den Workern beendet wurde (``mitgerissen``)."""
    if fehlschlag.ursache is not None:
        (stapel, *_), fehlschlag = fehlschlag.ursache
    weitere = f" (dazu bis zu {unterwegs} weitere Stapel unterwegs)" if unterwegs else ""
    if fehlschlag.art == "zeitlimit":
        return WorkerFehler(
            f"Zeitlimit je Stapel ({kurz(e.stapel_zeitlimit)} s, --stapel-zeitlimit) überschritten: "
            f"{stapel} ist nach {kurz(e.stapel_zeitlimit)} s nicht fertig{weitere}. Die Worker werden "
            "beendet; nichts von diesem Stapel ist geschrieben, ein erneuter Lauf setzt fort."
        )
    return WorkerFehler(
        f"Ein Worker-Prozess {_todesart(fehlschlag)}, während {stapel} an der Reihe war{weitere}. "
        "Die anderen Worker werden beendet; nichts von diesen Stapeln ist geschrieben, ein erneuter Lauf "
        "setzt fort."
    )


def _todesart(tot: Fehlschlag) -> str:
    """Wie ein Worker endete, so weit der Kern es sagt."""
    if tot.signalname == "SIGKILL":
        return "wurde getötet (SIGKILL: der OOM-Killer – dmesg zeigt es – oder kill -9)"
    if tot.signalname is not None:
        return f"ist abgestürzt ({tot.signalname if not tot.signalname.isdigit() else f'Signal {tot.signalname}'})"
    if tot.exitcode is not None:
        return f"endete unerwartet mit Exit-Code {tot.exitcode}"
    return "ist gestorben"


def _abschliessen(s: _Sitzung, dieser: _Einheit, ergebnis: Stapelergebnis) -> None:
    """Einen fertigen Stapel schreiben (auf der Verbindung mit den Sperren) und zählen."""
    bilanz = dieser.bilanz
    if not s.k.trocken:
        with s.k.schreiben() as conn:
            geschrieben = stapel_schreiben(conn, s.e.version, ergebnis)
        neu, geaendert, entfallen = geschrieben.neu, geschrieben.geaendert, geschrieben.entfallen
        entfernt, nachgetragen = geschrieben.entfernt, geschrieben.nachgetragen
    else:
        neu, geaendert, entfallen = ergebnis.neu, ergebnis.geaendert, 0
        entfernt, nachgetragen = len(ergebnis.entfernen), len(ergebnis.nachtragen)
    # Was die Datenbank nicht schrieb, war schon so (oder kam ihr zuvor) – oder entfiel.
    bilanz.neu += neu
    bilanz.geaendert += geaendert
    bilanz.unveraendert += (
        ergebnis.unveraendert + ergebnis.neu + ergebnis.geaendert - neu - geaendert - entfallen
    )
    bilanz.entfernt += entfernt
    bilanz.nachgetragen += nachgetragen
    bilanz.entfallen += entfallen
    bilanz.gerechnet += ergebnis.gerechnet
    bilanz.ohne_kandidaten += ergebnis.ohne_kandidaten
    bilanz.unbekannte_zeilen.update(ergebnis.unbekannte_zeilen)
    bilanz.stapel += 1
    if dieser.auswahl is not None:
        for fall in ergebnis.faelle:
            dieser.auswahl.beachte(fall)


def _berichten(bilanz: Bilanz, e: Einstellungen, auswahl) -> None:
    # Alles hier ist Protokoll (stdout), auch der Hinweis (docs/betrieb-lauf.md, „Was im cron-Log steht“).
    if e.trocken:
        log.info(f"trocken, nichts geschrieben – würde: {bilanz.zeile()}")
    else:
        log.info(bilanz.zeile())
    if bilanz.unbekannte_zeilen:
        namen = ", ".join(f"„{n}“ {z}" for n, z in sorted(bilanz.unbekannte_zeilen.items()))
        log.info(
            f"Hinweis: {sum(bilanz.unbekannte_zeilen.values())} Kandidatenzeilen unbekannter "
            f"Extraktoren übergangen ({namen})."
        )
    if auswahl is not None:
        pfad = stichprobe_modul.schreiben(auswahl, e.version, zaehlung=bilanz.zaehlung())
        log.info(stichprobe_modul.zeile(pfad))
