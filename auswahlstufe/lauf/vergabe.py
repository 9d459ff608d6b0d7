"""Die Rechte aus ``rechte.py`` in einer Datenbank: was fehlt, die GRANTs, wer sie ausführt.

``luecken`` und ``fehlende`` prüfen die aktuelle Rolle gegen einen Modus (``check_db.py``);
``abhilfe`` nennt zu jeder Lücke die Anweisung und wer sie ausführt (wer was vergibt:
docs/betrieb.md, Einrichtung).
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from auswahlstufe.betrieb import migrationen
from auswahlstufe.lauf.rechte import MODI, SICHTEN, ZUSCHALTBAR, Recht

# art → wie GRANT sie nennt (eine Sicht heißt dort table)
_GRANT_ART = {"schema": "schema", "tabelle": "table", "sicht": "table", "sequenz": "sequence"}

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
# Dasselbe für ein Recht mit ``spalten``: auf die ganze Tabelle oder auf jede der Spalten
# (has_column_privilege zählt beides). Eine Spalte, die es nicht gibt, zählt hier nicht mit –
# fehlende Spalten von raw_items nennt check_db.py für sich.
SQL_PRUEFUNG_SPALTEN = """
select has_table_privilege(%(objekt)s, %(recht)s)
       or coalesce(bool_and(has_column_privilege(a.attrelid, a.attnum, %(recht)s)), false)
from pg_attribute a
where a.attrelid = to_regclass(%(objekt)s) and a.attname = any(%(spalten)s) and not a.attisdropped
"""
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


def _hat(
    conn: psycopg.Connection,
    art: str,
    objekt: str,
    recht: str,
    rolle: str | None = None,
    spalten: tuple[str, ...] = (),
) -> bool:
    """Hat die aktuelle Rolle (bzw. ``rolle``) das Recht? Mit ``spalten`` genügt es auf jede davon."""
    if rolle is not None:
        werte = {"rolle": rolle, "objekt": objekt, "recht": recht}
        return conn.execute(SQL_PRUEFUNG_FUER[art], werte).fetchone()[0]
    if spalten:
        werte = {"objekt": objekt, "recht": recht, "spalten": list(spalten)}
        return conn.execute(SQL_PRUEFUNG_SPALTEN, werte).fetchone()[0]
    return conn.execute(SQL_PRUEFUNG[art], {"objekt": objekt, "recht": recht}).fetchone()[0]


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
        ohne = tuple(
            r
            for r in recht.rechte
            if not _hat(conn, recht.art, recht.objekt, _geprueft(recht, r), spalten=recht.spalten)
        )
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


# --- Wer gibt was: Ingest dem Admin, der Admin der Betriebsrolle -----------------------------


def rezeptaufruf(admin: str, datenbank: str, rolle: str, variablen: tuple[str, ...] = ()) -> str:
    """Der psql-Aufruf des Rezepts als Admin, im Klon (wie docs/betrieb.md, Schritt 4)."""
    zusatz = "".join(f" -v {v}=1" for v in variablen)
    return (
        f"psql -X -v ON_ERROR_STOP=1 -U {_shell(admin)} -d {_shell(datenbank)} -v rolle={_shell(rolle)}"
        f"{zusatz} -f rollen/aw-rolle-stufe.sql"
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
                + migrationen.migrieren_aufruf(admin, ich, datenbank)
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
