"""Welche Rechte jede Betriebsart braucht – die eine Stelle dafür.

Hieraus folgen: die Prüfung in ``check_db.py`` (je ``--modus``), das
Rollenrezept ``rollen/aw-rolle-stufe.sql`` (``python -m auswahlstufe.lauf.rechte
--rezept`` erzeugt es; ein Test vergleicht die Datei damit) und die Tabelle in
``docs/betrieb.md`` (``python -m auswahlstufe.lauf.rechte --tabelle``; ebenso
verglichen). Ein Test gibt einer frischen Rolle je Modus genau diese Rechte und
fährt den Modus (``tests/test_zuverlaessigkeit_rechte.py``).

Eine neue Tabelle einer Migration (etwa ``auswahl_laeufe`` aus aw-004) bekommt
hier einen Eintrag; ``wenn_vorhanden`` heißt: nur prüfen und vergeben, wenn es
das Objekt in der Datenbank schon gibt – so gilt die Liste auch vor der Migration.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import psycopg
from psycopg import sql


@dataclass(frozen=True)
class Recht:
    """Rechte auf ein Objekt. ``art``: datenbank, schema, tabelle, sequenz oder eigentuemer."""

    art: str
    objekt: str
    rechte: tuple[str, ...] = ()
    wozu: str = ""
    wenn_vorhanden: bool = False

    def text(self) -> str:
        if self.art == "datenbank":
            return f"{', '.join(self.rechte)} auf die Datenbank"
        if self.art == "eigentuemer":
            return f"Eigentümer von {self.objekt}"
        art = {"schema": "Schema", "tabelle": "Tabelle", "sequenz": "Sequenz"}[self.art]
        return f"{', '.join(self.rechte)} auf {art} {self.objekt}"


@dataclass(frozen=True)
class Modus:
    name: str
    aufruf: str
    rechte: tuple[Recht, ...]


VERBINDEN = Recht("datenbank", "", ("CONNECT",))
SCHEMA = Recht("schema", "public", ("USAGE",))
# Jeder Modus prüft vor dem Start, ob alle Migrationen angewandt sind.
BUCH = Recht("tabelle", "schema_migrationen", ("SELECT",), "Stand der Migrationen")
ITEMS = Recht("tabelle", "raw_items", ("SELECT",))
KANDIDATEN = Recht("tabelle", "extraktionen", ("SELECT",))
TEMP = Recht("datenbank", "", ("TEMPORARY",), "jeder Stapel geht per COPY durch eine temporäre Tabelle")
KODIERUNG_SCHREIBEN = Recht("tabelle", "selected_extractor", ("SELECT", "INSERT", "UPDATE", "DELETE"))
KODIERUNG_LESEN = Recht("tabelle", "selected_extractor", ("SELECT",))
# Protokoll der Läufe (Migration aw-004). Seine id ist eine Identitätsspalte –
# kein Recht auf die Sequenz nötig (tests/test_stufe_betrieb.py prüft es).
PROTOKOLL = (Recht("tabelle", "auswahl_laeufe", ("SELECT", "INSERT", "UPDATE"), "Protokoll der Läufe"),)

GRUND = (VERBINDEN, SCHEMA, BUCH)
LAUF = (*GRUND, ITEMS, KANDIDATEN, KODIERUNG_SCHREIBEN, TEMP, *PROTOKOLL)

MODI: dict[str, Modus] = {
    m.name: m
    for m in (
        Modus("lauf", "auswahl.py --backfill, --slot … oder --nachholen [--teil K/N]", LAUF),
        Modus(
            "trocken",
            "auswahl.py --backfill, --slot … oder --nachholen --trocken [--stichprobe N]",
            (
                *GRUND,
                ITEMS,
                KANDIDATEN,
                KODIERUNG_LESEN,
            ),
        ),
        # ohne --trocken rechnet --stichprobe alles neu und schreibt wie ein Lauf
        Modus("stichprobe", "auswahl.py --backfill oder --slot … --stichprobe N", LAUF),
        Modus(
            "einlesen",
            "auswahl.py --einlesen DATEI.json",
            (
                *GRUND,
                ITEMS,
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
                Recht(
                    "datenbank", "", ("TEMPORARY",), "die Datei geht per COPY durch eine temporäre Tabelle"
                ),
            ),
        ),
        # extraktion.stufe: liest seiten (mit raw_items verbunden) und die gespeicherten
        # Kandidaten, schreibt extraktionen per insert … on conflict do update – löscht nie –
        # und wählt danach im selben Lauf wie ein Lauf (mit --trocken: nur lesend).
        Modus(
            "extrahieren",
            "auswahl.py --extrahieren --backfill, --slot … oder --nachholen [--teil K/N]",
            (
                *GRUND,
                ITEMS,
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
            ),
        ),
        Modus(
            "check_db",
            "check_db.py",
            (
                *GRUND,
                ITEMS,
                KANDIDATEN,
                KODIERUNG_LESEN,
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
                    "Fremdschlüssel auf raw_items; die Sicht liest raw_items mit den Rechten ihres Eigentümers",
                ),
                Recht(
                    "tabelle",
                    "schema_migrationen",
                    ("SELECT", "INSERT"),
                    "das Buch teilen sich die Module; fehlt es, legt aw-001 es an",
                    True,
                ),
                Recht("eigentuemer", "extraktionen", wenn_vorhanden=True),
                Recht("eigentuemer", "selected_extractor", wenn_vorhanden=True),
                Recht("eigentuemer", "auswahl_uebersicht", wenn_vorhanden=True),
                Recht("eigentuemer", "auswahl_laeufe", wenn_vorhanden=True),
                Recht("eigentuemer", "auswahl_letzter_slot", wenn_vorhanden=True),
                Recht("eigentuemer", "auswahl_slots_ohne_lauf", wenn_vorhanden=True),
                Recht("eigentuemer", "seiten", wenn_vorhanden=True),
                Recht("eigentuemer", "auswahl_offene_laeufe", wenn_vorhanden=True),
            ),
        ),
    )
}
# Was die Betriebsrolle des Rezepts bekommt; die Modi, die extraktionen schreiben,
# nur auf Wunsch: psql-Variable → (Modus, Aufruf).
BETRIEB = ("lauf", "trocken", "stichprobe", "check_db")
ZUSCHALTBAR = {"einlesen": ("einlesen", "--einlesen"), "extrahieren": ("extrahieren", "--extrahieren")}

SQL_GIBT_ES = "select to_regclass(%s) is not null"
_PRUEFUNG = {
    "datenbank": "select has_database_privilege(current_database(), %(recht)s)",
    "schema": "select has_schema_privilege(%(objekt)s, %(recht)s)",
    "tabelle": "select has_table_privilege(%(objekt)s, %(recht)s)",
    "sequenz": "select has_sequence_privilege(%(objekt)s, %(recht)s)",
    "eigentuemer": "select pg_has_role(c.relowner, 'USAGE') from pg_class c where c.oid = to_regclass(%(objekt)s)",
}


def vorhanden(conn: psycopg.Connection, recht: Recht) -> bool:
    if recht.art in ("datenbank", "schema"):
        return True
    return conn.execute(SQL_GIBT_ES, (recht.objekt,)).fetchone()[0]


def fehlende(conn: psycopg.Connection, modus: str) -> list[str]:
    """Was der aktuellen Rolle für ``modus`` fehlt, je Eintrag ein Satz.

    Objekte, die es (noch) nicht gibt, übergeht die Prüfung – die fehlen als
    Tabelle oder Migration, und das meldet check_db.py für sich.
    """
    fehlt: list[str] = []
    for recht in MODI[modus].rechte:
        if not vorhanden(conn, recht):
            continue
        anfrage = _PRUEFUNG[recht.art]
        einzeln = recht.rechte or ("",)
        ohne = [
            r
            for r in einzeln
            if not conn.execute(anfrage, {"objekt": recht.objekt, "recht": r}).fetchone()[0]
        ]
        if ohne:
            teil = Recht(recht.art, recht.objekt, tuple(r for r in ohne if r), recht.wozu)
            fehlt.append("Recht " + teil.text() if recht.art != "eigentuemer" else teil.text())
    return fehlt


def vergeben(
    modus: str, rolle: str, datenbank: str, conn: psycopg.Connection | None = None
) -> list[sql.Composed]:
    """GRANT-Anweisungen (und ALTER … OWNER), die ``rolle`` genau die Rechte von ``modus`` geben.

    Mit ``conn`` nur für Objekte, die es dort gibt.
    """
    anweisungen = []
    ziel = sql.Identifier(rolle)
    for recht in MODI[modus].rechte:
        if conn is not None and not vorhanden(conn, recht):
            continue
        rechte = sql.SQL(", ").join(map(sql.SQL, recht.rechte))
        if recht.art == "datenbank":
            vorlage = "grant {} on database {} to {}"
            anweisungen.append(sql.SQL(vorlage).format(rechte, sql.Identifier(datenbank), ziel))
        elif recht.art == "eigentuemer":
            anweisungen.append(
                sql.SQL("alter table {} owner to {}").format(sql.Identifier(recht.objekt), ziel)
            )
        else:
            art = {"schema": "schema", "tabelle": "table", "sequenz": "sequence"}[recht.art]
            anweisungen.append(
                sql.SQL("grant {} on {} {} to {}").format(
                    rechte, sql.SQL(art), sql.Identifier(recht.objekt), ziel
                )
            )
    return anweisungen


# --- Rollenrezept und Tabelle für die Doku ------------------------------------------------

REZEPT_KOPF = """\
-- Rolle mit geringsten Rechten für den Betrieb der Stufe (wurzelwerk-auswahl).
--
-- ERZEUGT aus auswahlstufe/lauf/rechte.py, im Klon mit
--   .venv/bin/python -m auswahlstufe.lauf.rechte --rezept > rollen/aw-rolle-stufe.sql
-- nicht von Hand ändern – ein Test vergleicht die Datei mit rechte.py.
--
-- Die Rolle bekommt, was die Modi {betrieb} brauchen (Tabelle in
-- docs/betrieb.md): raw_items und extraktionen lesen, selected_extractor lesen
-- und schreiben, schema_migrationen lesen, CONNECT und TEMPORARY auf der
-- Datenbank, USAGE auf dem Schema, das Protokoll der Läufe (auswahl_laeufe)
-- lesen und schreiben – sonst nichts. Mit -v einlesen=1 zusätzlich, was
-- --einlesen braucht (extraktionen einfügen, ändern, löschen; seiten lesen,
-- einfügen, ändern); mit
-- -v extrahieren=1, was --extrahieren --backfill/--slot/--nachholen braucht (seiten lesen,
-- extraktionen einfügen und ändern). Die Advisory-Locks eines Laufs brauchen
-- kein Recht. Migrieren darf die Rolle nicht.
--
-- Ausführen als Eigentümer der Tabellen (der Rolle, die die Migrationen
-- angewandt hat) oder als Superuser, in der Datenbank der Stufe:
--
--   psql "$ADMIN_URL" -X -v ON_ERROR_STOP=1 \\
--        -v rolle=aw_stufe -v passwort="$(cat ~/.aw_stufe_passwort)" \\
--        -f rollen/aw-rolle-stufe.sql
--
-- Mehrfach ausführbar: gibt es die Rolle schon, bekommt sie nur das Passwort
-- und die Rechte neu. Das Passwort geht als scram-sha-256-Hash zum Server
-- (password_encryption), steht aber als psql-Variable in der Kommandozeile –
-- wer das nicht will, lässt -v passwort weg und setzt es danach mit \\password.
-- Ohne CREATEROLE/Superuser scheitert das Anlegen der Rolle: dann legt ein
-- Admin sie an, und das Skript vergibt nur noch die Rechte.

\\if :{{?rolle}}
\\else
    -- ein Fehler statt \\quit: mit ON_ERROR_STOP endet psql dann mit Exit 3
    do $$ begin raise exception 'Rollenname fehlt: psql … -v rolle=aw_stufe -f rollen/aw-rolle-stufe.sql'; end $$;
\\endif

begin;

-- Die Rolle: anmelden ja, sonst keine Sonderrechte; erbt nichts von Gruppen.
select format('create role %I login', :'rolle')
where not exists (select 1 from pg_roles where rolname = :'rolle') \\gexec
alter role :"rolle" login nosuperuser nocreatedb nocreaterole noinherit noreplication nobypassrls;
\\if :{{?passwort}}
alter role :"rolle" password :'passwort';
\\endif

select current_database() as datenbank \\gset
"""


def _vereinigt(modi: tuple[str, ...]) -> list[Recht]:
    """Die Rechte mehrerer Modi, je Objekt zusammengefasst, in der Reihenfolge des ersten Auftretens."""
    je_objekt: dict[tuple[str, str, bool], list[str]] = {}
    for name in modi:
        for recht in MODI[name].rechte:
            liste = je_objekt.setdefault((recht.art, recht.objekt, recht.wenn_vorhanden), [])
            liste += [r for r in recht.rechte if r not in liste]
    return [Recht(art, objekt, tuple(rechte), "", wenn) for (art, objekt, wenn), rechte in je_objekt.items()]


def _psql_grant(recht: Recht) -> str:
    rechte = ", ".join(r.lower() for r in recht.rechte)
    if recht.art == "datenbank":
        return f'grant {rechte} on database :"datenbank" to :"rolle";'
    art = {"schema": "schema", "tabelle": "table", "sequenz": "sequence"}[recht.art]
    if recht.wenn_vorhanden:
        return (
            f"select format('grant {rechte} on {art} %I to %I', '{recht.objekt}', :'rolle')\n"
            f"where to_regclass('{recht.objekt}') is not null \\gexec"
        )
    return f'grant {rechte} on {art} {recht.objekt} to :"rolle";'


def rezept() -> str:
    """Der Text von rollen/aw-rolle-stufe.sql."""
    teile = [REZEPT_KOPF.format(betrieb=", ".join(BETRIEB))]
    teile.append("-- Betrieb: " + ", ".join(BETRIEB))
    teile += [_psql_grant(r) for r in _vereinigt(BETRIEB)]
    schon = {(r.art, r.objekt, x) for r in _vereinigt(BETRIEB) for x in r.rechte}
    for variable, (modus, aufruf) in ZUSCHALTBAR.items():
        teile.append(f"\n-- Zusätzlich für {aufruf} (nur mit -v {variable}=1)")
        teile.append(f"\\if :{{?{variable}}}")
        for recht in _vereinigt((modus,)):
            dazu = tuple(x for x in recht.rechte if (recht.art, recht.objekt, x) not in schon)
            if dazu:
                teile.append(_psql_grant(Recht(recht.art, recht.objekt, dazu, "", recht.wenn_vorhanden)))
        teile.append("\\endif")
    teile.append("\ncommit;\n")
    return "\n".join(teile)


def tabelle() -> str:
    """Markdown-Tabelle: je Modus der Aufruf und die Rechte."""
    zeilen = ["| Modus | Aufruf | braucht |", "|---|---|---|"]
    for modus in MODI.values():
        rechte = "; ".join(
            ("Recht " if r.art != "eigentuemer" else "")
            + r.text()
            + (" (falls vorhanden)" if r.wenn_vorhanden else "")
            for r in modus.rechte
        )
        zeilen.append(f"| {modus.name} | `{modus.aufruf}` | {rechte} |")
    return "\n".join(zeilen) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--rezept"]:
        sys.stdout.write(rezept())
    elif sys.argv[1:] == ["--tabelle"]:
        sys.stdout.write(tabelle())
    else:
        sys.exit("Aufruf: python -m auswahlstufe.lauf.rechte --rezept | --tabelle")
