"""Seiten auf die Worker verteilen: je Seite die drei Kandidaten, in der Reihenfolge der Seiten.

Aus den Bytes (oder dem Text) einer Seite und ihrer URL entstehen die drei Kandidaten im
Stapelformat ``{"text", "error"}``. Der Hauptprozess liest den Zeichensatz (``zeichensatz.py``)
und prüft, ob es überhaupt eine HTML-Seite ist (``art.py``: PDF, Bild, Archiv, Binärdaten
bekommen alle drei denselben Fehler, ohne dass ein Extraktor sie sieht); jeder
Extraktor-Aufruf läuft dann in einem Worker (``worker.py``, ``betrieb.pool``) mit Zeitlimit je
Seite, Speichergrenze und ohne Netz. Hängt oder stirbt ein Worker, bekommt dieser Extraktor für
diese Seite einen Fehler, der Worker wird ersetzt, und es geht weiter. Die Worker entstehen über
einen forkserver, der die Extraktoren einmal lädt: ein neuer Worker ist sofort bereit und erbt
nichts vom Speicher des Hauptprozesses.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from auswahlstufe import kerne
from auswahlstufe.anzeige import kurz
from auswahlstufe.betrieb.pool import Auftrag, Fehlschlag, Pool, WorkerStartetNicht
from auswahlstufe.betrieb.protokoll import log
from auswahlstufe.extraktion import art, fassungen, worker
from auswahlstufe.extraktion.aufrufe import EXTRAKTOREN
from auswahlstufe.extraktion.worker import Umgebungsfehler, speicher_fehler
from auswahlstufe.extraktion.zeichensatz import dekodieren_roh, lesbar
from auswahlstufe.fehler import VoraussetzungFehlt

ZEITLIMIT_S = 30.0
# Zusätzlicher Adressraum je Worker über dem Stand nach seinem Start.
SPEICHERGRENZE_MB = 2048
# Nach so vielen Aufrufen geht ein Worker, ein neuer kommt: was Bibliotheken liegen lassen,
# wächst nicht über einen Lauf.
AUFRUFE_JE_WORKER = 300
# So viele Seiten je Worker höchstens gleichzeitig in Arbeit (der Speicher bleibt flach).
SEITEN_JE_WORKER = 2
# URL für newspaper4k, wenn ein Artikel keine hat (wie im Benchmark).
ERSATZ_URL = "http://example.com/{schluessel}.html"
# Lädt der forkserver einmal; jeder Worker erbt sie fertig geladen.
VORLADEN = [
    "auswahlstufe.extraktion.worker",
    "trafilatura",
    "newspaper",
    "readability",
    "newspaper.languages.ja",
    "lxml.html",
]


def voruebergehend(fehler: str | None) -> bool:
    """Ist ``fehler`` ein Fehler der Umgebung (Zeitlimit, Absturz des Workers, Speichergrenze), den
    ein späterer Versuch vielleicht nicht hat? Ein Fehler des Extraktors selbst („Extraktor
    scheiterte: …“, Rekursionsgrenze) oder ein leerer Text ist sein Urteil über die Seite und bleibt."""
    return isinstance(fehler, Umgebungsfehler)


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
class Statistik:
    aufrufe: int = 0
    zeitlimits: int = 0
    abstuerze: int = 0
    keine_html: int = 0  # Seiten, die keiner sah (art.keine_html)
    zeichensaetze: dict[str, int] = field(default_factory=dict)


class Extraktion:
    """Extraktor-Aufrufe auf Worker-Prozessen, mit Zeitlimit und Speichergrenze.

    ``with Extraktion(prozesse=2) as ex: for nr, kandidaten in ex.seiten(seiten): …``
    liefert die Kandidaten in der Reihenfolge der Seiten; höchstens ``SEITEN_JE_WORKER``
    Seiten je Worker sind gleichzeitig unterwegs, der Speicher bleibt flach. Ob die Worker die
    Beschleuniger einspielen, prüft jeder selbst gegen die geprüften Fassungen (``worker.anfang``,
    ``fassungen``: newspaper_fest streng – sonst ``FassungUngeprueft``, Exit 4 –, der Rest weicht
    auf die Stock-Aufrufe aus, dieselben Texte, langsamer); läuft der erste ohne, sagt der
    Hauptprozess es einmal (``fassungen.HINWEIS``).
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
        self.extraktoren = extraktoren
        self.aufrufe_je_worker = aufrufe_je_worker
        self.statistik = Statistik()
        self.beschleuniger = False  # sagt der erste Worker beim Start
        self.pool: Pool | None = None

    def __enter__(self) -> Extraktion:
        self.pool = Pool(
            self.prozesse,
            zeitlimit=self.zeitlimit_s,
            start="forkserver",
            vorladen=VORLADEN,
            vorbereitung=worker.anfang,
            argumente=(self.speichergrenze_mb,),
            auftraege_je_worker=self.aufrufe_je_worker,
        )
        try:
            self.pool.__enter__()
        except WorkerStartetNicht as fehler:
            raise _startet_nicht(fehler) from None
        grund = self.pool.vorbereitet
        if grund is not None:
            log.warning(fassungen.HINWEIS.format(grund=grund))
        self.beschleuniger = grund is None
        return self

    def __exit__(self, *fehler) -> None:
        self.pool.__exit__(*fehler)

    def worker_pids(self) -> list[int]:
        """Die Prozessnummern der laufenden Worker (für Überwachung und Tests)."""
        return self.pool.worker_pids()

    def seiten(self, seiten: Iterable[Seite]) -> Iterator[tuple[int, dict[str, dict]]]:
        """(Nummer, {extraktor: {"text", "error"}}) je Seite, in der Reihenfolge der Eingabe."""
        fenster = SEITEN_JE_WORKER * self.prozesse * len(self.extraktoren)
        offen: dict[int, dict[str, dict]] = {}
        namen: dict[int, tuple[str, ...]] = {}
        naechste = 0
        try:
            for schluessel, ergebnis in self.pool.reihe(self._auftraege(seiten, namen), fenster):
                nr, name = schluessel
                offen.setdefault(nr, {})[name] = self._kandidat(ergebnis)
                while naechste in offen and len(offen[naechste]) == len(namen[naechste]):
                    kandidaten = offen.pop(naechste)
                    yield naechste, {n: kandidaten[n] for n in namen.pop(naechste)}
                    naechste += 1
        except WorkerStartetNicht as fehler:  # ein Ersatz nach einem toten Worker
            raise _startet_nicht(fehler) from None

    def _auftraege(self, seiten: Iterable[Seite], namen: dict) -> Iterator[Auftrag]:
        for nr, seite in enumerate(seiten):
            namen[nr] = seite.extraktoren or self.extraktoren
            html, urteil = self._vorbereiten(seite)
            url = seite.url or ERSATZ_URL.format(schluessel=seite.schluessel or nr)
            fest = urteil.kandidat()
            text = lesbar(html) if fest is None else ""
            for name in namen[nr]:
                if fest is not None:  # keine HTML-Seite oder leer: kein Extraktor sieht sie
                    yield Auftrag((nr, name), ergebnis=fest)
                else:
                    self.statistik.aufrufe += 1
                    argumente = (name, text, url, self.speichergrenze_mb)
                    yield Auftrag((nr, name), worker.aufrufen, argumente)

    def _kandidat(self, ergebnis: tuple | Fehlschlag) -> dict:
        if isinstance(ergebnis, Fehlschlag):
            if ergebnis.art == "zeitlimit":
                self.statistik.zeitlimits += 1
                fehler = Umgebungsfehler(f"Zeitlimit {kurz(self.zeitlimit_s)} s überschritten", "zeitlimit")
                return {"text": None, "error": fehler}
            self.statistik.abstuerze += 1
            return {"text": None, "error": Umgebungsfehler(self._todesursache(ergebnis), "tot")}
        text, fehler = ergebnis
        return {"text": text, "error": fehler}

    def _vorbereiten(self, seite: Seite) -> tuple[str, art.Urteil]:
        html, urteil, weg = seitenart(seite)
        if weg:
            self.statistik.zeichensaetze[weg] = self.statistik.zeichensaetze.get(weg, 0) + 1
        self.statistik.keine_html += urteil.grund is not None
        return html, urteil

    def _todesursache(self, tot: Fehlschlag) -> str:
        if tot.signalname is not None:
            return (
                f"Worker abgestürzt (Signal {tot.signalname}; auch eine überschrittene Speichergrenze "
                f"von {self.speichergrenze_mb} MB kann so enden)"
            )
        return f"Worker unerwartet beendet (Exit-Code {tot.exitcode})"


def seitenart(seite: Seite) -> tuple[str, art.Urteil, str]:
    """Die Seite als Text (nach der Zeichensatzregel, vor ``lesbar``), das Urteil über sie
    (``art``) und wie ihr Zeichensatz gefunden wurde – im Hauptprozess, ohne Extraktor. Dieselbe
    Regel für die Extraktion und für das Nachprüfen gespeicherter Kandidaten."""
    if isinstance(seite.html, bytes):
        html, herkunft = dekodieren_roh(seite.html, seite.content_type)
        zeichensatz, weg = herkunft.split(" ", 1)
        grund = art.keine_html(html, seite.html, zeichensatz)
    else:
        html, weg = seite.html, ""
        grund = art.keine_html(html)
    return html, art.Urteil(grund, grund is None and art.leer(html)), weg


def _startet_nicht(fehler: WorkerStartetNicht) -> VoraussetzungFehlt:
    ursache, grund = fehler.ursache, str(fehler)
    # der Fix von newspaper4k ungeprüft: sein eigener Satz (Exit 4)
    if ursache is not None and ursache.art == fassungen.FassungUngeprueft.__name__:
        return fassungen.FassungUngeprueft(ursache.text)
    if ursache is not None and ursache.modul:
        grund = f"das Modul {ursache.modul} fehlt"
    return VoraussetzungFehlt(
        f"Ein Worker der Extraktion startet nicht ({grund}). Sind die Extraktoren installiert "
        "(.venv/bin/pip install -e '.[extraktion]')?"
    )


def kandidaten(
    seiten: Iterable[Seite], prozesse: int | None = None, **optionen
) -> Iterator[tuple[int, dict[str, dict]]]:
    """Kurzform: startet die Worker, extrahiert alle Seiten, beendet die Worker."""
    with Extraktion(prozesse, **optionen) as extraktion:
        yield from extraktion.seiten(seiten)


__all__ = [
    "ERSATZ_URL",
    "Extraktion",
    "Seite",
    "Statistik",
    "Umgebungsfehler",
    "kandidaten",
    "speicher_fehler",
    "voruebergehend",
]
