"""Synthetischer Bestand für die Benchmarks: Items mit drei Kandidaten.

Jedes Item hat einen deutschsprachigen Grundtext (2–6 KB) und drei
Kandidaten (newspaper4k, readability, trafilatura), die ihn so verfehlen, wie
echte Extraktoren es tun: fehlende Absätze, Boilerplate davor und danach
(Navigation, Cookie-Hinweis, „Lesen Sie auch“, Copyright), Fehler mit und
ohne Text, leere Ausgabe, Markup- und Entitätenreste, weiche Trennzeichen,
geschützte Leerzeichen.

Alles hängt nur am Startwert: ``artikel(n, seed)`` liefert für dasselbe Paar
dieselben Items, und das i-te Item hängt nicht von n ab (jedes Item hat seinen
eigenen Zufallsgenerator). ``fuzz(seed)`` liefert die Randfälle: Gleichstände
um 0,03, sehr kurze Texte, Markup- und Unicode-Rauschen, gleiche und
disjunkte Kandidaten, falsche Typen.

Als Datei schreibt sie ``python -m bench.erzeugen``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

EXTRAKTOREN = ("newspaper4k", "readability", "trafilatura")
HAEUSER = ("tagesschau", "spiegel", "zeit", "faz", "sueddeutsche", "taz", "welt", "ndr", "br", "mdr")


def _woerter_aus(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Wortschatz: häufige Funktionswörter und Inhaltswörter; Komposita entstehen
# durch Zusammensetzen, damit der Wortschatz wie im Deutschen lang ausläuft.
_FUNKTION = _woerter_aus(
    "der die das und in zu den von mit sich des auf für ist im dem nicht ein eine als auch es an "
    "werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über einen so zum "
    "war haben nur oder aber vor zur bis mehr durch man sein wurde sei seit gegen vom schon wenn "
    "sollen können muss zwischen unter während wieder jedoch bereits etwa rund sowie allerdings"
)
_STAEMME = _woerter_aus(
    "Bundes Regierung Land Stadt Gemeinde Haushalt Steuer Rente Energie Wärme Pumpe Strom Netz "
    "Bahn Verkehr Wende Klima Schutz Gesetz Entwurf Minister Kanzler Partei Fraktion Wahl Kampf "
    "Umfrage Wirtschaft Wachstum Preis Inflation Zins Bank Markt Arbeit Kraft Mangel Schule "
    "Bildung Kinder Garten Kranken Haus Pflege Kasse Versicherung Polizei Einsatz Feuer Wehr "
    "Gericht Urteil Verfahren Kläger Behörde Amt Sprecher Angabe Bericht Studie Forschung "
    "Hochschule Wasser Straße Brücke Bau Stelle Wohnung Miete Grund Stück Sicherheit Lage "
    "Grenze Europa Union Gipfel Treffen Verhandlung Vertrag Handel Export Industrie Unternehmen "
    "Vorstand Aktie Gewinn Verlust Quartal Jahr Monat Woche Zeit Ende Beginn Frage Antwort "
    "Kritik Opposition Mehrheit Antrag Beschluss Sitzung Ausschuss Landtag Bundestag Rat Kommission"
)
_VERBEN = _woerter_aus(
    "sagte erklärte kündigte forderte kritisierte betonte teilte bestätigte warnte plant prüft "
    "erwartet steigt sinkt bleibt liegt zeigt beschloss verabschiedete stoppte begann endete "
    "meldete berichtete verwies lehnte wies stellte legte nannte hieß gilt fehlt braucht"
)
_ADJEKTIVE = _woerter_aus(
    "neue alte große kleine deutliche erste letzte weitere hohe niedrige öffentliche private "
    "zuständige aktuelle mögliche bisherige künftige schwierige wichtige zentrale regionale"
)
_ORTE = _woerter_aus(
    "Berlin Hamburg München Köln Frankfurt Stuttgart Düsseldorf Leipzig Dresden Hannover Nürnberg "
    "Bremen Essen Dortmund Mainz Kiel Magdeburg Erfurt Potsdam Schwerin Saarbrücken Wiesbaden"
)
_EINHEITEN = ("Prozent", "Euro", "Millionen Euro", "Milliarden Euro", "Kilometer", "Menschen", "Stunden")

_NAVIGATION = (
    "Startseite > Politik > Deutschland",
    "Home | Nachrichten | Wirtschaft | Sport | Kultur | Wissen",
    "Menü Suche Anmelden Abo",
    "Zur Navigation springen Zum Inhalt springen",
    "Inland Ausland Wirtschaft Sport Video Audio Podcast",
)
_COOKIE = (
    "Wir verwenden Cookies, um Ihnen ein optimales Nutzungserlebnis zu bieten. Mit der Nutzung "
    "unserer Website stimmen Sie der Verwendung von Cookies zu. Mehr erfahren Akzeptieren",
    "Datenschutzeinstellungen: Wir und unsere Partner speichern und verarbeiten Informationen auf "
    "Ihrem Gerät. Alle akzeptieren Einstellungen",
)
_SCHLUSS = (
    "© 2026 {haus}. Alle Rechte vorbehalten.",
    "Copyright © {haus} GmbH 2026 – Impressum – Datenschutz – Kontakt",
    "Diesen Artikel teilen: Facebook Twitter E-Mail WhatsApp",
    "Mehr zum Thema",
    "Quelle: dpa, afp",
    "Artikel drucken Kommentare Newsletter abonnieren",
)
_FEHLER = (
    "ArticleException: Article `download()` failed with 403 Client Error: Forbidden",
    "Document is empty",
    "ParserError: no main content found",
    "TimeoutError: read timed out after 30 s",
    "lxml.etree.ParserError: Document is empty",
)


def _wort(rng: random.Random) -> str:
    """Ein Wort mit Zipf-ähnlicher Verteilung: oft Funktionswort, selten Kompositum."""
    r = rng.random()
    if r < 0.45:
        return rng.choice(_FUNKTION)
    if r < 0.6:
        return rng.choice(_VERBEN)
    if r < 0.7:
        return rng.choice(_ADJEKTIVE)
    if r < 0.75:
        return rng.choice(_ORTE)
    if r < 0.88:
        return rng.choice(_STAEMME)
    # Kompositum aus zwei bis drei Stämmen: „Bundesregierungsentwurf“
    teile = rng.sample(_STAEMME, rng.randint(2, 3))
    return teile[0] + "".join(t.lower() for t in teile[1:])


def _satz(rng: random.Random) -> str:
    woerter = [_wort(rng) for _ in range(rng.randint(6, 18))]
    if rng.random() < 0.25:
        zahl = (
            f"{rng.randint(1, 999)},{rng.randint(0, 9)}" if rng.random() < 0.5 else str(rng.randint(2, 2026))
        )
        woerter.insert(rng.randrange(len(woerter)), f"{zahl} {rng.choice(_EINHEITEN)}")
    if rng.random() < 0.15:
        i = rng.randrange(len(woerter))
        woerter[i] = f"„{woerter[i]}“"
    if rng.random() < 0.1:
        woerter.insert(rng.randrange(1, len(woerter)), "–")
    satz = " ".join(woerter)
    return satz[0].upper() + satz[1:] + rng.choice(".....!?:")


def _absatz(rng: random.Random) -> str:
    return " ".join(_satz(rng) for _ in range(rng.randint(2, 5)))


def _grundtext(rng: random.Random) -> list[str]:
    """Absätze, zusammen 2–5,5 KB: Kandidaten mit Boilerplate werden bis ~6 KB lang."""
    ziel = rng.randint(2000, 5500)
    absaetze: list[str] = []
    laenge = 0
    while laenge < ziel:
        absaetze.append(_absatz(rng))
        laenge += len(absaetze[-1]) + 2
    return absaetze


# --- Fehlerbilder der Extraktoren ---------------------------------------------


def _absaetze_weglassen(rng: random.Random, absaetze: list[str]) -> list[str]:
    """Einen oder zwei Absätze verlieren, oder den Schluss abschneiden."""
    if len(absaetze) < 3:
        return absaetze
    if rng.random() < 0.4:
        return absaetze[: rng.randint(1, len(absaetze) - 1)]
    weg = set(rng.sample(range(len(absaetze)), rng.randint(1, 2)))
    return [a for i, a in enumerate(absaetze) if i not in weg]


def _boilerplate(rng: random.Random, haus: str, absaetze: list[str]) -> list[str]:
    vorne: list[str] = []
    hinten: list[str] = []
    if rng.random() < 0.6:
        vorne.append(rng.choice(_NAVIGATION))
    if rng.random() < 0.35:
        vorne.append(rng.choice(_COOKIE))
    if rng.random() < 0.5:
        hinten.append("Lesen Sie auch: " + _satz(rng))
    if rng.random() < 0.7:
        hinten.append(rng.choice(_SCHLUSS).format(haus=haus))
    if rng.random() < 0.3:
        # „Lesen Sie auch“ mitten im Text, wie es Teaserkästen erzeugen
        mitte = rng.randrange(len(absaetze) + 1)
        absaetze = [*absaetze[:mitte], "Lesen Sie auch: " + _satz(rng), *absaetze[mitte:]]
    return vorne + absaetze + hinten


def _weiches_trennzeichen(rng: random.Random, text: str) -> str:
    """Weiche Trennzeichen in lange Wörter, wie sie Silbentrennung im CMS hinterlässt."""
    woerter = text.split(" ")
    for i, w in enumerate(woerter):
        if len(w) > 12 and rng.random() < 0.3:
            p = rng.randrange(4, len(w) - 4)
            woerter[i] = w[:p] + "\u00ad" + w[p:]
    return " ".join(woerter)


def _geschuetzte_leerzeichen(text: str) -> str:
    for einheit in _EINHEITEN:
        text = text.replace(" " + einheit, "\u00a0" + einheit)
    return text.replace(" – ", "\u00a0– ")


def _markup_reste(rng: random.Random, absaetze: list[str]) -> str:
    """Was readability als HTML hinterlässt: Tags, Entitäten, Links."""
    teile = []
    for a in absaetze:
        a = a.replace("&", "&amp;").replace("„", "&bdquo;").replace("“", "&ldquo;")
        if rng.random() < 0.3:
            woerter = a.split(" ")
            i = rng.randrange(len(woerter))
            woerter[i] = f'<a href="/thema/{i}">{woerter[i]}</a>'
            a = " ".join(woerter)
        if rng.random() < 0.1:
            a = a.replace(" ", "&nbsp;", 2)
        teile.append(f"<p>{a}</p>")
    return "\n".join(teile)


def _kandidat(rng: random.Random, name: str, haus: str, absaetze: list[str]) -> dict | None:
    """Ein Kandidat mit den Fehlerbildern, die zu diesem Extraktor passen."""
    r = rng.random()
    if r < 0.015:
        return None  # Eintrag fehlt ganz
    if r < 0.04:
        return {"text": None, "error": rng.choice(_FEHLER)}
    if r < 0.055:
        return {"text": "", "error": None}
    if r < 0.06:
        return {"text": " \n\u00a0\n ", "error": None}
    fehler = rng.choice(_FEHLER) if r < 0.08 else None  # Fehler, aber mit Text

    if name == "newspaper4k":
        teile = _absaetze_weglassen(rng, absaetze) if rng.random() < 0.35 else absaetze
        if rng.random() < 0.15:
            teile = _boilerplate(rng, haus, teile)
        text = "\n\n".join(teile)
    elif name == "readability":
        teile = _absaetze_weglassen(rng, absaetze) if rng.random() < 0.15 else absaetze
        if rng.random() < 0.3:
            teile = _boilerplate(rng, haus, teile)
        text = _markup_reste(rng, teile) if rng.random() < 0.25 else "\n\n".join(teile)
    else:
        teile = _absaetze_weglassen(rng, absaetze) if rng.random() < 0.1 else absaetze
        if rng.random() < 0.6:
            teile = _boilerplate(rng, haus, teile)
        text = "\n".join(teile)
    if rng.random() < 0.2:
        text = _weiches_trennzeichen(rng, text)
    if rng.random() < 0.3:
        text = _geschuetzte_leerzeichen(text)
    if rng.random() < 0.05:
        text = text.replace(". ", ".\u200b ", 3)
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    return {"text": text, "error": fehler}


# Ein Poll-Slot fasst etwa so viele Items wie im Betrieb (etwa 400 je Slot): je ITEMS_JE_SLOT Items
# eine Stunde, ab ERSTER_SLOT (so vergibt auch bench.ingest Slots an Artikel ohne slot).
ITEMS_JE_SLOT = 400
ERSTER_SLOT = datetime(2026, 9, 1, 6, 0, tzinfo=timezone(timedelta(hours=2)))


def slot_zeit(index: int) -> datetime:
    """Poll-Slot des index-ten Items: stündlich, je ITEMS_JE_SLOT Items."""
    return ERSTER_SLOT + timedelta(hours=index // ITEMS_JE_SLOT)


def slot_von(index: int) -> str:
    """``slot_zeit`` als ISO-Zeitpunkt mit Versatz, wie im Stapelformat."""
    return slot_zeit(index).isoformat()


def artikel(n: int, seed: int = 1) -> Iterator[dict]:
    """n Items im Stapelformat, reproduzierbar aus ``seed``.

    Jedes Item: ``id`` und ``item_id`` (gleich, ab 1), ``haus``, ``titel``,
    ``url``, ``slot`` (ISO-Zeitpunkt mit Versatz) und ``extractions``.
    """
    for i in range(n):
        rng = random.Random(f"{seed}:{i}")
        haus = rng.choice(HAEUSER)
        titel = _satz(rng).rstrip(".!?:")
        absaetze = _grundtext(rng)
        extraktionen = {}
        for name in EXTRAKTOREN:
            kandidat = _kandidat(rng, name, haus, absaetze)
            if kandidat is not None:
                extraktionen[name] = kandidat
        if rng.random() < 0.01:
            extraktionen["goose3"] = {"text": "\n\n".join(absaetze), "error": None}
        yield {
            "id": i + 1,
            "item_id": i + 1,
            "haus": haus,
            "titel": titel,
            "url": f"https://www.{haus}.de/artikel/{i + 1}-{titel[:30].lower().replace(' ', '-')}.html",
            "slot": slot_von(i),
            "extractions": extraktionen,
        }


# --- Randfälle -------------------------------------------------------------------

# Zeichen, an denen Normalisierungen gern scheitern: Ligatur, Vollbreite,
# kombinierende Akzente, türkisches İ (lower() gibt zwei Zeichen), ẞ, Sigma,
# römische Zahl (NFKC: XII), Hochzahl, Emoji, Formatzeichen, NBSP, CR, Trennstrich.
_RAUSCHEN = (
    "ﬁ", "Ｆｕｌｌ", "e\u0301", "İ", "ẞ", "Σ", "ς", "Ⅻ", "²", "½", "🙂", "\u200b", "\u200c", "\u200d",
    "\u2060", "\ufeff", "\u00ad", "\u00a0", "\r", "\u2028", "_", "ǅ", "ﬀ", "①", "K", "Å", "ŉ",
)  # fmt: skip
_MARKUP = (
    "<b>", "</b>", "<br/>", "&amp;", "&amp;amp;", "&lt;", "&gt;", "&#x41;", "&#228;", "&nbsp;", "&shy;",
    "&auml", "[Link](https://x.de)", "![Bild](a.png)", "! [Bild](a.png)", "[leer]()", "<", ">", "&",
    "<!-- k -->", "<a href='x'>", "[", "]", "(", ")",
)  # fmt: skip
_KURZWOERTER = ("a", "b", "c", "Bund", "Land", "ß", "ss", "straße", "STRASSE", "1", "_")


def _verrauscht(rng: random.Random, text: str) -> str:
    woerter = text.split(" ")
    for _ in range(rng.randint(1, 8)):
        stuecke = _RAUSCHEN if rng.random() < 0.5 else _MARKUP
        woerter.insert(rng.randrange(len(woerter) + 1), rng.choice(stuecke))
    trenner = rng.choice(("", " ", " ", " "))
    return trenner.join(woerter)


def _kurz(rng: random.Random) -> str:
    return " ".join(rng.choice(_KURZWOERTER) for _ in range(rng.randint(1, 6)))


def _woerter(rng: random.Random, n: int, wortschatz: int = 60) -> list[str]:
    """n Wörter aus einem kleinen Wortschatz, damit Kandidaten sich überlappen."""
    return [f"w{rng.randrange(wortschatz)}" for _ in range(n)]


def _gleichstaende() -> Iterator[dict[str, dict]]:
    """Scores, deren Abstand über 0,03 hinweg streicht.

    Grundtext mit g Tokens; A fehlt der Schluss (a Tokens), B hat Boilerplate
    (b Tokens), C ist der Grundtext. Das Raster trifft Abstände knapp unter,
    auf und knapp über 0,03.
    """
    grund = [f"t{i}" for i in range(120)]
    for g in (40, 67, 100, 120):
        basis = grund[:g]
        for a in range(0, 9):
            for b in range(0, 9, 2):
                yield {
                    "newspaper4k": {"text": " ".join(basis[: g - a]), "error": None},
                    "readability": {"text": " ".join(basis + [f"x{j}" for j in range(b)]), "error": None},
                    "trafilatura": {"text": " ".join(basis), "error": None},
                }
                # zwei Aktive
                yield {
                    "newspaper4k": {"text": " ".join(basis[: g - a]), "error": None},
                    "readability": {"text": " ".join([f"y{j}" for j in range(b)] + basis), "error": "x"},
                    "trafilatura": {"text": " ".join(basis + [f"x{j}" for j in range(b)]), "error": None},
                }
    # Genau auf der Grenze: A deckt den Konsens (Score 1), B hat 103 statt 97
    # Shingles (Score 2·97/200 = 0,97); in double ist 1 − 0,97 knapp über 0,03,
    # erst das Epsilon macht es zum Gleichstand. Daneben ein Shingle mehr/weniger.
    for m in (1, 2, 3):
        a = [f"t{i}" for i in range(97 * m + 4)]
        for extra in (-1, 0, 1):
            b = a + [f"x{j}" for j in range(6 * m + extra)]
            for dritter in (None, " ".join(f"d{j}" for j in range(20))):
                ex = {
                    "newspaper4k": {"text": " ".join(b), "error": None},
                    "readability": {"text": " ".join(a), "error": None},
                }
                if dritter:
                    ex["trafilatura"] = {"text": dritter, "error": None}
                yield ex


def fuzz(seed: int = 1, n: int = 3000) -> list[dict]:
    """Randfälle im Stapelformat: das Raster der Gleichstände und n Zufallsfälle."""
    rng = random.Random(f"fuzz:{seed}")
    faelle: list[dict] = list(_gleichstaende())
    normal = list(artikel(50, seed + 1000))
    for _ in range(n):
        art = rng.randrange(9)
        ex: dict = {}
        if art == 0:  # sehr kurze Texte, oft gleich
            for name in EXTRAKTOREN:
                ex[name] = {"text": _kurz(rng), "error": rng.choice((None, "", "Fehler"))}
        elif art == 1:  # Markup- und Unicode-Rauschen auf echtem Text
            quelle = rng.choice(normal)["extractions"]
            for name, kand in quelle.items():
                text = kand.get("text") if isinstance(kand, dict) else None
                ex[name] = {
                    "text": _verrauscht(rng, text[:400]) if text else text,
                    "error": kand.get("error"),
                }
        elif art == 2:  # drei gleiche oder zwei gleiche
            text = " ".join(_woerter(rng, rng.randint(1, 40)))
            ex = {name: {"text": text, "error": None} for name in EXTRAKTOREN}
            if rng.random() < 0.5:
                ex[rng.choice(EXTRAKTOREN)]["text"] = " ".join(_woerter(rng, rng.randint(1, 40)))
        elif art == 3:  # disjunkt: ohne Konsens, Zahlen mit Gleichstand (10, 10, 20)
            laengen = rng.choice(((10, 10, 20), (20, 10, 10), (10, 20, 10), (5, 5, 5), (3, 7, 7), (1, 2, 3)))
            for j, name in enumerate(EXTRAKTOREN):
                ex[name] = {"text": " ".join(f"{name}{m}" for m in range(laengen[j] + 4)), "error": None}
            if rng.random() < 0.3:
                del ex[rng.choice(EXTRAKTOREN)]
        elif art == 4:  # falsche Typen und fehlende Felder
            werte = (None, 42, [], {}, "", "text ohne fehler", {"text": 3}, {"error": "nur fehler"})
            for name in EXTRAKTOREN:
                wahl = rng.choice(werte)
                ex[name] = (
                    wahl if not isinstance(wahl, str) else {"text": wahl, "error": rng.choice((None, 0, ""))}
                )
            if rng.random() < 0.3:
                ex["unbekannt"] = {"text": "a b c d e f", "error": None}
        elif art == 5:  # überlappende kleine Texte: viele Gleichstände knapp an der Grenze
            grund = _woerter(rng, rng.randint(5, 60), wortschatz=20)
            for name in EXTRAKTOREN:
                a, b = sorted(rng.randrange(len(grund) + 1) for _ in range(2))
                ex[name] = {
                    "text": " ".join(grund[: b if rng.random() < 0.5 else len(grund)][a // 3 :]),
                    "error": None,
                }
        elif art == 6:  # nur Formatzeichen, Markup oder Leerraum: keine Tokens
            for name in EXTRAKTOREN:
                leer = "".join(
                    rng.choice(("\u200b", "\u00ad", "<b>", "</b>", " ", "\n", "&nbsp;", "![x](y)"))
                    for _ in range(5)
                )
                ex[name] = {"text": leer if rng.random() < 0.7 else _kurz(rng), "error": None}
        elif art == 7:  # ganzer Artikel, ein Kandidat verrauscht
            ex = json.loads(json.dumps(rng.choice(normal)["extractions"]))
            name = rng.choice(EXTRAKTOREN)
            if isinstance(ex.get(name), dict) and ex[name].get("text"):
                ex[name]["text"] = _verrauscht(rng, ex[name]["text"])
        else:  # nur zwei Extraktoren, einer beeinträchtigt
            grund = _woerter(rng, rng.randint(1, 30))
            ex = {
                rng.choice(EXTRAKTOREN): {"text": " ".join(grund), "error": "teilweise"},
                rng.choice(EXTRAKTOREN): {
                    "text": " ".join(grund[rng.randrange(len(grund)) :]),
                    "error": None,
                },
            }
        faelle.append(ex)
    faelle.append("kein Mapping")  # extractions selbst kaputt
    faelle.append({})
    return [{"id": i + 1, "item_id": i + 1, "extractions": ex} for i, ex in enumerate(faelle)]
