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
Eine neue oder umbenannte Sicht gehört in ``SICHTEN`` (lesen darf sie dann die
Betriebsrolle und die Rolle ``nur_blick`` des Rezepts; Eigentümer ist der Admin).

Wer was vergibt (docs/betrieb.md, Einrichtung): Ingest gibt dem Admin der Stufe
``ingest_gibt`` (Rechte auf raw_items, SELECT mit Weitergabe); der Admin migriert
und gibt der Betriebsrolle mit dem Rezept den Rest. ``abhilfe`` nennt zu jeder
Lücke die Anweisung und wer sie ausführt.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import psycopg
from psycopg import sql


@dataclass(frozen=True)
class Recht:
    """Rechte auf ein Objekt. ``art``: datenbank, schema, tabelle, sicht, sequenz oder eigentuemer.

    ``weitergeben``: diese der ``rechte`` mit WITH GRANT OPTION – der Admin gibt SELECT auf
    raw_items (von Ingest) an die Betriebsrolle weiter.
    """

    art: str
    objekt: str
    rechte: tuple[str, ...] = ()
    wozu: str = ""
    wenn_vorhanden: bool = False
    weitergeben: tuple[str, ...] = ()

    def text(self) -> str:
        if self.art == "datenbank":
            return f"{', '.join(self.rechte)} auf die Datenbank"
        if self.art == "eigentuemer":
            return f"Eigentümer von {self.objekt}"
        rechte = ", ".join(f"{r} (mit Weitergabe)" if r in self.weitergeben else r for r in self.rechte)
        return f"{rechte} auf {ARTEN[self.art]} {self.objekt}"


# art → wie der Text sie nennt
ARTEN = {"schema": "Schema", "tabelle": "Tabelle", "sicht": "Sicht", "sequenz": "Sequenz"}
# art → wie GRANT sie nennt (eine Sicht heißt dort table)
_GRANT_ART = {"schema": "schema", "tabelle": "table", "sicht": "table", "sequenz": "sequence"}


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

# Die Sichten der Stufe (aw-003, aw-004): was ein Betreiber am nächsten Morgen liest.
# Eine Sicht liest ihre Tabellen mit den Rechten ihres Eigentümers (des Admins) –
# SELECT auf die Sicht genügt. Eine neue Sicht einer Migration kommt hier dazu.
SICHTEN = ("auswahl_uebersicht", "auswahl_letzter_slot", "auswahl_slots_ohne_lauf", "auswahl_offene_laeufe")
# Die Tabellen, die die Migrationen der Stufe anlegen (Eigentümer: der Admin).
TABELLEN = ("extraktionen", "selected_extractor", "auswahl_laeufe", "seiten")
BLICK = (
    VERBINDEN,
    SCHEMA,
    *(Recht("sicht", name, ("SELECT",)) for name in SICHTEN),
    Recht("tabelle", "auswahl_laeufe", ("SELECT",), "die letzten Läufe (docs/betrieb.md, Abfragen)"),
)

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
            "auswahl.py --einlesen DATEI.json|ORDNER",
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
                # die Stücke gehen als Arrays in einer Anweisung hinein, ohne temporäre Tabelle
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

SQL_GIBT_ES = "select to_regclass(%s) is not null"
# Hat die aktuelle Rolle (bzw. %(rolle)s) das Recht? Mit „… WITH GRANT OPTION“ im Recht: darf sie es weitergeben?
SQL_PRUEFUNG = {
    "datenbank": "select has_database_privilege(current_database(), %(recht)s)",
    "schema": "select has_schema_privilege(%(objekt)s, %(recht)s)",
    "tabelle": "select has_table_privilege(%(objekt)s, %(recht)s)",
    "sicht": "select has_table_privilege(%(objekt)s, %(recht)s)",
    "sequenz": "select has_sequence_privilege(%(objekt)s, %(recht)s)",
    "eigentuemer": "select pg_has_role(c.relowner, 'USAGE') from pg_class c where c.oid = to_regclass(%(objekt)s)",
}
SQL_PRUEFUNG_FUER = {
    "datenbank": "select has_database_privilege(%(rolle)s, current_database(), %(recht)s)",
    "schema": "select has_schema_privilege(%(rolle)s, %(objekt)s, %(recht)s)",
    "tabelle": "select has_table_privilege(%(rolle)s, %(objekt)s, %(recht)s)",
    "sicht": "select has_table_privilege(%(rolle)s, %(objekt)s, %(recht)s)",
    "sequenz": "select has_sequence_privilege(%(rolle)s, %(objekt)s, %(recht)s)",
}
# Wem gehört das Objekt?
SQL_EIGENTUEMER = {
    "datenbank": "select pg_get_userbyid(datdba) from pg_database where datname = current_database()",
    "schema": "select pg_get_userbyid(nspowner) from pg_namespace where nspname = %(objekt)s",
    "relation": "select pg_get_userbyid(relowner) from pg_class where oid = to_regclass(%(objekt)s)",
}
SQL_ICH = "select current_user, current_database()"


def vorhanden(conn: psycopg.Connection, recht: Recht) -> bool:
    if recht.art in ("datenbank", "schema"):
        return True
    return conn.execute(SQL_GIBT_ES, (recht.objekt,)).fetchone()[0]


@dataclass(frozen=True)
class Luecke:
    """Was der aktuellen Rolle für ``modus`` fehlt: ``recht`` enthält nur die fehlenden Rechte."""

    modus: str
    recht: Recht

    def text(self) -> str:
        return ("Recht " if self.recht.art != "eigentuemer" else "") + self.recht.text()


def _hat(conn: psycopg.Connection, art: str, objekt: str, recht: str, rolle: str | None = None) -> bool:
    if rolle is None:
        return conn.execute(SQL_PRUEFUNG[art], {"objekt": objekt, "recht": recht}).fetchone()[0]
    return conn.execute(
        SQL_PRUEFUNG_FUER[art], {"rolle": rolle, "objekt": objekt, "recht": recht}
    ).fetchone()[0]


def _geprueft(recht: Recht, einzeln: str) -> str:
    return f"{einzeln} WITH GRANT OPTION" if einzeln in recht.weitergeben else einzeln


def luecken(conn: psycopg.Connection, modus: str) -> list[Luecke]:
    """Was der aktuellen Rolle für ``modus`` fehlt, je Objekt eine Lücke.

    Objekte, die es (noch) nicht gibt, übergeht die Prüfung – die fehlen als
    Tabelle oder Migration, und das meldet check_db.py für sich.
    """
    gefunden: list[Luecke] = []
    for recht in MODI[modus].rechte:
        if not vorhanden(conn, recht):
            continue
        if recht.art == "eigentuemer":
            if not _hat(conn, "eigentuemer", recht.objekt, ""):
                gefunden.append(Luecke(modus, recht))
            continue
        ohne = tuple(r for r in recht.rechte if not _hat(conn, recht.art, recht.objekt, _geprueft(recht, r)))
        if ohne:
            weiter = tuple(r for r in recht.weitergeben if r in ohne)
            gefunden.append(
                Luecke(modus, Recht(recht.art, recht.objekt, ohne, recht.wozu, weitergeben=weiter))
            )
    return gefunden


def fehlende(conn: psycopg.Connection, modus: str) -> list[str]:
    """Was der aktuellen Rolle für ``modus`` fehlt, je Eintrag ein Satz."""
    return [luecke.text() for luecke in luecken(conn, modus)]


def _gruppen(recht: Recht, *, alle_weitergeben: bool = False) -> list[tuple[tuple[str, ...], bool]]:
    """Die Rechte je GRANT-Anweisung: (Rechte, mit Weitergabe) – die mit Weitergabe für sich."""
    weiter = recht.rechte if alle_weitergeben else tuple(r for r in recht.rechte if r in recht.weitergeben)
    schlicht = tuple(r for r in recht.rechte if r not in weiter)
    return [(gruppe, mit) for gruppe, mit in ((weiter, True), (schlicht, False)) if gruppe]


def _grants(recht: Recht, rolle: str, datenbank: str) -> list[sql.Composed]:
    """GRANT-Anweisungen für ``recht`` an ``rolle`` (zum Ausführen)."""
    if recht.art == "datenbank":
        ziel = sql.SQL("database {}").format(sql.Identifier(datenbank))
    else:
        ziel = sql.SQL("{} {}").format(sql.SQL(_GRANT_ART[recht.art]), sql.Identifier(recht.objekt))
    return [
        sql.SQL("grant {} on {} to {}{}").format(
            sql.SQL(", ").join(sql.SQL(r.lower()) for r in gruppe),
            ziel,
            sql.Identifier(rolle),
            sql.SQL(" with grant option" if mit else ""),
        )
        for gruppe, mit in _gruppen(recht)
    ]


# Schlüsselwörter, die als Rollenname in Anführungszeichen müssen (die übrigen Namen der
# Stufe und des Hauses sind schlichte Bezeichner).
_VORBEHALTEN = {"all", "current_role", "current_user", "default", "group", "none", "role", "table", "user"}


def _name(name: str) -> str:
    """Ein Bezeichner für eine Anweisung zum Abtippen: schlicht, wo das geht."""
    schlicht = name.isascii() and name.replace("_", "a").isalnum() and name[:1].islower()
    if schlicht and name == name.lower() and name not in _VORBEHALTEN:
        return name
    return '"' + name.replace('"', '""') + '"'


def grant_text(recht: Recht, rolle: str, datenbank: str, *, alle_weitergeben: bool = False) -> list[str]:
    """Dieselben GRANT-Anweisungen als Text für Menschen (Doku, check_db.py, das Rezept)."""
    ziel = (
        f"database {_name(datenbank)}"
        if recht.art == "datenbank"
        else f"{_GRANT_ART[recht.art]} {_name(recht.objekt)}"
    )
    return [
        f"grant {', '.join(r.lower() for r in gruppe)} on {ziel} to {_name(rolle)}"
        + (" with grant option" if mit else "")
        + ";"
        for gruppe, mit in _gruppen(recht, alle_weitergeben=alle_weitergeben)
    ]


def vergeben(
    modus: str, rolle: str, datenbank: str, conn: psycopg.Connection | None = None
) -> list[sql.Composed]:
    """GRANT-Anweisungen (und ALTER … OWNER), die ``rolle`` genau die Rechte von ``modus`` geben.

    Mit ``conn`` nur für Objekte, die es dort gibt.
    """
    anweisungen = []
    for recht in MODI[modus].rechte:
        if conn is not None and not vorhanden(conn, recht):
            continue
        if recht.art == "eigentuemer":
            art = "view" if recht.objekt in SICHTEN else "table"
            anweisungen.append(
                sql.SQL("alter {} {} owner to {}").format(
                    sql.SQL(art), sql.Identifier(recht.objekt), sql.Identifier(rolle)
                )
            )
        else:
            anweisungen += _grants(recht, rolle, datenbank)
    return anweisungen


# --- Wer gibt was: Ingest dem Admin, der Admin der Betriebsrolle -----------------------------

# Was Ingest – Eigentümer von raw_items und, als Eigentümer der Datenbank, des Schemas
# public – dem Admin der Stufe gibt: die Rechte des Modus migrieren auf diese beiden.
VON_INGEST = ("public", "raw_items")


def ingest_gibt(admin: str) -> list[str]:
    """Die GRANT-Anweisungen, die Ingest ausführt (docs/betrieb.md, Schritt 2), für ``admin``."""
    return [
        anweisung
        for recht in MODI["migrieren"].rechte
        if recht.objekt in VON_INGEST
        for anweisung in grant_text(recht, admin, "")
    ]


def rezeptaufruf(admin: str, datenbank: str, rolle: str, variablen: tuple[str, ...] = ()) -> str:
    """Der psql-Aufruf des Rezepts als Admin, im Klon (wie docs/betrieb.md, Schritt 4)."""
    zusatz = "".join(f" -v {v}=1" for v in variablen)
    return (
        f"psql -X -v ON_ERROR_STOP=1 -U {_shell(admin)} -d {_shell(datenbank)} -v rolle={_shell(rolle)}"
        f"{zusatz} -f rollen/aw-rolle-stufe.sql"
    )


def modus_des_aufrufs(params: dict) -> str | None:
    """Die Betriebsart eines Aufrufs von auswahl.py (click-Parameter); None im Stapelbetrieb."""
    if params.get("datei"):
        return None
    if params.get("einlesen"):
        return "einlesen"
    if params.get("extrahieren"):
        return "extrahieren"
    if params.get("trocken"):
        return "trocken"
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


def _shell(wort: str) -> str:
    return (
        wort if wort.replace("_", "").isalnum() and wort.isascii() else "'" + wort.replace("'", "'\\''") + "'"
    )


def _eigentuemer(conn: psycopg.Connection, recht: Recht) -> str | None:
    anfrage = SQL_EIGENTUEMER.get(recht.art, SQL_EIGENTUEMER["relation"])
    zeile = conn.execute(anfrage, {"objekt": recht.objekt}).fetchone()
    if (
        zeile and zeile[0] == "pg_database_owner"
    ):  # das Schema public gehört ab 15 dem Eigentümer der Datenbank
        return _eigentuemer(conn, Recht("datenbank", ""))
    return zeile[0] if zeile else None


def abhilfe(conn: psycopg.Connection, gefunden: list[Luecke]) -> list[str]:
    """Zu den Lücken: je Zeile, wer was ausführt – in der Reihenfolge, in der es zu tun ist.

    Was der Rolle selbst fehlt, die migriert (Modus migrieren), gibt der Eigentümer des
    Objekts ihr direkt (raw_items: Ingest). Was der Betriebsrolle fehlt, gibt ihr der Admin
    der Stufe (Eigentümer von selected_extractor) mit dem Rezept; fehlt ihm selbst das
    Recht mit Weitergabe (raw_items), gibt es ihm vorher der Eigentümer.
    """
    ich, datenbank = conn.execute(SQL_ICH).fetchone()
    admin = _eigentuemer(conn, Recht("tabelle", "selected_extractor"))
    zeilen: list[str] = []
    variablen: list[str] = []
    rezept = False
    for luecke in gefunden:
        recht = luecke.recht
        if luecke.modus == "migrieren" and admin is not None and admin != ich:
            # Die Tabellen der Stufe gehören schon einer anderen Rolle: die migriert, nicht diese.
            zeilen.append(
                f"Migrieren ist Sache von {admin} (Eigentümer der Tabellen der Stufe), nicht von {ich}: "
                f"DATABASE_URL='user={admin} dbname={datenbank}' .venv/bin/python check_db.py --migrieren"
            )
            continue
        if recht.art == "eigentuemer":  # gemischte Eigentümer: das kann nur ein Superuser richten
            art = "view" if recht.objekt in SICHTEN else "table"
            zeilen.append(
                f"{recht.objekt} gehört {_eigentuemer(conn, recht)}, die Tabellen der Stufe gehören aber "
                f"einer Rolle – als Superuser: alter {art} {_name(recht.objekt)} owner to {_name(ich)};"
            )
            continue
        eigner = _eigentuemer(conn, recht) or "Eigentümer"
        wer = f"als {eigner} (Eigentümer von {recht.objekt or datenbank})"
        if luecke.modus == "migrieren" or admin is None or admin == ich:
            zeilen += [f"{wer}: {anweisung}" for anweisung in grant_text(recht, ich, datenbank)]
            continue
        if eigner != admin:
            dem_admin = tuple(
                r
                for r in recht.rechte
                if not _hat(conn, recht.art, recht.objekt, f"{r} WITH GRANT OPTION", admin)
            )
            if dem_admin:
                weiter = Recht(recht.art, recht.objekt, dem_admin)
                zeilen += [
                    f"{wer}: {anweisung}"
                    for anweisung in grant_text(weiter, admin, datenbank, alle_weitergeben=True)
                ]
        rezept = True
        variable = next((v for v, (m, _) in ZUSCHALTBAR.items() if m == luecke.modus), None)
        if variable and variable not in variablen:
            variablen.append(variable)
    if rezept:
        zeilen.append(
            f"als {admin} (Eigentümer der Tabellen der Stufe), im Klon: "
            + rezeptaufruf(admin, datenbank, ich, tuple(variablen))
        )
    return list(dict.fromkeys(zeilen))


if __name__ == "__main__":
    # Der Aufruf, den der Kopf des Rezepts nennt; erzeugt wird in rezept.py.
    from auswahlstufe.lauf import rezept

    rezept.main(sys.argv[1:])
