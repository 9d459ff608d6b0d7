"""Gegen welche Fassungen der Extraktoren ``newspaper_fest`` und ``schnell`` geprüft sind.

``GEPRUEFT`` (Paketversionen wie in ``pyproject.toml``), ``QUELLTEXT`` (sha256 jeder Funktion, die
umschlossen, nachgebaut, ersetzt oder vorausgesetzt wird) und ``HTML_PARSER``. Weicht etwas ab, wovon
``newspaper_fest`` abhängt (``FEST_PAKETE``, ``FEST``), startet die Extraktion nicht
(``newspaper_fest_pruefen``: ``FassungUngeprueft``, Exit 4); weicht nur anderes ab, laufen die
Stock-Aufrufe mit einem Hinweis (``beschleuniger_abweichung``, ``HINWEIS``). Wer eine Version hebt
und warum: docs/extraktion.md, „Eine andere Fassung: langsamer, nicht angehalten“.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import inspect

from auswahlstufe.fehler import VoraussetzungFehlt

GEPRUEFT = {
    "newspaper4k": "0.9.6",
    "trafilatura": "2.3.1",
    "readability-lxml": "0.9",
    "lxml": "6.1.3",
    "lxml_html_clean": "0.4.6",
    "python-dateutil": "2.9.0.post0",
}

# "modul:Klasse.methode" → sha256 von inspect.getsource (bei einem Umschlag: des Originals).
QUELLTEXT = {
    # newspaper_fest: umschlossen
    "newspaper.extractors.articlebody_extractor:ArticleBodyExtractor.nodes_to_check": "9b5f9d3942b026958e758d1e202da85e78cf26f99313c0a7887055f34d6cab59",
    "newspaper.extractors.articlebody_extractor:ArticleBodyExtractor.compute_gravity_scores": "4b66be6755382a8b23a9cc8636155e801580bbfd25d12b4114a29d35be15f0a8",
    # newspaper_fest: setzt die stabile Sortierung nach dem Gravity-Score voraus
    "newspaper.extractors.articlebody_extractor:ArticleBodyExtractor.calculate_best_node": "e08f42bf9de315f5bfc666ff56470e45597263d7960c303a5bfa50987fc85169",
    # schnell: nachgebaut (newspaper4k_text)
    "newspaper.article:Article.parse": "e164ccba75916d52b959069d9c93b30d9f750bcaf11e34accf5034436696e5a3",
    # schnell: was die ausgelassenen Schritte tun (die Wache _nebenschritte_unbedenklich)
    "newspaper.extractors.authors_extractor:AuthorsExtractor.parse": "7218afaf8d1ed92b9aa23905c7ca0a12ead99dfc46b2b6bd77541883eb06fdc3",
    "newspaper.extractors.pubdate_extractor:PubdateExtractor.parse": "83b7195f5c1a1ac9e4f0fca67b5a55b18c2a792566fa6047495e0a4305f50a6d",
    "newspaper.extractors.pubdate_extractor:PubdateExtractor._parse_date_str": "f54d3ec4c5ec81d5d4bd67a5ad0527eda8f1d4265ab2ba7ff1f621ac028bd751",
    "newspaper.extractors.videos_extractor:VideoExtractor.parse": "9b04e085f8e3c4dfced982728e736136c4406e22b8455d38f324c07a11d79935",
    "newspaper.extractors.image_extractor:ImageExtractor.parse": "a35e9e9024b150b6a61d8bce04fdaf91c0baf18d0e60c5e66b81a711eb1e869a",
    "newspaper.parsers:get_ld_json_object": "f7a928995d9082652fcba393d580fd9de334e5214d88dc576de379c937991887",
    "newspaper.parsers:get_metatags": "26d21a26e2c2aed8bdd7e17792466d082892d6c76df916c5fb1b14518c21d87f",
    "newspaper.parsers:get_attribute": "964fad6e41c2ae47b81dea1640e047ddc1d7195d62e1c57c108cf8f04e9e88bc",
    "newspaper.extractors.authors_extractor:AuthorsExtractor._get_authors_from_ld": "bd753098a7f49c99ac4f9684148405497a0278db1d2f499e7dbbaa6c91b6ea35",
    "newspaper.extractors.videos_extractor:VideoExtractor._get_provider": "2a35c39dc0f486c015d5aacdb6f2f23a6860c6e4d19a0cce890256561d05dceb",
    "newspaper.parsers:get_tags": "a6d6b9b20fcd3dd3f38a6ae99e7c82b0313fb5157eae7fca5b86ccefe8949371",
    # schnell: ersetzt oder zwischengespeichert (Beschleuniger)
    "newspaper.text:default_tokenizer": "e24a7b8e3e1dab1ce3ebfe1b5414dfc1ad4106b32b750bd2cec0f0e2b18557f7",
    "newspaper.text:StopWords.__init__": "5fb8fc57987aac44377cc03bde2fbe041744dd320163263d4793e4ecbb16e4d1",
    "lxml.html:HtmlElementClassLookup.lookup": "fedd067d0a879035cefe28ba9bab2a52ddafef0086f696572f750addfee30f85",
    "lxml.html:HTMLParser.__init__": "9a9712818d7d272440e55da650ac00a0ff75624721b51c72213e50ee8494fa96",
    "readability.htmls:build_doc": "62f81ebe146961e18b36ba544ee48ee80fa6269e50abc29ba2543891d69f9331",
    "trafilatura.utils:load_html": "bc0039c89805dea300fce3380f5dcb95a6808a54b288f4ba9fbccbf1b5a05a71",
}

# Wovon newspaper_fest streng abhängt: die drei Einträge oben und die Version von newspaper4k
# (die Durchsicht auf Mengenordnungen gilt dem ganzen Paket in dieser Fassung).
FEST_PAKETE = ("newspaper4k",)
FEST = frozenset(
    "newspaper.extractors.articlebody_extractor:ArticleBodyExtractor." + methode
    for methode in ("nodes_to_check", "compute_gravity_scores", "calculate_best_node")
)

# Die HTML-Parser der drei Extraktoren, denen ``schnell`` den Klassen-Lookup in C gibt: jeder
# muss ein lxml.html.HTMLParser sein (eine Modulkonstante, die kein Quelltext-sha256 sieht).
HTML_PARSER = (
    "lxml.html:html_parser",  # newspaper4k, readability_text, Cleaner
    "readability.htmls:utf8_parser",
    "trafilatura.utils:HTML_PARSER",
)

# Die Zeile, mit der der Hauptprozess einmal je Lauf sagt, dass er ohne Beschleuniger läuft.
HINWEIS = (
    "Hinweis: {grund}; die Extraktion läuft ohne Beschleuniger (dieselben Texte, langsamer). "
    "Schnell wird sie wieder mit den gepinnten Fassungen (.venv/bin/pip install -e '.[extraktion]') "
    "oder, für die neue Fassung, wenn die Eingriffe gegen sie geprüft und "
    "auswahlstufe/extraktion/fassungen.py angepasst ist."
)

# So viele abweichende Quelltexte nennt ein Grund höchstens beim Namen.
NAMEN_HOECHSTENS = 3


class FassungUngeprueft(VoraussetzungFehlt):
    """Ein Paket hat eine andere Version oder anderen Quelltext als geprüft (Exit 4)."""


def objekt(pfad: str):
    """Das Objekt zu ``"modul:Name.attribut"``."""
    modul, _, name = pfad.partition(":")
    gefunden = importlib.import_module(modul)
    for teil in name.split("."):
        gefunden = getattr(gefunden, teil)
    return gefunden


def quelltext_hash(pfad: str) -> str:
    """sha256 des Stock-Quelltexts einer Funktion, ``"modul:Klasse.methode"``; ist sie
    umschlossen (Attribut ``_stock``), der des Originals."""
    funktion = objekt(pfad)
    funktion = getattr(funktion, "_stock", funktion)
    return hashlib.sha256(inspect.getsource(funktion).encode()).hexdigest()


def _fassung(paket: str) -> str | None:
    """Die installierte Version oder None."""
    try:
        return importlib.metadata.version(paket)
    except importlib.metadata.PackageNotFoundError:
        return None


def _quelltext_abweichung(pfad: str) -> str | None:
    """None, wenn der Quelltext der geprüfte ist; sonst ``"sha256 …, geprüft …"`` oder warum er
    nicht lesbar ist."""
    try:
        ist = quelltext_hash(pfad)
    except (AttributeError, ImportError, OSError, TypeError) as e:
        return f"nicht lesbar: {type(e).__name__}: {e}"
    erwartet = QUELLTEXT[pfad]
    return None if ist == erwartet else f"sha256 {ist[:16]}…, geprüft {erwartet[:16]}…"


def newspaper_fest_pruefen() -> None:
    """Streng: scheitert mit ``FassungUngeprueft`` (Exit 4), wenn newspaper4k nicht in der
    geprüften Fassung installiert ist oder der Quelltext, den ``newspaper_fest`` umschließt oder
    voraussetzt, abweicht. Ohne geprüften Fix ist newspaper4k nicht deterministisch."""
    folge = (
        "ohne den geprüften Fix (auswahlstufe/extraktion/newspaper_fest.py) gibt newspaper4k nicht "
        "für jede Seite immer denselben Text, darum extrahiert die Stufe so nicht. Abhilfe: "
        ".venv/bin/pip install -e '.[extraktion]' (die gepinnte Fassung) – oder den Fix gegen die "
        "neue Fassung prüfen und fassungen.py anpassen."
    )
    for paket in FEST_PAKETE:
        fassung, geprueft = _fassung(paket), GEPRUEFT[paket]
        if fassung is None:
            raise FassungUngeprueft(f"{paket} ist nicht installiert (geprüft: {geprueft}).")
        if fassung != geprueft:
            raise FassungUngeprueft(
                f"{paket} {fassung} ist installiert, die Extraktion ist nur gegen {geprueft} geprüft: {folge}"
            )
    import newspaper

    if newspaper.__version__ != GEPRUEFT["newspaper4k"]:
        raise FassungUngeprueft(
            f"newspaper.__version__ ist {newspaper.__version__}, geprüft: {GEPRUEFT['newspaper4k']}: {folge}"
        )
    for pfad in sorted(FEST):
        abweichung = _quelltext_abweichung(pfad)
        if abweichung is not None:
            raise FassungUngeprueft(
                f"Der Quelltext von {pfad} weicht vom geprüften ab ({abweichung}): {folge}"
            )


def beschleuniger_abweichung() -> str | None:
    """Darf ``schnell`` eingespielt werden? None: ja, alles ist in der geprüften Fassung. Sonst
    der Grund auf Deutsch, etwa „lxml 6.1.4 ist installiert, geprüft ist 6.1.3“ – dann laufen
    die Stock-Aufrufe. Prüft alles außer dem, was ``newspaper_fest_pruefen`` streng prüft; weicht
    eine Version ab, nennt der Grund nur die Versionen, sonst die Quelltexte und Parser."""
    versionen = []
    for paket, geprueft in GEPRUEFT.items():
        if paket in FEST_PAKETE:
            continue
        fassung = _fassung(paket)
        if fassung is None:
            versionen.append(f"{paket} ist nicht installiert (geprüft ist {geprueft})")
        elif fassung != geprueft:
            versionen.append(f"{paket} {fassung} ist installiert (geprüft ist {geprueft})")
    if versionen:
        return ", ".join(versionen)
    quelltexte = [p for p in QUELLTEXT if p not in FEST and _quelltext_abweichung(p) is not None]
    parser = [p for p in HTML_PARSER if not _ist_html_parser(p)]
    teile = []
    if quelltexte:
        namen = ", ".join(quelltexte[:NAMEN_HOECHSTENS])
        if len(quelltexte) > NAMEN_HOECHSTENS:
            namen += f" und {len(quelltexte) - NAMEN_HOECHSTENS} weiteren Funktionen"
        weicht = "weicht" if len(quelltexte) == 1 else "weichen"
        teile.append(f"der Quelltext von {namen} {weicht} vom geprüften ab")
    if parser:
        ist = "ist kein" if len(parser) == 1 else "sind keine"
        teile.append(f"{', '.join(parser)} {ist} lxml.html.HTMLParser")
    return ", ".join(teile) or None


def _ist_html_parser(pfad: str) -> bool:
    try:
        import lxml.html

        return type(objekt(pfad)) is lxml.html.HTMLParser
    except (AttributeError, ImportError):
        return False


def pruefen() -> None:
    """Beides streng: scheitert mit ``FassungUngeprueft``, wenn irgendetwas abweicht (vor dem
    Einspielen der Beschleuniger; ob sie laufen, entscheidet der Hauptprozess vorher mit
    ``beschleuniger_abweichung``)."""
    newspaper_fest_pruefen()
    grund = beschleuniger_abweichung()
    if grund is not None:
        raise FassungUngeprueft(f"Die Beschleuniger sind nicht geprüft: {grund}.")
