"""Schneller extrahieren, dieselben Texte: nur die nötigen Schritte, Zwischenspeicher, C statt Python.

Gibt auf jeder Seite Byte für Byte dieselben Texte und Fehler wie die Stock-Aufrufe
(``seiten.STOCK_AUFRUFE`` mit ``newspaper_fest``). Was abgekürzt wird, warum das gleich bleibt,
woran es gebunden ist und was es prüft: docs/extraktion.md, „Schneller: dieselben Texte mit
weniger Arbeit“.
"""

from __future__ import annotations

import importlib
import re
import sys

from auswahlstufe.extraktion import fassungen

# --- Beschleuniger (reine Zwischenspeicher und Lookups in C) ----------------------------

_eingespielt: list[bool] = []  # einmal je Prozess, wie newspaper_fest


# So viele Zeichen merkt sich der Tokenizer höchstens (mit den Tokens etwa zehnmal so viele Bytes).
GEDAECHTNIS_ZEICHEN = 1_000_000


def _tokenizer_mit_tabelle():
    """``newspaper.text.default_tokenizer`` mit einmal gebauter Tabelle und Regex (stock baut
    beide bei jedem Aufruf aus Modulkonstanten) und einem Gedächtnis für schon zerlegte Texte
    (eine reine Funktion des Texts; auf den aeb-Seiten 64 % Wiederholungen).
    ``"".join(contraction_separators)`` ordnet eine Menge je PYTHONHASHSEED anders – als
    Zeichenklasse gleichgültig, wie bei stock."""
    text = importlib.import_module("newspaper.text")
    tabelle = str.maketrans(text.punctuation, " " * len(text.punctuation))
    zeichen = re.escape("".join(text.contraction_separators))
    kontraktion = re.compile(
        rf"(?<=\W)[{zeichen}]|[{zeichen}](?=\W)|" f"^[{zeichen}]*|[{zeichen}]*$|[{zeichen}]{{2,}}"
    )

    gedaechtnis: dict[str, tuple[str, ...]] = {}
    gemerkt = [0]  # Zeichen im Gedächtnis

    def default_tokenizer(eingabe):
        if isinstance(eingabe, bytes):
            eingabe = eingabe.decode("utf-8", "replace")
        tokens = gedaechtnis.get(eingabe)
        if tokens is None:
            tokens = tuple(
                text.whitespace_tokenizer.tokenize(kontraktion.sub(" ", eingabe.translate(tabelle)).lower())
            )
            if gemerkt[0] + len(eingabe) > GEDAECHTNIS_ZEICHEN:
                gedaechtnis.clear()
                gemerkt[0] = 0
            if len(eingabe) <= GEDAECHTNIS_ZEICHEN // 4:
                gedaechtnis[eingabe] = tokens
                gemerkt[0] += len(eingabe)
        return list(tokens)  # stock gibt eine neue Liste zurück

    default_tokenizer.__doc__ = text.default_tokenizer.__doc__
    default_tokenizer._stock = text.default_tokenizer
    return default_tokenizer


def _stopwords_init_mit_speicher(stock_init):
    """``StopWords.__init__`` mit Zwischenspeicher je Sprachangabe: beim ersten Mal je Sprache
    stock (auch mit seinen Fehlern, die nicht gemerkt werden), danach dieselben Felder ohne
    Dateisystem; ``tokenizer`` und ``find_stopwords`` wie bei stock bei jedem Objekt gelesen."""
    text = importlib.import_module("newspaper.text")
    gemerkt: dict[str, tuple[str, object]] = {}

    def __init__(self, language="en"):
        eintrag = gemerkt.get(language)
        if eintrag is None:
            stock_init(self, language)
            sprache = text.normalize_language_code(language)
            gemerkt[language] = (sprache, sys.modules.get(f"newspaper.languages.{sprache}"))
            return
        sprache, modul = eintrag
        self.find_stopwords = None
        self.tokenizer = text.default_tokenizer
        if modul is not None:
            if hasattr(modul, "find_stopwords"):
                self.find_stopwords = modul.find_stopwords
            self.tokenizer = modul.tokenizer
        self.stop_words = self._cached_stop_words[sprache]

    __init__._stock = stock_init
    return __init__


def _klassen_lookup_in_c():
    """Dieselbe Zuordnung Knoten → Python-Klasse wie ``lxml.html.HtmlElementClassLookup``,
    aber mit lxmls Lookups in C statt eines Python-Rückrufs.

    ``ElementDefaultClassLookup`` mit den vier Klassen von stock (Element, Kommentar, PI, Entity),
    davor ``ElementNamespaceClassLookup`` mit den Sonderklassen (form, input, …) unter jeder
    Groß-/Kleinschreibung ihres Namens (stock senkt ``name`` ab). Einziger Unterschied: ein
    Element mit Namensraum und einem dieser Namen bekäme ``HtmlElement`` – der HTML-Parser
    erzeugt keine Namensräume, und keiner der drei Extraktoren legt solche Elemente an."""
    import itertools

    from lxml import etree, html

    standard = etree.ElementDefaultClassLookup(
        element=html.HtmlElement,
        comment=html.HtmlComment,
        pi=html.HtmlProcessingInstruction,
        entity=html.HtmlEntity,
    )
    lookup = etree.ElementNamespaceClassLookup(standard)
    ohne_namensraum = lookup.get_namespace(None)
    for name, klasse in html.HtmlElementClassLookup()._element_classes.items():
        for schreibung in itertools.product(*((z.lower(), z.upper()) for z in name)):
            ohne_namensraum["".join(schreibung)] = klasse
    return lookup


def beschleuniger_einspielen() -> None:
    """Tokenizer, Stoppwort-Speicher (newspaper4k) und Klassen-Lookup in C (alle drei); scheitert
    vor jeder Änderung mit ``FassungUngeprueft``, wenn etwas von der geprüften Fassung abweicht
    (ob sie laufen, entscheidet der Worker vorher: ``worker.anfang``)."""
    if _eingespielt:
        return
    fassungen.pruefen()  # auch: jeder der HTML_PARSER ist ein lxml.html.HTMLParser
    text = importlib.import_module("newspaper.text")
    text.default_tokenizer = _tokenizer_mit_tabelle()
    text.StopWords.__init__ = _stopwords_init_mit_speicher(text.StopWords.__init__)
    lookup = _klassen_lookup_in_c()
    for name in fassungen.HTML_PARSER:  # die Parser, mit denen die drei Extraktoren ihre Bäume bauen
        fassungen.objekt(name).set_element_class_lookup(lookup)
    _eingespielt.append(True)


# --- newspaper4k nur mit den Schritten, von denen der Text abhängt -----------------------

# Elemente, aus denen PubdateExtractor.parse Datumstexte liest: jeder steht in einem Attribut
# datetime oder content; "//" sucht im ganzen Baum (eine Obermenge schadet nicht, siehe unten).
_MIT_DATUMSATTRIBUT = "//*[@datetime or @content]"


def _autoren_json_ld(autoren, json_ld_scripts) -> None:
    """Der JSON-LD-Teil von ``AuthorsExtractor.parse`` (0.9.6), wörtlich; nur er kann werfen."""
    authors = []
    for script_tag in json_ld_scripts:
        if "@graph" in script_tag:
            for item in script_tag.get("@graph", []):
                if not isinstance(item, dict):
                    continue
                if item.get("@type") == "Person":
                    authors.append(item.get("name", ""))
                if "author" in item:
                    authors.extend(autoren._get_authors_from_ld(item["author"]))
        else:
            if "author" in script_tag:
                authors.extend(autoren._get_authors_from_ld(script_tag["author"]))

    authors = [re.sub(r"[\n\t\r\xa0]", " ", x) for x in authors if x]


def _datum_json_ld(datum, json_ld_scripts) -> None:
    """Der JSON-LD-Teil von ``PubdateExtractor.parse`` (0.9.6), wörtlich."""
    for script_tag in json_ld_scripts:
        if "@graph" in script_tag:
            for item in script_tag.get("@graph", []):
                if not isinstance(item, dict):
                    continue
                date_str = item.get("datePublished")
                if date_str is None:
                    continue
                datum._parse_date_str(date_str)
        else:
            for k in script_tag:
                if k == "datePublished":  # noqa: SIM114 – wörtlich wie stock
                    datum._parse_date_str(script_tag[k])
                elif k == "dateCreated":
                    datum._parse_date_str(script_tag[k])


def _videos_json_ld(videos, json_ld_scripts) -> None:
    """Der JSON-LD-Teil von ``VideoExtractor.parse`` (0.9.6), wörtlich (ohne die Liste)."""
    from newspaper.utils import Video

    for script_tag in json_ld_scripts:
        if "@graph" in script_tag:
            script_tag_ = script_tag.get("@graph", [])
        elif isinstance(script_tag, list):
            script_tag_ = script_tag
        else:
            script_tag_ = [script_tag]
        for item in script_tag_:
            if not isinstance(item, dict):
                continue
            if item.get("@type") == "VideoObject":
                m = Video()
                m.src = item.get("contentUrl")
                m.embed_code = item.get("embedUrl")
                m.provider = videos._get_provider(m.src)


def _datumstexte(url: str, doc) -> list:
    """Obermenge der Texte, die ``PubdateExtractor.parse`` außerhalb von JSON-LD an
    ``_parse_date_str`` gibt (URL, ``<time>``, ``<meta>``, PUBLISH_DATE_TAGS; ``lower()`` statt
    ASCII-Kleinschreibung trifft höchstens mehr)."""
    from newspaper import parsers, urls
    from newspaper.extractors.defines import PUBLISH_DATE_META_INFO, PUBLISH_DATE_TAGS

    texte = []
    treffer = re.search(urls.STRICT_DATE_REGEX, url)
    if treffer:
        texte.append(treffer.group(0))
    meta_namen = frozenset(PUBLISH_DATE_META_INFO)
    for element in doc.xpath(_MIT_DATUMSATTRIBUT):
        if element.tag == "time" and element.get("datetime"):
            texte.append(element.get("datetime"))
        if element.tag == "meta" and any(
            element.get(a) in meta_namen for a in ("name", "property", "itemprop")
        ):
            texte.append(parsers.get_attribute(element, "content"))
        for t in PUBLISH_DATE_TAGS:
            if (element.get(t["attribute"]) or "").lower() == t["value"].lower():
                texte.append(parsers.get_attribute(element, t["content"]))
    return texte


def _nebenschritte_unbedenklich(artikel, doc) -> bool:
    """True, wenn Autoren, Datum, Videos und Bilder auf dieser Seite keine Ausnahme werfen
    (die zwei Stellen, an denen sie es können: docs/extraktion.md, „Schneller“).

    Der Rest kann nicht werfen (Attribute, XPath, abgefangene ValueError, ``fetch_images=False``).
    Die Prüfung wirft, wann immer stock wirft; wirft sie öfter (Obermenge), kostet das nur den
    langsamen Weg."""
    from newspaper import parsers
    from newspaper.extractors.authors_extractor import AuthorsExtractor
    from newspaper.extractors.pubdate_extractor import PubdateExtractor
    from newspaper.extractors.videos_extractor import VideoExtractor

    try:
        json_ld = parsers.get_ld_json_object(doc)
        datum = PubdateExtractor(artikel.config)
        if json_ld:
            _autoren_json_ld(AuthorsExtractor(artikel.config), json_ld)
            _datum_json_ld(datum, json_ld)
            _videos_json_ld(VideoExtractor(artikel.config), json_ld)
        for text in _datumstexte(artikel.url, doc):
            datum._parse_date_str(text)
    except Exception:
        return False
    return True


def newspaper4k_text(html: str, url: str) -> str:
    """Wie ``Article(url, fetch_images=False)``, ``download(input_html=html)``, ``parse()``,
    ``.text`` – nur die Schritte von ``Article.parse()`` (0.9.6), von denen der Text abhängt.

    Es entfallen ``get_authors``, ``get_publishing_date``, ``get_videos`` und ``fetch_images``
    (ob sie würfen, prüft ``_nebenschritte_unbedenklich``) und die übrigen Felder; ``text`` wird
    wie im Setter von ``Article.text`` auf ``config.max_text`` Zeichen gekürzt."""
    from newspaper import Article, parsers
    from newspaper.cleaners import DocumentCleaner
    from newspaper.outputformatters import OutputFormatter
    from newspaper.utils import get_available_languages

    artikel = Article(url, fetch_images=False)
    artikel.download(input_html=html)
    artikel.throw_if_not_downloaded_verbose()
    doc = parsers.fromstring(artikel.html)
    if doc is None:
        return ""
    if not _nebenschritte_unbedenklich(artikel, doc):
        artikel.parse()  # vollständig, mit demselben Fehler wie stock
        return artikel.text or ""

    document_cleaner = DocumentCleaner(artikel.config)
    output_formatter = OutputFormatter(artikel.config)
    title = artikel.extractor.get_title(doc)
    metadata = artikel.extractor.get_metadata(artikel.url, doc)
    if metadata["language"] in get_available_languages() and artikel.config.use_meta_language:
        artikel.config.language = metadata["language"]
    top_node = artikel.extractor.calculate_best_node(doc)
    if top_node is None:
        return ""
    ergaenzt = document_cleaner.clean(artikel.extractor.top_node_complemented)
    text, _ = output_formatter.get_formatted(ergaenzt, title)
    return text[: artikel.config.max_text] if text else ""
