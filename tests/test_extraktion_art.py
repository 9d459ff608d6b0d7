"""Eine Seite, die kein HTML ist, ist kein Artikel (``extraktion.art``).

Ein PDF, ein Bild, ein Archiv, Zufallsbytes: vor den Extraktoren erkannt, alle drei
Kandidaten bekommen denselben Fehler ``keine HTML-Seite: …`` und kein Extraktor
sieht die Seite. Echte Seiten – auch mit ein paar verirrten Steuerbytes, auch in
UTF-16 – gehen durch und ergeben denselben Text wie ohne diese Bytes.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auswahlstufe.extraktion import art, aufrufe, zeichensatz
from auswahlstufe.extraktion import seiten as extraktion
from auswahlstufe.referenz import binaer

AEB = Path(__file__).resolve().parents[1] / "bench" / "aeb"
NORMAL = "042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856"


def befund(roh: bytes, content_type: str | None = None) -> str | None:
    """``art.keine_html`` wie in der Extraktion: nach der Zeichensatzregel, vor ``lesbar``."""
    text, herkunft = zeichensatz.dekodieren_roh(roh, content_type)
    return art.keine_html(text, roh, herkunft.split(" ", 1)[0])


def aeb_seite(seiten_id: str) -> bytes:
    return gzip.decompress((AEB / "html" / f"{seiten_id}.html.gz").read_bytes())


@pytest.fixture(scope="module")
def veroeffentlicht() -> dict[str, dict]:
    return {a["id"]: a for a in json.loads((AEB / "candidates.json").read_text(encoding="utf-8"))}


# --- die Prüfung selbst ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(binaer.DATEIEN))
def test_keine_html_seite_wird_erkannt_mit_und_ohne_magische_zahl(name):
    erzeugen, erwartet = binaer.DATEIEN[name]
    roh = erzeugen()
    assert (befund(roh) or "").startswith(erwartet), befund(roh)
    # ohne die ersten 64 Bytes fehlt die magische Zahl; Steuer- oder Ersatzzeichen bleiben
    assert (befund(binaer.ohne_anfang(roh)) or "").startswith("Binärdaten"), befund(binaer.ohne_anfang(roh))


def test_jede_der_181_seiten_des_benchmarks_geht_durch():
    abgelehnt = {p.name: befund(gzip.decompress(p.read_bytes())) for p in sorted((AEB / "html").iterdir())}
    assert len(abgelehnt) == 181
    assert {name: grund for name, grund in abgelehnt.items() if grund is not None} == {}


@pytest.mark.parametrize("anzahl", [1, 5, 50])
def test_eine_echte_seite_mit_verirrten_steuerbytes_geht_durch(anzahl):
    roh = aeb_seite(NORMAL)
    verirrt = binaer.verirrte_steuerzeichen(roh, anzahl)
    assert len(verirrt) == len(roh) + anzahl
    assert befund(verirrt) is None
    assert zeichensatz.dekodieren(verirrt) == zeichensatz.dekodieren(roh)  # lesbar nimmt sie heraus


def test_eine_kleine_seite_mit_ein_paar_steuerbytes_geht_durch():
    """Die Mindestzahl: drei verirrte Bytes in 200 Bytes sind 1,5 %, aber kein Befund."""
    roh = b"<html><body><p>Kurz\x00 und\x07 knapp\x1a.</p>" + b" " * 150 + b"</body></html>"
    assert befund(roh) is None


@pytest.mark.parametrize(
    ("codec", "content_type"),
    [("utf-16", None), ("utf-16-le", "text/html; charset=utf-16le"), ("utf-16-le", None)],
    ids=["bom", "http", "erkannt"],
)
def test_utf16_ist_text_auch_wenn_jedes_zweite_byte_nul_ist(codec, content_type):
    text = aeb_seite(NORMAL).decode("utf-8").replace("charset", "zeichen")
    roh = text.encode(codec)
    assert roh.count(0) > len(roh) // 4  # als Bytes gezählt wären es Binärdaten
    assert befund(roh, content_type) is None


def test_nur_der_anfang_zaehlt_nicht_der_content_type():
    """Server schicken HTML als octet-stream und Fehlerseiten als image/png: die Bytes entscheiden."""
    html = aeb_seite(NORMAL)
    assert befund(html, "image/png") is None
    assert befund(binaer.pdf(), "text/html; charset=utf-8") == "PDF"


def test_text_aus_dem_stapel_json_wird_ebenso_geprueft():
    """Im Stapel-JSON kommt die Seite als Text: der Anfang latin-1-gelesener Bytes zählt,
    und Steuerzeichen im Text."""
    assert art.keine_html(binaer.png().decode("latin-1")) == "PNG-Bild"
    assert art.keine_html("%PDF-1.7\n" + "x" * 100) == "PDF"
    assert (art.keine_html(binaer.zufall().decode("utf-8", "replace")) or "").startswith("Binärdaten")
    assert art.keine_html(aeb_seite(NORMAL).decode("utf-8")) is None


def test_leere_seite_ist_kein_befund():
    """Leer ist ein Urteil der Extraktoren (leerer Text), keine Seitenart."""
    assert befund(b"") is None and art.keine_html("") is None


_TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffd")
    | st.sampled_from("\t\n\r"),
    min_size=1,
    max_size=2000,
)


@given(text=_TEXT, verirrt=st.lists(st.sampled_from("\x00\x01\x07\x08\x0b\x1a\x1f"), max_size=7))
def test_html_aus_lesbarem_text_mit_wenigen_steuerbytes_geht_durch(text, verirrt):
    """Eigenschaft: Text ohne Steuerzeichen, in HTML gefasst, mit höchstens sieben verirrten
    Steuerbytes (unter der Mindestzahl), geht durch – als Bytes in UTF-8 und als Text."""
    html = "<html><body><p>" + text + "".join(verirrt) + "</p></body></html>"
    assert art.keine_html(html) is None
    assert befund(html.encode("utf-8")) is None


# --- in der Extraktion: kein Extraktor sieht sie, alle drei bekommen denselben Fehler -----


@pytest.fixture(scope="module")
def lauf(veroeffentlicht):
    normal = aeb_seite(NORMAL)
    seiten = {
        "pdf": binaer.pdf(),
        "png": binaer.png(),
        "zufall": binaer.zufall(),
        "docx": binaer.docx(),
        "jpeg": binaer.jpeg(),
        "verirrt": binaer.verirrte_steuerzeichen(normal, 5),
        "normal": normal,
    }
    url = veroeffentlicht[NORMAL]["url"]
    with extraktion.Extraktion(2) as ex:
        fertig = list(ex.seiten(extraktion.Seite(roh, url, name) for name, roh in seiten.items()))
        ergebnisse = dict(zip(seiten, (kandidaten for _, kandidaten in fertig), strict=True))
        statistik = ex.statistik
    return ergebnisse, statistik


@pytest.mark.parametrize(
    ("name", "grund"),
    [("pdf", "PDF"), ("png", "PNG-Bild"), ("jpeg", "JPEG-Bild"), ("docx", "ZIP-Archiv (auch docx")],
)
def test_datei_mit_magischer_zahl_ist_fuer_alle_drei_ein_fehler(lauf, name, grund):
    kandidaten = lauf[0][name]
    assert list(kandidaten) == list(extraktion.EXTRAKTOREN)
    fehler = {k["error"] for k in kandidaten.values()}
    assert len(fehler) == 1 and fehler.pop().startswith(f"keine HTML-Seite: {grund}"), kandidaten
    assert all(k["text"] is None for k in kandidaten.values())


def test_zufallsbytes_sind_kein_konsens_sondern_ein_fehler(lauf):
    kandidaten = lauf[0]["zufall"]
    assert {k["error"] for k in kandidaten.values()} == {
        "keine HTML-Seite: Binärdaten (10,5 % Steuerzeichen)"
    }
    assert all(k["text"] is None for k in kandidaten.values())


def test_verirrte_steuerbytes_geben_denselben_text_wie_die_seite(lauf, veroeffentlicht):
    ergebnisse, statistik = lauf
    assert ergebnisse["verirrt"] == veroeffentlicht[NORMAL]["extractions"]
    assert ergebnisse["normal"] == veroeffentlicht[NORMAL]["extractions"]
    # nur die zwei echten Seiten gingen an die Worker; die fünf anderen sah kein Extraktor
    assert statistik.aufrufe == 2 * len(extraktion.EXTRAKTOREN)
    assert statistik.keine_html == 5


def test_die_fassung_nennt_die_seitenart():
    """Die Prüfung ändert gespeicherte Ergebnisse: jede Seite wird einmal neu geprüft."""
    assert aufrufe.extraktor_fassung("trafilatura", "2.3.1").endswith("; " + art.FASSUNG)
