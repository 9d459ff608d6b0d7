"""Die drei Extraktoren: von einer Seite (HTML und URL) zu ihrem Text – im Worker aufgerufen.

Die Stock-Aufrufe (``STOCK_AUFRUFE``) mit genau den Einstellungen der veröffentlichten Kandidaten
(bench/aeb); die Stufe ruft die schnellen (``AUFRUFE``, ``schnell.py``) mit newspaper4k
deterministisch (``newspaper_fest.py``), beide an die geprüften Fassungen gebunden (``fassungen.py``).
``extraktor_fassung`` sagt, was eine gespeicherte Extraktion festhält. Aufrufe und Einstellungen:
docs/extraktion.md, „Die Extraktoren und ihre Einstellungen“.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re

from auswahlstufe.extraktion import art, newspaper_fest, schnell
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
    "bom>http>meta(geprueft)>utf-8>charset_normalizer(64k)>utf-8-ersatz, dann lesbar(); Fassung 1"
)


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


def _koreanisch_offline(text: str) -> list[str]:
    from nltk.tokenize import word_tokenize

    # preserve_line=True: ohne Satzzerlegung, die die NLTK-Daten „punkt_tab“ bräuchte
    return word_tokenize(text, preserve_line=True)


def vorbereiten(*, beschleuniger: bool = True) -> None:
    """Lädt die Extraktoren, stellt newspaper4k für koreanische Seiten auf einen Tokenizer
    ohne NLTK-Daten um, macht newspaper4k deterministisch (``newspaper_fest``) und spielt die
    Beschleuniger ein (``schnell``, nur mit ``beschleuniger``). Einmal je Worker
    (``worker.anfang``); scheitert bei einer ungeprüften Fassung (``FassungUngeprueft``)."""
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


def extrahieren(extraktor: str, html: str, url: str, *, beschleuniger: bool = True) -> str:
    """Ein Extraktor auf einer Seite, hier im Prozess (ohne Isolation; nach ``vorbereiten()`` mit
    demselben ``beschleuniger``)."""
    return (AUFRUFE if beschleuniger else STOCK_AUFRUFE)[extraktor](html, url)


def versionen() -> dict[str, str]:
    """Paketversion je Extraktor, z. B. ``{"trafilatura": "2.3.1", …}``."""
    try:
        return {name: importlib.metadata.version(paket) for name, paket in PAKETE.items()}
    except importlib.metadata.PackageNotFoundError as e:
        raise VoraussetzungFehlt(
            f"Der Extraktor {e.name} ist nicht installiert (pip install -e '.[extraktion]')."
        ) from None


def textfassung(extraktor: str, version: str) -> str:
    """Was den Text eines Extraktors auf einer HTML-Seite bestimmt: Paketversion, Einstellungen,
    Zeichensatzregel. Ändert sich das, wird neu extrahiert."""
    return f"{extraktor} {version}; {EINSTELLUNGEN[extraktor]}; Zeichensatz: {ZEICHENSATZREGEL}"


def extraktor_fassung(extraktor: str, version: str) -> str:
    """Was eine gespeicherte Extraktion festhält: die Textfassung und die Fassung der Seitenart
    (``art.FASSUNG``, welche Seiten kein Extraktor sieht). Ändert sich nur die Seitenart, prüft die
    Stufe jede Seite nach und stempelt neu – ein Extraktor läuft nur, wo sich das Urteil ändert."""
    return f"{textfassung(extraktor, version)}; {art.FASSUNG}"
