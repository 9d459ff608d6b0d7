"""Datenbankmodi: --backfill, --slot, --trocken, --stichprobe, --teil (``--einlesen``: einlesen.py).

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
  oder neu, ein zweiter macht den Rest.
* ``sperren``: die Advisory-Locks (ganzer Lauf exklusiv, ``--teil`` geteilt
  plus die Sperre seines Teils).
* ``laeufe``: das Protokoll in ``auswahl_laeufe``; ``fortschritt``: der
  Fortschritt auf stderr, am Terminal und ohne.

``--trocken`` vergleicht nur (lesend) und schreibt nichts, auch kein Protokoll.

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
from dataclasses import dataclass, field
from datetime import datetime

import click
import psycopg
from psycopg import sql

import db
from auswahlstufe import kerne
from auswahlstufe.anzeige import zahl
from auswahlstufe.fehler import Abgebrochen, StufenFehler, als_stufenfehler
from auswahlstufe.fortschritt import fortschritt
from auswahlstufe.lauf import bereich, laeufe, lesen, migrationen
from auswahlstufe.lauf.abbruch import Abbruch
from auswahlstufe.lauf.arbeiter import ZEITLIMIT, Arbeiter, Stapel
from auswahlstufe.lauf.kodierung import Stapelergebnis, stapel_kodieren, vorsortieren
from auswahlstufe.lauf.schreiben import SQL_TEMP, stapel_schreiben
from auswahlstufe.lauf.sperren import freigeben, sperren
from auswahlstufe.pruefung import stichprobe as stichprobe_modul
from version import PRIORITAET, Variante

STAPEL = 200  # Items je Stapel = je Schreibtransaktion = je Leseseite
STAPEL_JE_PROZESS = 2  # so viele Stapel je Worker gleichzeitig unterwegs

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

    def zeile(self) -> str:
        dauer = zahl(self.sekunden)
        nachgetragen = f", Eingabe-Summe nachgetragen {self.nachgetragen}" if self.nachgetragen else ""
        return (
            f"neu {self.neu}, geändert {self.geaendert}, unverändert {self.unveraendert}, "
            f"entfernt {self.entfernt}, ohne Kandidaten {self.ohne_kandidaten}{nachgetragen} in {dauer} s"
        )


# --- Datenbank ---------------------------------------------------------------------


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
    argumente: dict  # für waehle: die der Variante, leer für die Voreinstellung
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
    variante: Variante | None = None,
    vorlauf: Callable[..., object] | None = None,
) -> Bilanz:
    """Ein Lauf: ``slot=None`` heißt --backfill.

    ``vorlauf(abbruch, zaehlung)`` läuft vor der Auswahl, unter der Sperre und im
    Protokoll des Laufs (``--extrahieren``: ``extraktion_stufe.extrahieren``); sein
    Fehler oder Abbruch ist der des Laufs, seine Zählung (ein Verzeichnis, das er
    füllt) steht im Protokoll (``auswahl_laeufe.extraktion``).

    Mit ``variante`` (``--variante``) kodiert der Lauf unter ihrer eigenen
    coder_version und mit ihren Parametern für ``waehle``: Sperre, Bestand,
    Protokoll und jede geschriebene Zeile tragen diese Version, keine Zeile
    einer anderen Version wird gelesen oder geschrieben.
    """
    version = (variante or Variante()).coder_version
    argumente = variante.argumente() if variante is not None else {}
    bedingungen: list[sql.Composable] = [lesen.BEDINGUNG_ALLE]
    params: dict[str, object] = {"version": version, "bekannt": list(PRIORITAET), "alle": bool(stichprobe)}
    slot_zeit = bereich.slot_parsen(slot) if slot is not None else None
    if slot_zeit is not None:
        params["slot"] = slot_zeit
        bedingungen.append(lesen.BEDINGUNG_SLOT)
    teil_kn = bereich.teil_parsen(teil) if teil else None
    if teil_kn:
        params["k"], params["n"] = teil_kn[0] - 1, teil_kn[1]
        bedingungen.append(lesen.BEDINGUNG_TEIL)
    url = db.datenbank_url()
    prozesse = prozesse or kerne.nutzbar()
    dieser = _Lauf(
        version,
        sql.SQL(" and ").join(bedingungen),
        params,
        slot_zeit,
        teil_kn,
        trocken,
        stichprobe,
        prozesse,
        argumente,
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
                migrationen.voraussetzungen(leser)
                if trocken:
                    if vorlauf is not None:
                        vorlauf(abbruch)
                        dieser.start = time.perf_counter()  # die Bilanz zählt die Auswahl allein
                    _ablauf(dieser, leser, None, arbeiter, abbruch)
                else:
                    _protokolliert(dieser, url, leser, arbeiter, abbruch, vorlauf)
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


def _protokolliert(dieser: _Lauf, url: str, leser, arbeiter, abbruch: Abbruch, vorlauf=None) -> None:
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
                if vorlauf is not None:
                    dieser.bilanz.extraktion = {}
                    vorlauf(abbruch, dieser.bilanz.extraktion)
                    dieser.start = time.perf_counter()  # die Bilanz zählt die Auswahl allein
                _ablauf(dieser, leser, schreiber, arbeiter, abbruch)
        except (StufenFehler, db.Fehler) as fehler:
            stufenfehler = als_stufenfehler(fehler)
            code, meldung = stufenfehler.exit_code, stufenfehler.format_message()
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
        contextlib.suppress(psycopg.Error, StufenFehler, db.Fehler),
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
    except (psycopg.Error, StufenFehler, db.Fehler):
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
    version, bilanz, auswahl, argumente = dieser.version, dieser.bilanz, dieser.auswahl, dieser.argumente
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
        click.echo(stichprobe_modul.zeile(pfad))
