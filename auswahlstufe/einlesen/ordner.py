"""``--einlesen ORDNER``: ``.html``- und ``.html.gz``-Seiten eines Ordners nach ``seiten``.

Welcher Name welches Item meint und was gemeldet wird: docs/kommandozeile.md, „Seiten aus einem
Ordner“. Gelesen wird der Ordner mit dem Code des Stapels der Extraktion (``extraktion/stapel.py``),
den ``cli`` hereinreicht: ``extraktion`` steht über diesem Paket.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import db
from auswahlstufe.betrieb import migrationen
from auswahlstufe.einlesen.bericht import ordner_berichten
from auswahlstufe.einlesen.stuecke import SPALTEN_SEITEN, SQL_UPSERT_SEITEN, Stuecke, bekannte_items
from auswahlstufe.einlesen.zeilen import Einlesebilanz
from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.fortschritt import fortschritt
from auswahlstufe.jsoneingabe import ist_item_id

# Wie der Name einer Seite ihr Item sagt: die item_id selbst oder die SHA-256 der URL
# (UTF-8, hex; so heißen die Seiten des article-extraction-benchmark).
NAME_ITEM_ID = re.compile(r"-?[0-9]{1,19}")
NAME_URL_SHA256 = re.compile(r"[0-9a-fA-F]{64}")

# Seiten eines Ordners, die nach der SHA-256 ihrer URL heißen: die Items dazu. Liest
# raw_items einmal ganz (einen Index auf die Prüfsumme der URL gibt es nicht).
SQL_ITEMS_NACH_URL = """
select id, url, encode(sha256(convert_to(url, 'UTF8')), 'hex')
from raw_items
where url is not null and encode(sha256(convert_to(url, 'UTF8')), 'hex') = any(%s)
"""


def _nach_namen(ordner: str, dateien: list[tuple[str, Path]]) -> tuple[dict[int, Path], dict[str, Path]]:
    """Die Seiten nach item_id und nach SHA-256 der URL; ein Name, der keins sagt, bricht ab."""
    nach_id: dict[int, Path] = {}
    nach_url: dict[str, Path] = {}
    for seiten_name, pfad in dateien:
        if NAME_URL_SHA256.fullmatch(seiten_name):
            ziel, schluessel = nach_url, seiten_name.lower()
        elif NAME_ITEM_ID.fullmatch(seiten_name) and ist_item_id(int(seiten_name)):
            ziel, schluessel = nach_id, int(seiten_name)
        else:
            raise EingabeFehler(
                f"{pfad}: der Name sagt nicht, zu welchem Item die Seite gehört – erwartet wird "
                "<item_id>.html oder <SHA-256 der URL>.html (64 Hexziffern), auch mit .gz; nichts eingelesen."
            )
        if schluessel in ziel:
            raise EingabeFehler(
                f"{ordner}: {ziel[schluessel].name} und {pfad.name} meinen dasselbe Item; nichts eingelesen."
            )
        ziel[schluessel] = pfad
    return nach_id, nach_url


def _items(
    conn, ordner: str, nach_id: dict[int, Path], nach_url: dict[str, Path]
) -> dict[Path, list[tuple[int, str | None]]]:
    """Je Seite die Items (item_id, url) in raw_items; zwei Seiten für ein Item brechen ab."""
    items: dict[Path, list[tuple[int, str | None]]] = {}
    for item_id, item_url in bekannte_items(conn, sorted(nach_id)).items():
        items[nach_id[item_id]] = [(item_id, item_url)]
    if nach_url:
        for item_id, item_url, pruefsumme in conn.execute(SQL_ITEMS_NACH_URL, (sorted(nach_url),)):
            items.setdefault(nach_url[pruefsumme], []).append((item_id, item_url))
    wessen: dict[int, Path] = {}
    for pfad, liste in items.items():
        for item_id, _ in liste:
            if item_id in wessen:
                raise EingabeFehler(
                    f"{ordner}: {wessen[item_id].name} und {pfad.name} gehören beide zu Item {item_id}; "
                    "nichts eingelesen."
                )
            wessen[item_id] = pfad
    return items


def ordner_einlesen(
    ordner: str, dateien: list[tuple[str, Path]], lesen: Callable[[Path], bytes]
) -> Einlesebilanz:
    """Die Seiten eines Ordners nach ``seiten``, in einer Transaktion und in Stücken.

    ``dateien`` (Name ohne Endung, Pfad) und ``lesen`` (die Bytes einer Datei, ``.gz``
    entpackt) sind die des Stapels der Extraktion. ``content_type`` bleibt leer, die URL kommt
    aus ``raw_items``.
    """
    start = time.perf_counter()
    nach_id, nach_url = _nach_namen(ordner, dateien)
    bilanz = Einlesebilanz(artikel=len(dateien), seiten=len(dateien))
    url = db.datenbank_url()
    with db.fehler_uebersetzen(url), db.verbinden(url, "einlesen") as conn:
        migrationen.voraussetzungen(conn)
        items = _items(conn, ordner, nach_id, nach_url)
        bilanz.unbekannte_dateien = [pfad.name for _, pfad in dateien if pfad not in items]
        with (
            conn.transaction(),
            conn.cursor() as cur,
            fortschritt(len(dateien), "Einlesen", einheit="Seiten") as weiter,
        ):
            stuecke = Stuecke(cur, SQL_UPSERT_SEITEN, SPALTEN_SEITEN)
            for _, pfad in dateien:  # jede Datei erst, wenn sie an der Reihe ist
                if pfad in items:
                    html = lesen(pfad)
                    for item_id, item_url in items[pfad]:
                        stuecke.dazu((item_id, html, item_url, None, None), len(html))
                        bilanz.seiten_geschrieben += 1
                weiter(1)
            stuecke.schreiben()
            bilanz.seiten_neu, bilanz.seiten_geaendert = stuecke.neu, stuecke.geaendert
    ordner_berichten(bilanz, ordner, time.perf_counter() - start)
    return bilanz
