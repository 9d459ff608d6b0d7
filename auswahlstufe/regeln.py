"""Die Regeln der Auswahl: welcher Extraktor steht für ein Item.

Die Regeln (Quelle 000, §3) in ``waehle``; ohne Kommandozeile, ohne Datenbank,
ohne Ein- und Ausgabe. Die Kommandozeile ist ``auswahl.py`` (→ ``cli.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from normalisierung import shingles, tokens, tokens_zeilenweise
from version import PRIORITAET, TOLERANZ, K

NUTZBAR = "nutzbar"
BEEINTRAECHTIGT = "beeintraechtigt"
NICHT_VERFUEGBAR = "nicht_verfuegbar"

# Welche Regel entschied. Reihenfolge = Reihenfolge der Prüfung.
RUECKFALL = "rueckfall"  # kein aktiver Kandidat: newspaper4k
EINZIGER = "einziger"  # genau ein aktiver Kandidat
BESTER_SCORE = "bester_score"  # Konsens, allein vorn
GLEICHSTAND_KUERZESTER = "gleichstand_kuerzester"  # Konsens, Gleichstand, wenigste Shingles
GLEICHSTAND_RANG = "gleichstand_rang"  # … und auch darin gleich: Rangfolge
OHNE_KONSENS_MEDIAN = "ohne_konsens_median"  # kein Konsens, drei aktiv
OHNE_KONSENS_GROESSTER = "ohne_konsens_groesster"  # kein Konsens, zwei aktiv
REGELN = (
    RUECKFALL,
    EINZIGER,
    BESTER_SCORE,
    GLEICHSTAND_KUERZESTER,
    GLEICHSTAND_RANG,
    OHNE_KONSENS_MEDIAN,
    OHNE_KONSENS_GROESSTER,
)

# Gleitkomma-Spielraum der Spezifikation: 0,97 gegen 1,0 ist ein Gleichstand,
# obwohl 1.0 - 0.97 in double knapp über 0,03 liegt.
EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class Kandidat:
    """Ein bekannter Extraktor in einer Entscheidung."""

    extraktor: str
    klasse: str
    shingles: int = 0
    aktiv: bool = False
    abdeckung: float | None = None
    stuetzung: float | None = None
    score: float | None = None
    # Jaccard-Abstand der eigenen Shingle-Menge zu der der Wahl: 0 derselbe
    # Text, 1 nichts gemeinsam; die Wahl selbst 0. Nur unter aktiven Kandidaten,
    # sonst None (auch beim Rückfall). Daraus das Zweifelsmaß (``zweifel``).
    abstand: float | None = None

    def als_dict(self) -> dict:
        return {
            "klasse": self.klasse,
            "aktiv": self.aktiv,
            "shingles": self.shingles,
            "abdeckung": self.abdeckung,
            "stuetzung": self.stuetzung,
            "score": self.score,
            "abstand": self.abstand,
        }


@dataclass(frozen=True, slots=True)
class Entscheidung:
    """Ergebnis von ``waehle``: Wahl, Regel, Konsensgröße und je Kandidat die Maße."""

    extraktor: str
    regel: str
    konsens: int
    kandidaten: tuple[Kandidat, ...]  # alle bekannten, in Rangfolge
    unbekannt: tuple[str, ...] = ()  # übergangene Extraktornamen
    # Score der Wahl minus bester Score der aktiven Kandidaten mit anderem Text
    # (andere Shingle-Menge); negativ, wenn der Gleichstand einen knapp
    # schwächeren wählte. None, wo kein Score entschied (Rückfall, einziger,
    # ohne Konsens) oder alle aktiven denselben Text haben: dann gab es nichts
    # abzuwägen.
    marge: float | None = None

    def kandidat(self, extraktor: str) -> Kandidat:
        return next(k for k in self.kandidaten if k.extraktor == extraktor)

    def metriken(self) -> dict[str, dict]:
        """Je Kandidat die Maße, wie sie als jsonb gespeichert werden."""
        return {k.extraktor: k.als_dict() for k in self.kandidaten}

    def metriken_json(self) -> str:
        """Die Maße als JSON-Text, wie sie gespeichert werden (Schlüssel sortiert, ohne Leerraum).

        Die Ergebnissumme der Stufe hängt an genau diesen Zeichen.
        """
        return json.dumps(self.metriken(), sort_keys=True, separators=(",", ":"))


# --- Zweifel: wie sehr die Wahl eine Prüfung von Hand braucht -----------------

# Warum eine Entscheidung zweifelhaft ist (``Zweifel.grund``), in der Ordnung,
# in der Fälle mit gleichem Zweifelswert aufeinander folgen.
KEIN_KANDIDAT = "kein_kandidat"  # Rückfall: kein aktiver Kandidat
KEIN_KONSENS = "kein_konsens"  # die aktiven Kandidaten teilen kein Shingle
NUR_EINER = "nur_einer"  # ein einziger aktiver Kandidat, niemand bestätigt ihn
WAHL_LAENGER = "wahl_laenger"  # die Wahl hat Text, den der nächste Kandidat nicht hat
WAHL_KUERZER = "wahl_kuerzer"  # der nächste Kandidat hat mindestens so viel Text, der der Wahl fehlt
BESTAETIGT = "bestaetigt"  # ein anderer Kandidat liefert fast denselben Text wie die Wahl
FAST_GLEICH = "fast_gleich"  # alle aktiven Kandidaten sind fast derselbe Text
GRUENDE = (KEIN_KANDIDAT, KEIN_KONSENS, NUR_EINER, WAHL_LAENGER, WAHL_KUERZER, BESTAETIGT, FAST_GLEICH)
_GRUND_RANG = {grund: rang for rang, grund in enumerate(GRUENDE)}

# Bis zu welchem Abstand von der Wahl ein Kandidat „fast gleich“ heißt (alle
# aktiven: FAST_GLEICH, wenigstens der nächste: BESTAETIGT): dieselbe Zahl wie die Gleichstandstoleranz der Regeln, kein eigener
# Regler. Welcher dieser Texte gilt, ändert höchstens 3 % der Shingles.
FAST_GLEICH_BIS = TOLERANZ


@dataclass(frozen=True, slots=True)
class Zweifel:
    """Wie sehr eine Entscheidung eine Prüfung von Hand braucht, und warum.

    ``wert`` ist der Jaccard-Abstand der Wahl zum nächsten anderen aktiven
    Kandidaten (``nachbar``), 1, wo es keinen gibt oder nichts gemeinsam ist.
    """

    wert: float
    grund: str
    nachbar: str | None = None

    @property
    def fast_gleich(self) -> bool:
        return self.grund == FAST_GLEICH

    def schluessel(self) -> tuple[bool, float, int]:
        """Sortierschlüssel, zweifelhafteste zuerst: fast gleiche ganz hinten,
        sonst nach dem Wert, bei gleichem Wert nach dem Grund."""
        return (self.fast_gleich, -self.wert, _GRUND_RANG[self.grund])


def zweifel(entscheidung: Entscheidung) -> Zweifel:
    """Das Zweifelsmaß einer Entscheidung, allein aus ihr (ohne Handreferenz).

    Ein Text, den ein zweiter Extraktor fast genauso liefert, ist bestätigt:
    zwischen beiden zu wählen ändert wenig. Zweifelhaft ist eine Wahl, deren
    nächster Nachbar unter den anderen aktiven Kandidaten weit weg liegt – sie
    passt schlecht zum Konsens, der Konsens ist dünn oder die Kandidaten
    liegen auseinander. Ohne Nachbarn (Rückfall, einziger Kandidat) oder ohne
    gemeinsames Shingle ist der Zweifel 1. Keine Gewichte, keine Schwelle außer
    „fast gleich“ (``FAST_GLEICH_BIS``). Gemessen: ``.venv/bin/python -m bench.zweifel``.
    """
    regel = entscheidung.regel
    if regel == RUECKFALL:
        return Zweifel(1.0, KEIN_KANDIDAT)
    if regel == EINZIGER:
        return Zweifel(1.0, NUR_EINER)
    wahl = entscheidung.kandidat(entscheidung.extraktor)
    andere = [k for k in entscheidung.kandidaten if k.aktiv and k is not wahl]
    # min() nimmt bei gleichem Abstand den ersten: die Rangfolge.
    nachbar = min(andere, key=lambda k: k.abstand)
    if regel in (OHNE_KONSENS_MEDIAN, OHNE_KONSENS_GROESSTER):
        return Zweifel(1.0, KEIN_KONSENS, nachbar.extraktor)
    if max(k.abstand for k in andere) <= FAST_GLEICH_BIS + EPSILON:
        grund = FAST_GLEICH
    elif nachbar.abstand <= FAST_GLEICH_BIS + EPSILON:
        grund = BESTAETIGT
    elif wahl.shingles > nachbar.shingles:
        grund = WAHL_LAENGER
    else:
        grund = WAHL_KUERZER
    return Zweifel(nachbar.abstand, grund, nachbar.extraktor)


_RANG = {name: rang for rang, name in enumerate(PRIORITAET)}


class _Item:
    """Zwischenspeicher für die Kandidaten eines Items, lebt für einen Aufruf.

    Die Kandidaten eines Items sind meist Varianten desselben Texts: geteilte
    Zeilen werden nur einmal in Tokens zerlegt, und gleiche Tokenfolgen teilen
    sich ein Mengenobjekt (die Schnitte erkennen es an der Identität).
    """

    __slots__ = ("formatzeichen", "gebaut", "zeilen")

    def __init__(self, formatzeichen: bool = True) -> None:
        self.formatzeichen = formatzeichen  # False: Formatzeichen bleiben (Quelle 000 wörtlich)
        self.zeilen: dict[str, list[str]] = {}
        self.gebaut: list[tuple[list[str], set]] = []

    def shingles(self, text: str, k: int) -> set:
        toks = tokens_zeilenweise(text, self.zeilen, formatzeichen=self.formatzeichen)
        for frueher, menge in self.gebaut:
            if frueher == toks:
                return menge
        menge = shingles(toks, k)
        self.gebaut.append((toks, menge))
        return menge


def einordnen(eintrag: object, k: int = K, item: _Item | None = None) -> tuple[str, set]:
    """Klasse eines Eintrags und seine Shingle-Menge (leer, wenn nicht verfügbar).

    ``item`` teilt Zwischenergebnisse mit den anderen Kandidaten desselben
    Items; ohne es wird der Eintrag für sich gerechnet.
    """
    if not isinstance(eintrag, Mapping):
        return NICHT_VERFUEGBAR, set()
    text = eintrag.get("text")
    if not isinstance(text, str):
        return NICHT_VERFUEGBAR, set()
    menge = item.shingles(text, k) if item is not None else shingles(tokens(text), k)
    if not menge:
        return NICHT_VERFUEGBAR, menge
    fehler = eintrag.get("error")
    if fehler is None or fehler == "":
        return NUTZBAR, menge
    return BEEINTRAECHTIGT, menge


def _ohne(a: set, b: set) -> set:
    """a \\ b; dieselbe Menge ohne sich selbst ist leer, ohne Arbeit."""
    return set() if a is b else a - b


def _treffer_im_konsens(mengen: list[set]) -> tuple[list[int], int, dict[tuple[int, int], int]]:
    """|C ∩ K| je Kandidat, |K| und die paarweisen Schnittgrößen |Ci ∩ Cj|;
    K = Shingles in mindestens zwei Kandidaten.

    Für zwei und drei Kandidaten genügen die paarweisen Schnittgrößen und die
    dreifache (Inklusion–Exklusion); K selbst wird nie gebaut. Gezählt wird
    über Differenzen, nicht über Schnitte: die Kandidaten eines Items
    überlappen meist fast ganz, die Differenzen sind dann klein, und eine
    kleine Ergebnismenge ist billiger zu bauen als eine große::

        |a ∩ b|     = |a| − |a \\ b|
        |a ∩ b ∩ c| = |a| − |a \\ b| − |a \\ c| + |(a \\ b) ∩ (a \\ c)|
    """
    if len(mengen) == 2:
        a, b = mengen
        gemeinsam = len(a) - len(_ohne(a, b))
        return [gemeinsam, gemeinsam], gemeinsam, {(0, 1): gemeinsam}
    a, b, c = mengen
    a_ohne_b, a_ohne_c = _ohne(a, b), _ohne(a, c)
    n_ab = len(a) - len(a_ohne_b)
    n_ac = len(a) - len(a_ohne_c)
    n_bc = len(b) - len(_ohne(b, c))
    n_abc = n_ab - len(a_ohne_c) + len(a_ohne_b & a_ohne_c)
    treffer = [n_ab + n_ac - n_abc, n_ab + n_bc - n_abc, n_ac + n_bc - n_abc]
    return treffer, n_ab + n_ac + n_bc - 2 * n_abc, {(0, 1): n_ab, (0, 2): n_ac, (1, 2): n_bc}


def f1(treffer: int, konsens: int, eigene: int) -> tuple[float, float, float]:
    """Abdeckung, Stützung und ihr harmonisches Mittel (0, wo die Summe 0 ist)."""
    abdeckung = treffer / konsens
    stuetzung = treffer / eigene
    summe = abdeckung + stuetzung
    score = 2 * abdeckung * stuetzung / summe if summe else 0.0
    return abdeckung, stuetzung, score


def waehle(
    extraktionen: object, *, k: int = K, toleranz: float = TOLERANZ, formatzeichen_loeschen: bool = True
) -> Entscheidung:
    """Wähle den Extraktor, dessen Text für das Item steht.

    ``extraktionen`` bildet Extraktornamen auf ``{"text": …, "error": …}`` ab.
    Unbekannte Namen werden übergangen; alles, was kein Mapping ist, gilt als
    leer. Das Ergebnis hängt nicht von der Reihenfolge der Schlüssel ab.
    ``k``, ``toleranz`` und ``formatzeichen_loeschen`` weichen nur für eine
    Variante ab (version.Variante, mit eigener coder_version).
    """
    if not isinstance(extraktionen, Mapping):
        extraktionen = {}
    unbekannt = tuple(sorted(str(name) for name in extraktionen if name not in _RANG))

    item = _Item(formatzeichen_loeschen)
    eingeordnet = [(name, *einordnen(extraktionen.get(name), k, item)) for name in PRIORITAET]
    nutzbar = [e for e in eingeordnet if e[1] == NUTZBAR]
    aktive = nutzbar or [e for e in eingeordnet if e[1] == BEEINTRAECHTIGT]
    aktive_namen = {e[0] for e in aktive}

    def kandidaten(maße: dict, wahl: str, schnitte: dict[tuple[int, int], int]) -> tuple[Kandidat, ...]:
        abstand = _abstaende(wahl, aktive, schnitte)
        return tuple(
            Kandidat(
                name, klasse, len(menge), name in aktive_namen, *maße.get(name, _OHNE), abstand.get(name)
            )
            for name, klasse, menge in eingeordnet
        )

    if not aktive:
        return Entscheidung(PRIORITAET[0], RUECKFALL, 0, kandidaten({}, "", {}), unbekannt)
    if len(aktive) == 1:
        return Entscheidung(aktive[0][0], EINZIGER, 0, kandidaten({}, aktive[0][0], {}), unbekannt)

    treffer, konsens, schnitte = _treffer_im_konsens([menge for _, _, menge in aktive])
    if konsens == 0:
        zaehlung = sorted(len(menge) for _, _, menge in aktive)
        if len(aktive) == 3:
            ziel, regel = zaehlung[1], OHNE_KONSENS_MEDIAN
        else:
            ziel, regel = zaehlung[-1], OHNE_KONSENS_GROESSTER
        # aktive stehen in Rangfolge: der erste mit dieser Zahl ist der ranghöchste
        wahl = next(name for name, _, menge in aktive if len(menge) == ziel)
        return Entscheidung(wahl, regel, 0, kandidaten({}, wahl, schnitte), unbekannt)

    maße = {name: f1(t, konsens, len(menge)) for (name, _, menge), t in zip(aktive, treffer, strict=True)}
    spitze = max(m[2] for m in maße.values())
    gruppe = [(name, len(menge)) for name, _, menge in aktive if spitze - maße[name][2] <= toleranz + EPSILON]
    if len(gruppe) == 1:
        wahl, regel = gruppe[0][0], BESTER_SCORE
    else:
        wenigste = min(anzahl for _, anzahl in gruppe)
        kuerzeste = [name for name, anzahl in gruppe if anzahl == wenigste]
        wahl = kuerzeste[0]  # gruppe steht in Rangfolge
        regel = GLEICHSTAND_KUERZESTER if len(kuerzeste) == 1 else GLEICHSTAND_RANG
    return Entscheidung(
        wahl, regel, konsens, kandidaten(maße, wahl, schnitte), unbekannt, _marge(wahl, aktive, maße)
    )


_OHNE = (None, None, None)


def _abstaende(wahl: str, aktive: list[tuple[str, str, set]], schnitte: dict) -> dict[str, float]:
    """Je aktivem Kandidaten der Jaccard-Abstand zur Wahl: 1 − |W ∩ C| / |W ∪ C|."""
    namen = [name for name, _, _ in aktive]
    if wahl not in namen:
        return {}
    w = namen.index(wahl)
    abstand = {}
    for j, (name, _, menge) in enumerate(aktive):
        gross_w, gross_c = len(aktive[w][2]), len(menge)
        gemeinsam = gross_w if j == w else schnitte[(min(w, j), max(w, j))]
        abstand[name] = 1 - gemeinsam / (gross_w + gross_c - gemeinsam)
    return abstand


def _marge(wahl: str, aktive: list[tuple[str, str, set]], maße: dict) -> float | None:
    """Abstand der Wahl zum besten aktiven Kandidaten mit anderem Text.

    Gleiche Tokenfolgen teilen ein Mengenobjekt (``_Item``), die Identität
    genügt also als Test auf „gleicher Text“.
    """
    menge_der_wahl = next(menge for name, _, menge in aktive if name == wahl)
    andere = [maße[name][2] for name, _, menge in aktive if menge is not menge_der_wahl]
    return maße[wahl][2] - max(andere) if andere else None
