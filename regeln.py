"""Die Regeln der Auswahl: welcher Extraktor steht für ein Item.

Die Regeln (Quelle 000, §3) in ``waehle``; ohne Kommandozeile, ohne Datenbank,
ohne Ein- und Ausgabe. Die Kommandozeile ist ``auswahl.py`` (→ ``cli.py``).
"""

from __future__ import annotations

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

    def als_dict(self) -> dict:
        return {
            "klasse": self.klasse,
            "aktiv": self.aktiv,
            "shingles": self.shingles,
            "abdeckung": self.abdeckung,
            "stuetzung": self.stuetzung,
            "score": self.score,
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
        """``json.dumps(self.metriken(), sort_keys=True, separators=(",", ":"))``, von Hand.

        Zeichen für Zeichen dasselbe (die Ergebnissumme der Stufe hängt daran;
        test_auswahl.py vergleicht), aber ohne den allgemeinen Encoder: die
        halbe Zeit (3,6 gegen 6,7 µs je Item). Namen und Klassen sind feste ASCII-Wörter ohne
        Maskierung, Zahlen schreibt json wie ``repr``.
        """
        return (
            "{"
            + ",".join(
                f'"{k.extraktor}":{{"abdeckung":{_json_zahl(k.abdeckung)},'
                f'"aktiv":{"true" if k.aktiv else "false"},"klasse":"{k.klasse}",'
                f'"score":{_json_zahl(k.score)},"shingles":{k.shingles:d},'
                f'"stuetzung":{_json_zahl(k.stuetzung)}}}'
                for k in sorted(self.kandidaten, key=lambda k: k.extraktor)
            )
            + "}"
        )


def _json_zahl(wert: float | None) -> str:
    # Wie json für endliche Gleitkommazahlen – andere liefert f1 nicht.
    return "null" if wert is None else float.__repr__(wert)


def zweifel(entscheidung: Entscheidung) -> tuple:
    """Sortierschlüssel „am zweifelhaftesten zuerst“ für die Stichprobe.

    Erst Rückfälle, dann Entscheidungen ohne Konsens, dann nach der kleinsten
    Marge (Betrag) zwischen Wahl und dem besten Kandidaten mit anderem Text;
    zuletzt, wo es nichts zu wählen gab: ein einziger Kandidat, oder alle
    aktiven sind gleich (die Rangfolge entschied zwischen denselben Wörtern).
    """
    regel = entscheidung.regel
    if regel == RUECKFALL:
        return (0, 0.0)
    if regel in (OHNE_KONSENS_MEDIAN, OHNE_KONSENS_GROESSTER):
        return (1, 0.0)
    if entscheidung.marge is None:
        return (3, 0.0)
    return (2, abs(entscheidung.marge))


_RANG = {name: rang for rang, name in enumerate(PRIORITAET)}


class _Item:
    """Zwischenspeicher für die Kandidaten eines Items, lebt für einen Aufruf.

    Die Kandidaten eines Items sind meist Varianten desselben Texts: geteilte
    Zeilen werden nur einmal in Tokens zerlegt, und gleiche Tokenfolgen teilen
    sich ein Mengenobjekt (die Schnitte erkennen es an der Identität).
    """

    __slots__ = ("gebaut", "zeilen")

    def __init__(self) -> None:
        self.zeilen: dict[str, list[str]] = {}
        self.gebaut: list[tuple[list[str], set]] = []

    def shingles(self, text: str, k: int) -> set:
        toks = tokens_zeilenweise(text, self.zeilen)
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


def _treffer_im_konsens(mengen: list[set]) -> tuple[list[int], int]:
    """|C ∩ K| je Kandidat und |K|, K = Shingles in mindestens zwei Kandidaten.

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
        return [gemeinsam, gemeinsam], gemeinsam
    a, b, c = mengen
    a_ohne_b, a_ohne_c = _ohne(a, b), _ohne(a, c)
    n_ab = len(a) - len(a_ohne_b)
    n_ac = len(a) - len(a_ohne_c)
    n_bc = len(b) - len(_ohne(b, c))
    n_abc = n_ab - len(a_ohne_c) + len(a_ohne_b & a_ohne_c)
    treffer = [n_ab + n_ac - n_abc, n_ab + n_bc - n_abc, n_ac + n_bc - n_abc]
    return treffer, n_ab + n_ac + n_bc - 2 * n_abc


def f1(treffer: int, konsens: int, eigene: int) -> tuple[float, float, float]:
    """Abdeckung, Stützung und ihr harmonisches Mittel (0, wo die Summe 0 ist)."""
    abdeckung = treffer / konsens
    stuetzung = treffer / eigene
    summe = abdeckung + stuetzung
    score = 2 * abdeckung * stuetzung / summe if summe else 0.0
    return abdeckung, stuetzung, score


def waehle(extraktionen: object, *, k: int = K, toleranz: float = TOLERANZ) -> Entscheidung:
    """Wähle den Extraktor, dessen Text für das Item steht.

    ``extraktionen`` bildet Extraktornamen auf ``{"text": …, "error": …}`` ab.
    Unbekannte Namen werden übergangen; alles, was kein Mapping ist, gilt als
    leer. Das Ergebnis hängt nicht von der Reihenfolge der Schlüssel ab.
    """
    if not isinstance(extraktionen, Mapping):
        extraktionen = {}
    unbekannt = tuple(sorted(str(name) for name in extraktionen if name not in _RANG))

    item = _Item()
    eingeordnet = [(name, *einordnen(extraktionen.get(name), k, item)) for name in PRIORITAET]
    nutzbar = [e for e in eingeordnet if e[1] == NUTZBAR]
    aktive = nutzbar or [e for e in eingeordnet if e[1] == BEEINTRAECHTIGT]
    aktive_namen = {e[0] for e in aktive}

    def kandidaten(maße: dict[str, tuple[float, float, float]]) -> tuple[Kandidat, ...]:
        return tuple(
            Kandidat(name, klasse, len(menge), name in aktive_namen, *maße.get(name, ()))
            for name, klasse, menge in eingeordnet
        )

    if not aktive:
        return Entscheidung(PRIORITAET[0], RUECKFALL, 0, kandidaten({}), unbekannt)
    if len(aktive) == 1:
        return Entscheidung(aktive[0][0], EINZIGER, 0, kandidaten({}), unbekannt)

    treffer, konsens = _treffer_im_konsens([menge for _, _, menge in aktive])
    if konsens == 0:
        zaehlung = sorted(len(menge) for _, _, menge in aktive)
        if len(aktive) == 3:
            ziel, regel = zaehlung[1], OHNE_KONSENS_MEDIAN
        else:
            ziel, regel = zaehlung[-1], OHNE_KONSENS_GROESSTER
        # aktive stehen in Rangfolge: der erste mit dieser Zahl ist der ranghöchste
        wahl = next(name for name, _, menge in aktive if len(menge) == ziel)
        return Entscheidung(wahl, regel, 0, kandidaten({}), unbekannt)

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
    return Entscheidung(wahl, regel, konsens, kandidaten(maße), unbekannt, _marge(wahl, aktive, maße))


def _marge(wahl: str, aktive: list[tuple[str, str, set]], maße: dict) -> float | None:
    """Abstand der Wahl zum besten aktiven Kandidaten mit anderem Text.

    Gleiche Tokenfolgen teilen ein Mengenobjekt (``_Item``), die Identität
    genügt also als Test auf „gleicher Text“.
    """
    menge_der_wahl = next(menge for name, _, menge in aktive if name == wahl)
    andere = [maße[name][2] for name, _, menge in aktive if menge is not menge_der_wahl]
    return maße[wahl][2] - max(andere) if andere else None
