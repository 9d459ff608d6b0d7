"""Deterministisch und schnell: dieselben Texte wie stock, und zwar immer dieselben.

* **Fassungen:** genau die geprüften Pakete und unveränderter Quelltext jeder Funktion, die
  ``newspaper_fest`` und ``schnell`` umschließen, nachbauen oder voraussetzen (sonst scheitern
  diese Tests). Weicht in einem Haus ab, wovon ``newspaper_fest`` abhängt, scheitert die
  Extraktion laut (``fassungen.FassungUngeprueft``, Exit 4); weicht sonst etwas ab, läuft sie mit
  den Stock-Aufrufen – dieselben Texte, langsamer – und sagt es einmal je Lauf.
* **Fix:** newspaper4k gibt für jede Reihenfolge, die ``set()`` in 0.9.6 liefern könnte,
  denselben Text; ohne den Fix nicht (auf allen sechs Seiten aus ``bench/newspaper4k-zufall``).
* **Gleichheit:** die schnellen Aufrufe (``aufrufe.AUFRUFE``) geben Byte für Byte dieselben
  Texte und dieselben Fehler wie die Stock-Aufrufe mit Fix (``aufrufe.STOCK_AUFRUFE``) – auf jeder
  dritten der 181 aeb-Seiten (mit ``--langsam`` allen), den sechs Zufallsseiten und den feindlichen
  Seiten (``auswahlstufe/referenz/feindlich.py``). Stock und schnell laufen je in einem frischen
  Prozess.
* **Determinismus:** frische Prozesse mit verschiedener Vorgeschichte (PYTHONHASHSEED, andere
  Seiten vorher, andere Reihenfolge, vorher belegter Speicher) und ganze Läufe
  ``auswahl.py --extrahieren ORDNER`` mit ``--prozesse 1`` und ``--prozesse 2`` geben dieselben
  Kandidaten – und dieselben wie stock.

Alle Prozesse laufen gleichzeitig (``frische_prozesse``); der Stock-Prozess rechnet jede Seite
einmal, die anderen vergleichen sich mit ihm. Die 5- und die 50-MB-Seite und alle Seiten in
mehr Prozessen, auch mit Fix und ohne Beschleuniger: ``--langsam``.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import inspect
import json
import logging
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from auswahlstufe.extraktion import fassungen
from tests.hilfen.abweichung import mit_abweichung
from tests.hilfen.prozesse import einmal_fuer_alle_worker

PROJEKT = Path(__file__).resolve().parents[1]
AEB = PROJEKT / "bench" / "aeb"
ZUFALL = PROJEKT / "bench" / "newspaper4k-zufall"
EXTRAKTOREN = ("trafilatura", "newspaper4k", "readability")
ERSATZ_URL = "http://example.com/{schluessel}.html"
# Genug für die langsamste Seite auf einer überlasteten Maschine; ein Zeitlimit darf die
# Ausgaben nicht unterscheiden (es ist ein Fehler der Umgebung, kein Ergebnis).
ZEITLIMIT_S = "600"


# --- Seiten (Schlüssel, Bytes, URL) ----------------------------------------------------------


def aeb_seiten() -> list[tuple[str, bytes, str]]:
    wahrheit = json.loads((AEB / "ground-truth.json").read_text(encoding="utf-8"))
    return [
        (i, gzip.decompress((AEB / "html" / f"{i}.html.gz").read_bytes()), wahrheit[i]["url"])
        for i in sorted(wahrheit)
    ]


def zufall_seiten() -> list[tuple[str, bytes, str]]:
    seiten = json.loads((ZUFALL / "seiten.json").read_text(encoding="utf-8"))
    return [
        (s["id"], gzip.decompress((ZUFALL / "html" / f"{s['id']}.html.gz").read_bytes()), s["url"])
        for s in seiten
    ]


def feindliche_seiten(mit_50_mb: bool = False) -> list[tuple[str, bytes, str]]:
    from auswahlstufe.referenz import feindlich

    seiten = {
        **feindlich.feindliche_seiten(mit_50_mb=mit_50_mb),
        **feindlich.randfaelle(mit_5_mb=mit_50_mb),
        **feindlich.nebenschritte(),
    }
    return [(name, roh, ERSATZ_URL.format(schluessel=name)) for name, roh in seiten.items()]


SEITEN = {"aeb": aeb_seiten, "zufall": zufall_seiten, "feindlich": feindliche_seiten}


def ergebnis(aufruf, html: str, url: str) -> list:
    """``["text", sha256, Länge]`` oder ``["fehler", Meldung]``, die Meldung wie im Worker."""
    try:
        text = aufruf(html, url)
    except Exception as e:
        return ["fehler", f"Extraktor scheiterte: {type(e).__name__}: {str(e)[:300]}"]
    return ["text", hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), len(text)]


def aus_kandidat(kandidat: dict) -> list:
    """Ein Kandidat aus der Ausgabe der Stufe in derselben Form wie ``ergebnis``."""
    if kandidat["error"] is not None:
        return ["fehler", kandidat["error"]]
    text = kandidat["text"]
    return ["text", hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), len(text)]


# --- ein frischer Prozess: ``python -m tests.test_extraktion_schnell AUFTRAG`` ---------------


def im_frischen_prozess(auftrag: dict) -> dict:
    """Läuft im frischen Prozess: ``{"schlüssel/extraktor": ergebnis}``."""
    import logging
    import warnings

    logging.disable(logging.CRITICAL)
    warnings.filterwarnings("ignore")
    from auswahlstufe.extraktion import aufrufe, zeichensatz

    schnell = auftrag["art"] == "schnell"
    aufrufe.vorbereiten(beschleuniger=schnell)
    je_name = aufrufe.AUFRUFE if schnell else aufrufe.STOCK_AUFRUFE
    halde = []
    if auftrag.get("speicher_mb"):  # Speicher belegen und lückenhaft freigeben: andere Adressen
        r = random.Random(auftrag["speicher_mb"])
        halde = [[r.random()] * r.randint(1, 8) for _ in range(auftrag["speicher_mb"] * 10_000)]
        del halde[:: r.randint(2, 5)]
    for _, roh, url in SEITEN[auftrag["vorher"]]() if auftrag.get("vorher") else ():
        ergebnis(je_name["newspaper4k"], zeichensatz.dekodieren(roh)[0], url)  # andere Seiten vorher
    if auftrag.get("mit_50_mb"):
        SEITEN["feindlich"] = lambda: feindliche_seiten(mit_50_mb=True)
    jede = {"aeb": auftrag.get("aeb_jede", 1)}
    liste = [seite for art in auftrag["seiten"] for seite in SEITEN[art]()[:: jede.get(art, 1)]]
    if auftrag.get("mischen") is not None:
        random.Random(auftrag["mischen"]).shuffle(liste)
    aus = {}
    for schluessel, roh, url in liste:
        html = zeichensatz.dekodieren(roh)[0]  # wie die Stufe: Zeichensatzregel, dann lesbar()
        for name in EXTRAKTOREN:
            aus[f"{schluessel}/{name}"] = ergebnis(je_name[name], html, url)
    return aus


def _starten(auftrag: dict, hashseed: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.test_extraktion_schnell", json.dumps(auftrag)],
        cwd=PROJEKT,
        env={**os.environ, "PYTHONHASHSEED": hashseed},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stufe_starten(ordner: Path, ausgabe: Path, prozesse: int) -> subprocess.Popen:
    return subprocess.Popen(
        [
            *(sys.executable, str(PROJEKT / "auswahl.py"), "--extrahieren", str(ordner), "-o", str(ausgabe)),
            *("--prozesse", str(prozesse), "--extraktion-zeitlimit", ZEITLIMIT_S),
        ],
        cwd=ordner.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _ende(prozess: subprocess.Popen) -> str:
    stdout, stderr = prozess.communicate(timeout=3600)
    assert prozess.returncode == 0, stderr[-3000:]
    assert hinweise(stderr) == [], stderr[-3000:]  # mit den geprüften Fassungen: schnell, still
    return stdout


def ordner_mit(tmp: Path, quellen: dict[Path, int]) -> Path:
    """Ein Ordner für ``--extrahieren`` mit jeder n-ten .html.gz-Datei je Quelle (als Verweise)."""
    ordner = tmp / "seiten"
    ordner.mkdir()
    for quelle, jede in quellen.items():
        for datei in sorted((quelle / "html").glob("*.html.gz"))[::jede]:
            (ordner / datei.name).symlink_to(datei)
    return ordner


def stufe_ergebnisse(ausgabe: Path) -> dict:
    return {
        f"{artikel['id']}/{name}": aus_kandidat(artikel["extractions"][name])
        for artikel in json.loads(ausgabe.read_text(encoding="utf-8"))
        for name in EXTRAKTOREN
    }


def unterschiede(a: dict, b: dict) -> list[str]:
    assert a.keys() == b.keys(), sorted(a.keys() ^ b.keys())[:10]
    return [f"{k}: {a[k]} ≠ {b[k]}" for k in sorted(a) if a[k] != b[k]]


# Der schnelle Prozess im Test (alle Seiten): eine andere Vorgeschichte als der Stock-Prozess
# (der Reihe nach, PYTHONHASHSEED 0) und als die beiden Läufe der Stufe (Worker im forkserver).
SCHNELL = "gemischt, Speicher vorher belegt, andere Seiten vorher"
VORGESCHICHTE = {
    "mischen": 5,
    "speicher_mb": 40,
    "vorher": "zufall",
}
# Die beiden Läufe der Stufe: die sechs Zufallsseiten (ohne Fix je Prozess anders) und jede
# sechste aeb-Seite. Alle Seiten rechnen der Stock- und der schnelle Prozess; alle Seiten in mehr
# Prozessen: --langsam.
STUFE_SEITEN = {AEB: 6, ZUFALL: 1}
STUFE_ZAHL = len(range(0, 181, 6)) + 6
# Stock und schnell über jede sechste aeb-Seite (dieselben wie die Stufe), alle sechs Zufalls-
# und alle feindlichen Seiten; über alle 181: --langsam (hier und in der langen Fassung unten).
AEB_JEDE = 6


@pytest.fixture(scope="module")
def frische_prozesse(tmp_path_factory, request) -> dict[str, dict]:
    """Alle Prozesse gleichzeitig: stock mit Fix und schnell (je dieselben Seiten, jede
    ``AEB_JEDE``-te aeb-Seite, mit ``--langsam`` alle; mit verschiedener Vorgeschichte) und zwei
    ganze Läufe der Stufe über einen Ordner mit den Seiten aus ``STUFE_SEITEN``, mit einem und mit
    zwei Workern; mit ``-n`` einmal für alle Worker."""
    jede = 1 if request.config.getoption("--langsam") else AEB_JEDE
    return einmal_fuer_alle_worker(
        tmp_path_factory, "frische_prozesse", lambda tmp: _frische_prozesse(tmp, jede)
    )


def _frische_prozesse(tmp: Path, jede: int) -> dict[str, dict]:
    ordner = ordner_mit(tmp, STUFE_SEITEN)
    seiten = {"seiten": ["aeb", "zufall", "feindlich"], "aeb_jede": jede}
    prozesse = {
        "stock": _starten({"art": "stock", **seiten}, "0"),
        SCHNELL: _starten({"art": "schnell", **VORGESCHICHTE, **seiten}, "1"),
    }
    laeufe = {zahl: _stufe_starten(ordner, tmp / f"prozesse_{zahl}.json", zahl) for zahl in (1, 2)}
    try:
        ergebnisse = {name: json.loads(_ende(p)) for name, p in prozesse.items()}
        for zahl, lauf in laeufe.items():
            _ende(lauf)
            # Der Ordner hat keine URLs: newspaper4k sieht http://example.com/<id>.html statt der
            # echten. Auf diesen Seiten ändert das keinen Text (sonst schlüge der Vergleich an).
            ergebnisse[f"--prozesse {zahl}"] = stufe_ergebnisse(tmp / f"prozesse_{zahl}.json")
    finally:
        for prozess in [*prozesse.values(), *laeufe.values()]:
            if prozess.poll() is None:  # nach einem Fehler: keine Waisen
                prozess.kill()
                prozess.wait()
    ergebnisse["ausgaben"] = {zahl: (tmp / f"prozesse_{zahl}.json").read_bytes() for zahl in (1, 2)}
    ergebnisse["aeb_seiten"] = len(range(0, 181, jede))
    return ergebnisse


# --- Fassungen -------------------------------------------------------------------------------


def test_installiert_sind_genau_die_geprueften_fassungen():
    """Was ``fassungen`` als geprüft führt, ist installiert und in pyproject.toml gepinnt, genau in
    dieser Version; jeder geprüfte Quelltext und Parser gehört zu einem dieser Pakete; die
    Quelltexte haben ihren geprüften sha256."""
    import re
    import tomllib

    extra = tomllib.loads((PROJEKT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    gepinnt = dict(re.match(r"([\w.-]+)(?:\[[\w-]+\])?==(.+)", p).groups() for p in extra["extraktion"])
    installiert = {paket: importlib.metadata.version(paket) for paket in fassungen.GEPRUEFT}
    assert installiert == fassungen.GEPRUEFT
    assert {paket: gepinnt.get(paket) for paket in fassungen.GEPRUEFT} == fassungen.GEPRUEFT
    verteilung = importlib.metadata.packages_distributions()
    module = {pfad.split(":")[0].split(".")[0] for pfad in [*fassungen.QUELLTEXT, *fassungen.HTML_PARSER]}
    assert {paket for modul in module for paket in verteilung[modul]} <= set(fassungen.GEPRUEFT)
    fassungen.pruefen()
    assert fassungen.beschleuniger_abweichung() is None


def test_newspaper_fest_haengt_an_genau_den_drei_methoden_des_fixes():
    """Streng ist nur, wovon newspaper_fest abhängt: die zwei Methoden, die es umschließt, die
    eine, deren stabile Sortierung es voraussetzt, und die Fassung von newspaper4k."""
    from newspaper.extractors.articlebody_extractor import ArticleBodyExtractor as abe

    from auswahlstufe.extraktion import newspaper_fest

    newspaper_fest.einspielen()
    klasse = "newspaper.extractors.articlebody_extractor:ArticleBodyExtractor"
    methoden = ("nodes_to_check", "compute_gravity_scores", "calculate_best_node")
    streng = {f"{klasse}.{m}" for m in methoden}
    assert streng == fassungen.FEST and streng <= fassungen.QUELLTEXT.keys()
    umschlossen = {f"{klasse}.{name}" for name, wert in vars(abe).items() if hasattr(wert, "_stock")}
    assert umschlossen == streng - {f"{klasse}.calculate_best_node"}
    assert fassungen.FEST_PAKETE == ("newspaper4k",)


def test_andere_fassung_von_newspaper4k_scheitert_laut_mit_exit_4(monkeypatch):
    """Ohne geprüften Fix ist newspaper4k nicht deterministisch: streng, kein Rückfall."""
    from auswahlstufe import fehler

    echte = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata, "version", lambda paket: "0.9.7" if paket == "newspaper4k" else echte(paket)
    )
    with pytest.raises(fassungen.FassungUngeprueft, match=r"newspaper4k 0\.9\.7 ist installiert") as e:
        fassungen.newspaper_fest_pruefen()
    assert e.value.exit_code == fehler.EXIT_VORAUSSETZUNG
    assert "newspaper_fest.py" in str(e.value) and "nicht für jede Seite immer denselben Text" in str(e.value)
    with pytest.raises(fassungen.FassungUngeprueft):
        fassungen.pruefen()


@pytest.mark.parametrize("paket", ["lxml", "python-dateutil", "trafilatura", "readability-lxml"])
def test_andere_fassung_sonst_schaltet_nur_die_beschleuniger_ab(monkeypatch, paket):
    """Eine Sicherheitsfassung von lxml, ein neues dateutil: kein Exit 4, nur ein Grund."""
    echte = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda p: "99.0" if p == paket else echte(p))
    fassungen.newspaper_fest_pruefen()
    assert fassungen.beschleuniger_abweichung() == (
        f"{paket} 99.0 ist installiert (geprüft ist {fassungen.GEPRUEFT[paket]})"
    )
    with pytest.raises(fassungen.FassungUngeprueft, match="Die Beschleuniger sind nicht geprüft"):
        fassungen.pruefen()  # schnell.beschleuniger_einspielen spielt so nichts ein


@pytest.mark.parametrize("pfad", sorted(fassungen.QUELLTEXT))
def test_anderer_quelltext_streng_nur_fuer_newspaper_fest(monkeypatch, pfad):
    """Jeder Eintrag in ``QUELLTEXT``: ein abweichender sha256 scheitert laut, wenn newspaper_fest
    von ihm abhängt, und schaltet sonst nur die Beschleuniger ab."""
    monkeypatch.setitem(fassungen.QUELLTEXT, pfad, "0" * 64)
    if pfad in fassungen.FEST:
        with pytest.raises(fassungen.FassungUngeprueft, match="weicht vom geprüften ab") as e:
            fassungen.newspaper_fest_pruefen()
        assert pfad in str(e.value)
        assert fassungen.beschleuniger_abweichung() is None
    else:
        fassungen.newspaper_fest_pruefen()
        assert fassungen.beschleuniger_abweichung() == f"der Quelltext von {pfad} weicht vom geprüften ab"


def test_ein_anderer_parser_schaltet_nur_die_beschleuniger_ab(monkeypatch):
    import trafilatura.utils

    monkeypatch.setattr(trafilatura.utils, "HTML_PARSER", object())
    assert fassungen.beschleuniger_abweichung() == (
        "trafilatura.utils:HTML_PARSER ist kein lxml.html.HTMLParser"
    )


def test_ein_anderer_parser_haelt_die_beschleuniger_vor_jeder_aenderung_an(monkeypatch):
    """Wer ``schnell.beschleuniger_einspielen`` ohne die Prüfung des Workers ruft: die strenge Prüfung
    (``fassungen.pruefen``) sieht den Parser, bevor ein Lookup oder der Tokenizer getauscht ist."""
    import newspaper.text
    import trafilatura.utils

    from auswahlstufe.extraktion import schnell

    monkeypatch.setattr(schnell, "_eingespielt", [])
    monkeypatch.setattr(trafilatura.utils, "HTML_PARSER", object())
    tokenizer = newspaper.text.default_tokenizer
    with pytest.raises(
        fassungen.FassungUngeprueft,
        match=r"^Die Beschleuniger sind nicht geprüft: trafilatura.utils:HTML_PARSER ist kein lxml",
    ):
        schnell.beschleuniger_einspielen()
    assert newspaper.text.default_tokenizer is tokenizer and schnell._eingespielt == []


def test_mehrere_abweichungen_in_einer_zeile(monkeypatch):
    import trafilatura.utils

    schnell_pfade = [p for p in fassungen.QUELLTEXT if p not in fassungen.FEST]
    for pfad in schnell_pfade[:5]:
        monkeypatch.setitem(fassungen.QUELLTEXT, pfad, "0" * 64)
    monkeypatch.setattr(trafilatura.utils, "HTML_PARSER", None)
    assert fassungen.beschleuniger_abweichung() == (
        f"der Quelltext von {', '.join(schnell_pfade[:3])} und 2 weiteren Funktionen weichen vom "
        "geprüften ab, trafilatura.utils:HTML_PARSER ist kein lxml.html.HTMLParser"
    )
    # Weicht eine Version ab, nennt der Grund nur die Versionen.
    echte = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda p: "6.2.0" if p == "lxml" else echte(p))
    assert fassungen.beschleuniger_abweichung() == "lxml 6.2.0 ist installiert (geprüft ist 6.1.3)"


# --- Rückfall: weicht ab, was nur die Beschleuniger betrifft, läuft die Extraktion weiter ------

# Drei aeb-Seiten (koreanisch, japanisch, englisch mit vielen Bildern), wie in test_extraktion.py.
DREI_SEITEN = (
    "0ec95c7261d122f304728e90c983450ef1ce1e0b423546835c397d50aaf0d0f2",
    "85439e26c41c75901820d01a13e8cea7836abb58635ea3986f71a163ab0311d3",
    "042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856",
)
NUR_SCHNELL = "trafilatura.utils:load_html"  # nur ein Beschleuniger setzt ihn voraus
FUER_DEN_FIX = "newspaper.extractors.articlebody_extractor:ArticleBodyExtractor.compute_gravity_scores"
# auswahl.py, nur dass jeder Worker der Extraktion einen anderen sha256 für den Quelltext argv[1]
# sieht – wie nach einem Update im venv.
MIT_ABWEICHUNG = (
    "import sys; from tests.hilfen.abweichung import mit_abweichung; mit_abweichung(sys.argv.pop(1)); "
    "from auswahlstufe.cli import BEFEHL, cli; cli(sys.argv[1:], prog_name=BEFEHL)"
)


def veroeffentlicht() -> dict[str, dict]:
    """Die veröffentlichten Kandidaten der aeb-Seiten (Stock-Aufrufe mit Fix), nach id."""
    return {a["id"]: a for a in json.loads((AEB / "candidates.json").read_text(encoding="utf-8"))}


def hinweise(stderr: str) -> list[str]:
    return [z for z in stderr.splitlines() if "Hinweis: " in z]


def hinweis_nur_schnell() -> str:
    return fassungen.HINWEIS.format(grund=f"der Quelltext von {NUR_SCHNELL} weicht vom geprüften ab")


@pytest.fixture
def abweichung(monkeypatch):
    """``abweichung(pfad)``: jeder Worker, den eine ``seiten.Extraktion`` ab jetzt startet, sieht den
    Quelltext ``pfad`` als abweichend (``tests.hilfen.abweichung``); nach dem Test wie vorher."""
    from auswahlstufe.extraktion import seiten

    monkeypatch.setattr(seiten, "Pool", seiten.Pool)
    return mit_abweichung


def _mit_abweichung(pfad: str, *args: str, cwd: Path, url: str | None = None):
    umgebung = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    umgebung["PYTHONPATH"] = str(PROJEKT)
    if url is not None:
        umgebung["DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-c", MIT_ABWEICHUNG, pfad, *args],
        cwd=cwd,
        env=umgebung,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_abweichung_der_beschleuniger_stock_aufrufe_dieselben_texte_ein_hinweis(capsys, abweichung):
    """Jeder Worker – auch jeder Ersatz – prüft selbst und nimmt die Stock-Aufrufe; der Hauptprozess
    sagt es einmal; die Kandidaten sind die veröffentlichten."""
    from auswahlstufe.extraktion import seiten

    abweichung(NUR_SCHNELL)
    bezug = veroeffentlicht()
    liste = [
        seiten.Seite(gzip.decompress((AEB / "html" / f"{i}.html.gz").read_bytes()), bezug[i]["url"], i)
        for i in DREI_SEITEN
    ]
    with seiten.Extraktion(2, aufrufe_je_worker=2) as ex:
        ergebnisse = list(ex.seiten(liste))
    assert ex.beschleuniger is False and ex.pool.neustarts >= 2  # auch die Ersatzworker
    for (_, kandidaten), seiten_id in zip(ergebnisse, DREI_SEITEN, strict=True):
        assert kandidaten == bezug[seiten_id]["extractions"], seiten_id
    assert hinweise(capsys.readouterr().err) == [hinweis_nur_schnell()]


def test_der_hinweis_in_der_doku_ist_der_echte():
    beispiel = fassungen.HINWEIS.format(grund="lxml 6.1.4 ist installiert (geprüft ist 6.1.3)")
    assert f"\n{beispiel}\n" in (PROJEKT / "docs" / "extraktion.md").read_text(encoding="utf-8")


def test_abweichung_des_fixes_extrahiert_keine_seite(capsys, abweichung):
    """Der erste Worker findet den Fix ungeprüft: sein Satz, Exit 4, bevor eine Seite an einen
    Extraktor geht."""
    from auswahlstufe import fehler
    from auswahlstufe.extraktion import seiten

    abweichung(FUER_DEN_FIX)
    extraktion = seiten.Extraktion(2)
    with pytest.raises(fassungen.FassungUngeprueft, match="weicht vom geprüften ab") as e:
        extraktion.__enter__()
    assert e.value.exit_code == fehler.EXIT_VORAUSSETZUNG
    assert FUER_DEN_FIX in str(e.value) and "newspaper_fest.py" in str(e.value)
    assert extraktion.statistik.aufrufe == 0
    assert hinweise(capsys.readouterr().err) == []


def test_ohne_beschleuniger_ruft_ein_worker_die_stock_aufrufe():
    """Was ein Worker mit ``beschleuniger=False`` vorbereitet, in einem frischen Prozess: der Fix
    ja, nichts aus ``schnell`` (auch nicht dessen strenge Prüfung, die hier scheiterte)."""
    code = textwrap.dedent(
        """
        import json, sys
        from auswahlstufe.extraktion import aufrufe, fassungen, schnell
        fassungen.QUELLTEXT[sys.argv[1]] = "0" * 64
        aufrufe.vorbereiten(beschleuniger=False)
        import newspaper.text
        from newspaper.extractors.articlebody_extractor import ArticleBodyExtractor
        print(json.dumps({
            "beschleuniger": bool(schnell._eingespielt),
            "tokenizer ersetzt": hasattr(newspaper.text.default_tokenizer, "_stock"),
            "fix": hasattr(ArticleBodyExtractor.nodes_to_check, "_stock"),
        }))
        """
    )
    lauf = subprocess.run(
        [sys.executable, "-c", code, NUR_SCHNELL], cwd=PROJEKT, capture_output=True, text=True, timeout=300
    )
    assert lauf.returncode == 0, lauf.stderr[-3000:]
    assert json.loads(lauf.stdout) == {
        "beschleuniger": False,
        "tokenizer ersetzt": False,
        "fix": True,
    }


def _stapel_eingabe(tmp_path: Path) -> Path:
    from auswahlstufe.extraktion import zeichensatz

    bezug = veroeffentlicht()
    artikel = [
        {
            "id": i,
            "url": bezug[i]["url"],
            "html": zeichensatz.dekodieren(gzip.decompress((AEB / "html" / f"{i}.html.gz").read_bytes()))[0],
        }
        for i in DREI_SEITEN
    ]
    datei = tmp_path / "seiten.json"
    datei.write_text(json.dumps(artikel, ensure_ascii=False), encoding="utf-8")
    return datei


def test_stapel_mit_abweichung_der_beschleuniger_ein_hinweis_fuer_zwei_worker(tmp_path):
    """``auswahl.py --extrahieren DATEI --prozesse 2``: Exit 0, die veröffentlichten Kandidaten und
    genau eine Zeile ``Hinweis: …`` auf stderr – vom Hauptprozess, keine von den Workern."""
    lauf = _mit_abweichung(
        NUR_SCHNELL,
        *("--extrahieren", str(_stapel_eingabe(tmp_path)), "-o", "aus.json", "--prozesse", "2"),
        *("--extraktion-zeitlimit", ZEITLIMIT_S),
        cwd=tmp_path,
    )
    assert lauf.returncode == 0, lauf.stderr[-3000:]
    assert hinweise(lauf.stderr) == [hinweis_nur_schnell()], lauf.stderr
    bezug = veroeffentlicht()
    ausgabe = json.loads((tmp_path / "aus.json").read_text(encoding="utf-8"))
    assert {a["id"]: a["extractions"] for a in ausgabe} == {i: bezug[i]["extractions"] for i in DREI_SEITEN}


def test_stapel_mit_abweichung_des_fixes_endet_mit_exit_4(tmp_path):
    from auswahlstufe import fehler

    lauf = _mit_abweichung(
        FUER_DEN_FIX, "--extrahieren", str(_stapel_eingabe(tmp_path)), "-o", "aus.json", cwd=tmp_path
    )
    assert lauf.returncode == fehler.EXIT_VORAUSSETZUNG, lauf.stderr[-3000:]
    assert f"Fehler: Der Quelltext von {FUER_DEN_FIX} weicht vom geprüften ab" in lauf.stderr, lauf.stderr
    assert "newspaper_fest.py" in lauf.stderr and "Traceback" not in lauf.stderr
    assert hinweise(lauf.stderr) == [] and not (tmp_path / "aus.json").exists()


def test_datenbank_mit_abweichung_der_beschleuniger_ein_hinweis(daten, db_url, tmp_path):
    """Derselbe Start im Datenbankmodus (``--extrahieren --backfill``): ein Hinweis, die Texte wie
    veröffentlicht in ``extraktionen``."""
    seiten_id = DREI_SEITEN[2]
    bezug = veroeffentlicht()[seiten_id]
    daten.item(1)
    daten.conn.execute(
        "insert into seiten (item_id, html, url, content_type) values (1, %s, %s, 'text/html')",
        (gzip.decompress((AEB / "html" / f"{seiten_id}.html.gz").read_bytes()), bezug["url"]),
    )
    lauf = _mit_abweichung(
        NUR_SCHNELL, "--extrahieren", "--backfill", "--prozesse", "2", cwd=tmp_path, url=db_url
    )
    assert lauf.returncode == 0, lauf.stderr[-3000:]
    assert hinweise(lauf.stderr) == [hinweis_nur_schnell()], lauf.stderr
    gespeichert = dict(daten.abfrage("select extraktor, text from extraktionen"))
    assert gespeichert == {name: k["text"] for name, k in bezug["extractions"].items()}


def _schleife(quelltext: str, anfang: str) -> list[str]:
    """Die Zeilen der ``for script_tag in json_ld_scripts:``-Schleife (eingerückt wie sie)."""
    zeilen = textwrap.dedent(quelltext).splitlines()
    start = next(i for i, z in enumerate(zeilen) if z.strip() == anfang)
    tiefe = len(zeilen[start]) - len(zeilen[start].lstrip())
    ende = start + 1
    while ende < len(zeilen) and (
        not zeilen[ende].strip() or len(zeilen[ende]) - len(zeilen[ende].lstrip()) > tiefe
    ):
        ende += 1
    return [z[tiefe:] for z in zeilen[start:ende] if z.strip()]


@pytest.mark.parametrize(
    ("stock", "kopie", "ersetzen"),
    [
        ("AuthorsExtractor.parse", "_autoren_json_ld", {"self.": "autoren."}),
        ("PubdateExtractor.parse", "_datum_json_ld", {"self.": "datum."}),
        ("VideoExtractor.parse", "_videos_json_ld", {"self.": "videos."}),
    ],
)
def test_json_ld_schleifen_sind_woertlich_kopiert(stock, kopie, ersetzen):
    """Die Wache des schnellen Wegs führt die JSON-LD-Schleifen der drei Extraktoren aus; bis
    auf ``self`` und das Verwerfen der Ergebnisse sind sie Zeile für Zeile die von stock."""
    from newspaper.extractors import authors_extractor, pubdate_extractor, videos_extractor

    from auswahlstufe.extraktion import schnell

    klassen = {
        "AuthorsExtractor": authors_extractor.AuthorsExtractor,
        "PubdateExtractor": pubdate_extractor.PubdateExtractor,
        "VideoExtractor": videos_extractor.VideoExtractor,
    }
    klasse, methode = stock.split(".")
    anfang = "for script_tag in json_ld_scripts:"
    original = _schleife(inspect.getsource(getattr(klassen[klasse], methode)), anfang)
    for alt, neu in ersetzen.items():
        original = [z.replace(alt, neu) for z in original]
    nachgebaut = _schleife(inspect.getsource(getattr(schnell, kopie)), anfang)
    # Was stock nur sammelt, lässt die Kopie fallen: es zählen die Aufrufe, die werfen können.
    gesammelt = {
        "date_matches.append((datetime_obj, 10))",
        "date_matches.append((datetime_obj, 9))",
        "date_matches.append((datetime_obj, 7))",
        "videos.movies.append(m)",
        "if datetime_obj:",
    }

    def vereinfacht(zeilen):
        return [
            z.strip().replace("datetime_obj = ", "").split("  # noqa")[0]
            for z in zeilen
            if z.strip() not in gesammelt
        ]

    assert vereinfacht(nachgebaut) == vereinfacht(original)
    if klasse == "AuthorsExtractor":  # danach kann noch die Bereinigung der Namen werfen
        zeile = 'authors = [re.sub(r"[\\n\\t\\r\\xa0]", " ", x) for x in authors if x]'
        assert zeile in inspect.getsource(klassen[klasse].parse)
        assert zeile in inspect.getsource(schnell._autoren_json_ld)


# --- Fix: jede Mengenordnung gibt denselben Text ---------------------------------------------

# So viele simulierte Mengenordnungen je Seite; ohne Fix geben sie auf jeder der sechs Seiten
# mindestens zwei Texte (die Ordnungen hängen nur an den Startwerten, nicht am Prozess).
ORDNUNGEN = 4


def _geschuettelt(stock_ntc, stock_cgs, samen: int):
    """Die Stock-Methoden mit einem Ergebnis in einer Reihenfolge, wie ``set()`` sie liefern
    könnte: die div-Gruppe von nodes_to_check (aus ``set(items)``) und die ganze Liste von
    compute_gravity_scores gemischt – vom Startwert aus der Dokumentreihenfolge, damit jede
    Ordnung in jedem Prozess dieselbe ist."""
    from auswahlstufe.extraktion import newspaper_fest

    zufall = random.Random(samen)
    ntc = newspaper_fest.umschlag_nodes_to_check(stock_ntc)
    cgs = newspaper_fest.umschlag_compute_gravity_scores(stock_cgs)

    def nodes_to_check(self, doc):
        knoten = ntc(self, doc)
        divs = [k for k in knoten if k.tag == "div"]
        zufall.shuffle(divs)
        return [k for k in knoten if k.tag != "div"] + divs

    def compute_gravity_scores(self, nodes_with_text):
        eltern = list(cgs(self, nodes_with_text))
        zufall.shuffle(eltern)
        return eltern

    return nodes_to_check, compute_gravity_scores


@pytest.fixture
def ohne_logging():
    """newspaper4k meldet sich sonst über logging – nur für diesen Test still, nicht für die
    folgenden im selben Prozess (deren Fehlermeldungen gehen über logging)."""
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def test_der_fix_gibt_fuer_jede_mengenordnung_denselben_text(monkeypatch, ohne_logging):
    from newspaper.extractors.articlebody_extractor import ArticleBodyExtractor as abe

    from auswahlstufe.extraktion import aufrufe, newspaper_fest, schnell, zeichensatz

    aufrufe.vorbereiten()
    stock_ntc, stock_cgs = abe.nodes_to_check._stock, abe.compute_gravity_scores._stock
    ohne_fix_verschieden = []
    for schluessel, roh, url in zufall_seiten():
        html = zeichensatz.dekodieren(roh)[0]
        mit_fix, ohne_fix = set(), set()
        for samen in range(ORDNUNGEN):
            ntc, cgs = _geschuettelt(stock_ntc, stock_cgs, samen)
            monkeypatch.setattr(abe, "nodes_to_check", newspaper_fest.umschlag_nodes_to_check(ntc))
            monkeypatch.setattr(
                abe, "compute_gravity_scores", newspaper_fest.umschlag_compute_gravity_scores(cgs)
            )
            mit_fix.add(schnell.newspaper4k_text(html, url))
            if len(ohne_fix) > 1:  # dass der Text ohne Fix von der Ordnung abhängt, steht schon fest
                continue
            ntc, cgs = _geschuettelt(stock_ntc, stock_cgs, samen)  # dieselbe Ordnung noch einmal
            monkeypatch.setattr(abe, "nodes_to_check", ntc)
            monkeypatch.setattr(abe, "compute_gravity_scores", cgs)
            ohne_fix.add(schnell.newspaper4k_text(html, url))
        assert len(mit_fix) == 1, schluessel
        ohne_fix_verschieden += [schluessel] if len(ohne_fix) > 1 else []
    # Die Prüfung greift: ohne Fix hängt der Text auf allen sechs Seiten von der Ordnung ab.
    assert len(ohne_fix_verschieden) == 6, ohne_fix_verschieden


# --- Gleichheit mit stock, Determinismus -----------------------------------------------------


def test_schnell_gibt_dieselben_texte_und_fehler_wie_stock(frische_prozesse):
    stock = frische_prozesse["stock"]
    assert len(stock) == 3 * (frische_prozesse["aeb_seiten"] + 6 + len(feindliche_seiten()))
    assert unterschiede(stock, frische_prozesse[SCHNELL]) == []


def test_die_feindlichen_seiten_pruefen_den_langsamen_weg(frische_prozesse):
    """Stock newspaper4k wirft genau auf den Seiten aus ``WIRFT_BEI_STOCK`` und sonst nirgends
    (auch auf keiner aeb- oder Zufallsseite): die Gleichheit oben deckt beide Wege ab."""
    from auswahlstufe.referenz.feindlich import WIRFT_BEI_STOCK

    stock = frische_prozesse["stock"]
    wirft = {k.split("/")[0] for k, v in stock.items() if k.endswith("/newspaper4k") and v[0] == "fehler"}
    assert wirft == WIRFT_BEI_STOCK
    assert stock["datum_meta_invalidoperation/newspaper4k"][1].startswith(
        "Extraktor scheiterte: InvalidOperation"
    )
    mit_text = {
        k.split("/")[0] for k, v in stock.items() if k.endswith("/newspaper4k") and v[0] == "text" and v[2]
    }
    assert {
        "jsonld_gueltig",
        "jsonld_liste_gemischt",
        "datum_url_gueltig",
        "datum_nur_meta_ohne_namen",
    } <= mit_text


def test_deterministisch_in_frischen_prozessen(frische_prozesse):
    """Die sechs Zufallsseiten (stock ohne Fix fast in jedem Prozess anders) und die aeb-Seiten:
    dieselben Kandidaten in jedem Prozess, was er auch vorher tat, und dieselben wie stock – im
    Stock-Prozess (der Reihe nach, PYTHONHASHSEED 0), im schnellen (alle Seiten, gemischt, Speicher
    belegt, andere Seiten vorher, PYTHONHASHSEED 1) und in den Workern zweier Läufe der Stufe
    (``STUFE_SEITEN``)."""
    stock = frische_prozesse["stock"]
    vergleiche = [name for name in frische_prozesse if name not in ("stock", "ausgaben", "aeb_seiten")]
    assert vergleiche == [SCHNELL, "--prozesse 1", "--prozesse 2"]
    zufall = {schluessel for schluessel, _, _ in zufall_seiten()}
    schnell = frische_prozesse["aeb_seiten"] + 6
    for name, seiten in zip(vergleiche, (schnell, STUFE_ZAHL, STUFE_ZAHL), strict=True):
        ergebnisse = frische_prozesse[name]
        assert len(ergebnisse) >= 3 * seiten, name
        assert zufall <= {k.split("/")[0] for k in ergebnisse}, name
        assert unterschiede({k: stock[k] for k in ergebnisse}, ergebnisse) == [], name


def test_prozesse_1_und_2_geben_dieselbe_ausgabe(frische_prozesse):
    """Ein ganzer Lauf ``auswahl.py --extrahieren ORDNER`` mit einem und mit zwei Workern:
    Byte für Byte dieselbe Datei (Kandidaten und Wahl) über die Seiten aus ``STUFE_SEITEN``."""
    eins, zwei = frische_prozesse["ausgaben"][1], frische_prozesse["ausgaben"][2]
    assert len(json.loads(eins)) == STUFE_ZAHL
    assert eins == zwei


# --- gespeicherte Extraktionen: newspaper4k einmal neu ----------------------------------------


def test_gespeicherte_newspaper4k_texte_werden_einmal_neu_extrahiert(cli, daten):
    """Ein Text von newspaper4k aus der Fassung vor dem Fix kann jede Stock-Variante sein: der
    nächste Lauf extrahiert ihn neu (nur newspaper4k, die anderen Zeilen bleiben unberührt), der
    übernächste nichts mehr."""
    from auswahlstufe.extraktion import aufrufe

    _, roh, url = zufall_seiten()[0]
    daten.item(1)
    daten.conn.execute(
        "insert into seiten (item_id, html, url, content_type) values (1, %s, %s, 'text/html')", (roh, url)
    )
    assert cli("--extrahieren", "--backfill").code == 0
    fest = daten.abfrage("select text from extraktionen where extraktor = 'newspaper4k'")[0][0]
    fassung = aufrufe.extraktor_fassung("newspaper4k", aufrufe.versionen()["newspaper4k"])
    alt = fassung.replace("; Kandidatenordnung fest (newspaper_fest); Fassung 2", "; Fassung 1")
    assert alt != fassung and "Fassung 1" in alt
    daten.conn.execute(
        "update extraktionen set text = 'ein Text aus einer anderen Mengenordnung', extraktor_fassung = %s "
        "where extraktor = 'newspaper4k'",
        (alt,),
    )
    vorher = dict(daten.abfrage("select extraktor, xmin::text from extraktionen"))
    lauf = cli("--extrahieren", "--backfill")
    assert lauf.code == 0, lauf.err
    # die Bilanz der Extraktion steht im Protokoll (stdout), nicht auf stderr
    assert "1 extrahiert, 1 Zeilen in extraktionen geändert" in lauf.out, lauf.out + lauf.err
    nachher = dict(daten.abfrage("select extraktor, xmin::text from extraktionen"))
    assert [name for name in EXTRAKTOREN if nachher[name] != vorher[name]] == ["newspaper4k"]
    assert daten.abfrage(
        "select text, extraktor_fassung from extraktionen where extraktor = 'newspaper4k'"
    ) == [(fest, fassung)]
    assert "0 Seiten neu oder veraltet" in cli("--extrahieren", "--backfill").out


# --- die lange Fassung -----------------------------------------------------------------------


@pytest.mark.langsam
def test_deterministisch_in_frischen_prozessen_alle_seiten_auch_stock():
    """Alle Seiten mit der 50-MB-Seite, vier schnelle und zwei Stock-Prozesse mit verschiedener
    Vorgeschichte: überall dieselben Ergebnisse."""
    alle = {"seiten": ["aeb", "zufall", "feindlich"], "mit_50_mb": True}
    geschichten = [
        ({"mischen": None}, "0"),
        ({"mischen": 5, "speicher_mb": 40}, "1"),
        ({"mischen": 9, "vorher": "aeb"}, "2"),
        ({"mischen": 3, "vorher": "zufall", "speicher_mb": 13}, "random"),
    ]
    laeufe = [_starten({"art": "schnell", **alle, **g}, seed) for g, seed in geschichten]
    laeufe += [_starten({"art": "stock", **alle, **g}, seed) for g, seed in geschichten[1:3]]
    bezug, *rest = [json.loads(_ende(p)) for p in laeufe]
    assert len(bezug) == 3 * (181 + 6 + len(feindliche_seiten(mit_50_mb=True)))
    for nr, ergebnisse in enumerate(rest, start=1):
        assert unterschiede(bezug, ergebnisse) == [], nr


if __name__ == "__main__":
    json.dump(im_frischen_prozess(json.loads(sys.argv[1])), sys.stdout, sort_keys=True)
