"""Welche Rechte jede Betriebsart braucht – die eine Stelle dafür.

Was daraus folgt (``check_db.py --modus``, das Rollenrezept, die Tabelle in der Doku) und wie es
geprüft wird: docs/betrieb.md, „Rechte je Modus“. Eine neue Tabelle einer Migration bekommt hier
einen Eintrag (``wenn_vorhanden``: nur prüfen und vergeben, wenn es sie schon gibt), eine neue
oder umbenannte Sicht gehört in ``SICHTEN``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Recht:
    """Rechte auf ein Objekt. ``art``: datenbank, schema, tabelle, sicht, sequenz oder eigentuemer.
    ``weitergeben``: diese der ``rechte`` mit WITH GRANT OPTION. ``spalten``: die Spalten, die der
    Modus liest – ein Recht auf jede genügt statt eines auf die Tabelle (vergeben wird die Tabelle).
    """

    art: str
    objekt: str
    rechte: tuple[str, ...] = ()
    wozu: str = ""
    wenn_vorhanden: bool = False
    weitergeben: tuple[str, ...] = ()
    spalten: tuple[str, ...] = ()

    def text(self) -> str:
        if self.art == "datenbank":
            return f"{', '.join(self.rechte)} auf die Datenbank"
        if self.art == "eigentuemer":
            return f"Eigentümer von {self.objekt}"
        rechte = ", ".join(f"{r} (mit Weitergabe)" if r in self.weitergeben else r for r in self.rechte)
        return f"{rechte} auf {ARTEN[self.art]} {self.objekt}"


# art → wie der Text sie nennt
ARTEN = {"schema": "Schema", "tabelle": "Tabelle", "sicht": "Sicht", "sequenz": "Sequenz"}


@dataclass(frozen=True)
class Modus:
    name: str
    aufruf: str
    rechte: tuple[Recht, ...]


VERBINDEN = Recht("datenbank", "", ("CONNECT",))
SCHEMA = Recht("schema", "public", ("USAGE",))
# Jeder Modus prüft vor dem Start, ob alle Migrationen angewandt sind.
BUCH = Recht("tabelle", "schema_migrationen", ("SELECT",), "Stand der Migrationen")
# raw_items gehört Ingest; die Stufe liest von dort nur id und slot (mit --einlesen id und url).
ITEMS = Recht("tabelle", "raw_items", ("SELECT",), spalten=("id", "slot"))
# Wer Entscheidungen schreibt, pflegt die Kennzahlen je Haus und Slot (Quellenwache, aw-013):
# dazu liest er raw_items.haus, und ein Tick (--nachholen) meldet neue Befunde der Sicht.
ITEMS_MIT_HAUS = Recht("tabelle", "raw_items", ("SELECT",), spalten=("id", "slot", "haus"))
QUELLENWACHE = (
    Recht(
        "tabelle",
        "auswahl_kennzahlen",
        ("SELECT", "INSERT", "UPDATE", "DELETE"),
        "Kennzahlen je Haus und Slot",
    ),
    Recht(
        "tabelle",
        "auswahl_quellenwache_gemeldet",
        ("SELECT", "INSERT", "UPDATE"),
        "was ein Tick schon meldete",
    ),
    Recht("sicht", "auswahl_quellenwache", ("SELECT",), "neue Befunde am Ende eines Ticks"),
)
KANDIDATEN = Recht("tabelle", "extraktionen", ("SELECT",))
TEMP = Recht("datenbank", "", ("TEMPORARY",), "jeder Stapel geht per COPY durch eine temporäre Tabelle")
KODIERUNG_SCHREIBEN = Recht("tabelle", "selected_extractor", ("SELECT", "INSERT", "UPDATE", "DELETE"))
KODIERUNG_LESEN = Recht("tabelle", "selected_extractor", ("SELECT",))
# Protokoll der Läufe (aw-004); seine id ist eine Identitätsspalte, kein Recht auf eine Sequenz nötig.
PROTOKOLL = (Recht("tabelle", "auswahl_laeufe", ("SELECT", "INSERT", "UPDATE"), "Protokoll der Läufe"),)

GRUND = (VERBINDEN, SCHEMA, BUCH)
LAUF = (*GRUND, ITEMS_MIT_HAUS, KANDIDATEN, KODIERUNG_SCHREIBEN, TEMP, *PROTOKOLL, *QUELLENWACHE)
LESEN = (*GRUND, ITEMS, KANDIDATEN, KODIERUNG_LESEN)

# Die Sichten der Stufe (eine neue kommt hier dazu); sie lesen mit den Rechten ihres Eigentümers.
SICHTEN = (
    *("auswahl_uebersicht", "auswahl_letzter_slot", "auswahl_slots_ohne_lauf", "auswahl_offene_laeufe"),
    *("auswahl_slots", "auswahl_fortschritt", "auswahl_extraktion_fassungen", "auswahl_quellenwache"),
)
# Die Tabellen, die die Migrationen der Stufe anlegen (Eigentümer: der Admin).
TABELLEN = (
    *("extraktionen", "selected_extractor", "auswahl_laeufe", "seiten"),
    *("auswahl_kennzahlen", "auswahl_quellenwache_gemeldet"),
)
BLICK = (
    VERBINDEN,
    SCHEMA,
    *(Recht("sicht", name, ("SELECT",)) for name in SICHTEN),
    Recht("tabelle", "auswahl_laeufe", ("SELECT",), "die letzten Läufe (docs/betrieb.md, Abfragen)"),
    Recht("tabelle", "auswahl_kennzahlen", ("SELECT",), "Kennzahlen je Haus (docs/betrieb.md, Überwachung)"),
    Recht("tabelle", "auswahl_quellenwache_gemeldet", ("SELECT",), "gemeldete Befunde der Quellenwache"),
)

MODI: dict[str, Modus] = {
    m.name: m
    for m in (
        Modus("lauf", "auswahl.py --backfill, --slot … oder --nachholen [--teil K/N]", LAUF),
        Modus(
            "trocken",
            "auswahl.py --backfill, --slot … oder --nachholen --trocken [--stichprobe N]",
            LESEN,
        ),
        # ohne --trocken rechnet --stichprobe alles neu und schreibt wie ein Lauf
        Modus("stichprobe", "auswahl.py --backfill oder --slot … --stichprobe N", LAUF),
        Modus(
            "einlesen",
            "auswahl.py --einlesen DATEI.json|ORDNER",
            (
                *GRUND,
                Recht("tabelle", "raw_items", ("SELECT",), spalten=("id", "url")),
                Recht(
                    "tabelle",
                    "extraktionen",
                    ("SELECT", "INSERT", "UPDATE", "DELETE"),
                    "Kandidaten, die die Datei nicht mehr nennt, werden gelöscht",
                ),
                Recht(
                    "tabelle",
                    "seiten",
                    ("SELECT", "INSERT", "UPDATE"),
                    "Artikel mit html gehen nach seiten; gleiche Seiten bleiben unberührt",
                ),
                # die Stücke gehen als Arrays in einer Anweisung hinein, ohne temporäre Tabelle
            ),
        ),
        # extraktion.stufe: schreibt extraktionen per Upsert, löscht nie, und wählt danach wie ein Lauf
        Modus(
            "extrahieren",
            "auswahl.py --extrahieren --backfill, --slot … oder --nachholen [--teil K/N]",
            (
                *GRUND,
                ITEMS_MIT_HAUS,
                Recht("tabelle", "seiten", ("SELECT",), "die rohen Seiten (Migration aw-006)"),
                Recht(
                    "tabelle",
                    "extraktionen",
                    ("SELECT", "INSERT", "UPDATE"),
                    "neue und geänderte Kandidaten aus dem HTML; gelöscht wird nichts",
                ),
                KODIERUNG_SCHREIBEN,
                TEMP,
                *PROTOKOLL,
                *QUELLENWACHE,
            ),
        ),
        Modus(
            "check_db",
            "check_db.py",
            (
                *LESEN,
                Recht("sicht", "auswahl_quellenwache", ("SELECT",), "offene Befunde der Quellenwache"),
            ),
        ),
        # Wer migriert, legt die Tabellen an und wird ihr Eigentümer; spätere
        # Migrationen ändern sie, also migriert immer dieselbe Rolle.
        Modus(
            "migrieren",
            "check_db.py --migrieren",
            (
                VERBINDEN,
                Recht("schema", "public", ("USAGE", "CREATE"), "Tabellen und Sicht anlegen"),
                Recht(
                    "tabelle",
                    "raw_items",
                    ("SELECT", "REFERENCES"),
                    "Fremdschlüssel auf raw_items; die Sicht liest raw_items mit den Rechten ihres "
                    "Eigentümers; SELECT gibt der Admin mit dem Rezept an die Betriebsrolle weiter",
                    weitergeben=("SELECT",),
                ),
                Recht(
                    "tabelle",
                    "schema_migrationen",
                    ("SELECT", "INSERT"),
                    "das Buch teilen sich die Module; fehlt es, legt aw-001 es an",
                    True,
                ),
                *(Recht("eigentuemer", name, wenn_vorhanden=True) for name in (*TABELLEN, *SICHTEN)),
            ),
        ),
        # Die Sichten und das Protokoll lesen: die Betriebsrolle (mit dem Rest) und, mit
        # -v nur_blick=1, eine Rolle nur zur Überwachung.
        Modus("blick", "psql: die Sichten der Stufe und auswahl_laeufe lesen", BLICK),
    )
}
# Was die Betriebsrolle des Rezepts bekommt; die Modi, die extraktionen schreiben,
# nur auf Wunsch: psql-Variable → (Modus, Aufruf).
BETRIEB = ("lauf", "trocken", "stichprobe", "check_db", "blick")
ZUSCHALTBAR = {"einlesen": ("einlesen", "--einlesen"), "extrahieren": ("extrahieren", "--extrahieren")}
# Was die Betriebsrolle je haben kann – alles außer migrieren (das ist Sache des Admins).
# check_db.py --modus alle prüft genau diese.
BETRIEBSARTEN = tuple(name for name in MODI if name != "migrieren")


def modus_des_aufrufs(params: dict) -> str | None:
    """Die Betriebsart eines Aufrufs von auswahl.py (click-Parameter); None im Stapelbetrieb."""
    if params.get("datei"):
        return None
    if params.get("einlesen"):
        return "einlesen"
    if params.get("extrahieren"):
        return "extrahieren"
    if params.get("trocken") and not params.get("haus"):
        return "trocken"
    # --haus liest raw_items.haus und die Sicht auswahl_quellenwache: Rechte des Modus stichprobe
    return "stichprobe" if params.get("stichprobe") else "lauf"


def naechster_schritt(params: dict) -> str | None:
    """Der Satz hinter „Der Rolle … fehlt ein Recht …“: prüfen mit check_db.py, vergeben mit dem Rezept."""
    modus = modus_des_aufrufs(params)
    if modus is None:
        return None
    variable = next((v for v, (m, _) in ZUSCHALTBAR.items() if m == modus), None)
    rezept = "dem Rollenrezept" + (f" und -v {variable}=1" if variable else "")
    return (
        f"Für {modus} prüfen: .venv/bin/python check_db.py --modus {modus} – es nennt jedes fehlende Recht "
        f"und wer es gibt; der Admin der Stufe gibt es mit {rezept} (docs/betrieb.md, Einrichtung, Schritt 4)."
    )


if __name__ == "__main__":
    # Der Aufruf, den der Kopf des Rezepts nennt; erzeugt wird in rezept.py.
    from auswahlstufe.lauf import rezept

    rezept.main(sys.argv[1:])
