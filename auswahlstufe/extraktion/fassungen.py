"""Gegen welche Fassungen der Extraktoren ``newspaper_fest`` und ``schnell`` geprüft sind.

Beide greifen in fremde Bibliotheken ein: ``newspaper_fest`` ordnet zwei Ergebnisse von
newspaper4k fest, ``schnell`` ruft nur die Schritte auf, von denen der Text abhängt, und
ersetzt ein paar Funktionen durch gleichwertige schnellere. Das ist nur für genau den
Quelltext bewiesen, gegen den es geprüft ist (``tests/test_extraktion_schnell.py`` vergleicht
Byte für Byte mit den Stock-Aufrufen). Darum hält dieses Modul fest:

* ``GEPRUEFT``: die Paketversionen (wie in ``pyproject.toml`` gepinnt);
* ``QUELLTEXT``: den sha256 des Quelltexts jeder Funktion, die umschlossen, nachgebaut,
  ersetzt oder deren Verhalten für eine Abkürzung vorausgesetzt wird.

Weicht eins ab (andere Version, ein Patch im venv), scheitert ``pruefen()`` laut mit
``FassungUngeprueft`` (Exit 4: der Worker startet nicht und sagt, warum), statt still andere
Texte zu liefern. Wer eine Version hebt: die Tests mit der neuen Fassung laufen lassen, die
Eingriffe gegen den neuen Quelltext prüfen, dann beide Tabellen anpassen und die Fassung in
``seiten.EINSTELLUNGEN`` hochzählen.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import inspect
import threading

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


class FassungUngeprueft(VoraussetzungFehlt):
    """Ein Paket hat eine andere Version oder anderen Quelltext als geprüft (Exit 4)."""


def quelltext_hash(pfad: str) -> str:
    """sha256 des Stock-Quelltexts einer Funktion, ``"modul:Klasse.methode"``; ist sie
    umschlossen (Attribut ``_stock``), der des Originals."""
    modul, _, name = pfad.partition(":")
    objekt = importlib.import_module(modul)
    for teil in name.split("."):
        objekt = getattr(objekt, teil)
    objekt = getattr(objekt, "_stock", objekt)
    return hashlib.sha256(inspect.getsource(objekt).encode()).hexdigest()


_SPERRE = threading.Lock()
_geprueft: list[bool] = []  # einmal je Prozess


def pruefen() -> None:
    """Scheitert laut, wenn ein Paket nicht in der geprüften Version installiert ist oder der
    Quelltext einer Funktion aus ``QUELLTEXT`` abweicht. Einmal je Prozess (etwa 40 ms)."""
    with _SPERRE:
        if _geprueft:
            return
        for paket, geprueft in GEPRUEFT.items():
            try:
                fassung = importlib.metadata.version(paket)
            except importlib.metadata.PackageNotFoundError:
                raise FassungUngeprueft(f"{paket} ist nicht installiert (geprüft: {geprueft}).") from None
            if fassung != geprueft:
                raise FassungUngeprueft(
                    f"{paket} {fassung} ist installiert, die Extraktion ist nur gegen {geprueft} geprüft "
                    "(auswahlstufe/extraktion/fassungen.py): erst die Eingriffe gegen die neue Fassung "
                    "prüfen, dann GEPRUEFT und QUELLTEXT anpassen."
                )
        for pfad, erwartet in QUELLTEXT.items():
            try:
                ist = quelltext_hash(pfad)
            except (AttributeError, ImportError, OSError, TypeError) as e:
                raise FassungUngeprueft(
                    f"Der Quelltext von {pfad} ist nicht lesbar ({type(e).__name__}: {e})."
                ) from None
            if ist != erwartet:
                raise FassungUngeprueft(
                    f"Der Quelltext von {pfad} weicht vom geprüften ab (sha256 {ist[:16]}…, "
                    f"geprüft {erwartet[:16]}…)."
                )
        import newspaper

        if newspaper.__version__ != GEPRUEFT["newspaper4k"]:
            raise FassungUngeprueft(
                f"newspaper.__version__ ist {newspaper.__version__}, geprüft: {GEPRUEFT['newspaper4k']}."
            )
        _geprueft.append(True)
