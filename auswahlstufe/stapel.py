"""Stapelbetrieb: eine JSON-Datei mit Artikeln rein, dieselbe Datei mit
``selected_extractor`` je Artikel raus – ohne Datenbank.

Erst alles lesen, prüfen und entscheiden, dann atomar schreiben: docs/zuverlaessigkeit.md,
„Stapelbetrieb: ganz neu oder ganz alt“. Die Ausgabe hat einen Artikel je Zeile – mit grep und
diff lesbar, jede Zeile für sich gültiges JSON.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import click

from auswahlstufe.anzeige import hinweis, prozent, zahl
from auswahlstufe.fehler import Abgebrochen, EingabeFehler
from auswahlstufe.fortschritt import BALKEN_AB_BYTES, fortschritt
from auswahlstufe.jsoneingabe import HOECHSTENS_WARNUNGEN, STDIO, anzeigename, laden
from auswahlstufe.pruefung import stichprobe as stichprobe_modul
from auswahlstufe.pruefung.auslese import fall_aus_artikel, kennung
from auswahlstufe.regeln import REGELN, Entscheidung, waehle
from normalisierung import bereinigen
from version import CODER_VERSION, PRIORITAET

FELD = "selected_extractor"
# Mit --mit-entscheidung: Regel, Konsensgröße und bereinigter Text, wie die Stufe sie speichert.
FELD_ENTSCHEIDUNG = "auswahl"


@dataclass
class Bilanz:
    """Was ein Lauf entschied – Grundlage der Zusammenfassung."""

    artikel: int = 0
    je_extraktor: Counter = field(default_factory=Counter)
    je_regel: Counter = field(default_factory=Counter)
    unbekannt: Counter = field(default_factory=Counter)  # Name → Zahl der Artikel
    ohne_extractions: int = 0
    ziel: str = STDIO
    stichprobe: Path | None = None
    sekunden: float = 0.0


# --- Pfade ------------------------------------------------------------------------


def ausgabepfad(datei: str, ausgabe: str | None) -> str:
    """``-o`` gilt; sonst ``<stamm>_selected.json`` neben der Eingabe, bei stdin stdout."""
    if ausgabe is not None:
        return ausgabe
    eingabe = Path(datei)
    if datei == STDIO or (eingabe.exists() and not eingabe.is_file()):
        # stdin, eine FIFO, <(…): daneben ist kein Platz für eine Datei
        return STDIO
    return str(eingabe.with_name(f"{eingabe.stem}_selected.json"))


def ziel_pruefen(ziel: str, datei: str) -> None:
    """Vor aller Arbeit: gibt es das Zielverzeichnis, und ist das Ziel nicht die Eingabe?"""
    if ziel == STDIO:
        return
    verzeichnis = Path(ziel).parent
    if not verzeichnis.is_dir():
        raise EingabeFehler(f"Das Verzeichnis der Ausgabe {ziel} gibt es nicht: {verzeichnis}")
    if datei != STDIO and Path(ziel).exists() and Path(datei).exists() and os.path.samefile(ziel, datei):
        # Die Eingabe wird nie verändert – auch nicht auf ausdrücklichen Wunsch.
        raise EingabeFehler(
            f"Die Ausgabe {ziel} ist die Eingabedatei selbst; bitte einen anderen Pfad wählen."
        )


# --- Entscheiden und serialisieren -------------------------------------------------------


def zeile(eintrag: dict) -> bytes:
    """Ein Artikel als eine Zeile UTF-8.

    Ein einzelnes Surrogat (``"\\ud800"`` ist gültiges JSON) lässt sich nicht
    als UTF-8 schreiben; solche Artikel gehen mit \\u-Escapes hinaus – derselbe
    Wert, nur anders geschrieben. ``allow_nan=False``: NaN oder Infinity
    würfen ValueError, statt ungültiges JSON zu schreiben (parsen() lässt
    sie gar nicht erst herein).
    """
    try:
        return json.dumps(eintrag, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(eintrag, ensure_ascii=True, allow_nan=False).encode("ascii")


# Felder eines Kandidaten, die die Regeln lesen; alles andere übergehen sie.
KANDIDATENFELDER = ("text", "error")


@dataclass
class Formpruefung:
    """Hinweise auf ein falsches Format: Feldnamen, die die Regeln nicht kennen; ``streng`` macht
    aus dem ersten Befund einen Eingabefehler, bevor etwas geschrieben ist (docs/kommandozeile.md,
    „Warnungen und ``--streng``“)."""

    name: str
    streng: bool = False
    ohne_feld: int = 0  # Artikel ohne das Feld extractions
    erster_ohne: str = ""  # „Artikel [0] (a0) hat …“ für die Meldung
    # Artikel ohne extractions, aber mit einem ähnlichen Feld („extraktionen“, „extraction“)
    aehnlich_benannt: list[str] = field(default_factory=list)
    warnungen: list[str] = field(default_factory=list)
    weitere: int = 0

    def befund(self, satz: str, folge: str = "der Kandidat gilt als nicht verfügbar") -> None:
        if self.streng:
            raise EingabeFehler(f"{self.name}: {satz}; --streng: nichts geschrieben.")
        if len(self.warnungen) < HOECHSTENS_WARNUNGEN:
            self.warnungen.append(f"Warnung: {satz} – {folge}.")
        else:
            self.weitere += 1

    def beachte(self, eintrag: dict, index: int) -> None:
        wer = f"Artikel [{index}]" + (f" ({eintrag_id})" if (eintrag_id := kennung(eintrag)) else "")
        if "extractions" not in eintrag:
            self.ohne_feld += 1
            felder = [f for f in eintrag if isinstance(f, str)]
            aehnlich = difflib.get_close_matches("extractions", felder, n=1, cutoff=0.6)
            if aehnlich:
                self.aehnlich_benannt.append(f"{wer} hat „{aehnlich[0]}“ (gemeint: extractions?)")
            if not self.erster_ohne:
                if aehnlich:
                    self.erster_ohne = self.aehnlich_benannt[-1]
                else:
                    namen = ", ".join(f"„{f}“" for f in felder[:10]) + (", …" if len(felder) > 10 else "")
                    self.erster_ohne = f"{wer} hat die Felder {namen}" if felder else f"{wer} ist leer"
            return
        extraktionen = eintrag["extractions"]
        if not isinstance(extraktionen, Mapping):
            return
        for kandidat_name, kandidat in extraktionen.items():
            if isinstance(kandidat, Mapping) and "text" not in kandidat:
                fremde = [str(f) for f in kandidat if f not in KANDIDATENFELDER]
                if fremde:
                    namen = ", ".join(f"„{f}“" for f in fremde)
                    self.befund(f"{wer}, Kandidat „{kandidat_name}“: kein Feld „text“, aber {namen}")

    def abschliessen(self, artikel: int) -> None:
        """Nach allen Artikeln, vor dem Schreiben: Warnungen zeigen oder (streng) abbrechen."""
        if artikel and self.ohne_feld == artikel:
            satz = (
                f"kein Artikel hat das Feld „extractions“ – alle {artikel} fallen auf newspaper4k zurück. "
                f"{self.erster_ohne}"
            )
            if self.streng:
                raise EingabeFehler(f"{self.name}: {satz}; --streng: nichts geschrieben.")
            self.warnungen.append(f"Warnung: {satz}.")
        else:
            # Nur einzelne Artikel: jeder mit einem ähnlich benannten Feld ist ein Befund.
            for satz in self.aehnlich_benannt:
                self.befund(satz, "der Artikel fällt auf newspaper4k zurück")
        for warnung in self.warnungen:
            click.echo(warnung, err=True)
        if self.weitere:
            click.echo(
                f"Warnung: {self.weitere} weitere Kandidaten ohne „text“ mit unbekannten Feldern, "
                "nicht einzeln gezeigt.",
                err=True,
            )


def mit_entscheidung(eintrag: dict, entscheidung: Entscheidung) -> dict:
    """Der Artikel mit ``auswahl`` direkt hinter ``selected_extractor``: Regel,
    Konsensgröße und der bereinigte Text der Wahl – dieselben Werte, die die
    Postgres-Stufe in selected_extractor (regel, konsens, text) schreibt."""
    extraktionen = eintrag.get("extractions")
    gewaehlt = extraktionen.get(entscheidung.extraktor) if isinstance(extraktionen, Mapping) else None
    roh = gewaehlt.get("text") if isinstance(gewaehlt, Mapping) else None
    wert = {
        "regel": entscheidung.regel,
        "konsens": entscheidung.konsens,
        "text": bereinigen(roh) if isinstance(roh, str) else None,
    }
    neu: dict = {}
    for schluessel_, inhalt in eintrag.items():
        if schluessel_ != FELD_ENTSCHEIDUNG:
            neu[schluessel_] = inhalt
        if schluessel_ == FELD:
            neu[FELD_ENTSCHEIDUNG] = wert
    return neu


def entscheiden(
    artikel: list,
    bilanz: Bilanz,
    stichprobe: stichprobe_modul.Stichprobe | None,
    balken: bool,
    pruefung: Formpruefung | None = None,
    mit_auswahl: bool = False,
) -> None:
    """Setzt ``selected_extractor`` und ersetzt jeden Artikel durch seine fertige Zeile.

    So liegt jeder Artikel nur einmal im Speicher – erst als Objekt, dann als
    Bytes –, und das Schreiben danach kann nicht mehr an einem Artikel scheitern.
    """
    with fortschritt(len(artikel), "Auswahl", einheit="Artikel", balken=balken) as weiter:
        for index in range(len(artikel)):
            eintrag = artikel[index]
            if pruefung is not None:
                pruefung.beachte(eintrag, index)
            extraktionen = eintrag.get("extractions")
            entscheidung = waehle(extraktionen)
            eintrag[FELD] = entscheidung.extraktor  # überschreibt an seiner Stelle, sonst hinten an
            bilanz.je_extraktor[entscheidung.extraktor] += 1
            bilanz.je_regel[entscheidung.regel] += 1
            bilanz.unbekannt.update(entscheidung.unbekannt)
            bilanz.ohne_extractions += not isinstance(extraktionen, Mapping)
            if stichprobe is not None:
                stichprobe.beachte(fall_aus_artikel(eintrag, index, entscheidung))
            if mit_auswahl:
                eintrag = mit_entscheidung(eintrag, entscheidung)
            try:
                artikel[index] = zeile(eintrag)
            except RecursionError:
                raise EingabeFehler(
                    f"Artikel [{index}] ist zu tief verschachtelt, um ihn zu schreiben."
                ) from None
            except ValueError:
                raise EingabeFehler(
                    f"Artikel [{index}] enthält NaN oder Infinity; das wäre kein gültiges JSON."
                ) from None
            weiter(1)
    bilanz.artikel = len(artikel)


def teile(zeilen: list[bytes]) -> Iterator[bytes]:
    if not zeilen:
        yield b"[]\n"
        return
    yield b"[\n"
    for i, z in enumerate(zeilen):
        yield z
        yield b",\n" if i < len(zeilen) - 1 else b"\n"
    yield b"]\n"


# --- Schreiben -----------------------------------------------------------------------


def dateirechte(ziel: Path) -> int:
    """Eine bestehende Ausgabe behält ihre Rechte, eine neue bekommt die der umask
    (mkstemp legt sonst 0600 an)."""
    try:
        return ziel.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def schreiben(ziel: str, daten: Iterable[bytes]) -> None:
    """stdout, eine gewöhnliche Datei (atomar) oder etwas, das keine Datei ist."""
    if ziel == STDIO:
        schreiben_stdout(daten)
        return
    pfad = Path(ziel)
    if pfad.exists() and not pfad.is_file():
        # /dev/null, eine FIFO, /dev/stdout: hineinschreiben. Sie per os.replace zu
        # ersetzen hieße, sie durch eine gewöhnliche Datei zu zerstören.
        schreiben_direkt(pfad, daten)
    else:
        # Ein symbolischer Link bleibt Link; ersetzt wird die Datei, auf die er zeigt.
        schreiben_atomar(str(pfad.resolve()), daten)


def schreiben_direkt(pfad: Path, daten: Iterable[bytes]) -> None:
    try:
        with pfad.open("wb") as f:
            for teil in daten:
                f.write(teil)
    except OSError as e:
        raise EingabeFehler(f"Die Ausgabe {pfad} konnte nicht geschrieben werden: {e.strerror}.") from None


def schreiben_atomar(ziel: str, daten: Iterable[bytes]) -> None:
    """Temporäre Datei im Zielverzeichnis, fsync, os.replace: ganz neu oder ganz alt, nie halb;
    die temporäre Datei verschwindet bei jedem Fehler, auch bei Strg-C."""
    pfad = Path(ziel)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{pfad.name}.", suffix=".tmp", dir=pfad.parent)
    except OSError as e:
        raise EingabeFehler(
            f"Im Verzeichnis {pfad.parent} kann nicht geschrieben werden: {e.strerror}."
        ) from None
    try:
        with os.fdopen(fd, "wb") as f:
            for teil in daten:
                f.write(teil)
            f.flush()
            os.fchmod(f.fileno(), dateirechte(pfad))
            os.fsync(f.fileno())
        os.replace(temp, pfad)
    except BaseException as e:
        Path(temp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise EingabeFehler(
                f"Die Ausgabe {ziel} konnte nicht geschrieben werden: {e.strerror}."
            ) from None
        raise
    _verzeichnis_sichern(pfad.parent)


def _verzeichnis_sichern(verzeichnis: Path) -> None:
    # Erst das fsync des Verzeichnisses macht die Umbenennung nach einem Absturz dauerhaft.
    try:
        fd = os.open(verzeichnis, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # manche Dateisysteme erlauben es nicht; die Datei ist trotzdem vollständig
    finally:
        os.close(fd)


def schreiben_stdout(daten: Iterable[bytes]) -> None:
    sys.stdout.flush()
    ausgabe = sys.stdout.buffer
    for teil in daten:
        ausgabe.write(teil)
    ausgabe.flush()


# --- Zusammenfassung -----------------------------------------------------------------


def zusammenfassung(bilanz: Bilanz) -> str:
    n = bilanz.artikel
    dauer = zahl(bilanz.sekunden, 2)
    zeilen = [f"{n} Artikel entschieden in {dauer} s (coder_version {CODER_VERSION})", "Je Extraktor:"]
    zeilen += [
        f"  {name:<24}{bilanz.je_extraktor[name]:>8}  {prozent(bilanz.je_extraktor[name], n)}"
        for name in PRIORITAET
    ]
    zeilen.append("Je Regel:")
    zeilen += [
        f"  {regel:<24}{bilanz.je_regel[regel]:>8}  {prozent(bilanz.je_regel[regel], n)}" for regel in REGELN
    ]
    if bilanz.unbekannt:
        zeilen.append("Übergangene Extraktornamen (Zahl der Artikel):")
        zeilen += [f"  „{name}“: {zahl}{hinweis(name)}" for name, zahl in sorted(bilanz.unbekannt.items())]
    if bilanz.ohne_extractions:
        zeilen.append(f"Ohne extractions-Objekt (Rückfall newspaper4k): {bilanz.ohne_extractions} Artikel")
    zeilen.append(f"Ausgabe: {'stdout' if bilanz.ziel == STDIO else bilanz.ziel}")
    if bilanz.stichprobe is not None:
        zeilen.append(stichprobe_modul.zeile(bilanz.stichprobe))
    return "\n".join(zeilen)


def zaehlung(bilanz: Bilanz) -> dict[str, int]:
    """Die Zählung des Laufs für den Kopf der Stichprobenseite."""
    werte = {"Artikel": bilanz.artikel}
    werte |= {f"Wahl {name}": bilanz.je_extraktor[name] for name in PRIORITAET}
    werte |= {f"Regel {regel}": bilanz.je_regel[regel] for regel in REGELN}
    return werte


# --- Einstieg ----------------------------------------------------------------------


@contextlib.contextmanager
def sigterm_wie_strg_c() -> Iterator[None]:
    """SIGTERM (kill, timeout, systemd) nimmt denselben Weg wie Strg-C: als
    KeyboardInterrupt räumt er die temporäre Datei weg und endet mit 130. Ohne
    das endet der Prozess sofort, und die .tmp-Datei bleibt liegen.
    Signale lassen sich nur im Hauptfaden umlenken; sonst bleibt alles, wie es ist."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    vorher = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        # None: der alte Handler kam nicht aus Python; dann gilt wieder der Standard.
        signal.signal(signal.SIGTERM, vorher if vorher is not None else signal.SIG_DFL)


@contextlib.contextmanager
def abbrechbar() -> Iterator[None]:
    """Strg-C oder SIGTERM, bevor die Ausgabe steht: Exit 130, nichts geschrieben."""
    with sigterm_wie_strg_c():
        try:
            yield
        except KeyboardInterrupt:
            raise Abgebrochen(
                "Abgebrochen; nichts geschrieben, eine bestehende Ausgabe bleibt unverändert."
            ) from None


def ausgeben(bilanz: Bilanz, artikel: list[dict], auswahl: stichprobe_modul.Stichprobe | None) -> None:
    """Schreibt die Ausgabe atomar nach ``bilanz.ziel``, danach die Stichprobe, falls gezogen.

    Ein Abbruch nach dem Schreiben sagt, dass die Ausgabe vollständig ist.
    """
    schreiben(bilanz.ziel, teile(artikel))
    if auswahl is None:
        return
    try:
        bilanz.stichprobe = stichprobe_modul.schreiben(auswahl, CODER_VERSION, zaehlung=zaehlung(bilanz))
    except KeyboardInterrupt:
        raise Abgebrochen(
            f"Abgebrochen vor der Stichprobe; die Ausgabe {bilanz.ziel} ist vollständig."
        ) from None


def stapel(
    datei: str,
    ausgabe: str | None,
    *,
    stichprobe: int | None = None,
    streng: bool = False,
    mit_auswahl: bool = False,
) -> Bilanz:
    """Liest ``datei``, entscheidet je Artikel, schreibt die Ausgabe atomar; alles für Menschen
    geht nach stderr (docs/kommandozeile.md, „Ausgabe im Einzelnen“)."""
    start = time.perf_counter()
    bilanz = Bilanz(ziel=ausgabepfad(datei, ausgabe))
    with abbrechbar():
        ziel_pruefen(bilanz.ziel, datei)
        artikel, groesse = laden(datei)
        balken = groesse >= BALKEN_AB_BYTES
        auswahl = stichprobe_modul.Stichprobe(stichprobe) if stichprobe else None
        pruefung = Formpruefung(anzeigename(datei), streng)
        entscheiden(artikel, bilanz, auswahl, balken, pruefung, mit_auswahl)
        pruefung.abschliessen(bilanz.artikel)
        ausgeben(bilanz, artikel, auswahl)
    bilanz.sekunden = time.perf_counter() - start
    click.echo(zusammenfassung(bilanz), err=True)
    return bilanz
