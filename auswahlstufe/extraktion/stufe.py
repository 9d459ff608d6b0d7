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

Eine schlechte Nacht wird kein bleibendes Ergebnis (Migration aw-009): scheitert
ein Extraktor an der Umgebung – Zeitlimit, Absturz des Workers, Speichergrenze
(``seiten.voruebergehend``) –, ist seine Zeile vorläufig (``vorlaeufig``,
``versuche``), und der nächste Lauf über die Seite extrahiert ihn wieder, nur ihn.
Nach ``GRENZE`` solchen Versuchen bleibt der Fehler mit „… nach 3 Versuchen
aufgegeben“. Ein Fehler des Extraktors selbst (eine Ausnahme der Bibliothek) und
ein leerer Text sind sein Urteil über die Seite und bleiben wie bisher.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from datetime import datetime

import click
import psycopg
from psycopg import sql

import db
from auswahlstufe.anzeige import zahl
from auswahlstufe.extraktion import art
from auswahlstufe.extraktion import seiten as extraktion
from auswahlstufe.fehler import Abgebrochen, StufenFehler, VoraussetzungFehlt
from auswahlstufe.fortschritt import fortschritt
from auswahlstufe.lauf import ausgabe, bereich, lesen, wache
from auswahlstufe.lauf.abbruch import Abbruch

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
# Items eines Schreibstapels, die Ingest inzwischen löschte (ihre Zeilen scheiterten am
# Fremdschlüssel): sie entfallen, der Rest des Stapels wird geschrieben.
SQL_VERSCHWUNDENE = """
select i from unnest(%s::bigint[]) as i
where not exists (select 1 from raw_items r where r.id = i)
"""

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
    versionen = extraktion.versionen()
    return {name: extraktion.extraktor_fassung(name, versionen[name]) for name in extraktion.EXTRAKTOREN}


def _abfrage(slot: datetime | None, teil: str | None) -> tuple[sql.Composed, dict]:
    bedingungen = [lesen.BEDINGUNG_ALLE]
    params: dict[str, object] = {}
    if slot is not None:
        params["slot"] = slot
        bedingungen.append(lesen.BEDINGUNG_SLOT)
    if teil:
        k, n = bereich.teil_parsen(teil)
        params["k"], params["n"] = k - 1, n
        bedingungen.append(lesen.BEDINGUNG_TEIL)
    fassung = fassungen()
    params["namen"], params["fassungen"] = list(fassung), list(fassung.values())
    return sql.SQL(SQL_VERALTET).format(bedingung=sql.SQL(" and ").join(bedingungen)), params


# Die Zählung eines Laufs (Bilanzzeile, auswahl_laeufe.extraktion): Seiten veraltet und
# extrahiert, Zeilen geschrieben, Kandidaten mit Fehler, davon vorläufig (der nächste Lauf
# versucht es wieder) und aufgegeben (nach GRENZE Versuchen), Kandidaten wiederholt (ihr
# letzter Versuch war vorläufig), Seiten, die keine HTML-Seiten sind, Items, die Ingest
# während der Extraktion löschte (entfallen).
ZAEHLUNG = (
    *("veraltet", "extrahiert", "geschrieben", "fehler"),
    *("vorlaeufig", "aufgegeben", "wiederholt", "keine_html", "entfallen"),
)


def extrahieren(
    slot: datetime | None,
    trocken: bool,
    teil: str | None,
    prozesse: int | None,
    abbruch: Abbruch | None = None,
    zaehlung: dict[str, int] | None = None,
    *,
    zeitlimit_s: float = extraktion.ZEITLIMIT_S,
) -> dict[str, int]:
    """Extrahiert die veralteten Seiten und schreibt ``extraktionen``; gibt die Zählung zurück.
    ``slot``: der Zeitpunkt, wie ihn die Auswahl liest (``bereich.slot_parsen``), nicht als Text –
    ``laeufe.slot_text`` nennt nur Minuten.

    ``stufe.lauf`` ruft das als Vorlauf auf: nach der Sperre und dem Eintrag ins
    Protokoll, vor der Auswahl, und gibt ``zaehlung`` mit – ein Verzeichnis, das
    hier gefüllt wird und auch nach einem Fehler zeigt, wie weit es kam. Nach
    SIGINT/SIGTERM (``abbruch``) hört die Extraktion nach der laufenden Seite auf,
    schreibt die fertigen Seiten und endet mit ``Abgebrochen`` (Exit 130); die
    Auswahl läuft dann nicht. ``zeitlimit_s``: je Seite und Extraktor
    (``--extraktion-zeitlimit``).
    """
    start = time.perf_counter()
    if zaehlung is None:
        zaehlung = {}
    zaehlung.update(dict.fromkeys(ZAEHLUNG, 0))
    abfrage, params = _abfrage(slot, teil)
    fassung = dict(zip(params["namen"], params["fassungen"], strict=True))
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
                    _extrahieren(
                        leser, schreiber, abfrage, params, fassung, prozesse, zaehlung, abbruch, zeitlimit_s
                    )
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


def _extrahieren(
    leser, schreiber, abfrage, params, fassung, prozesse, zaehlung, abbruch, zeitlimit_s
) -> None:
    summen: dict[int, tuple[int, bytes, dict[str, int]]] = {}  # Seitennummer → (item_id, sha256, versuche)

    def abgebrochen() -> bool:
        return abbruch is not None and abbruch.signal is not None

    def seiten():
        for nr, (item_id, html, url, content_type, sha, namen, versuche) in enumerate(
            _seiten_lesen(leser, abfrage, params)
        ):
            if abgebrochen():  # nach einem Signal keine neuen Seiten mehr lesen
                return
            summen[nr] = (item_id, sha, dict(zip(namen, versuche, strict=True)))
            yield extraktion.Seite(bytes(html), url, str(item_id), content_type, tuple(namen))

    zeilen: list[tuple] = []
    try:
        with (
            extraktion.Extraktion(prozesse, zeitlimit_s=zeitlimit_s) as ex,
            fortschritt(
                zaehlung["veraltet"], "Extrahieren", ausgabe.fortschritt_datei(), einheit="Seiten"
            ) as weiter,
        ):
            for nr, kandidaten in ex.seiten(seiten()):
                item_id, sha, bisher = summen.pop(nr)
                if abgebrochen() and any(_abgestuerzt(e["error"]) for e in kandidaten.values()):
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
                if len(zeilen) >= STAPEL * len(extraktion.EXTRAKTOREN):
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
