"""Extraktion: vom HTML zu den drei Kandidaten (extraktion.py).

Die Einstellungen geben genau die veröffentlichten Kandidaten des Benchmarks
(bench/aeb/candidates.json); der Zeichensatz folgt einer Regel für alle drei;
ohne Netz geht es auch. Feindliche Seiten stehen in test_extraktion_feindlich.py.
"""

from __future__ import annotations

import codecs
import gzip
import json
import socket
from pathlib import Path

import pytest

from auswahlstufe.extraktion import aufrufe, zeichensatz
from auswahlstufe.extraktion import seiten as extraktion

AEB = Path(__file__).resolve().parents[1] / "bench" / "aeb"
KOREANISCH = "0ec95c7261d122f304728e90c983450ef1ce1e0b423546835c397d50aaf0d0f2"
JAPANISCH = "85439e26c41c75901820d01a13e8cea7836abb58635ea3986f71a163ab0311d3"
ENGLISCH = "042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856"  # mit vielen Bildern


def html_bytes(seiten_id: str) -> bytes:
    return gzip.decompress((AEB / "html" / f"{seiten_id}.html.gz").read_bytes())


@pytest.fixture(scope="module")
def veroeffentlicht() -> dict[str, dict]:
    return {a["id"]: a for a in json.loads((AEB / "candidates.json").read_text(encoding="utf-8"))}


# --- Zeichensatz: eine Regel für alle drei ------------------------------------------------

SEITE = "<html><head>{kopf}</head><body><p>Grüße aus Köln – schöne Äpfel.</p></body></html>"


def test_ohne_deklaration_gilt_gueltiges_utf8():
    text, herkunft = zeichensatz.dekodieren(SEITE.format(kopf="").encode("utf-8"))
    assert "Grüße aus Köln – schöne Äpfel." in text
    assert herkunft == "utf-8 (gültig)"


def test_deklarierter_zeichensatz_im_dokument_gilt():
    roh = SEITE.format(kopf='<meta charset="windows-1252">').encode("cp1252")
    text, herkunft = zeichensatz.dekodieren(roh)
    assert "Grüße aus Köln – schöne Äpfel." in text
    assert herkunft == "cp1252 (Dokument)"


def test_http_kopf_geht_vor_dem_dokument():
    roh = SEITE.format(kopf='<meta charset="utf-8">').encode("cp1252")
    text, herkunft = zeichensatz.dekodieren(roh, "text/html; charset=windows-1252")
    assert "Grüße aus Köln – schöne Äpfel." in text
    assert herkunft == "cp1252 (HTTP)"


def test_bom_geht_vor_allem():
    roh = codecs.BOM_UTF16_LE + SEITE.format(kopf='<meta charset="iso-8859-2">').encode("utf-16-le")
    text, herkunft = zeichensatz.dekodieren(roh, "text/html; charset=iso-8859-1")
    assert "Grüße aus Köln – schöne Äpfel." in text
    assert herkunft == "utf-16-le (BOM)"


def test_latin1_heisst_windows_1252_wie_im_browser():
    # „–“ ist in Latin-1 ein Steuerzeichen (0x96), in windows-1252 der Halbgeviertstrich
    roh = SEITE.format(kopf='<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">')
    text, herkunft = zeichensatz.dekodieren(roh.encode("cp1252"))
    assert "Köln – schöne" in text
    assert herkunft == "cp1252 (Dokument)"


def test_falsch_deklarierter_zeichensatz_faellt_auf_die_erkennung():
    # deklariert UTF-8, tatsächlich Latin-1: strikt nicht lesbar, also weiter in der Regel
    roh = SEITE.format(kopf='<meta charset="utf-8">').replace("–", "-").encode("latin-1")
    text, herkunft = zeichensatz.dekodieren(roh)
    assert "Grüße aus Köln - schöne Äpfel." in text
    assert herkunft.endswith("(erkannt)")


def test_unbekannter_zeichensatz_wird_uebergangen():
    roh = SEITE.format(kopf='<meta charset="gibt-es-nicht">').encode("utf-8")
    assert zeichensatz.dekodieren(roh)[1] == "utf-8 (gültig)"


def test_utf16_im_dokument_heisst_utf8():
    roh = SEITE.format(kopf='<meta charset="utf-16">').encode("utf-8")
    assert zeichensatz.dekodieren(roh) == (zeichensatz.dekodieren(roh)[0], "utf-8 (Dokument)")


def test_xml_deklaration_und_steuerzeichen_fallen_weg():
    roh = b'<?xml version="1.0" encoding="iso-8859-1"?>\n<html><body><p>Gr\xfc\xdfe\x00\x0b aus K\xf6ln</p></body></html>'
    text, herkunft = zeichensatz.dekodieren(roh)
    assert herkunft == "cp1252 (Dokument)"
    assert not text.lstrip().startswith("<?xml")
    assert "Grüße aus Köln" in text


def test_binaerer_muell_wird_lesbarer_text():
    roh = bytes(range(256)) * 50
    text, _ = zeichensatz.dekodieren(roh)
    assert zeichensatz.lesbar(text) == text
    assert "\x00" not in text


# --- die Einstellungen geben die veröffentlichten Kandidaten ---------------------------------


@pytest.fixture
def ohne_netz(monkeypatch) -> list:
    """Jeder Verbindungsversuch scheitert und wird notiert."""
    versuche = []

    def gesperrt(*args, **kwargs):
        versuche.append(args)
        raise OSError("Netz im Test gesperrt")

    monkeypatch.setattr(socket.socket, "connect", gesperrt)
    monkeypatch.setattr(socket.socket, "connect_ex", gesperrt)
    monkeypatch.setattr(socket, "create_connection", gesperrt)
    monkeypatch.setattr(socket, "getaddrinfo", gesperrt)
    return versuche


@pytest.mark.parametrize("seiten_id", [KOREANISCH, JAPANISCH, ENGLISCH], ids=["ko", "ja", "en"])
def test_ohne_netz_genau_die_veroeffentlichten_kandidaten(seiten_id, veroeffentlicht, ohne_netz):
    aufrufe.vorbereiten()
    html, _ = zeichensatz.dekodieren(html_bytes(seiten_id))
    url = veroeffentlicht[seiten_id]["url"]
    for name in extraktion.EXTRAKTOREN:
        assert aufrufe.extrahieren(name, html, url) == veroeffentlicht[seiten_id]["extractions"][name]["text"]
    assert ohne_netz == []


def test_readability_text_hat_absatzgrenzen():
    summary = "<div><h1>Titel</h1><p>Erster\u00a0 Absatz<br>zweite   Zeile</p><ul><li>eins</li><li>zwei</li></ul></div>"
    assert aufrufe.readability_text(summary) == "Titel\n\nErster Absatz\nzweite Zeile\n\neins\n\nzwei"


def test_versionen_und_fassung_nennen_die_gepinnten_pakete():
    versionen = aufrufe.versionen()
    assert versionen == {"trafilatura": "2.3.1", "newspaper4k": "0.9.6", "readability": "0.9"}
    fassung = aufrufe.extraktor_fassung("newspaper4k", versionen["newspaper4k"])
    assert "0.9.6" in fassung and "fetch_images=False" in fassung and "Zeichensatz" in fassung


# --- in Workern: dieselben Kandidaten, ohne Netz ----------------------------------------------


def test_worker_geben_dieselben_kandidaten_in_der_reihenfolge_der_seiten(veroeffentlicht):
    ids = [KOREANISCH, ENGLISCH, JAPANISCH]
    seiten = [extraktion.Seite(html_bytes(i), veroeffentlicht[i]["url"], i) for i in ids]
    ergebnisse = list(extraktion.kandidaten(seiten, prozesse=2))
    assert [nr for nr, _ in ergebnisse] == [0, 1, 2]
    for (_, kandidaten), seiten_id in zip(ergebnisse, ids, strict=True):
        assert kandidaten == veroeffentlicht[seiten_id]["extractions"]


def test_worker_haben_kein_netz():
    """In den Workern scheitert jeder Verbindungsversuch sofort: eine Seite voller
    Bilder und Verweise auf andere Rechner extrahiert ohne Warten."""
    bilder = "".join(f'<img src="http://10.255.255.1/bild{i}.jpg">' for i in range(20))
    satz = "The council met on Tuesday and said that the new budget for the city was not yet ready. "
    absaetze = f"<p>{satz * 5}</p>" * 6
    html = (
        '<html><head><title>Ohne Netz</title><meta property="og:image" content="http://10.255.255.1/t.jpg">'
        f"</head><body><article><h1>Without a network</h1>{bilder}<div>{absaetze}</div></article></body></html>"
    )
    [(_, kandidaten)] = extraktion.kandidaten([extraktion.Seite(html, "http://10.255.255.1/a.html")], 1)
    for name, ergebnis in kandidaten.items():
        assert ergebnis["error"] is None, name
        assert satz.strip() in ergebnis["text"], name
