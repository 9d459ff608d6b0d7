"""Datenbankmodi: --backfill, --slot, --nachholen, --trocken, --stichprobe, --teil (``--einlesen``: einlesen.py).

Dieses Modul ist der Ablauf eines Laufs; die Teile stehen je in ihrem Modul:

* ``bereich``: welche Items (``--slot`` in Europe/Berlin, ``--teil K/N``);
  ``migrationen.voraussetzungen``: raw_items und alle Migrationen da?
* ``lesen``: die Items in Keyset-Seiten, jede Seite eine eigene kurze
  Transaktion; die Eingabe-Summe bildet der Server, die Texte kommen nur, wo
  sie sich änderte.
* ``kodierung``: ``vorsortieren`` (was ohne Rechnen erledigt ist) und
  ``stapel_kodieren`` (``waehle`` und ``bereinigen`` je Item, Zeilen als
  fertige COPY-Daten) – in den Workern.
* ``arbeiter``: die Worker-Prozesse, das Zeitlimit je Stapel, tote Worker.
  Höchstens ``2 × Prozesse`` Stapel sind unterwegs: der Speicher bleibt flach,
  wie groß der Bestand auch ist. ``abbruch``: SIGINT/SIGTERM merken, nach dem
  laufenden Stapel aufhören.
* ``schreiben``: je Stapel eine Transaktion (COPY, Upsert, Eingabe-Summe
  nachtragen, Entfernen); ein abgebrochener Lauf hinterlässt jede Zeile alt
  oder neu, ein zweiter macht den Rest. Items, die Ingest inzwischen löschte,
  entfallen und werden gezählt.
* ``sperren``: die Advisory-Locks (ganzer Lauf exklusiv, ``--teil`` geteilt
  plus die Sperre seines Teils); ``wache``: hält die Verbindungen wach und
  prüft vor jedem Stapel, dass die Sperre noch gehalten ist.
* ``laeufe``: das Protokoll in ``auswahl_laeufe`` (schließt Läufe, die nie
  endeten); ``nachholen``: welche Slots noch offen sind;
  ``ausgabe``: stdout das Protokoll, stderr was ein Mensch sehen muss, der
  Zeilenkopf im cron-Log; ``fortschritt``: der Fortschritt, am Terminal und ohne.

``--nachholen`` kodiert jeden offenen Slot als eigenen Slot-Lauf, der älteste
zuerst, alle unter einer Sperre und in einem Aufruf (``modus = 'nachholen'``).

``--trocken`` vergleicht nur (lesend) und schreibt nichts, auch kein Protokoll.

Was ein Lauf über Items weiß, die sich während des Laufs ändern: ein Item, das
Ingest löscht, nachdem der Lauf es las, entfällt (gezählt, nicht geschrieben).
Ein Item, das Ingest einfügt, sieht der Lauf, wenn seine id hinter der
Leseposition liegt (größer als die zuletzt gelesene); sonst der nächste Lauf (``--nachholen`` findet den Slot
offen: ein Item mit Kandidaten ohne Entscheidung). Ändern sich Kandidaten, nachdem der Lauf sie las,
schreibt er die Entscheidung über das Gelesene und dessen Eingabe-Summe; der
nächste Lauf sieht die neue Summe und rechnet das Item neu.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta

import click
import psycopg
from psycopg import sql

import db
from auswahlstufe import kerne
from auswahlstufe.anzeige import zahl
from auswahlstufe.fehler import Abgebrochen, LaufGesperrt, LaufGesperrtLeise, StufenFehler, als_stufenfehler
from auswahlstufe.fortschritt import fortschritt
from auswahlstufe.lauf import ausgabe, bereich, laeufe, lesen, migrationen, nachholen
from auswahlstufe.lauf.abbruch import Abbruch
from auswahlstufe.lauf.arbeiter import ZEITLIMIT, Arbeiter, Stapel
from auswahlstufe.lauf.kodierung import Stapelergebnis, stapel_kodieren, vorsortieren
from auswahlstufe.lauf.schreiben import SQL_TEMP, stapel_schreiben
from auswahlstufe.lauf.sperren import SPERR_PRAEFIX, WIEDERHOLEN, freigeben, sperren
from auswahlstufe.lauf.wache import Wache, durchlaufen
from auswahlstufe.pruefung import stichprobe as stichprobe_modul
from version import PRIORITAET, Variante

STAPEL = 200  # Items je Stapel = je Schreibtransaktion = je Leseseite
STAPEL_JE_PROZESS = 2  # so viele Stapel je Worker gleichzeitig unterwegs
# Hält ein anderer Lauf die Sperre, endet --nachholen mit Exit 5 still (Hinweis im Protokoll,
# keine Mail): der nächste Aufruf holt nach. Läuft der andere schon länger, oder ist er
# unbekannt, ist es eine Meldung auf stderr – dann hängt vielleicht etwas.
STILL_WARTEN = timedelta(hours=6)

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
    # Items, die Ingest löschte, nachdem der Lauf sie las: nicht geschrieben.
    entfallen: int = 0
    items: int = 0  # Items im Bereich, als die Auswahl begann
    gerechnet: int = 0  # Items, die waehle sah
    unbekannte_zeilen: Counter = field(default_factory=Counter)
    stapel: int = 0
    sekunden: float = 0.0
    extraktion: dict[str, int] | None = None  # die Zählung des Vorlaufs (--extrahieren), fürs Protokoll

    def zaehlung(self) -> dict[str, int]:
        """Die Zählung des Laufs für den Kopf der Stichprobenseite."""
        return {
            "neu": self.neu,
            "geändert": self.geaendert,
            "unverändert": self.unveraendert,
            "entfernt": self.entfernt,
            "ohne Kandidaten": self.ohne_kandidaten,
        }

    def dazu(self, andere: Bilanz) -> None:
        """Die Bilanz eines Slots zur Summe eines Aufrufs von --nachholen."""
        for feld in fields(self):
            if feld.name == "extraktion":
                if andere.extraktion is not None:
                    summe = Counter(self.extraktion or {})
                    summe.update(andere.extraktion)
                    self.extraktion = dict(summe)
            elif feld.name != "sekunden":
                setattr(self, feld.name, getattr(self, feld.name) + getattr(andere, feld.name))

    def zeile(self) -> str:
        dauer = zahl(self.sekunden)
        entfallen = f", entfallen {self.entfallen}" if self.entfallen else ""
        nachgetragen = f", Eingabe-Summe nachgetragen {self.nachgetragen}" if self.nachgetragen else ""
        return (
            f"neu {self.neu}, geändert {self.geaendert}, unverändert {self.unveraendert}, "
            f"entfernt {self.entfernt}, ohne Kandidaten {self.ohne_kandidaten}{entfallen}{nachgetragen} "
            f"in {dauer} s"
        )


# --- Einstieg: Lauf ------------------------------------------------------------------


@dataclass
class _Sitzung:
    """Was alle Teile eines Aufrufs teilen: Verbindungen, Worker, Wache, Einstellungen."""

    url: str
    version: str
    variante: str | None  # Name der Variante fürs Protokoll, None für die Voreinstellung
    argumente: dict  # für waehle: die der Variante, leer für die Voreinstellung
    prozesse: int
    trocken: bool
    stichprobe: int | None
    arbeiter: Arbeiter | None
    abbruch: Abbruch
    wache: Wache
    leser: psycopg.Connection
    # vorlauf(slot, abbruch=…): --extrahieren, vor der Auswahl jedes Bereichs
    vorlauf: Callable[..., object] | None
    schreiber: psycopg.Connection | None = None

    def lesend(self):
        return self.wache.benutzt(self.leser)

    def schreibend(self):
        return self.wache.benutzt(self.schreiber)  # ohne Schreiber (trocken): kennt die Wache keine


@dataclass
class _Lauf:
    """Was ein Lauf (ein Bereich: alles, ein Slot, ein Teil) über sich weiß, während er läuft."""

    bedingung: sql.Composable
    params: dict
    slot: datetime | None
    teil: tuple[int, int] | None
    bilanz: Bilanz = field(default_factory=Bilanz)
    auswahl: stichprobe_modul.Stichprobe | None = None
    start: float = field(default_factory=time.perf_counter)


def _bereich(s: _Sitzung, slot: datetime | None, teil: tuple[int, int] | None) -> _Lauf:
    bedingungen: list[sql.Composable] = [lesen.BEDINGUNG_ALLE]
    params: dict[str, object] = {
        "version": s.version,
        "bekannt": list(PRIORITAET),
        "alle": bool(s.stichprobe),
    }
    if slot is not None:
        params["slot"] = slot
        bedingungen.append(lesen.BEDINGUNG_SLOT)
    if teil:
        params["k"], params["n"] = teil[0] - 1, teil[1]
        bedingungen.append(lesen.BEDINGUNG_TEIL)
    return _Lauf(
        sql.SQL(" and ").join(bedingungen),
        params,
        slot,
        teil,
        auswahl=stichprobe_modul.Stichprobe(s.stichprobe) if s.stichprobe else None,
    )


def lauf(
    slot: str | None = None,
    trocken: bool = False,
    stichprobe: int | None = None,
    teil: str | None = None,
    prozesse: int | None = None,
    stapel_zeitlimit: float = ZEITLIMIT,
    variante: Variante | None = None,
    vorlauf: Callable[..., object] | None = None,
    nachholen_hoechstens: int | None = None,
) -> Bilanz:
    """Ein Lauf: ``slot=None`` heißt --backfill, ``nachholen_hoechstens`` --nachholen.

    ``vorlauf(slot, abbruch=…, zaehlung=…)`` läuft vor der Auswahl jedes Bereichs
    (``slot`` als Text mit Offset, None für alles), unter der Sperre und im Protokoll
    des Laufs (``--extrahieren``: ``extraktion_stufe.extrahieren``); sein Fehler oder
    Abbruch ist der des Laufs, seine Zählung (ein Verzeichnis, das er füllt) steht im
    Protokoll (``auswahl_laeufe.extraktion``).

    Mit ``variante`` (``--variante``) kodiert der Lauf unter ihrer eigenen
    coder_version und mit ihren Parametern für ``waehle``: Sperre, Bestand,
    Protokoll und jede geschriebene Zeile tragen diese Version, keine Zeile
    einer anderen Version wird gelesen oder geschrieben.
    """
    version = (variante or Variante()).coder_version
    slot_zeit = bereich.slot_parsen(slot) if slot is not None else None
    teil_kn = bereich.teil_parsen(teil) if teil else None
    if slot_zeit is not None:
        ausgabe.slot_setzen(laeufe.slot_text(slot_zeit))
    url = db.datenbank_url()
    prozesse = prozesse or kerne.nutzbar()

    # Die Worker entstehen vor den Verbindungen: geforkte Worker sollen keine
    # Verbindung erben (ein geerbter Socket, den ein Kind schließt, träfe den Lauf).
    arbeiter = Arbeiter(prozesse, stapel_zeitlimit) if prozesse > 1 else None
    ausgang: BaseException | None = None
    try:
        with db.fehler_uebersetzen(url), Abbruch() as abbruch, Wache(url) as wache:
            leser = db.verbinden(url, "lesen", autocommit=True)
            try:
                migrationen.voraussetzungen(leser)
                with wache.angemeldet(leser):
                    s = _Sitzung(
                        url,
                        version,
                        variante.name if variante is not None else None,
                        variante.argumente() if variante is not None else {},
                        prozesse,
                        trocken,
                        stichprobe,
                        arbeiter,
                        abbruch,
                        wache,
                        leser,
                        vorlauf,
                    )
                    if nachholen_hoechstens is not None:
                        return _nachholen(s, nachholen_hoechstens)
                    dieser = _bereich(s, slot_zeit, teil_kn)
                    if trocken:
                        _einheit(s, dieser)
                    else:
                        _protokolliert(s, dieser)
                    return dieser.bilanz
            finally:
                leser.close()
    except BaseException as fehler:
        ausgang = fehler
        raise
    finally:
        if arbeiter is not None and not arbeiter.beenden():
            _hart_beenden(ausgang)


def _hart_beenden(ausgang: BaseException | None) -> None:
    """Melden und den Prozess ohne Aufräumen beenden: der Executor kam nicht zur Ruhe."""
    if (stufenfehler := als_stufenfehler(ausgang)) is not None:
        stufenfehler.show()
        code = stufenfehler.exit_code
    elif ausgang is None:
        code = 0
    else:
        click.echo(f"Fehler: {type(ausgang).__name__}: {ausgang}", err=True)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@contextlib.contextmanager
def _protokolliert_als(s: _Sitzung, lauf_id: int | None, bilanz: Bilanz):
    """Ein Eintrag in auswahl_laeufe: am Ende mit Bilanz, Exit-Code und Meldung ausgetragen."""
    code, meldung = 0, None
    try:
        yield
    except (StufenFehler, db.Fehler) as fehler:
        stufenfehler = als_stufenfehler(fehler)
        code, meldung = stufenfehler.exit_code, stufenfehler.format_message()
        raise
    except BaseException as fehler:
        code, meldung = 1, f"{type(fehler).__name__}: {fehler}"
        raise
    finally:
        if lauf_id is not None:
            _abmelden(s, lauf_id, bilanz, code, meldung)


@contextlib.contextmanager
def _schreibverbindung(s: _Sitzung):
    """Die Schreibverbindung des Aufrufs: hält die Sperre; am Ende gelöst und geschlossen."""
    s.schreiber = db.verbinden(s.url, "schreiben", autocommit=True)
    try:
        with s.wache.angemeldet(s.schreiber):
            yield s.schreiber
    finally:
        freigeben(s.schreiber)


def _sperren(s: _Sitzung, teil: tuple[int, int] | None, lauf_id: int | None, weiter: str = "") -> None:
    """Sperre nehmen (oder Exit 5, ``weiter`` am Ende der Meldung), Läufe schließen, die nie
    endeten, Zwischenablage anlegen."""
    with s.schreibend():
        namen = sperren(s.schreiber, s.version, teil, weiter)
        s.wache.sperre_setzen(s.schreiber, namen)
        laeufe.verwaiste_schliessen(s.schreiber, SPERR_PRAEFIX, lauf_id)
        s.schreiber.execute(SQL_TEMP)


def _protokolliert(s: _Sitzung, dieser: _Lauf) -> None:
    """Der schreibende Lauf (--backfill, --slot): Sperre, Protokoll am Anfang und am Ende."""
    with _schreibverbindung(s) as schreiber:
        with s.schreibend():
            lauf_id = laeufe.beginnen(
                schreiber,
                slot=dieser.slot,
                teil=dieser.teil,
                version=s.version,
                prozesse=s.prozesse,
                stichprobe=s.stichprobe,
                extrahieren=s.vorlauf is not None,
                variante=s.variante,
            )
        with _protokolliert_als(s, lauf_id, dieser.bilanz), db.fehler_uebersetzen(s.url):
            _sperren(s, dieser.teil, lauf_id, WIEDERHOLEN)
            _einheit(s, dieser)


def _nachholen(s: _Sitzung, hoechstens: int) -> Bilanz:
    """--nachholen: jeden offenen Slot als eigenen Slot-Lauf, der älteste zuerst."""
    summe = Bilanz()
    start = time.perf_counter()
    mit_seiten = s.vorlauf is not None
    if s.trocken:
        with s.lesend():
            slots, offen = nachholen.offene_slots(s.leser, s.version, hoechstens, mit_seiten=mit_seiten)
        for slot in slots:
            ausgabe.slot_setzen(laeufe.slot_text(slot))
            dieser = _bereich(s, slot, None)
            _einheit(s, dieser)
            summe.dazu(dieser.bilanz)
        _rest_melden(offen, len(slots))
        summe.sekunden = time.perf_counter() - start
        return summe
    with _schreibverbindung(s) as schreiber:
        with s.schreibend():
            aufruf = laeufe.beginnen(
                schreiber,
                modus="nachholen",
                slot=None,
                teil=None,
                version=s.version,
                prozesse=s.prozesse,
                stichprobe=None,
                extrahieren=mit_seiten,
                variante=s.variante,
            )
        with _protokolliert_als(s, aufruf, summe), db.fehler_uebersetzen(s.url):
            try:
                _sperren(s, None, aufruf)
            except LaufGesperrt as fehler:
                seit = getattr(fehler, "seit", None)
                if seit is not None and datetime.now(seit.tzinfo) - seit < STILL_WARTEN:
                    raise LaufGesperrtLeise(
                        f"{fehler.format_message()} Nichts nachgeholt; der nächste Aufruf von --nachholen "
                        "holt nach."
                    ) from None
                raise
            with s.lesend():
                slots, offen = nachholen.offene_slots(s.leser, s.version, hoechstens, mit_seiten=mit_seiten)
            for slot in slots:
                ausgabe.slot_setzen(laeufe.slot_text(slot))
                dieser = _bereich(s, slot, None)
                with s.schreibend():
                    lauf_id = laeufe.beginnen(
                        schreiber,
                        slot=slot,
                        teil=None,
                        version=s.version,
                        prozesse=s.prozesse,
                        stichprobe=None,
                        extrahieren=mit_seiten,
                        variante=s.variante,
                        aufruf=aufruf,
                    )
                try:
                    # übersetzt, bevor der Slot-Lauf sein Ende einträgt: dort der Exit-Code des Fehlers
                    with _protokolliert_als(s, lauf_id, dieser.bilanz), db.fehler_uebersetzen(s.url):
                        _einheit(s, dieser)
                finally:
                    summe.dazu(dieser.bilanz)
            ausgabe.slot_setzen(None)
            _rest_melden(offen, len(slots))
    summe.sekunden = time.perf_counter() - start
    return summe


def _rest_melden(offen: int, genommen: int) -> None:
    if offen > genommen:
        click.echo(
            f"Hinweis: {offen - genommen} weitere Slots sind offen (--hoechstens {genommen}); der nächste "
            "Aufruf von --nachholen macht weiter."
        )


def _abmelden(s: _Sitzung, lauf_id: int, bilanz: Bilanz, code: int, meldung: str | None) -> None:
    """Das Ende ins Protokoll; ist die Schreibverbindung verloren, über eine neue."""
    schreiber = s.schreiber
    try:
        with s.schreibend():
            if schreiber.closed or schreiber.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                raise psycopg.OperationalError("Schreibverbindung verloren")
            laeufe.beenden(schreiber, lauf_id, bilanz, code, meldung)
        return
    except psycopg.Error:
        pass
    # Ist der Server weg, bleibt der Eintrag offen (ohne beendet_am), bis ein späterer Lauf
    # ihn als abgebrochen schließt; die Meldung des Laufs sagt schon, dass die Datenbank
    # nicht erreichbar ist.
    with (
        contextlib.suppress(psycopg.Error, StufenFehler, db.Fehler),
        db.verbinden(s.url, "protokoll", autocommit=True) as conn,
    ):
        laeufe.beenden(conn, lauf_id, bilanz, code, meldung)


def _einheit(s: _Sitzung, dieser: _Lauf) -> None:
    """Ein Bereich (alles, ein Slot, ein Teil): erst extrahieren (--extrahieren), dann wählen."""
    if s.vorlauf is not None:
        # die Zählung füllt der Vorlauf, auch bis zu einem Fehler; sie steht im Protokoll (aw-009)
        dieser.bilanz.extraktion = {}
        s.vorlauf(
            dieser.slot,
            abbruch=s.abbruch,
            zaehlung=dieser.bilanz.extraktion,
        )
        dieser.start = time.perf_counter()  # die Bilanz zählt die Auswahl allein
    _ablauf(s, dieser)


def _ablauf(s: _Sitzung, dieser: _Lauf) -> None:
    bilanz = dieser.bilanz
    with s.lesend():
        gesamt = lesen.zahl(s.leser, dieser.bedingung, dieser.params)
    bilanz.items = gesamt
    try:
        _verarbeiten(s, dieser, gesamt)
    except (psycopg.Error, StufenFehler, db.Fehler):
        # Was bis hierher geschrieben ist, bleibt (ganze Stapel); das soll man sehen.
        if bilanz.stapel and s.schreiber is not None:
            bilanz.sekunden = time.perf_counter() - dieser.start
            click.echo(f"Bis zum Fehler geschrieben: {bilanz.zeile()}", err=True)
        raise
    bilanz.sekunden = time.perf_counter() - dieser.start
    _berichten(bilanz, s.trocken, dieser.auswahl, s.version)
    if dieser.slot is not None and gesamt == 0:
        # Kein Fehler (ein leerer Poll) und nichts für einen Menschen: ins Protokoll.
        click.echo(
            f"Hinweis: Slot {laeufe.slot_text(dieser.slot)} hat keine Items in raw_items "
            f"{'(in diesem Teil) ' if dieser.teil else ''}– nichts zu tun."
        )
    if s.abbruch.signal is not None:
        raise Abgebrochen(
            f"Abgebrochen ({signal.Signals(s.abbruch.signal).name}) nach {bilanz.stapel} Stapeln; "
            "jede Zeile ist alt oder neu, ein erneuter Lauf macht den Rest."
        )


def _verarbeiten(s: _Sitzung, dieser: _Lauf, gesamt: int) -> None:
    # Kleine Bestände (ein Slot) in so viele Stapel teilen, dass jeder Worker
    # zwei bekommt; große in Stapel von STAPEL Items.
    groesse = max(1, min(STAPEL, -(-gesamt // (s.prozesse * STAPEL_JE_PROZESS))))
    version, bilanz, auswahl, argumente = s.version, dieser.bilanz, dieser.auswahl, s.argumente
    arbeiter, abbruch = s.arbeiter, s.abbruch
    n = auswahl.n if auswahl is not None else None
    # (Stapel, Future oder fertiges Ergebnis, lokal Erledigtes, abgegeben um)
    unterwegs: collections.deque = collections.deque()
    letzte_fertig = time.monotonic()

    def abschliessen(stapel: Stapel, ergebnis: Stapelergebnis) -> None:
        if s.schreiber is not None:
            with s.schreibend():
                try:
                    s.wache.sperre_pruefen()  # ohne Sperre kein Stapel: Exit 5, nichts halb
                    geschrieben = stapel_schreiben(s.schreiber, version, ergebnis)
                except psycopg.OperationalError as fehler:
                    s.wache.verloren(fehler, s.schreiber)
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
    grenze = s.prozesse * STAPEL_JE_PROZESS if arbeiter is not None else 1
    seiten = durchlaufen(s.leser, lesen.seiten_lesen(s.leser, dieser.bedingung, dieser.params, groesse))
    with fortschritt(gesamt, "Kodieren", ausgabe.fortschritt_datei()) as weiter:
        for nummer, zeilen in enumerate(seiten, 1):
            if abbruch.signal is not None:
                break
            stapel = Stapel(nummer, zeilen[0][0], zeilen[-1][0], len(zeilen))
            auftrag, lokal = vorsortieren(zeilen, alle=n is not None)
            del zeilen
            if arbeiter is not None and auftrag:
                unterwegs.append(
                    (stapel, arbeiter.abgeben(auftrag, version, n, argumente), lokal, time.monotonic())
                )
            else:
                fertig = stapel_kodieren(auftrag, version, n, argumente) if auftrag else Stapelergebnis()
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
    # Alles hier ist Protokoll (stdout): auch die übergangenen Zeilen unbekannter Extraktoren –
    # sie sind eine Auskunft über die Eingabe, keine Störung, und stünden sonst jeden Lauf in
    # der Mail von cron (check_db.py zählt sie ebenfalls).
    if trocken:
        click.echo(f"trocken, nichts geschrieben – würde: {bilanz.zeile()}")
    else:
        click.echo(bilanz.zeile())
    if bilanz.unbekannte_zeilen:
        namen = ", ".join(f"„{n}“ {z}" for n, z in sorted(bilanz.unbekannte_zeilen.items()))
        click.echo(
            f"Hinweis: {sum(bilanz.unbekannte_zeilen.values())} Kandidatenzeilen unbekannter "
            f"Extraktoren übergangen ({namen})."
        )
    if auswahl is not None:
        pfad = stichprobe_modul.schreiben(auswahl, version, zaehlung=bilanz.zaehlung())
        click.echo(stichprobe_modul.zeile(pfad))
