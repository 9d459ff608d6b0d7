"""Feindliche Seiten und Randfälle für die Extraktion – für Tests und Benchmarks, nie im Betrieb.

Drei Gruppen, alle als Bytes, alles hängt nur am Startwert:

* ``feindliche_seiten``: was die Isolation aushalten muss (100.000 verschachtelte Elemente,
  50 MB, binärer Müll, ein PDF-Anfang, falscher Zeichensatz, leer, nur Skripte;
  ``tests/test_extraktion_feindlich.py``).
* ``randfaelle``: Seiten, an denen eine Abkürzung der Extraktoren anders sein könnte als stock
  (nur Leerraum, nur ein Kommentar, ein Frameset, Koreanisch, Japanisch, UTF-16, viele gleiche
  Blöcke, ein Fragment, 1 MB derselben Bauart wie die 50 MB, auf Wunsch auch 5 MB).
* ``nebenschritte``: Seiten, auf denen newspaper4k 0.9.6 beim Lesen von Autoren, Datum oder
  Videos eine Ausnahme wirft (JSON-LD unerwarteter Gestalt, ein Datum, an dem dateutil mit
  ``decimal.InvalidOperation`` scheitert; ``WIRFT_BEI_STOCK``) – und ähnliche, die es gerade
  nicht tun. ``extraktion.schnell`` lässt diese Schritte aus und muss dann trotzdem denselben
  Fehler geben (``tests/test_extraktion_schnell.py``).
"""

from __future__ import annotations

import random


def grosse_seite(mb: int) -> bytes:
    """Eine Seite von ``mb`` MB gleicher Absätze; newspaper4k rechnet je 2 MB etwa 1,7 s,
    readability 0,6 s (ruhige Maschine) – groß genug für Zeitlimit und Speichergrenze."""
    absatz = b"<p>" + b"Ein ganz gewoehnlicher Satz mit ein paar Woertern darin. " * 20 + b"</p>\n"
    return b"<html><body><article>" + absatz * (mb * 2**20 // len(absatz)) + b"</article></body></html>"


def feindliche_seiten(*, mit_50_mb: bool = True) -> dict[str, bytes]:
    seiten = {
        "verschachtelt": b"<html><body>"
        + b"<div>" * 100_000
        + b"tief"
        + b"</div>" * 100_000
        + b"</body></html>"
    }
    if mit_50_mb:
        seiten["50_mb"] = grosse_seite(50)
    seiten |= {
        "binaerer_muell": random.Random(13).randbytes(300_000),
        "falscher_zeichensatz": (
            "<html><head><meta charset='utf-8'></head><body><p>Grüße aus Köln, schöne Äpfel.</p></body></html>"
        ).encode("latin-1"),
        "leer": b"",
        "nur_skripte": b"<html><head><script>var a = 1;</script></head><body><script>alert(1)</script></body></html>",
        "kein_html": b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n",
    }
    return seiten


def randfaelle(*, mit_5_mb: bool = False) -> dict[str, bytes]:
    return {
        "1_mb": grosse_seite(1),
        **({"5_mb": grosse_seite(5)} if mit_5_mb else {}),
        "nur_leerraum": b"   \n\t  ",
        "nur_kommentar": b"<!-- nichts -->",
        "nur_text": b"Ein Satz ohne jedes Tag, aber mit Woertern darin.",
        "nur_titel": b"<html><head><title>Nur ein Titel hier</title></head><body></body></html>",
        "skripte_im_body": b"<html><body><script>"
        + b"var x = 'a b c d e f';" * 1000
        + b"</script><noscript><p>Bitte JavaScript einschalten.</p></noscript></body></html>",
        "frameset": b"<html><frameset><frame src='a.html'></frameset></html>",
        "koreanisch": (
            "<html lang='ko'><head><title>시험</title></head><body><article><p>한국어 문장은 여기에 있습니다. "
            "이것은 시험 문장입니다. 그리고 더 많은 단어가 있습니다.</p><p>두 번째 문단도 있습니다 그리고 또 "
            "있습니다.</p></article></body></html>"
        ).encode(),
        "japanisch": (
            "<html lang='ja'><head><title>試験</title></head><body><article><p>これは日本語の文章です。"
            "そしてもう一つの文があります。私たちはここにいます。</p><p>二つ目の段落です。これもまた文章です。"
            "</p></article></body></html>"
        ).encode(),
        "utf16_bom": "\ufeff<html><body><p>Grüße aus dem UTF-16-Land mit ein paar Wörtern.</p></body></html>".encode(
            "utf-16"
        ),
        "viele_gleiche_bloecke": b"<html><body>"
        + b"<div class='c'><div><p>This is a paragraph that is the same and it has the words of it.</p></div></div>"
        * 40
        + b"</body></html>",
        "fragment": (
            "<p>"
            + "A paragraph without a head, but it has the words that are in the list of the stop words. " * 5
            + "</p>"
        ).encode()
        * 3,
    }


_KOERPER = (
    "<article><h1>Eine Ueberschrift fuer den Artikel</h1>"
    + "".join(
        f"<p>This is paragraph number {i}, and it has enough of the words that the extractor needs "
        "to take it for the main text, because it is long and there are many of the stop words in it.</p>"
        for i in range(6)
    )
    + "</article>"
)
# Ziffernfolgen, an denen dateutil mit decimal.InvalidOperation scheitert (gefunden durch Fuzzing).
_LANG = "1.5:609999999999999999999999999999999999999999-1Janad"
_LANG2 = "24:009999999999999999999999999999999999999999:99"


def _seite(kopf: str, koerper: str = _KOERPER) -> bytes:
    return (
        f"<html><head><title>Eine Ueberschrift fuer den Artikel</title>{kopf}</head><body>{koerper}</body></html>"
    ).encode()


def _ld(inhalt: str) -> str:
    return f'<script type="application/ld+json">{inhalt}</script>'


def nebenschritte() -> dict[str, bytes]:
    return {
        "jsonld_gueltig": _seite(
            _ld(
                '{"@type": "NewsArticle", "author": {"name": "Erika Musterfrau"}, "datePublished": "2024-05-01"}'
            )
        ),
        "jsonld_liste_gemischt": _seite(_ld('[{"author": "Max Mustermann"}, 5, "x"]')),
        "jsonld_null": _seite(_ld("null")),
        "jsonld_zahl": _seite(_ld("5")),
        "jsonld_text_mit_author": _seite(_ld('"the author wrote this"')),
        "jsonld_text_mit_graph": _seite(_ld('"@graph here"')),
        "jsonld_graph_zahl": _seite(_ld('{"@graph": 5}')),
        "jsonld_name_liste_zahlen": _seite(_ld('{"author": {"name": [1, 2]}}')),
        "jsonld_video_url_zahl": _seite(_ld('{"@type": "VideoObject", "contentUrl": 5}')),
        "jsonld_im_koerper_zahl": _seite("", _KOERPER + _ld("7")),
        "fragment_mit_ld": (
            _ld("null")
            + "<div><p>"
            + "This is a sentence with the and of and it is in the text. " * 10
            + "</p></div>"
        ).encode(),
        "datum_url_gueltig": _seite('<meta name="date" content="2023-02-03">'),
        "datum_nur_meta_ohne_namen": _seite(f'<meta content="{_LANG2}">'),
        "datum_meta_invalidoperation": _seite(f'<meta property="article:published_time" content="{_LANG}">'),
        "datum_meta_itemprop_invalidoperation": _seite(f'<meta itemprop="uploadDate" content="{_LANG2}">'),
        "datum_entity_im_meta": _seite(f'<meta name="pubdate" content="{_LANG2[:-8]}&#57;{_LANG2[-7:]}">'),
        "datum_time_invalidoperation": _seite("", f'<time datetime="{_LANG2}">heute</time>' + _KOERPER),
        "datum_klasse_invalidoperation": _seite(
            "", f'<span class="Article-Date" content="{_LANG}">x</span>' + _KOERPER
        ),
        "datum_itemprop_invalidoperation": _seite(
            "", f'<span itemprop="DatePublished" datetime="{_LANG}">x</span>' + _KOERPER
        ),
        "datum_pubdate_invalidoperation": _seite(
            "", f'<em pubdate="pubdate" datetime="{_LANG2}">x</em>' + _KOERPER
        ),
        "datum_jsonld_invalidoperation": _seite(_ld(f'{{"datePublished": "{_LANG2}"}}')),
        "datum_jsonld_graph_invalidoperation": _seite(_ld(f'{{"@graph": [{{"datePublished": "{_LANG}"}}]}}')),
        "datum_jsonld_datecreated_invalidoperation": _seite(_ld(f'{{"dateCreated": "{_LANG}"}}')),
    }


# Auf genau diesen Seiten aus ``nebenschritte`` wirft newspaper4k 0.9.6 stock.
WIRFT_BEI_STOCK = frozenset(
    {
        *("jsonld_null", "jsonld_zahl", "jsonld_text_mit_author", "jsonld_text_mit_graph"),
        *("jsonld_graph_zahl", "jsonld_name_liste_zahlen", "jsonld_video_url_zahl"),
        *("jsonld_im_koerper_zahl", "fragment_mit_ld"),
        *("datum_meta_invalidoperation", "datum_meta_itemprop_invalidoperation", "datum_entity_im_meta"),
        *("datum_time_invalidoperation", "datum_klasse_invalidoperation", "datum_itemprop_invalidoperation"),
        *("datum_pubdate_invalidoperation", "datum_jsonld_invalidoperation"),
        *("datum_jsonld_graph_invalidoperation", "datum_jsonld_datecreated_invalidoperation"),
    }
)
