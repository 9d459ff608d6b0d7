"""Datenbankmodus der Extraktion: ``auswahl.py --extrahieren --backfill|--slot …``.

Liest aus ``seiten`` (Migration aw-006) die Seiten, deren gespeicherte
Extraktion veraltet ist – die Seite (SHA-256 aus dem SHA-256 der Bytes und dem
Content-Type) oder
die Fassung eines Extraktors (Paketversion, Einstellungen, Zeichensatzregel)
weicht ab oder es gibt noch keine –, extrahiert sie auf Worker-Prozessen
(extraktion.py) und schreibt ``extraktionen``: nur Zeilen, deren Text, Fehler,
Fassung oder Seite sich geändert hat, in Stapeln zu je einer Transaktion.
Gelesen wird wie in der Auswahl in Keyset-Seiten (``s.item_id >= ab … limit``),
jede eine eigene kurze Transaktion: während die Extraktoren rechnen, hält die
Stufe keine Transaktion offen.

``stufe.lauf`` ruft ``extrahieren`` als Vorlauf: unter der Sperre des Laufs
und in seinem Protokoll (``auswahl_laeufe``), mit seiner Behandlung von
SIGINT/SIGTERM. Danach wählt der Lauf für die betroffenen Items (die Auswahl
erkennt geänderte Kandidaten an ihren Prüfsummen). Ein zweiter Lauf ohne
Änderung extrahiert nichts.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import click
import psycopg
from psycopg import sql

import db
from auswahlstufe.anzeige import zahl
from auswahlstufe.extraktion import seiten as extraktion
from auswahlstufe.fehler import Abgebrochen, StufenFehler, VoraussetzungFehlt
from auswahlstufe.fortschritt import fortschritt
from auswahlstufe.lauf import ausgabe, bereich, lesen, wache
from auswahlstufe.lauf.abbruch import Abbruch

STAPEL = 50  # Seiten je Schreibtransaktion
LESESEITE = 20  # Seiten je Leseabfrage (HTML im Speicher: höchstens diese plus die in Arbeit)

SQL_GIBT_ES_SEITEN = "select to_regclass('seiten') is not null"

# Je Seite: gibt es einen Extraktor ohne Zeile derselben Fassung zu derselben Seite?
SQL_VERALTET = """
select s.item_id, s.html, s.url, s.content_type, k.sha256
from seiten s
join raw_items r on r.id = s.item_id
cross join lateral (
    select sha256(s.html_sha256 || convert_to(coalesce(s.content_type, ''), 'UTF8')) as sha256
) k
where {bedingung} and s.item_id >= %(ab)s and exists (
    select 1 from unnest(%(namen)s::text[], %(fassungen)s::text[]) as f (extraktor, fassung)
    where not exists (
        select 1 from extraktionen e
        where e.item_id = s.item_id and e.extraktor = f.extraktor
          and e.extraktor_fassung = f.fassung and e.seite_sha256 = k.sha256
    )
)
order by s.item_id
limit %(seite)s
"""

SQL_ZAHL_VERALTET = "select count(*) from ({abfrage}) v"
# Items eines Schreibstapels, die Ingest inzwischen löschte (ihre Zeilen scheiterten am
# Fremdschlüssel): sie entfallen, der Rest des Stapels wird geschrieben.
SQL_VERSCHWUNDENE = """
select i from unnest(%s::bigint[]) as i
where not exists (select 1 from raw_items r where r.id = i)
"""

# Nur schreiben, was sich unterscheidet; eine gleiche Zeile behält Zeilenversion und extrahiert_am.
SQL_SCHREIBEN = """
insert into extraktionen (item_id, extraktor, text, fehler, extraktor_fassung, seite_sha256)
values (%s, %s, %s, %s, %s, %s)
on conflict (item_id, extraktor) do update set
    text = excluded.text,
    fehler = excluded.fehler,
    extraktor_fassung = excluded.extraktor_fassung,
    seite_sha256 = excluded.seite_sha256,
    extrahiert_am = now()
where (extraktionen.text, extraktionen.fehler, extraktionen.extraktor_fassung, extraktionen.seite_sha256)
    is distinct from (excluded.text, excluded.fehler, excluded.extraktor_fassung, excluded.seite_sha256)
"""


def fassungen() -> dict[str, str]:
    versionen = extraktion.versionen()
    return {name: extraktion.extraktor_fassung(name, versionen[name]) for name in extraktion.EXTRAKTOREN}


def _abfrage(slot: str | None, teil: str | None) -> tuple[sql.Composed, dict]:
    bedingungen = [lesen.BEDINGUNG_ALLE]
    params: dict[str, object] = {}
    if slot is not None:
        params["slot"] = bereich.slot_parsen(slot)
        bedingungen.append(lesen.BEDINGUNG_SLOT)
    if teil:
        k, n = bereich.teil_parsen(teil)
        params["k"], params["n"] = k - 1, n
        bedingungen.append(lesen.BEDINGUNG_TEIL)
    fassung = fassungen()
    params["namen"], params["fassungen"] = list(fassung), list(fassung.values())
    return sql.SQL(SQL_VERALTET).format(bedingung=sql.SQL(" and ").join(bedingungen)), params


def extrahieren(
    slot: str | None, trocken: bool, teil: str | None, prozesse: int | None, abbruch: Abbruch | None = None
) -> dict[str, int]:
    """Extrahiert die veralteten Seiten und schreibt ``extraktionen``; gibt die Zählung zurück.

    ``stufe.lauf`` ruft das als Vorlauf auf: nach der Sperre und dem Eintrag ins
    Protokoll, vor der Auswahl. Nach SIGINT/SIGTERM (``abbruch``) hört die
    Extraktion nach der laufenden Seite auf, schreibt die fertigen Seiten und
    endet mit ``Abgebrochen`` (Exit 130); die Auswahl läuft dann nicht.
    """
    start = time.perf_counter()
    abfrage, params = _abfrage(slot, teil)
    fassung = dict(zip(params["namen"], params["fassungen"], strict=True))
    zaehlung = {"veraltet": 0, "extrahiert": 0, "geschrieben": 0, "fehler": 0, "entfallen": 0}
    url = db.datenbank_url()
    # Beide Verbindungen im Autocommit: jede Leseseite und jeder Schreibstapel ist eine
    # eigene kurze Transaktion, zwischen ihnen – während die Extraktoren rechnen – keine.
    # Beide melden sich bei der Wache des Laufs an (lauf.wache): sie hält sie in dieser Zeit
    # wach, und vor jedem Schreibstapel prüft sie, dass der Lauf seine Sperre noch hält.
    with (
        db.fehler_uebersetzen(url),
        db.verbinden(url, "extraktion lesen", autocommit=True) as leser,
        wache.angemeldet(leser),
    ):
        if not leser.execute(SQL_GIBT_ES_SEITEN).fetchone()[0]:
            raise VoraussetzungFehlt(
                "Die Tabelle seiten fehlt – Migration aw-006-seiten anwenden (python check_db.py --migrieren)."
            )
        zaehlung["veraltet"] = leser.execute(
            sql.SQL(SQL_ZAHL_VERALTET).format(abfrage=abfrage),
            {**params, "ab": lesen.KLEINSTE_ID, "seite": None},
        ).fetchone()[0]
        if not trocken and zaehlung["veraltet"]:
            with (
                db.verbinden(url, "extraktion schreiben", autocommit=True) as schreiber,
                wache.angemeldet(schreiber),
            ):
                try:
                    _extrahieren(leser, schreiber, abfrage, params, fassung, prozesse, zaehlung, abbruch)
                except (psycopg.Error, StufenFehler, db.Fehler):
                    if zaehlung["extrahiert"]:
                        click.echo(f"Extraktion bis zum Fehler: {_bilanz(zaehlung, start)}", err=True)
                    raise
    # Die Bilanz ist Protokoll (stdout; lauf.ausgabe), nur ein Fehler geht nach stderr.
    if trocken:
        click.echo(f"Extraktion (trocken): {zaehlung['veraltet']} Seiten würden extrahiert.")
    else:
        click.echo(f"Extraktion: {_bilanz(zaehlung, start)}")
    if abbruch is not None and abbruch.signal is not None:
        raise Abgebrochen(
            f"Abgebrochen ({signal.Signals(abbruch.signal).name}) während der Extraktion nach "
            f"{zaehlung['extrahiert']} Seiten; jede Seite ist ganz oder gar nicht geschrieben, ein "
            "erneuter Lauf macht den Rest. Die Auswahl lief nicht."
        )
    return zaehlung


def _bilanz(zaehlung: dict[str, int], start: float) -> str:
    dauer = zahl(time.perf_counter() - start)
    entfallen = f", entfallen {zaehlung['entfallen']}" if zaehlung.get("entfallen") else ""
    return (
        f"{zaehlung['veraltet']} Seiten neu oder veraltet, {zaehlung['extrahiert']} extrahiert, "
        f"{zaehlung['geschrieben']} Zeilen in extraktionen geändert, {zaehlung['fehler']} Kandidaten "
        f"mit Fehler{entfallen}, {dauer} s"
    )


def _seiten_lesen(leser, abfrage: sql.Composed, params: dict) -> Iterator[tuple]:
    """Die veralteten Seiten in Keyset-Seiten zu LESESEITE, jede Abfrage eine eigene Transaktion."""
    ab = lesen.KLEINSTE_ID
    while True:
        with wache.benutzt(leser):
            zeilen = leser.execute(abfrage, {**params, "ab": ab, "seite": LESESEITE}).fetchall()
        yield from zeilen
        if len(zeilen) < LESESEITE or zeilen[-1][0] == lesen.GROESSTE_ID:
            return
        ab = zeilen[-1][0] + 1


def _extrahieren(leser, schreiber, abfrage, params, fassung, prozesse, zaehlung, abbruch) -> None:
    summen: dict[int, tuple[int, bytes]] = {}  # Seitennummer → (item_id, sha256)

    def abgebrochen() -> bool:
        return abbruch is not None and abbruch.signal is not None

    def seiten():
        for nr, (item_id, html, url, content_type, sha) in enumerate(_seiten_lesen(leser, abfrage, params)):
            if abgebrochen():  # nach einem Signal keine neuen Seiten mehr lesen
                return
            summen[nr] = (item_id, sha)
            yield extraktion.Seite(bytes(html), url, str(item_id), content_type)

    zeilen: list[tuple] = []
    try:
        with (
            extraktion.Extraktion(prozesse) as ex,
            fortschritt(zaehlung["veraltet"], "Extrahieren", ausgabe.fortschritt_datei()) as weiter,
        ):
            for nr, kandidaten in ex.seiten(seiten()):
                item_id, sha = summen.pop(nr)
                if abgebrochen() and any(_abgestuerzt(e["error"]) for e in kandidaten.values()):
                    # Starb ein Worker im Abbruch mit, ist das kein Befund über die Seite:
                    # nicht schreiben, der nächste Lauf extrahiert sie.
                    break
                zaehlung["extrahiert"] += 1
                for name, ergebnis in kandidaten.items():
                    zaehlung["fehler"] += ergebnis["error"] is not None
                    zeilen.append((item_id, name, ergebnis["text"], ergebnis["error"], fassung[name], sha))
                if len(zeilen) >= STAPEL * len(kandidaten):
                    _schreiben(schreiber, zeilen, zaehlung)
                    zeilen = []
                weiter(1)
                if abgebrochen():
                    break
    except StufenFehler:
        # Etwa ein Ersatz-Worker, der nicht startet: die fertigen Seiten bleiben nicht liegen.
        if zeilen:
            _schreiben(schreiber, zeilen, zaehlung)
        if abgebrochen():
            return  # nach SIGINT/SIGTERM eine Folge des Abbruchs: extrahieren meldet Exit 130
        raise
    if zeilen:
        _schreiben(schreiber, zeilen, zaehlung)


def _abgestuerzt(fehler: str | None) -> bool:
    return fehler is not None and fehler.startswith(extraktion.WORKER_TOT)


def _schreiben(schreiber, zeilen: list[tuple], zaehlung: dict[str, int]) -> None:
    """Ein Schreibstapel in einer Transaktion (vorher: hält der Lauf seine Sperre noch?).

    Löschte Ingest inzwischen ein Item, scheitert der Stapel am Fremdschlüssel; dann
    entfallen die verschwundenen Items (gezählt), und der Rest wird geschrieben."""
    wache.sperre_pruefen()
    with wache.benutzt(schreiber):
        while True:
            try:
                with schreiber.transaction(), schreiber.cursor() as cur:
                    cur.executemany(SQL_SCHREIBEN, zeilen)
                    zaehlung["geschrieben"] += cur.rowcount
                    return
            except psycopg.errors.ForeignKeyViolation:
                weg = {i for (i,) in schreiber.execute(SQL_VERSCHWUNDENE, ([z[0] for z in zeilen],))}
                if not weg:
                    raise
                zaehlung["entfallen"] += len(weg)
                zeilen = [z for z in zeilen if z[0] not in weg]
                if not zeilen:
                    return
