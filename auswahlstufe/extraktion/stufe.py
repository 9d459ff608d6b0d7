"""Datenbankmodus der Extraktion: ``auswahl.py --extrahieren --backfill|--slot …``.

Extrahiert die Seiten aus ``seiten``, deren gespeicherte Extraktion fehlt oder veraltet ist
(Seite oder Fassung eines Extraktors weicht ab, die Zeile ist vorläufig), auf den Workern und
schreibt ``extraktionen`` – nur geänderte Zeilen, je Stapel eine Transaktion. Läuft als
``Vorlauf`` im Kontext eines Laufs der Auswahl (``lauf.stufe``). Verhalten im Betrieb, Sperren,
Abbruch und vorläufige Fehler: docs/extraktion.md, „Datenbank“ und „Fehler der Umgebung“.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

import db
from auswahlstufe import kerne
from auswahlstufe.anzeige import zahl
from auswahlstufe.betrieb import keyset, protokoll, sperre
from auswahlstufe.betrieb.bereich import Bereich
from auswahlstufe.betrieb.ingest import ohne_geloeschte
from auswahlstufe.betrieb.kontext import Laufkontext
from auswahlstufe.betrieb.protokoll import log
from auswahlstufe.extraktion import art, aufrufe, plan
from auswahlstufe.extraktion import seiten as extraktion
from auswahlstufe.fehler import Abgebrochen, StufenFehler, VoraussetzungFehlt
from auswahlstufe.fortschritt import fortschritt

STAPEL = 50  # Seiten je Schreibtransaktion
# So oft versucht die Stufe einen Extraktor, der an der Umgebung scheitert, in verschiedenen Läufen
# (warum drei: docs/extraktion.md, „Fehler der Umgebung“).
GRENZE = 3
LESESEITE = 20  # Seiten je Leseabfrage, ids je Block (HTML im Speicher: höchstens diese plus die in Arbeit)

SQL_GIBT_ES_SEITEN = "select to_regclass('seiten') is not null"

# Je Seite, was an ihren gespeicherten Kandidaten zu tun ist. **Neu extrahieren**: keine Zeile, eine
# vorläufige, eine andere Seite oder Textfassung (mit den Versuchen bisher). **Nachprüfen**: nur die
# Fassung der Seitenart weicht ab (``_nachpruefen``; dafür Fehler und ob der Text fehlt oder leer ist).
SQL_VERALTET = """
select s.item_id, s.html, s.url, s.content_type, k.sha256, a.namen, a.versuche,
       a.pruef_namen, a.pruef_fehler, a.pruef_ohne_text, a.pruef_leer
from seiten s
join raw_items r on r.id = s.item_id
cross join lateral (
    select sha256(s.html_sha256 || convert_to(coalesce(s.content_type, ''), 'UTF8')) as sha256
) k
cross join lateral (
    select array_agg(f.extraktor order by f.nr) filter (where z.neu) as namen,
           array_agg(coalesce(e.versuche, 0) order by f.nr) filter (where z.neu) as versuche,
           array_agg(f.extraktor order by f.nr) filter (where z.pruefen) as pruef_namen,
           array_agg(e.fehler order by f.nr) filter (where z.pruefen) as pruef_fehler,
           array_agg(e.text is null order by f.nr) filter (where z.pruefen) as pruef_ohne_text,
           array_agg(e.text = '' order by f.nr) filter (where z.pruefen) as pruef_leer
    from unnest(%(namen)s::text[], %(textfassungen)s::text[]) with ordinality as f (extraktor, textfassung, nr)
    left join extraktionen e on e.item_id = s.item_id and e.extraktor = f.extraktor
    cross join lateral (
        select e.item_id is null or e.vorlaeufig or e.seite_sha256 is distinct from k.sha256
               or regexp_replace(e.extraktor_fassung, %(muster)s, '') <> f.textfassung as neu
    ) n
    cross join lateral (
        select n.neu,
               not n.neu and substring(e.extraktor_fassung from %(muster)s) is distinct from %(seitenart)s
                   as pruefen
    ) z
) a
where {bedingung} and s.item_id >= %(ab)s and s.item_id <= %(bis)s and (a.namen is not null or a.pruef_namen is not null)
order by s.item_id
limit %(seite)s
"""

# Nur die Fassung neu stempeln (die Seitenart änderte sich, das Urteil über die Seite nicht):
# Text, Fehler und extrahiert_am bleiben.
SQL_STEMPELN = """
update extraktionen set extraktor_fassung = %s
where item_id = %s and extraktor = %s and extraktor_fassung is distinct from %s
"""
# Nur schreiben, was sich unterscheidet; ein gleicher Text wird nicht noch einmal nach TOAST
# geschrieben. Zurück kommt je geschriebener Zeile, ob Text und Fehler gleich blieben (NULL: neu).
SQL_SCHREIBEN = """
with alt as (
    select text, fehler from extraktionen where item_id = %(item_id)s and extraktor = %(extraktor)s
)
insert into extraktionen (item_id, extraktor, text, fehler, extraktor_fassung, seite_sha256,
    versuche, vorlaeufig)
values (%(item_id)s, %(extraktor)s, %(text)s, %(fehler)s, %(fassung)s, %(sha)s, %(versuche)s, %(vorlaeufig)s)
on conflict (item_id, extraktor) do update set
    text = case when extraktionen.text is not distinct from excluded.text then extraktionen.text
                else excluded.text end,
    fehler = excluded.fehler,
    extraktor_fassung = excluded.extraktor_fassung,
    seite_sha256 = excluded.seite_sha256,
    versuche = excluded.versuche,
    vorlaeufig = excluded.vorlaeufig,
    extrahiert_am = now()
where (extraktionen.text, extraktionen.fehler, extraktionen.extraktor_fassung, extraktionen.seite_sha256,
       extraktionen.versuche, extraktionen.vorlaeufig)
    is distinct from (excluded.text, excluded.fehler, excluded.extraktor_fassung, excluded.seite_sha256,
       excluded.versuche, excluded.vorlaeufig)
returning (select (a.text, a.fehler) is not distinct from (extraktionen.text, extraktionen.fehler) from alt a)
"""


def fassungen() -> dict[str, str]:
    versionen = aufrufe.versionen()
    return {name: aufrufe.extraktor_fassung(name, versionen[name]) for name in aufrufe.EXTRAKTOREN}


def plan_des_bestands(conn: psycopg.Connection, bereich: Bereich | None = None) -> plan.Plan:
    """Was ``--extrahieren --backfill`` (oder eine Extraktion über ``bereich``) jetzt täte."""
    abfrage, params = _abfrage(bereich or Bereich())
    return plan.erstellen(
        conn, abfrage, {**params, "ab": keyset.KLEINSTE_ID, "bis": keyset.GROESSTE_ID, "seite": None}
    )


def _abfrage(bereich: Bereich) -> tuple[sql.Composed, dict]:
    versionen = aufrufe.versionen()
    params = {
        **bereich.parameter(),
        "namen": list(aufrufe.EXTRAKTOREN),
        "textfassungen": [aufrufe.textfassung(n, versionen[n]) for n in aufrufe.EXTRAKTOREN],
        "muster": art.FASSUNG_MUSTER,
        "seitenart": art.FASSUNG,
    }
    return sql.SQL(SQL_VERALTET).format(bedingung=bereich.bedingung()), params


# Die Zählung eines Laufs (Bilanzzeile, auswahl_laeufe.extraktion; vorläufig, aufgegeben und
# wiederholt: docs/extraktion.md, „Fehler der Umgebung“). Von den veralteten die zu extrahierenden
# und die nur nachgeprüften (Seitenart, dabei neu gestempelt); von den geschriebenen die, deren
# Text und Fehler gleich blieben.
ZAEHLUNG = (
    *("veraltet", "extrahiert", "geschrieben", "gleich", "fehler"),
    *("vorlaeufig", "aufgegeben", "wiederholt", "keine_html", "entfallen"),
    *("zu_extrahieren", "nachgeprueft", "gestempelt"),
)


@dataclass(frozen=True)
class Extrahieren:
    """Der Vorlauf eines Laufs mit ``--extrahieren``: ``Extrahieren(…)(kontext, bereich, zaehlung)``.

    Extrahiert die veralteten Seiten des Bereichs und schreibt ``extraktionen``; füllt
    ``zaehlung`` (auch bis zu einem Fehler). Ein trockener Lauf zählt nur; nach einem Signal
    ``Abgebrochen`` (docs/extraktion.md, „Datenbank“). ``zeitlimit_s``: je Seite und Extraktor.
    """

    prozesse: int | None = None
    zeitlimit_s: float = extraktion.ZEITLIMIT_S

    def __call__(self, k: Laufkontext, bereich: Bereich, zaehlung: dict[str, int]) -> None:
        start = time.perf_counter()
        zaehlung.update(dict.fromkeys(ZAEHLUNG, 0))
        if not k.leser.execute(SQL_GIBT_ES_SEITEN).fetchone()[0]:
            raise VoraussetzungFehlt(
                f"Die Tabelle seiten fehlt – Migration aw-006-seiten anwenden (als Admin der Stufe: {db.CHECK_DB} --migrieren)."
            )
        vorhaben = plan_des_bestands(k.leser, bereich)
        zaehlung["zu_extrahieren"] = vorhaben.zu_extrahieren
        zaehlung["veraltet"] = vorhaben.zu_extrahieren + vorhaben.nachzupruefen
        prozesse = self.prozesse or kerne.nutzbar()
        if k.trocken:
            log.info(f"Extraktion (trocken): {vorhaben.satz(prozesse)}.")
            return
        if vorhaben.zu_extrahieren >= plan.ANSAGEN_AB:
            log.info(f"Extraktion: {vorhaben.satz(prozesse)}. Wie weit sie ist: Sicht auswahl_fortschritt.")
        if zaehlung["veraltet"]:

            def fabrik():
                return extraktion.Extraktion(self.prozesse, zeitlimit_s=self.zeitlimit_s)

            try:
                _extrahieren(k, fabrik, bereich, zaehlung)
            except (psycopg.Error, StufenFehler, db.Fehler):
                if zaehlung["extrahiert"]:
                    log.warning(f"Extraktion bis zum Fehler: {_bilanz(zaehlung, start)}")
                raise
        # Die Bilanz ist Protokoll (stdout), nur ein Fehler geht nach stderr.
        log.info(f"Extraktion: {_bilanz(zaehlung, start)}")
        if k.abgebrochen:
            raise Abgebrochen(
                f"Abgebrochen ({k.abbruch.name()}) während der Extraktion nach "
                f"{zaehlung['extrahiert']} Seiten; jede Seite ist ganz oder gar nicht geschrieben, ein "
                "erneuter Lauf macht den Rest. Die Auswahl lief nicht."
            )


def _bilanz(zaehlung: dict[str, int], start: float) -> str:
    dauer = zahl(time.perf_counter() - start)
    keine_html = (
        f" (davon {zaehlung['keine_html']} keine HTML-Seite{'n' if zaehlung['keine_html'] > 1 else ''})"
        if zaehlung["keine_html"]
        else ""
    )
    davon = [
        f"{zaehlung[schluessel]} {text}"
        for schluessel, text in (
            (
                "vorlaeufig",
                "vorläufig: Zeitlimit, Absturz oder Speicher, der nächste Lauf versucht es wieder",
            ),
            ("aufgegeben", f"nach {GRENZE} Versuchen aufgegeben"),
        )
        if zaehlung[schluessel]
    ]
    wiederholt = f", {zaehlung['wiederholt']} Kandidaten wiederholt" if zaehlung["wiederholt"] else ""
    entfallen = f", entfallen {zaehlung['entfallen']}" if zaehlung.get("entfallen") else ""
    nachgeprueft = (
        f", {zaehlung['nachgeprueft']} nachgeprüft (Seitenart, ohne Extraktor; {zaehlung['gestempelt']} "
        "Zeilen neu gestempelt)"
        if zaehlung.get("nachgeprueft")
        else ""
    )
    gleich = (
        f", {zaehlung['gleich']} neu extrahiert mit gleichem Text und Fehler (neu nur Fassung und extrahiert_am)"
        if zaehlung.get("gleich")
        else ""
    )
    return (
        f"{zaehlung['veraltet']} Seiten neu oder veraltet, {zaehlung['extrahiert']} extrahiert{keine_html}"
        f"{nachgeprueft}, "
        f"{zaehlung['geschrieben'] - zaehlung.get('gleich', 0)} Zeilen in extraktionen geändert{gleich}, "
        f"{zaehlung['fehler']} Kandidaten "
        f"mit Fehler{' (davon ' + ' und '.join(davon) + ')' if davon else ''}{wiederholt}{entfallen}, {dauer} s"
    )


def _extrahieren(k: Laufkontext, fabrik, bereich: Bereich, zaehlung: dict[str, int]) -> None:
    arbeit = _Arbeit(fassungen(), zaehlung)
    seiten = _seiten(k, _lesen(k, bereich, *_abfrage(bereich)), arbeit)
    try:
        _seiten_extrahieren(k, _verteilen(k, fabrik, seiten), arbeit)
    except StufenFehler:
        # Etwa ein neuer Worker, der nicht startet: die fertigen Seiten bleiben nicht liegen.
        _schreiben(k, arbeit)
        if k.abgebrochen:
            return  # nach einem Signal eine Folge des Abbruchs: Exit 130
        raise
    _schreiben(k, arbeit)


@dataclass
class _Arbeit:
    """Was die Extraktion eines Bereichs gesammelt und noch nicht geschrieben hat."""

    fassung: dict[str, str]  # die Fassung, die jede Zeile jetzt trägt
    zaehlung: dict[str, int]
    summen: dict[int, tuple[int, bytes, dict[str, int]]] = field(default_factory=dict)
    zeilen: list[dict] = field(default_factory=list)  # die Parameter von SQL_SCHREIBEN
    stempeln: list[tuple] = field(default_factory=list)  # (fassung, item_id, extraktor, fassung)
    # Die Blöcke, deren Sperre der Lauf hält: (Name, wie viele Seiten verbraucht sein müssen, bevor
    # alles von ihm in ``zeilen`` und ``stempeln`` steht); ``verbraucht``: Seiten zurück von den Workern.
    bloecke: list[tuple[str, int]] = field(default_factory=list)
    verbraucht: int = 0

    def kandidat(self, item_id: int, name: str, text, fehler, sha: bytes, versuche: int, vorlaeufig: bool):
        self.zeilen.append(
            {
                **{"item_id": item_id, "extraktor": name, "text": text, "fehler": fehler},
                **{"fassung": self.fassung[name], "sha": sha, "versuche": versuche, "vorlaeufig": vorlaeufig},
            }
        )

    def voll(self) -> bool:
        return len(self.zeilen) + len(self.stempeln) >= STAPEL * len(aufrufe.EXTRAKTOREN)


def _lesen(k: Laufkontext, bereich: Bereich, abfrage: sql.Composed, params: dict) -> Iterator:
    """Die veralteten Seiten in Leseseiten, je mit der Sperre ihres Blocks: ein Backfill nimmt nur
    Blöcke, die kein anderer hat; ein Slot steht unter der Sperre seines Laufs (None)."""
    if bereich.slot is not None:
        for zeilen in keyset.seiten(k.leser, abfrage, params, LESESEITE):
            yield None, zeilen
        return

    def name(nummer: int) -> str:
        return sperre.block("extraktion", LESESEITE, nummer, bereich.teil)

    bloecke = keyset.bloecke(k.leser, abfrage, params, LESESEITE, lambda nummer: k.nehmen(name(nummer)))
    while not k.abgebrochen:  # nach einem Signal keinen Block mehr nehmen
        nummer, zeilen = next(bloecke, (None, None))
        if zeilen is None:
            return
        yield name(nummer), zeilen


def _seiten(k: Laufkontext, gelesen: Iterator, arbeit: _Arbeit) -> Iterator:
    """Die Seiten, an denen ein Extraktor arbeiten muss; was sich ohne ihn klärt (nur die Seitenart
    änderte sich), geht gleich in ``arbeit``. Nach jedem Block steht er in ``arbeit.bloecke``."""
    nr = 0
    for name, zeilen in gelesen:
        eigene = False
        for item_id, html, url, content_type, sha, namen, versuche, *pruefen in zeilen:
            if k.abgebrochen:  # nach einem Signal keine neuen Seiten mehr
                return
            seite = extraktion.Seite(bytes(html), url, str(item_id), content_type)
            namen = list(namen or []) + _nachpruefen(seite, item_id, sha, pruefen, arbeit)
            if not namen:
                continue
            arbeit.summen[nr] = (
                item_id,
                sha,
                dict(zip(namen, list(versuche or []) + [0] * 3, strict=False)),
            )
            nr += 1
            eigene = True
            seite.extraktoren = tuple(n for n in aufrufe.EXTRAKTOREN if n in namen)
            yield seite
        if name is not None:
            arbeit.bloecke.append((name, nr if eigene else 0))
            if arbeit.voll():  # auch wenn nur nachzuprüfen ist: Speicher und Sperren bleiben begrenzt
                _schreiben(k, arbeit)


def _nachpruefen(
    seite: extraktion.Seite, item_id: int, sha: bytes, pruefen: list, arbeit: _Arbeit
) -> list[str]:
    """Zeilen, deren Fassung sich nur in der Seitenart unterscheidet: gleicht die Zeile dem Urteil
    über die Seite, wird sie neu gestempelt, sonst bekommt sie dessen Kandidaten; war die Seite
    bisher keine HTML-Seite und ist es jetzt, muss der Extraktor ran – diese Namen kommen zurück."""
    namen, fehler, ohne_text, leer = pruefen
    if not namen:
        return []
    arbeit.zaehlung["nachgeprueft"] += 1
    _, urteil, _ = extraktion.seitenart(seite)
    fest = urteil.kandidat()
    extrahieren = []
    for name, f, kein_text, ist_leer in zip(namen, fehler, ohne_text, leer, strict=True):
        if fest is None and art.ist_keine_html(f):
            extrahieren.append(name)  # bisher keine HTML-Seite, jetzt doch: der Extraktor muss ran
            continue
        # Eine HTML-Seite: den Text gab der Extraktor, die Seitenart ändert ihn nicht. Sonst gleicht
        # die Zeile dem festen Kandidaten des Urteils – oder sie bekommt ihn.
        if fest is None or (f == fest[1] and (kein_text if fest[0] is None else ist_leer and fest[0] == "")):
            arbeit.stempeln.append((arbeit.fassung[name], item_id, name, arbeit.fassung[name]))
        else:
            arbeit.kandidat(item_id, name, *fest, sha, 0, False)
    return extrahieren


def _verteilen(k: Laufkontext, fabrik, seiten: Iterator) -> Iterator:
    """Die Seiten an die Worker der Extraktion (``Extraktion.seiten``) – gestartet erst, wenn eine
    Seite einen Extraktor braucht: ist nur nachzuprüfen, startet kein Worker."""
    quelle = iter(seiten)
    for eintrag in quelle:
        yield from k.pool("extraktion", fabrik).seiten(itertools.chain([eintrag], quelle))
        return


def _seiten_extrahieren(k: Laufkontext, eintraege: Iterator, arbeit: _Arbeit) -> None:
    """Extrahiert Seite für Seite; ``arbeit`` sammelt, was noch nicht geschrieben ist."""
    zaehlung = arbeit.zaehlung
    with fortschritt(
        zaehlung["veraltet"],
        "Extrahieren",
        protokoll.fortschritt_datei(),
        einheit="Seiten",
        melden=k.melder("Extrahieren"),
    ) as weiter:
        fertig = 0
        for eintrag in eintraege:
            nr, kandidaten = eintrag
            item_id, sha, bisher = arbeit.summen.pop(nr)
            arbeit.verbraucht = nr + 1
            if k.abgebrochen and any(_abgestuerzt(e["error"]) for e in kandidaten.values()):
                # Starb ein Worker im Abbruch mit, ist das kein Befund über die Seite:
                # nicht schreiben, der nächste Lauf extrahiert sie.
                break
            zaehlung["extrahiert"] += 1
            zaehlung["keine_html"] += any(art.ist_keine_html(e["error"]) for e in kandidaten.values())
            for name, ergebnis in kandidaten.items():
                fehler, versuche, vorlaeufig = _versuch(ergebnis["error"], bisher[name], zaehlung)
                arbeit.kandidat(item_id, name, ergebnis["text"], fehler, sha, versuche, vorlaeufig)
            if arbeit.voll():
                _schreiben(k, arbeit)
            jetzt = zaehlung["extrahiert"] + zaehlung["nachgeprueft"]
            weiter(jetzt - fertig)
            fertig = jetzt


def _abgestuerzt(fehler: str | None) -> bool:
    return extraktion.voruebergehend(fehler) and fehler.art == "tot"


def _versuch(fehler: str | None, bisher: int, zaehlung: dict[str, int]) -> tuple[str | None, int, bool]:
    """(Fehler, Versuche, vorläufig) für die Zeile eines Kandidaten, dessen Extraktor schon
    ``bisher``-mal an der Umgebung scheiterte; zählt mit."""
    zaehlung["wiederholt"] += bisher > 0
    zaehlung["fehler"] += fehler is not None
    if not extraktion.voruebergehend(fehler):
        return fehler, bisher, False  # Text oder Urteil des Extraktors: endgültig
    versuche = bisher + 1
    if versuche >= GRENZE:
        zaehlung["aufgegeben"] += 1
        return f"{fehler} – nach {versuche} Versuchen aufgegeben", versuche, False
    zaehlung["vorlaeufig"] += 1
    return f"{fehler} – Versuch {versuche} von {GRENZE}, der nächste Lauf versucht es wieder", versuche, True


def _schreiben(k: Laufkontext, arbeit: _Arbeit) -> None:
    """Was ``arbeit`` gesammelt hat, in einer Transaktion, auf der Verbindung mit der Sperre des
    Laufs. Löschte Ingest inzwischen ein Item, entfallen seine Zeilen (gezählt), der Rest wird
    geschrieben."""
    if arbeit.zeilen or arbeit.stempeln:
        _zeilen_schreiben(k, arbeit)
    # Ein Block ist fertig, wenn seine Seiten von den Workern zurück und geschrieben sind.
    fertig = [b for b in arbeit.bloecke if b[1] <= arbeit.verbraucht]
    arbeit.bloecke = [b for b in arbeit.bloecke if b[1] > arbeit.verbraucht]
    for name, _ in fertig:
        k.loesen(name)


def _zeilen_schreiben(k: Laufkontext, arbeit: _Arbeit) -> None:
    zeilen, stempeln, zaehlung = arbeit.zeilen, arbeit.stempeln, arbeit.zaehlung

    def schreiben(weg: frozenset[int]) -> tuple[list, int]:
        bleiben = [z for z in zeilen if z["item_id"] not in weg]
        geschrieben, gestempelt = [], 0
        with conn.cursor() as cur:
            if bleiben:
                cur.executemany(SQL_SCHREIBEN, bleiben, returning=True)
                geschrieben.extend(cur.fetchall())
                while cur.nextset():
                    geschrieben.extend(cur.fetchall())
            if stempeln:
                cur.executemany(SQL_STEMPELN, stempeln)
                gestempelt = cur.rowcount
        return geschrieben, gestempelt

    with k.schreiben() as conn:
        (geschrieben, gestempelt), weg = ohne_geloeschte(
            conn, lambda: {z["item_id"] for z in zeilen}, schreiben
        )
    zaehlung["geschrieben"] += len(geschrieben)
    zaehlung["gleich"] += sum(bool(gleich) for (gleich,) in geschrieben)
    zaehlung["gestempelt"] += gestempelt
    zaehlung["entfallen"] += len(weg)
    zeilen.clear()
    stempeln.clear()
