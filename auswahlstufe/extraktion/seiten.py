"""Extraktion: vom HTML einer Seite zu den drei Kandidaten.

Aus den Bytes (oder dem Text) einer Seite und ihrer URL entstehen die drei
Kandidaten im Stapelformat ``{"text", "error"}`` – mit genau den Einstellungen,
mit denen die veröffentlichten Kandidaten des Benchmarks entstanden
(bench/aeb, docs/extraktion.md):

* trafilatura: ``trafilatura.extract(html)`` mit Voreinstellungen;
* newspaper4k: ``Article(url, fetch_images=False)``, ``download(input_html=html)``,
  ``parse()``, ``.text``; koreanische Seiten mit ``word_tokenize(…, preserve_line=True)``
  (braucht keine NLTK-Daten), japanische mit tinysegmenter;
* readability: ``Document(html).summary()``, daraus Text mit Absatzgrenzen
  (``readability_text``).

Das sind die Stock-Aufrufe (``STOCK_AUFRUFE``). Zwei Eingriffe, beide an die geprüften
Fassungen gebunden (``fassungen.py``): newspaper4k wird deterministisch
(``newspaper_fest.py``: zwei Mengen in fester Reihenfolge; die einzige Abweichung von stock
newspaper4k; ohne geprüfte Fassung Exit 4), und die Stufe ruft die schnellen Aufrufe
(``AUFRUFE``, ``schnell.py``), die Byte für Byte dieselben Texte und Fehler geben wie die
Stock-Aufrufe mit diesem Fix – weicht dafür etwas von der geprüften Fassung ab, die
Stock-Aufrufe, mit einem Hinweis je Lauf (``beschleuniger_waehlen``).

Zeichensatz: eine Regel für alle drei, in ``zeichensatz.py`` (``dekodieren``, ``lesbar``).
Keine HTML-Seite (PDF, Bild, Archiv, Binärdaten; ``art.py``): alle drei Kandidaten
bekommen denselben Fehler, ohne dass ein Extraktor sie sieht.

Isolation (``Extraktion``): jeder Extraktor-Aufruf läuft in einem Worker-Prozess
mit Zeitlimit je Seite und Speichergrenze (``RLIMIT_AS``) und ohne Netz. Hängt
oder stirbt ein Worker, bekommt dieser Extraktor für diese Seite ein ``error``,
der Worker wird ersetzt, und der Lauf geht weiter. Die Worker entstehen über
einen forkserver, der die Extraktoren einmal lädt: ein neuer Worker ist sofort
bereit und erbt nichts vom Speicher des Hauptprozesses.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import multiprocessing
import multiprocessing.connection
import os
import re
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from auswahlstufe import kerne
from auswahlstufe.anzeige import kurz
from auswahlstufe.extraktion import art, fassungen, newspaper_fest, schnell
from auswahlstufe.extraktion.zeichensatz import dekodieren_roh, lesbar
from auswahlstufe.fehler import VoraussetzungFehlt

# Reihenfolge der Kandidaten in einer Ausgabe (wie in bench/aeb/candidates.json).
EXTRAKTOREN = ("trafilatura", "newspaper4k", "readability")
# Die Pakete hinter den Extraktoren (für die Versionen).
PAKETE = {"trafilatura": "trafilatura", "newspaper4k": "newspaper4k", "readability": "readability-lxml"}
# Was ein gespeichertes Ergebnis mitbestimmt, außer der Version des Pakets.
# Wer hier etwas ändert, zählt die Fassung hoch.
EINSTELLUNGEN = {
    "trafilatura": "extract(html), Voreinstellungen; Fassung 1",
    "newspaper4k": "Article(url, fetch_images=False), download(input_html), parse(); "
    "ko: word_tokenize(preserve_line=True); Kandidatenordnung fest (newspaper_fest); Fassung 2",
    "readability": "Document(html).summary(), Text mit Absatzgrenzen; Fassung 1",
}
ZEICHENSATZREGEL = (
    "bom>http>meta(geprueft)>utf-8>charset_normalizer(64k)>utf-8-ersatz, dann lesbar(); Fassung 1; "
    "Seitenart (art.keine_html) Fassung 1"
)

# Lädt der forkserver einmal; jeder Worker erbt sie fertig geladen.
VORLADEN = [
    "auswahlstufe.extraktion.seiten",
    "trafilatura",
    "newspaper",
    "readability",
    "newspaper.languages.ja",
    "lxml.html",
]

ZEITLIMIT_S = 30.0
# So lange darf ein neuer Worker brauchen, bis er bereit ist.
START_S = 120.0
BEREIT = "bereit"
# Exit-Code eines Workers, der an der Speichergrenze eine Nachricht nicht lesen konnte.
EXIT_SPEICHER = 75
# Zusätzlicher Adressraum je Worker über dem Stand nach seinem Start.
SPEICHERGRENZE_MB = 2048
# Nach so vielen Aufrufen wird ein Worker ersetzt: was Bibliotheken liegen
# lassen, wächst nicht über einen Lauf.
AUFRUFE_JE_WORKER = 300
# URL für newspaper4k, wenn ein Artikel keine hat (wie im Benchmark).
ERSATZ_URL = "http://example.com/{schluessel}.html"

# --- die drei Extraktoren (im Worker) ----------------------------------------------------

# Blockelemente: Leerzeile davor und danach (bench/README: p, div, li, h1–h6, tr, td, …).
BLOCKELEMENTE = frozenset(
    (
        *("p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th", "ul", "ol", "table"),
        *("blockquote", "pre", "section", "article", "header", "footer", "dl", "dt", "dd", "figure"),
        *("figcaption", "aside", "nav", "form", "hr", "address", "main"),
    )
)
_LEERRAUM = re.compile(r"\s+")
_VIELE_UMBRUECHE = re.compile(r"\n{3,}")


def readability_text(summary: str) -> str:
    """Das HTML von ``Document.summary()`` als Text mit Absatzgrenzen: Blockelemente
    mit Leerzeile davor und danach, ``<br>`` als Zeilenumbruch, Leerraum je Zeile
    zu einem Leerzeichen, mehr als zwei Umbrüche zu zwei."""
    import lxml.html

    wurzel = lxml.html.fromstring(summary)
    for element in wurzel.iter():
        if not isinstance(element.tag, str):
            continue
        if element.tag == "br":
            element.tail = "\n" + (element.tail or "")
        elif element.tag in BLOCKELEMENTE:
            element.text = "\n\n" + (element.text or "")
            element.tail = "\n\n" + (element.tail or "")
    zeilen = (_LEERRAUM.sub(" ", z).strip() for z in wurzel.text_content().split("\n"))
    return _VIELE_UMBRUECHE.sub("\n\n", "\n".join(zeilen)).strip()


def _trafilatura(html: str, url: str) -> str:
    import trafilatura

    return trafilatura.extract(html) or ""


def _newspaper4k(html: str, url: str) -> str:
    from newspaper import Article

    artikel = Article(url, fetch_images=False)
    artikel.download(input_html=html)
    artikel.parse()
    return artikel.text or ""


def _readability(html: str, url: str) -> str:
    from readability import Document

    return readability_text(Document(html).summary())


# Wie die veröffentlichten Kandidaten entstanden (mit newspaper_fest): Maßstab für schnell.py.
STOCK_AUFRUFE = {"trafilatura": _trafilatura, "newspaper4k": _newspaper4k, "readability": _readability}
# Was die Stufe ruft: dieselben Texte und Fehler, weniger Arbeit (schnell.py, nach vorbereiten()).
AUFRUFE = {**STOCK_AUFRUFE, "newspaper4k": schnell.newspaper4k_text}
# Was extrahieren() ruft: AUFRUFE oder STOCK_AUFRUFE, wie vorbereiten() es bekam.
_aufrufe = AUFRUFE


def _koreanisch_offline(text: str) -> list[str]:
    from nltk.tokenize import word_tokenize

    # preserve_line=True: ohne Satzzerlegung, die die NLTK-Daten „punkt_tab“ bräuchte
    return word_tokenize(text, preserve_line=True)


def vorbereiten(*, beschleuniger: bool = True) -> None:
    """Lädt die Extraktoren, stellt newspaper4k für koreanische Seiten auf einen Tokenizer
    ohne NLTK-Daten um, macht newspaper4k deterministisch (``newspaper_fest``) und spielt die
    Beschleuniger ein (``schnell``); ``extrahieren`` ruft dann ``AUFRUFE``. Mit
    ``beschleuniger=False`` nichts aus ``schnell``, ``extrahieren`` ruft ``STOCK_AUFRUFE``.
    Einmal je Prozess, in jedem Worker vor der ersten Seite, mit dem, was der Hauptprozess
    entschied (``beschleuniger_waehlen``); scheitert bei einer ungeprüften Fassung dessen, was
    es einspielt (``fassungen.FassungUngeprueft``)."""
    global _aufrufe
    import warnings

    warnings.filterwarnings("ignore")  # dateutil & Co. warnen je Seite auf Englisch
    import newspaper
    import readability
    import trafilatura  # noqa: F401

    del newspaper, readability
    importlib.import_module("newspaper.languages.ko").tokenizer = _koreanisch_offline
    importlib.import_module("newspaper.languages.ja")  # scheitert früh, wenn tinysegmenter fehlt
    newspaper_fest.einspielen()
    if beschleuniger:
        schnell.beschleuniger_einspielen()
    _aufrufe = AUFRUFE if beschleuniger else STOCK_AUFRUFE


def beschleuniger_waehlen() -> bool:
    """Im Hauptprozess, einmal je Lauf vor dem ersten Worker: laufen die Beschleuniger?

    newspaper_fest ist streng (``fassungen.newspaper_fest_pruefen``: sonst
    ``FassungUngeprueft``, Exit 4). Weicht sonst etwas von der geprüften Fassung ab
    (``fassungen.beschleuniger_abweichung``), False und eine Zeile ``Hinweis: …`` auf stderr:
    die Worker nehmen die Stock-Aufrufe, dieselben Texte, nur langsamer."""
    fassungen.newspaper_fest_pruefen()
    grund = fassungen.beschleuniger_abweichung()
    if grund is not None:
        print(fassungen.HINWEIS.format(grund=grund), file=sys.stderr, flush=True)
    return grund is None


def extrahieren(extraktor: str, html: str, url: str) -> str:
    """Ein Extraktor auf einer Seite, hier im Prozess (ohne Isolation; nach ``vorbereiten()``)."""
    return _aufrufe[extraktor](html, url)


def versionen() -> dict[str, str]:
    """Paketversion je Extraktor, z. B. ``{"trafilatura": "2.3.1", …}``."""
    try:
        return {name: importlib.metadata.version(paket) for name, paket in PAKETE.items()}
    except importlib.metadata.PackageNotFoundError as e:
        raise VoraussetzungFehlt(
            f"Der Extraktor {e.name} ist nicht installiert (pip install -e '.[extraktion]')."
        ) from None


def extraktor_fassung(extraktor: str, version: str) -> str:
    """Was eine gespeicherte Extraktion festhält: Paketversion, Einstellungen, Zeichensatzregel."""
    return f"{extraktor} {version}; {EINSTELLUNGEN[extraktor]}; Zeichensatz: {ZEICHENSATZREGEL}"


# --- Worker -----------------------------------------------------------------------------


class NetzGesperrt(OSError):
    pass


def _netz_sperren() -> None:
    """Kein Netz in der Extraktion: jeder Verbindungsversuch scheitert sofort."""
    import socket

    def gesperrt(*args, **kwargs):
        raise NetzGesperrt("Netzzugriff ist in der Extraktion gesperrt")

    socket.socket.connect = gesperrt
    socket.socket.connect_ex = gesperrt
    socket.create_connection = gesperrt
    socket.getaddrinfo = gesperrt


def _adressraum() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _worker(verbindung, speichergrenze_mb: int, beschleuniger: bool) -> None:
    """Schleife eines Workers: (nr, extraktor, html, url) rein, (nr, text, fehler) raus.
    ``beschleuniger``: wie der Hauptprozess entschied (``beschleuniger_waehlen``)."""
    import logging
    import resource

    # Strg-C trifft die ganze Prozessgruppe, systemd schickt SIGTERM an alle Prozesse der
    # Einheit: nur der Hauptprozess entscheidet, wann Schluss ist, und beendet die Worker selbst.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, ABBRUCHSIGNALE)  # vom forkserver geerbt; verfällt jetzt
    logging.disable(logging.CRITICAL)  # readability & Co. schreiben sonst Tracebacks nach stderr
    try:
        vorbereiten(beschleuniger=beschleuniger)
    except Exception as e:  # fehlendes Paket o. ä.: dem Hauptprozess sagen, warum
        verbindung.send(f"{type(e).__name__}: {e}")
        return
    _netz_sperren()
    grenze = _adressraum() + speichergrenze_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (grenze, grenze))
    try:
        _bedienen(verbindung, speichergrenze_mb)
    except (BrokenPipeError, ConnectionResetError):
        # Der Hauptprozess ist fort oder hat den Worker aufgegeben (Abbruch, Zeitlimit):
        # still enden, kein Traceback im cron-Log.
        return


def _bedienen(verbindung, speichergrenze_mb: int) -> None:
    verbindung.send(BEREIT)
    while True:
        try:
            auftrag = verbindung.recv()
        except EOFError:
            return
        except MemoryError:
            # Die Nachricht ist nur halb gelesen, der Rest steckt in der Leitung:
            # beenden, der Hauptprozess meldet die Speichergrenze und ersetzt den Worker.
            os._exit(EXIT_SPEICHER)
        if auftrag is None:
            return
        nr, extraktor, html, url = auftrag
        del auftrag
        try:
            ergebnis = (nr, extrahieren(extraktor, html, url), None)
        except MemoryError:
            ergebnis = (nr, None, speicher_fehler(speichergrenze_mb))
        except RecursionError:
            ergebnis = (nr, None, "Seite zu tief verschachtelt (Rekursionsgrenze)")
        except Exception as e:  # ein Extraktor darf an einer Seite scheitern
            beschreibung = f"{type(e).__name__}: {str(e)[:300]}"
            if _speichermangel(e):  # libxml2 meldet fehlenden Speicher als eigene Ausnahme
                ergebnis = (nr, None, f"{speicher_fehler(speichergrenze_mb)} ({extraktor}: {beschreibung})")
            else:
                ergebnis = (nr, None, f"Extraktor scheiterte: {beschreibung}")
        del html
        verbindung.send(ergebnis)


# So nennt libxml2 (über lxml) fehlenden Speicher; an der Speichergrenze kommt er so statt als
# MemoryError – readability etwa meldet „Unparseable: unknown error (<string>, line 0)“ (tests/test_extraktion_feindlich.py).
_SPEICHERMANGEL = re.compile(r"out of memory|memory allocation failed|^unknown error\b", re.IGNORECASE)


def _speichermangel(fehler: BaseException | None) -> bool:
    """Scheiterte der Aufruf am Speicher, auch wenn die Ausnahme anders heißt? Dann ist es ein
    Fehler der Umgebung, kein Urteil über die Seite (im Zweifel kostet das höchstens zwei
    weitere Versuche, ``extraktion.stufe.GRENZE``)."""
    for _ in range(10):  # die Kette aus __cause__/__context__, nicht endlos
        if fehler is None:
            return False
        if isinstance(fehler, MemoryError) or _SPEICHERMANGEL.search(str(fehler)):
            return True
        fehler = fehler.__cause__ or fehler.__context__
    return False


# --- Isolation und Verteilung ------------------------------------------------------------


@dataclass
class Seite:
    """Eine Seite zum Extrahieren: HTML als Bytes (nach der Zeichensatzregel) oder Text.

    ``extraktoren``: nur diese (etwa die, deren letzter Versuch scheiterte); None: alle.
    """

    html: bytes | str
    url: str | None = None
    schluessel: str = ""
    content_type: str | None = None
    extraktoren: tuple[str, ...] | None = None


@dataclass
class _Platz:
    prozess: multiprocessing.process.BaseProcess
    verbindung: multiprocessing.connection.Connection
    aufrufe: int = 0
    auftrag: tuple | None = None  # (seitennr, extraktor)
    frist: float = 0.0


@dataclass
class Statistik:
    aufrufe: int = 0
    zeitlimits: int = 0
    abstuerze: int = 0
    ersetzt: int = 0
    keine_html: int = 0  # Seiten, die keiner sah (art.keine_html)
    zeichensaetze: dict[str, int] = field(default_factory=dict)


class Extraktion:
    """Verteilt Extraktor-Aufrufe auf Worker-Prozesse, mit Zeitlimit und Speichergrenze.

    ``with Extraktion(prozesse=2) as ex: for nr, kandidaten in ex.seiten(seiten): …``
    liefert die Kandidaten in der Reihenfolge der Seiten; höchstens ein paar Seiten
    je Worker sind gleichzeitig unterwegs, der Speicher bleibt flach. Beim Start entscheidet
    der Hauptprozess einmal, ob die Worker die Beschleuniger einspielen
    (``beschleuniger_waehlen``), und gibt es jedem Worker mit, auch jedem Ersatz.
    """

    def __init__(
        self,
        prozesse: int | None = None,
        *,
        zeitlimit_s: float = ZEITLIMIT_S,
        speichergrenze_mb: int = SPEICHERGRENZE_MB,
        aufrufe_je_worker: int = AUFRUFE_JE_WORKER,
        extraktoren: tuple[str, ...] = EXTRAKTOREN,
    ) -> None:
        self.prozesse = prozesse or kerne.nutzbar()
        self.zeitlimit_s = zeitlimit_s
        self.speichergrenze_mb = speichergrenze_mb
        self.aufrufe_je_worker = aufrufe_je_worker
        self.extraktoren = extraktoren
        self.statistik = Statistik()
        self.beschleuniger = False  # entscheidet __enter__, einmal für alle Worker
        self._kontext = multiprocessing.get_context("forkserver")
        self._kontext.set_forkserver_preload(VORLADEN)
        self._plaetze: list[_Platz] = []

    def __enter__(self) -> Extraktion:
        self.beschleuniger = beschleuniger_waehlen()
        self._plaetze = [self._starten() for _ in range(self.prozesse)]
        return self

    def __exit__(self, *fehler) -> None:
        for platz in self._plaetze:
            self._beenden(platz, hart=platz.auftrag is not None or fehler[0] is not None)
        self._plaetze = []

    def worker_pids(self) -> list[int]:
        """Die Prozessnummern der laufenden Worker (für Überwachung und Tests)."""
        return [platz.prozess.pid for platz in self._plaetze]

    def _starten(self) -> _Platz:
        """Ein neuer Worker; erst zurück, wenn er seine Extraktoren geladen hat."""
        hier, dort = self._kontext.Pipe()
        prozess = self._kontext.Process(
            target=_worker,
            args=(dort, self.speichergrenze_mb, self.beschleuniger),
            daemon=True,
            name="extraktion",
        )
        _forkserver_ohne_abbruchsignale()  # ist er gestorben, kommt ein neuer, wieder mit Maske
        try:
            prozess.start()
        except (EOFError, OSError) as fehler:  # der forkserver starb mitten im Gespräch
            dort.close()
            hier.close()
            raise VoraussetzungFehlt(
                f"Ein Worker der Extraktion startet nicht: der forkserver antwortet nicht "
                f"({type(fehler).__name__}) – wurde er getötet?"
            ) from None
        dort.close()
        grund = None
        if hier.poll(START_S):
            try:
                antwort = hier.recv()
                grund = None if antwort == BEREIT else str(antwort)
                fehlt = re.search(r"No module named '([\w.]+)'", grund or "")
                if fehlt:
                    grund = f"das Modul {fehlt.group(1)} fehlt"
            except (EOFError, OSError):
                prozess.join(timeout=5)
                grund = f"beendet mit Exit-Code {prozess.exitcode}"
        else:
            grund = f"nach {START_S:g} s nicht bereit"
        if grund is not None:
            prozess.kill()
            prozess.join()
            hier.close()
            raise VoraussetzungFehlt(
                f"Ein Worker der Extraktion startet nicht ({grund}). Sind die Extraktoren installiert "
                "(.venv/bin/pip install -e '.[extraktion]')?"
            )
        return _Platz(prozess, hier)

    def _beenden(self, platz: _Platz, *, hart: bool) -> None:
        if hart:
            platz.prozess.kill()
        else:
            try:
                platz.verbindung.send(None)
            except OSError:
                platz.prozess.kill()
        platz.prozess.join(timeout=5)
        if platz.prozess.is_alive():
            platz.prozess.kill()
            platz.prozess.join()
        platz.verbindung.close()

    def _ersetzen(self, index: int, *, hart: bool) -> None:
        self._beenden(self._plaetze[index], hart=hart)
        self._plaetze[index] = self._starten()
        self.statistik.ersetzt += 1

    def seiten(self, seiten: Iterable[Seite]) -> Iterator[tuple[int, dict[str, dict]]]:
        """(Nummer, {extraktor: {"text", "error"}}) je Seite, in der Reihenfolge der Eingabe."""
        quelle = enumerate(seiten)
        offen: deque[tuple[int, str]] = deque()  # Aufrufe, die auf einen Worker warten
        texte: dict[int, tuple[str, str]] = {}  # seitennr → (html, url), solange Aufrufe offen
        fertig: dict[int, dict[str, dict]] = {}
        namen: dict[int, tuple[str, ...]] = {}  # seitennr → ihre Extraktoren, bis sie hinaus ist
        naechste = 0  # die nächste Seite, die hinaus darf
        erschoepft = False
        vorrat = 2 * self.prozesse  # so viele Seiten höchstens gleichzeitig in Arbeit

        while True:
            while not erschoepft and len(texte) < vorrat:
                try:
                    nr, seite = next(quelle)
                except StopIteration:
                    erschoepft = True
                    break
                namen[nr] = seite.extraktoren or self.extraktoren
                html, url, grund = self._vorbereiten(seite, nr)
                if grund is not None:  # keine HTML-Seite: kein Extraktor sieht sie
                    fertig[nr] = {name: {"text": None, "error": art.fehler(grund)} for name in namen[nr]}
                    continue
                texte[nr] = html, url
                fertig[nr] = {}
                offen.extend((nr, name) for name in namen[nr])
            while naechste in fertig and len(fertig[naechste]) == len(namen[naechste]):
                kandidaten = fertig.pop(naechste)
                yield naechste, {name: kandidaten[name] for name in namen.pop(naechste)}
                naechste += 1
            if erschoepft and not fertig:
                return
            for platz in self._plaetze:
                if platz.auftrag is None and offen:
                    self._senden(platz, offen.popleft(), texte)
            self._warten(texte, fertig, namen)

    def _vorbereiten(self, seite: Seite, nr: int) -> tuple[str, str, str | None]:
        """(Text für die Extraktoren, URL, None – oder warum es keine HTML-Seite ist)."""
        if isinstance(seite.html, bytes):
            html, herkunft = dekodieren_roh(seite.html, seite.content_type)
            zeichensatz, weg = herkunft.split(" ", 1)
            self.statistik.zeichensaetze[weg] = self.statistik.zeichensaetze.get(weg, 0) + 1
            grund = art.keine_html(html, seite.html, zeichensatz)
        else:
            html = seite.html
            grund = art.keine_html(html)
        if grund is not None:
            self.statistik.keine_html += 1
            return "", "", grund
        url = seite.url or ERSATZ_URL.format(schluessel=seite.schluessel or nr)
        return lesbar(html), url, None

    def _senden(self, platz: _Platz, auftrag: tuple[int, str], texte: dict) -> None:
        nr, name = auftrag
        html, url = texte[nr]
        platz.auftrag = auftrag
        platz.frist = time.monotonic() + self.zeitlimit_s
        platz.aufrufe += 1
        self.statistik.aufrufe += 1
        # Ist der Worker schon tot, merkt es _warten und ersetzt ihn.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            platz.verbindung.send((nr, name, html, url))

    def _warten(self, texte: dict, fertig: dict, namen: dict) -> None:
        belegt = [p for p in self._plaetze if p.auftrag is not None]
        if not belegt:
            return
        frist = min(p.frist for p in belegt)
        bereit = multiprocessing.connection.wait(
            [p.verbindung for p in belegt] + [p.prozess.sentinel for p in belegt],
            timeout=max(0.0, frist - time.monotonic()),
        )
        jetzt = time.monotonic()
        for index, platz in enumerate(list(self._plaetze)):
            if platz.auftrag is None:
                continue
            nr, name = platz.auftrag
            ergebnis = None
            if platz.verbindung in bereit or platz.prozess.sentinel in bereit:
                try:
                    _, text, fehler = platz.verbindung.recv()
                    ergebnis = {"text": text, "error": fehler}
                    # nach einem MemoryError ist der Speicher des Workers zerstückelt: ersetzen
                    ersetzen = platz.aufrufe >= self.aufrufe_je_worker or (fehler or "").startswith(
                        speicher_fehler(self.speichergrenze_mb)
                    )
                    hart = False
                except (EOFError, OSError):
                    platz.prozess.join(timeout=5)
                    ergebnis = {"text": None, "error": self._todesursache(platz.prozess.exitcode)}
                    self.statistik.abstuerze += 1
                    ersetzen, hart = True, True
            elif jetzt >= platz.frist:
                ergebnis = {"text": None, "error": f"Zeitlimit {kurz(self.zeitlimit_s)} s überschritten"}
                self.statistik.zeitlimits += 1
                ersetzen, hart = True, True
            if ergebnis is None:
                continue
            fertig[nr][name] = ergebnis
            platz.auftrag = None
            if len(fertig[nr]) == len(namen[nr]):
                del texte[nr]
            if ersetzen:
                self._ersetzen(index, hart=hart)

    def _todesursache(self, exitcode: int | None) -> str:
        if exitcode == EXIT_SPEICHER:
            return speicher_fehler(self.speichergrenze_mb)
        if exitcode is not None and exitcode < 0:
            try:
                name = signal.Signals(-exitcode).name
            except ValueError:
                name = str(-exitcode)
            return (
                f"Worker abgestürzt (Signal {name}; auch eine überschrittene Speichergrenze "
                f"von {self.speichergrenze_mb} MB kann so enden)"
            )
        return f"Worker unerwartet beendet (Exit-Code {exitcode})"


ABBRUCHSIGNALE = {signal.SIGINT, signal.SIGTERM}


def _forkserver_ohne_abbruchsignale() -> None:
    """Startet den forkserver mit blockiertem SIGINT/SIGTERM (falls er noch nicht läuft).

    Strg-C und systemds SIGTERM treffen die ganze Prozessgruppe. Der forkserver
    erbt die Maske beim Start und seine Kinder bei jedem fork: ein Worker, den
    ein Signal zwischen fork und seiner ersten Zeile träfe, stürbe sonst
    („Worker startet nicht“, Exit 4) – so bleibt das Signal hängend, bis
    ``_worker`` beide überhört und die Maske löst; dann verfällt es. Der
    Hauptprozess blockiert nur für den Start des forkservers.
    """
    import multiprocessing.forkserver
    import multiprocessing.resource_tracker

    # Der resource_tracker startet sonst im forkserver-Start und gibt danach beide
    # Signale frei (SIG_UNBLOCK) – auch unsere Blockade; darum er zuerst.
    multiprocessing.resource_tracker.ensure_running()
    if threading.current_thread() is not threading.main_thread():
        multiprocessing.forkserver.ensure_running()
        return
    alt = signal.pthread_sigmask(signal.SIG_BLOCK, ABBRUCHSIGNALE)
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, alt)


# So beginnt der Fehler eines Aufrufs, dessen Worker starb (``Extraktion._todesursache``).
WORKER_TOT = ("Worker abgestürzt", "Worker unerwartet beendet")
# So beginnen die Fehler, die nichts über die Seite sagen, sondern über die Nacht: Zeitlimit,
# Absturz des Workers, Speichergrenze. Ein Fehler des Extraktors selbst („Extraktor scheiterte:
# …“, Rekursionsgrenze) oder ein leerer Text ist sein Urteil über die Seite und bleibt.
VORUEBERGEHEND = ("Zeitlimit ", *WORKER_TOT, "Speichergrenze ")


def voruebergehend(fehler: str | None) -> bool:
    """Ist ``fehler`` ein Fehler der Umgebung, den ein späterer Versuch vielleicht nicht hat?"""
    return fehler is not None and fehler.startswith(VORUEBERGEHEND)


def speicher_fehler(grenze_mb: int) -> str:
    return f"Speichergrenze {grenze_mb} MB überschritten"


def kandidaten(
    seiten: Iterable[Seite], prozesse: int | None = None, **optionen
) -> Iterator[tuple[int, dict[str, dict]]]:
    """Kurzform: startet die Worker, extrahiert alle Seiten, beendet die Worker."""
    with Extraktion(prozesse, **optionen) as extraktion:
        yield from extraktion.seiten(seiten)
