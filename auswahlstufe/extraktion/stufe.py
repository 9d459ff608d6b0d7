"""Datenbankmodus der Extraktion: ``auswahl.py --extrahieren --backfill|--slot …``.

Liest aus ``seiten`` (Migration aw-006) die Seiten, deren gespeicherte
Extraktion veraltet ist – die Seite (SHA-256 aus dem SHA-256 der Bytes und dem
Content-Type) oder
die Fassung eines Extraktors (Paketversion, Einstellungen, Zeichensatzregel)
weicht ab oder es gibt noch keine –, extrahiert sie auf Worker-Prozessen
(extraktion.py) und schreibt ``extraktionen``: nur Zeilen, deren Text, Fehler,
Fassung oder Seite sich geändert hat, in Stapeln zu je einer Transaktion.
Gelesen wird wie in der Auswahl in Keyset-Seiten (``betrieb.keyset``), jede eine eigene
kurze Transaktion: während die Extraktoren rechnen, hält die Stufe keine Transaktion offen.

Der Lauf der Auswahl (``lauf.stufe``) ruft ``Extrahieren`` als Vorlauf jedes Bereichs, mit
seinem Kontext (``betrieb.kontext.Laufkontext``): gelesen wird auf seiner Leseverbindung,
geschrieben auf der Verbindung, die seine Sperre hält, protokolliert in seinem Eintrag in
``auswahl_laeufe``; das erste SIGINT/SIGTERM beendet die laufende Seite, das zweite sofort.
Danach wählt der Lauf für die betroffenen Items (die Auswahl erkennt geänderte Kandidaten an
ihren Prüfsummen). Ein zweiter Lauf ohne Änderung extrahiert nichts.

Eine schlechte Nacht wird kein bleibendes Ergebnis (Migration aw-009): scheitert
ein Extraktor an der Umgebung – Zeitlimit, Absturz des Workers, Speichergrenze
(``seiten.voruebergehend``) –, ist seine Zeile vorläufig (``vorlaeufig``,
``versuche``), und der nächste Lauf über die Seite extrahiert ihn wieder, nur ihn.
Nach ``GRENZE`` solchen Versuchen bleibt der Fehler mit „… nach 3 Versuchen
aufgegeben“. Ein Fehler des Extraktors selbst (eine Ausnahme der Bibliothek) und
ein leerer Text sind sein Urteil über die Seite und bleiben wie bisher.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
from psycopg import sql

import db
from auswahlstufe.anzeige import zahl
from auswahlstufe.betrieb import keyset, protokoll
from auswahlstufe.betrieb.bereich import Bereich
from auswahlstufe.betrieb.ingest import ohne_geloeschte
from auswahlstufe.betrieb.kontext import Laufkontext
from auswahlstufe.betrieb.protokoll import log
from auswahlstufe.extraktion import art, aufrufe
from auswahlstufe.extraktion import seiten as extraktion
from auswahlstufe.fehler import Abgebrochen, StufenFehler, VoraussetzungFehlt
from auswahlstufe.fortschritt import fortschritt

STAPEL = 50  # Seiten je Schreibtransaktion
# So oft versucht die Stufe einen Extraktor an einer Seite, der an der Umgebung scheitert
# (Zeitlimit, Absturz, Speichergrenze), in verschiedenen Läufen: eine überlastete Nacht, ein
# OOM-Kill des Kernels ist selten zweimal hintereinander dieselbe Seite; wer dreimal scheitert,
# scheitert an der Seite selbst – und kostet dann nicht jeden Lauf bis zu 3 × 30 s.
GRENZE = 3
LESESEITE = 20  # Seiten je Leseabfrage (HTML im Speicher: höchstens diese plus die in Arbeit)

SQL_GIBT_ES_SEITEN = "select to_regclass('seiten') is not null"

# Je Seite die Extraktoren, die (wieder) dran sind: ohne Zeile derselben Fassung zu derselben
# Seite, oder mit einer vorläufigen (Fehler der Umgebung, aw-009) – und deren Versuche bisher.
SQL_VERALTET = """
select s.item_id, s.html, s.url, s.content_type, k.sha256, a.namen, a.versuche
from seiten s
join raw_items r on r.id = s.item_id
cross join lateral (
    select sha256(s.html_sha256 || convert_to(coalesce(s.content_type, ''), 'UTF8')) as sha256
) k
cross join lateral (
    select array_agg(f.extraktor order by f.nr) as namen,
           array_agg(coalesce(e.versuche, 0) order by f.nr) as versuche
    from unnest(%(namen)s::text[], %(fassungen)s::text[]) with ordinality as f (extraktor, fassung, nr)
    left join extraktionen e
        on e.item_id = s.item_id and e.extraktor = f.extraktor
       and e.extraktor_fassung = f.fassung and e.seite_sha256 = k.sha256
    where e.item_id is null or e.vorlaeufig
) a
where {bedingung} and s.item_id >= %(ab)s and a.namen is not null
order by s.item_id
limit %(seite)s
"""

SQL_ZAHL_VERALTET = "select count(*) from ({abfrage}) v"
# Nur schreiben, was sich unterscheidet; eine gleiche Zeile behält Zeilenversion und extrahiert_am.
SQL_SCHREIBEN = """
insert into extraktionen (item_id, extraktor, text, fehler, extraktor_fassung, seite_sha256,
    versuche, vorlaeufig)
values (%s, %s, %s, %s, %s, %s, %s, %s)
on conflict (item_id, extraktor) do update set
    text = excluded.text,
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
"""


def fassungen() -> dict[str, str]:
    versionen = aufrufe.versionen()
    return {name: aufrufe.extraktor_fassung(name, versionen[name]) for name in aufrufe.EXTRAKTOREN}


def _abfrage(bereich: Bereich) -> tuple[sql.Composed, dict]:
    fassung = fassungen()
    params = {**bereich.parameter(), "namen": list(fassung), "fassungen": list(fassung.values())}
    return sql.SQL(SQL_VERALTET).format(bedingung=bereich.bedingung()), params


# Die Zählung eines Laufs (Bilanzzeile, auswahl_laeufe.extraktion): Seiten veraltet und
# extrahiert, Zeilen geschrieben, Kandidaten mit Fehler, davon vorläufig (der nächste Lauf
# versucht es wieder) und aufgegeben (nach GRENZE Versuchen), Kandidaten wiederholt (ihr
# letzter Versuch war vorläufig), Seiten, die keine HTML-Seiten sind, Items, die Ingest
# während der Extraktion löschte (entfallen).
ZAEHLUNG = (
    *("veraltet", "extrahiert", "geschrieben", "fehler"),
    *("vorlaeufig", "aufgegeben", "wiederholt", "keine_html", "entfallen"),
)


@dataclass(frozen=True)
class Extrahieren:
    """Der Vorlauf eines Laufs mit ``--extrahieren``: ``Extrahieren(…)(kontext, bereich, zaehlung)``.

    Extrahiert die veralteten Seiten des Bereichs und schreibt ``extraktionen``; füllt
    ``zaehlung`` (auch bis zu einem Fehler: sie zeigt, wie weit es kam). Nach einem Signal hört
    die Extraktion nach der laufenden Seite auf, schreibt die fertigen Seiten und endet mit
    ``Abgebrochen`` (Exit 130); die Auswahl läuft dann nicht. Ein trockener Lauf zählt nur.
    ``zeitlimit_s``: je Seite und Extraktor (``--extraktion-zeitlimit``).
    """

    prozesse: int | None = None
    zeitlimit_s: float = extraktion.ZEITLIMIT_S

    def __call__(self, k: Laufkontext, bereich: Bereich, zaehlung: dict[str, int]) -> None:
        start = time.perf_counter()
        zaehlung.update(dict.fromkeys(ZAEHLUNG, 0))
        if not k.leser.execute(SQL_GIBT_ES_SEITEN).fetchone()[0]:
            raise VoraussetzungFehlt(
                "Die Tabelle seiten fehlt – Migration aw-006-seiten anwenden (python check_db.py --migrieren)."
            )
        abfrage, params = _abfrage(bereich)
        zaehlung["veraltet"] = k.leser.execute(
            sql.SQL(SQL_ZAHL_VERALTET).format(abfrage=abfrage),
            {**params, "ab": keyset.KLEINSTE_ID, "seite": None},
        ).fetchone()[0]
        if k.trocken:
            log.info(f"Extraktion (trocken): {zaehlung['veraltet']} Seiten würden extrahiert.")
            return
        if zaehlung["veraltet"]:
            ex = k.pool(
                "extraktion", lambda: extraktion.Extraktion(self.prozesse, zeitlimit_s=self.zeitlimit_s)
            )
            try:
                _extrahieren(k, ex, abfrage, params, zaehlung)
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
    return (
        f"{zaehlung['veraltet']} Seiten neu oder veraltet, {zaehlung['extrahiert']} extrahiert{keine_html}, "
        f"{zaehlung['geschrieben']} Zeilen in extraktionen geändert, {zaehlung['fehler']} Kandidaten "
        f"mit Fehler{' (davon ' + ' und '.join(davon) + ')' if davon else ''}{wiederholt}{entfallen}, {dauer} s"
    )


def _extrahieren(
    k: Laufkontext, ex: extraktion.Extraktion, abfrage: sql.Composed, params: dict, zaehlung: dict[str, int]
) -> None:
    fassung = dict(zip(params["namen"], params["fassungen"], strict=True))
    summen: dict[int, tuple[int, bytes, dict[str, int]]] = {}  # Seitennummer → (item_id, sha256, versuche)

    def seiten() -> Iterator[extraktion.Seite]:
        nr = 0
        for zeilen in keyset.seiten(k.leser, abfrage, params, LESESEITE):
            for item_id, html, url, content_type, sha, namen, versuche in zeilen:
                if k.abgebrochen:  # nach einem Signal keine neuen Seiten mehr
                    return
                summen[nr] = (item_id, sha, dict(zip(namen, versuche, strict=True)))
                nr += 1
                yield extraktion.Seite(bytes(html), url, str(item_id), content_type, tuple(namen))

    zeilen: list[tuple] = []
    try:
        _seiten_extrahieren(k, ex, seiten(), summen, fassung, zeilen, zaehlung)
    except StufenFehler:
        # Etwa ein neuer Worker, der nicht startet: die fertigen Seiten bleiben nicht liegen.
        if zeilen:
            _schreiben(k, zeilen, zaehlung)
        if k.abgebrochen:
            return  # nach einem Signal eine Folge des Abbruchs: Exit 130
        raise
    if zeilen:
        _schreiben(k, zeilen, zaehlung)


def _seiten_extrahieren(k, ex, seiten, summen, fassung, zeilen: list[tuple], zaehlung) -> None:
    """Extrahiert Seite für Seite; ``zeilen`` sammelt, was noch nicht geschrieben ist."""
    with fortschritt(
        zaehlung["veraltet"], "Extrahieren", protokoll.fortschritt_datei(), einheit="Seiten"
    ) as weiter:
        for nr, kandidaten in ex.seiten(seiten):
            item_id, sha, bisher = summen.pop(nr)
            k.vorbei("seite")
            if k.abgebrochen and any(_abgestuerzt(e["error"]) for e in kandidaten.values()):
                # Starb ein Worker im Abbruch mit, ist das kein Befund über die Seite:
                # nicht schreiben, der nächste Lauf extrahiert sie.
                break
            zaehlung["extrahiert"] += 1
            zaehlung["keine_html"] += any(art.ist_keine_html(e["error"]) for e in kandidaten.values())
            for name, ergebnis in kandidaten.items():
                fehler, versuche, vorlaeufig = _versuch(ergebnis["error"], bisher[name], zaehlung)
                zeilen.append(
                    (item_id, name, ergebnis["text"], fehler, fassung[name], sha, versuche, vorlaeufig)
                )
            if len(zeilen) >= STAPEL * len(aufrufe.EXTRAKTOREN):
                _schreiben(k, zeilen, zaehlung)
                zeilen.clear()
            weiter(1)


def _abgestuerzt(fehler: str | None) -> bool:
    return fehler is not None and fehler.startswith(extraktion.WORKER_TOT)


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


def _schreiben(k: Laufkontext, zeilen: list[tuple], zaehlung: dict[str, int]) -> None:
    """Ein Schreibstapel in einer Transaktion, auf der Verbindung mit der Sperre des Laufs.
    Löschte Ingest inzwischen ein Item, entfallen seine Zeilen (gezählt), der Rest wird geschrieben."""

    def schreiben(weg: frozenset[int]) -> int:
        bleiben = [z for z in zeilen if z[0] not in weg]
        if not bleiben:
            return 0
        with conn.cursor() as cur:
            cur.executemany(SQL_SCHREIBEN, bleiben)
            return cur.rowcount

    with k.schreiben() as conn:
        geschrieben, weg = ohne_geloeschte(conn, lambda: {z[0] for z in zeilen}, schreiben)
    zaehlung["geschrieben"] += geschrieben
    zaehlung["entfallen"] += len(weg)
    k.vorbei("extraktion")
