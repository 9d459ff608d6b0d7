"""Rechte vergeben wie das Rezept, für Tests: einer Rolle genau die Rechte eines Modus
(``auswahlstufe/lauf/rechte.py``) und die GRANTs, die Ingest dem Admin gibt."""

from __future__ import annotations

import psycopg
from psycopg import sql

from auswahlstufe.lauf.rechte import MODI, SICHTEN, Recht
from auswahlstufe.lauf.vergabe import _GRANT_ART, _gruppen, grant_text, vorhanden


def grants(recht: Recht, rolle: str, datenbank: str) -> list[sql.Composed]:
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
            anweisungen += grants(recht, rolle, datenbank)
    return anweisungen


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
