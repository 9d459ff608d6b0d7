"""Die Prüfseite: die Fälle einer Stichprobe oder eines Vergleichs als HTML zum Lesen und Beurteilen.

Je Fall die Entscheidung, der Zweifel und warum, die Maße je Kandidat und die
Texte nebeneinander, Konsens gelb markiert. Die Seite ist in sich
geschlossen: CSS inline, keine fremden Dateien, kein Server. Jeder Text geht
durch ``html.escape`` – ein Kandidat mit ``<script>`` oder ``&lt;`` erscheint
als genau diese Zeichen. Ihr einziges Skript (``URTEIL_SKRIPT``, fest, ohne
eingesetzte Daten) nimmt je Fall ein Urteil auf – „Wahl richtig“ oder
„anderer Kandidat besser (welcher)“ –, hält es im Browser (localStorage) und
lädt alle als kleines JSON herunter (``urteile-<Stamm>.json``, Format in
``urteile.py``), das ``bewertung.py --urteile`` liest.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from auswahlstufe import regeln
from auswahlstufe.anzeige import zahl, zeit_text
from auswahlstufe.pruefung.urteile import ANDERER, RICHTIG
from auswahlstufe.regeln import Entscheidung, Zweifel, zweifel
from normalisierung import FORMATZEICHEN, shingles, tokens
from version import K

if TYPE_CHECKING:
    from auswahlstufe.pruefung.auslese import Fall


@dataclass(frozen=True)
class Art:
    """Wofür eine Prüfseite steht: Stichprobe eines Laufs oder Vergleich zweier Fassungen.

    ``praefix`` beginnt die Dateinamen, ``titel`` den Titel des Fensters, ``ueberschrift`` und
    ``zaehlung`` benennen Seite und Zählung, ``leer`` steht da, wenn es keinen Fall gibt;
    ``variante`` ist im Vergleich die coder_version, die gegen die Grundlage steht.
    """

    praefix: str
    titel: str
    ueberschrift: str
    zaehlung: str
    leer: str
    variante: str | None = None


STICHPROBE = Art(
    "stichprobe",
    "Stichprobe",
    "Stichprobe zum Prüfen von Hand",
    "Zählung des Laufs",
    "Keine Fälle – der Lauf hatte nichts zu entscheiden.",
)


def vergleich(variante: str) -> Art:
    """Die Seite von ``vergleich.py``: wo ``variante`` anders wählt als die Grundlage."""
    return Art(
        "vergleich",
        "Vergleich",
        "Vergleich zweier Fassungen: wo die Variante anders wählt",
        "Zählung des Vergleichs",
        "Keine Fälle – die Variante wählt überall wie die Grundlage.",
        variante,
    )


# Was jede Regel bedeutet, in einem Satz für die Seite.
REGEL_TEXT = {
    regeln.RUECKFALL: "kein aktiver Kandidat – Rückfall auf newspaper4k",
    regeln.EINZIGER: "nur ein aktiver Kandidat",
    regeln.BESTER_SCORE: "höchster Score, allein vorn (Abstand über der Toleranz)",
    regeln.GLEICHSTAND_KUERZESTER: "Gleichstand im Score – der mit den wenigsten Shingles",
    regeln.GLEICHSTAND_RANG: "Gleichstand in Score und Shingle-Zahl – die Rangfolge entschied",
    regeln.OHNE_KONSENS_MEDIAN: "kein gemeinsames Shingle – der mittlere von dreien nach Shingle-Zahl",
    regeln.OHNE_KONSENS_GROESSTER: "kein gemeinsames Shingle – der größere von zweien",
}

# Warum eine Entscheidung zweifelhaft ist, in einem Satz; {nachbar} ist der
# andere aktive Kandidat, der der Wahl am nächsten liegt.
GRUND_TEXT = {
    regeln.KEIN_KANDIDAT: "kein Kandidat nutzbar – Rückfall auf newspaper4k",
    regeln.KEIN_KONSENS: "die Kandidaten teilen kein Shingle – es gibt keinen Konsens",
    regeln.NUR_EINER: "nur ein Kandidat nutzbar – kein zweiter bestätigt ihn",
    regeln.WAHL_LAENGER: "die Wahl hat Text, den {nachbar} nicht hat – ist das Artikel oder Beiwerk?",
    regeln.WAHL_KUERZER: "{nachbar} hat Text, der der Wahl fehlt – fehlt ihr ein Teil des Artikels?",
    regeln.BESTAETIGT: "{nachbar} liefert fast denselben Text, ein weiterer Kandidat weicht ab",
    regeln.FAST_GLEICH: "alle Kandidaten fast gleich – welcher gilt, ändert kaum etwas",
}


def warum(z: Zweifel, e: Entscheidung) -> str:
    """Der Grund des Zweifels in Worten."""
    text = GRUND_TEXT[z.grund].format(nachbar=z.nachbar)
    aktive = sum(k.aktiv for k in e.kandidaten)
    return text + (" (nur zwei Kandidaten nutzbar)" if aktive == 2 else "")


# Was tokens() vor dem Zerlegen aus dem Text nimmt: Tags, Entitäten,
# Markdown-Bilder und Linkziele. Wörter darin gehören zu keinem Shingle und
# werden nie markiert. Formatzeichen im Wort (weiches Trennzeichen) halten das
# Wort zusammen, wie in tokens().
_WORT_ODER_LUECKE = re.compile(
    r"(?P<luecke><[^>]+>|&#?\w+;|!\s*\[[^\]]*\]\([^)]*\)|(?<=\])\([^)]+\))"
    rf"|(?P<wort>\w+(?:[{FORMATZEICHEN}]+\w+)*)"
)
_FORMAT_LOESCHEN = str.maketrans(dict.fromkeys(FORMATZEICHEN))


def konsens_menge(entscheidung: Entscheidung, texte: Mapping[str, str | None], k: int = K) -> set:
    """K: die Shingles, die in mindestens zwei aktiven Kandidaten stehen."""
    gesehen: set = set()
    konsens: set = set()
    for kandidat in entscheidung.kandidaten:
        if kandidat.aktiv:
            menge = shingles(tokens(texte.get(kandidat.extraktor) or ""), k)
            konsens |= gesehen & menge
            gesehen |= menge
    return konsens


def woerter(text: str) -> list[tuple[int, int, str]]:
    """Die Wörter des Texts mit Anfang, Ende und Vergleichsschlüssel.

    Näherung an tokens(): Wörter in Tags, Entitäten und Markdown-Zielen
    fallen weg; der Schlüssel ist NFKC und klein. Wo tokens() anders
    zerlegt – eine Entität mitten im Wort, NFKC macht aus einem Zeichen zwei
    Wörter –, stimmt die Markierung dort nicht genau.
    """
    liste = []
    for treffer in _WORT_ODER_LUECKE.finditer(text):
        if treffer.lastgroup == "wort":
            wort = treffer.group().translate(_FORMAT_LOESCHEN)
            liste.append((treffer.start(), treffer.end(), unicodedata.normalize("NFKC", wort).lower()))
    return liste


def markieren(text: str, konsens: set, k: int = K) -> tuple[list[tuple[int, int]], int, int]:
    """Zeichenbereiche zusammenhängender Wörter, die ein Shingle aus K abdeckt;
    dazu die Zahl der markierten und aller Wörter."""
    liste = woerter(text)
    schluessel = [w[2] for w in liste]
    markiert = [False] * len(liste)
    if 0 < len(liste) < k:  # ein kurzer Text ist ein einziges Shingle
        markiert = [tuple(schluessel) in konsens] * len(liste)
    for anfang in range(len(liste) - k + 1):
        if tuple(schluessel[anfang : anfang + k]) in konsens:
            markiert[anfang : anfang + k] = [True] * k
    return _zusammenfassen(liste, markiert), sum(markiert), len(liste)


def _zusammenfassen(liste: list[tuple[int, int, str]], markiert: list[bool]) -> list[tuple[int, int]]:
    """Aufeinanderfolgende markierte Wörter zu einem Lauf (samt Leerraum dazwischen)."""
    laeufe: list[tuple[int, int]] = []
    vorher = False
    for (anfang, ende, _), an in zip(liste, markiert, strict=True):
        if an and vorher:
            laeufe[-1] = (laeufe[-1][0], ende)
        elif an:
            laeufe.append((anfang, ende))
        vorher = an
    return laeufe


def text_mit_marken(text: str, laeufe: Sequence[tuple[int, int]]) -> str:
    """Der Text, escaped, mit <mark> um die Läufe."""
    teile = []
    stelle = 0
    for anfang, ende in laeufe:
        teile.append(html.escape(text[stelle:anfang]))
        teile.append(f"<mark>{html.escape(text[anfang:ende])}</mark>")
        stelle = ende
    teile.append(html.escape(text[stelle:]))
    return "".join(teile)


def _zahl(wert: float | None) -> str:
    return "–" if wert is None else zahl(wert, 3)


def _e(wert: object) -> str:
    return html.escape(str(wert), quote=True)


CSS = """
:root { --gruen: #1d7a3a; --gelb: #fde68a; --grau: #6b7280; --rand: #d1d5db; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2937;
  background: #f5f5f4; margin: 0; padding: 1.5rem 2rem 4rem; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; }
h2 { font-size: 1.15rem; margin: 0 0 .4rem; }
h3 { font-size: 1rem; margin: 0; display: flex; gap: .5em; align-items: baseline; }
header, section.fall { background: #fff; border: 1px solid var(--rand); border-radius: 8px;
  padding: 1rem 1.25rem; margin: 0 auto 1.25rem; max-width: 110rem; }
dl.kopf { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .5rem 0; }
dl.kopf dt { color: var(--grau); }
.entscheidung { display: flex; flex-wrap: wrap; gap: .5rem 3rem; align-items: flex-start; }
.entscheidung > * { flex: none; margin: .25rem 0; }
.entscheidung > dl { max-width: 28rem; }
dl.kopf dd { margin: 0; }
code { font-size: .9em; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: .5rem 0; }
th, td { text-align: left; padding: .2rem .7rem; border-bottom: 1px solid #e5e7eb; }
td.zahl, th.zahl { text-align: right; }
tr.gewaehlt td { background: #e7f5ec; font-weight: 600; }
.rang { display: inline-block; min-width: 2em; padding: 0 .4em; margin-right: .4em; border-radius: 4px;
  background: #374151; color: #fff; text-align: center; }
.meta { color: var(--grau); margin: 0 0 .5rem; overflow-wrap: anywhere; }
.kandidaten { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1rem;
  margin-top: .75rem; }
article.kandidat { border: 1px solid var(--rand); border-radius: 6px; padding: .6rem .8rem; min-width: 0; }
article.kandidat.gewaehlt { border: 3px solid var(--gruen); background: #f3fbf6; }
.abzeichen { font-size: .8rem; font-weight: 600; color: #fff; background: var(--gruen);
  border-radius: 4px; padding: 0 .45em; }
.inaktiv { opacity: .75; }
.klasse { color: var(--grau); font-size: .85rem; margin: .15rem 0 .4rem; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .9rem; line-height: 1.45;
  max-height: 34rem; overflow-y: auto; margin: 0; }
mark { background: var(--gelb); color: inherit; padding: 0 1px; border-radius: 2px; }
.leer { color: var(--grau); font-style: italic; }
form.urteil fieldset { border: 1px solid var(--rand); border-radius: 6px; margin: .6rem 0 0; padding: .3rem .8rem;
  display: flex; flex-wrap: wrap; gap: .3rem 1.5rem; }
form.urteil legend { color: var(--grau); font-size: .85rem; }
@media print { form.urteil, #urteile button { display: none; } }
nav table { font-size: .9rem; }
tr.fast-gleich td, section.fast-gleich h2 { color: var(--grau); }
.hinweis { font-size: .8rem; font-weight: 600; color: #fff; background: var(--grau); border-radius: 4px;
  padding: 0 .45em; }
a { color: #1d4ed8; }
@media print { .text { max-height: none; overflow: visible; } body { background: #fff; } }
"""


def _kopf(faelle: Sequence[Fall], coder_version: str, zeitpunkt: datetime, zaehlung, art: Art) -> str:
    if art.variante is None:
        versionen = [f"<dt>coder_version</dt><dd><code>{_e(coder_version)}</code></dd>"]
    else:
        versionen = [
            f"<dt>Grundlage (grün umrandet)</dt><dd><code>{_e(coder_version)}</code></dd>",
            f"<dt>Variante (unter dem Schlüssel)</dt><dd><code>{_e(art.variante)}</code></dd>",
        ]
    teile = [
        "<header>",
        f"<h1>{_e(art.ueberschrift)}</h1>",
        '<dl class="kopf">',
        *versionen,
        f"<dt>Geschrieben</dt><dd>{_e(zeit_text(zeitpunkt))}</dd>",
        f"<dt>Fälle auf dieser Seite</dt><dd>{len(faelle)}</dd>",
        "</dl>",
    ]
    if zaehlung:
        teile.append(f'<h2>{_e(art.zaehlung)}</h2><table class="zaehlung"><tbody>')
        teile += [f'<tr><td>{_e(n)}</td><td class="zahl">{_e(w)}</td></tr>' for n, w in zaehlung.items()]
        teile.append("</tbody></table>")
    teile.append(
        "<p><strong>Ordnung:</strong> die zweifelhaftesten zuerst. Der <strong>Zweifel</strong> ist der "
        "Abstand der Wahl zum nächsten anderen aktiven Kandidaten: der Anteil der Shingles, die nur "
        "einer der beiden hat (Jaccard-Abstand). 0 heißt, ein zweiter Extraktor lieferte denselben Text; "
        "1, dass keiner ihn bestätigt – kein nutzbarer Kandidat, nur einer, oder kein gemeinsames "
        "Shingle. Bei gleichem Zweifel erst Rückfälle, dann ohne Konsens, dann einzige Kandidaten. "
        "<strong>Fast gleich</strong> (grau, ganz hinten): alle Kandidaten liegen höchstens "
        f"{_zahl(regeln.FAST_GLEICH_BIS)} von der Wahl entfernt; welcher gilt, ändert kaum etwas.</p>"
        f"<p><mark>Gelb</mark> sind Wortfolgen, die ein {K}-Token-Shingle des Konsenses K abdeckt "
        "(Shingles, die in mindestens zwei aktiven Kandidaten stehen). Die Markierung ist eine Näherung: "
        "sie sucht <code>\\w+</code> im Rohtext, wo <code>tokens()</code> erst Entitäten dekodiert und "
        "NFKC anwendet. Der gewählte Kandidat ist <strong>grün umrandet</strong>. Texte erscheinen roh, "
        "wie der Extraktor sie lieferte: Markup darin ist Text, nicht Seite.</p>"
    )
    teile.append("</header>")
    return "\n".join(teile)


def _verzeichnis(faelle: Sequence[Fall]) -> str:
    zeilen = []
    for rang, f in enumerate(faelle, 1):
        z = zweifel(f.entscheidung)
        klasse = ' class="fast-gleich"' if z.fast_gleich else ""
        zeilen.append(
            f'<tr{klasse}><td class="zahl"><a href="#fall-{rang}">{rang}</a></td><td>{_e(f.schluessel)}</td>'
            f"<td>{_e(f.entscheidung.extraktor)}</td><td>{_e(f.entscheidung.regel)}</td>"
            f'<td class="zahl">{_zahl(z.wert)}</td><td>{_e(warum(z, f.entscheidung))}</td></tr>'
        )
    return (
        '<header><nav><h2>Übersicht</h2><table><thead><tr><th class="zahl">Rang</th><th>Schlüssel</th>'
        '<th>Wahl</th><th>Regel</th><th class="zahl">Zweifel</th><th>Warum</th></tr></thead><tbody>'
        + "".join(zeilen)
        + "</tbody></table></nav></header>"
    )


def _masse(e: Entscheidung) -> str:
    zeilen = []
    for k in e.kandidaten:
        klasse = ' class="gewaehlt"' if k.extraktor == e.extraktor else ""
        zeilen.append(
            f"<tr{klasse}><td>{_e(k.extraktor)}</td><td>{_e(k.klasse)}</td>"
            f'<td>{"ja" if k.aktiv else "nein"}</td><td class="zahl">{k.shingles}</td>'
            f'<td class="zahl">{_zahl(k.abdeckung)}</td><td class="zahl">{_zahl(k.stuetzung)}</td>'
            f'<td class="zahl">{_zahl(k.score)}</td><td class="zahl">{_zahl(k.abstand)}</td></tr>'
        )
    return (
        '<table class="masse"><thead><tr><th>Extraktor</th><th>Klasse</th><th>aktiv</th>'
        '<th class="zahl">Shingles</th><th class="zahl">Abdeckung</th><th class="zahl">Stützung</th>'
        '<th class="zahl">Score</th><th class="zahl">Abstand zur Wahl</th></tr></thead><tbody>'
        + "".join(zeilen)
        + "</tbody></table>"
    )


def _kandidat(fall: Fall, extraktor: str, klasse: str, aktiv: bool, konsens: set, k: int) -> str:
    gewaehlt = extraktor == fall.entscheidung.extraktor
    css = "kandidat" + (" gewaehlt" if gewaehlt else "") + ("" if aktiv else " inaktiv")
    abzeichen = ' <span class="abzeichen">✔ gewählt</span>' if gewaehlt else ""
    text = fall.texte.get(extraktor)
    if not isinstance(text, str) or not text.strip():
        inhalt, anteil = '<p class="leer">(kein Text)</p>', ""
    else:
        laeufe, markiert, gesamt = markieren(text, konsens, k)
        anteil = f" · {markiert / gesamt:.0%} der Wörter markiert".replace("%", " %") if gesamt else ""
        inhalt = f'<div class="text">{text_mit_marken(text, laeufe)}</div>'
    return (
        f'<article class="{css}" data-extraktor="{_e(extraktor)}"><h3>{_e(extraktor)}{abzeichen}</h3>'
        f'<p class="klasse">{_e(klasse)}{"" if aktiv else " · nicht aktiv"}{anteil}</p>{inhalt}</article>'
    )


def _fall(rang: int, fall: Fall, k: int) -> str:
    e = fall.entscheidung
    z = zweifel(e)
    konsens = konsens_menge(e, fall.texte, k)
    meta = " · ".join(
        f'<a href="{_e(wert)}">{_e(wert)}</a>'
        if name == "url" and wert.startswith(("http://", "https://"))
        else _e(wert)
        for name, wert in fall.info.items()
        if isinstance(wert, str)
    )
    kandidaten = "".join(_kandidat(fall, c.extraktor, c.klasse, c.aktiv, konsens, k) for c in e.kandidaten)
    return (
        f'<section class="fall{" fast-gleich" if z.fast_gleich else ""}" id="fall-{rang}" '
        f'data-schluessel="{_e(fall.schluessel)}" data-zweifel="{z.wert:.4f}" data-grund="{_e(z.grund)}">'
        f'<h2><span class="rang">{rang}</span>{_e(fall.schluessel)}'
        + (' <span class="hinweis">fast gleich</span>' if z.fast_gleich else "")
        + "</h2>"
        + (f'<p class="meta">{meta}</p>' if meta else "")
        + '<div class="entscheidung"><dl class="kopf">'
        f"<dt>Wahl</dt><dd><strong>{_e(e.extraktor)}</strong></dd>"
        f"<dt>Zweifel</dt><dd><strong>{_zahl(z.wert)}</strong> – {_e(warum(z, e))}</dd>"
        f"<dt>Regel</dt><dd><code>{_e(e.regel)}</code> – {_e(REGEL_TEXT.get(e.regel, ''))}</dd>"
        f"<dt>Konsens |K|</dt><dd>{e.konsens} Shingles</dd>"
        f"<dt>Marge</dt><dd>{_zahl(e.marge)}</dd>"
        "</dl>"
        + _masse(e)
        + "</div>"
        + _urteil(rang, fall, z)
        + f'<div class="kandidaten">{kandidaten}</div></section>'
    )


# --- Urteile: je Fall „Wahl richtig“ oder „anderer Kandidat besser“ ------------


def _urteile_kopf(faelle: Sequence[Fall], coder_version: str, stamm: str) -> str:
    return (
        f'<header id="urteile" data-stamm="{_e(stamm)}" data-coder-version="{_e(coder_version)}">'
        "<h2>Urteile</h2><p>Je Fall unten: <strong>Wahl richtig</strong> oder welcher andere Kandidat "
        "besser gewesen wäre. Die Urteile bleiben in diesem Browser, bis sie heruntergeladen sind; "
        "im Klon rechnet <code>.venv/bin/python bewertung.py --urteile DATEI</code> daraus die Genauigkeit "
        "der Auswahl.</p>"
        f'<p><span id="urteile-zahl">0</span> von {len(faelle)} Fällen beurteilt · '
        '<button type="button" id="urteile-export">Urteile herunterladen (JSON)</button></p>'
        "<noscript><p>Das Herunterladen der Urteile braucht JavaScript.</p></noscript></header>"
    )


def _urteil(rang: int, fall: Fall, z: Zweifel) -> str:
    e = fall.entscheidung
    name = f"urteil-{rang}"
    wahlen = [(RICHTIG, f"Wahl richtig ({e.extraktor})")]
    for k in e.kandidaten:
        text = fall.texte.get(k.extraktor)
        if k.extraktor != e.extraktor and isinstance(text, str) and text.strip():
            wahlen.append((f"{ANDERER}:{k.extraktor}", f"{k.extraktor} besser"))
    knoepfe = "".join(
        f'<label><input type="radio" name="{name}" value="{_e(wert)}"> {_e(text)}</label>'
        for wert, text in wahlen
    )
    return (
        f'<form class="urteil" data-schluessel="{_e(fall.schluessel)}" data-wahl="{_e(e.extraktor)}" '
        f'data-zweifel="{z.wert:.4f}" data-grund="{_e(z.grund)}"><fieldset><legend>Urteil</legend>'
        f"{knoepfe}</fieldset></form>"
    )


# Fest, ohne eingesetzte Daten: was es braucht, liest es aus den data-Attributen.
URTEIL_SKRIPT = """
(function () {
  "use strict";
  var kopf = document.getElementById("urteile");
  var ablage = "urteile:" + kopf.dataset.stamm;
  var formulare = Array.prototype.slice.call(document.querySelectorAll("form.urteil"));
  function gewaehlt(f) { return f.querySelector("input:checked"); }
  function sammeln() {
    var liste = [];
    formulare.forEach(function (f) {
      var an = gewaehlt(f);
      if (!an) { return; }
      var teile = an.value.split(":");
      liste.push({schluessel: f.dataset.schluessel, wahl: f.dataset.wahl, urteil: teile[0],
                  besser: teile.length > 1 ? teile[1] : null,
                  zweifel: Number(f.dataset.zweifel), grund: f.dataset.grund});
    });
    return liste;
  }
  function urteileJson() {
    return JSON.stringify({format: "wurzelwerk-urteile/1", coder_version: kopf.dataset.coderVersion,
                           stichprobe: kopf.dataset.stamm, exportiert_am: new Date().toISOString(),
                           urteile: sammeln()}, null, 2);
  }
  function merken() {
    var stand = {};
    formulare.forEach(function (f) { var an = gewaehlt(f); if (an) { stand[f.dataset.schluessel] = an.value; } });
    document.getElementById("urteile-zahl").textContent = String(Object.keys(stand).length);
    try { localStorage.setItem(ablage, JSON.stringify(stand)); } catch (fehler) { /* ohne Ablage */ }
  }
  try {
    var alt = JSON.parse(localStorage.getItem(ablage) || "{}");
    formulare.forEach(function (f) {
      f.querySelectorAll("input").forEach(function (i) {
        if (alt[f.dataset.schluessel] === i.value) { i.checked = true; }
      });
    });
  } catch (fehler) { /* ohne Ablage */ }
  formulare.forEach(function (f) { f.addEventListener("change", merken); });
  merken();
  document.getElementById("urteile-export").addEventListener("click", function () {
    var blob = new Blob([urteileJson()], {type: "application/json"});
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "urteile-" + kopf.dataset.stamm + ".json";
    document.body.appendChild(a);
    a.click();
    a.remove();
  });
  window.urteileJson = urteileJson;
}());
"""


def seite(
    faelle: Sequence[Fall],
    coder_version: str,
    *,
    zeitpunkt: datetime,
    zaehlung: Mapping[str, int] | None = None,
    k: int = K,
    stamm: str = "stichprobe",
    art: Art = STICHPROBE,
) -> str:
    """Die ganze HTML-Seite als Text: Kopf, Übersicht, ein Abschnitt je Fall.

    ``stamm`` (der Dateiname ohne Endung) nennt die Stichprobe in den Urteilen; ``art`` sagt,
    ob es die Stichprobe eines Laufs ist oder ein Vergleich zweier Fassungen.
    """
    titel = f"{art.titel} {coder_version}" + (f" – {art.variante}" if art.variante else "")
    teile = [
        "<!DOCTYPE html>",
        '<html lang="de"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(titel)}</title>",
        f"<style>{CSS}</style></head><body>",
        _kopf(faelle, coder_version, zeitpunkt, zaehlung, art),
    ]
    if faelle:
        teile.append(_urteile_kopf(faelle, coder_version, stamm))
        teile.append(_verzeichnis(faelle))
    else:
        teile.append(f'<header><p class="leer">{_e(art.leer)}</p></header>')
    teile += [_fall(rang, fall, k) for rang, fall in enumerate(faelle, 1)]
    if faelle:
        teile.append(f'<script id="urteile-skript">{URTEIL_SKRIPT}</script>')
    teile.append("</body></html>\n")
    return "\n".join(teile)
