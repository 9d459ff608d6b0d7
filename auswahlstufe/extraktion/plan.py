"""Wie groß eine Extraktion ist und wie lange sie dauern wird – bevor sie beginnt.

Eine neue Fassung eines Extraktors (ein Update von trafilatura, newspaper4k oder readability)
macht jede gespeicherte Seite veraltet; die nächste Extraktion über den Bestand ist geplante
Arbeit, keine Überraschung. ``erstellen`` zählt, was ein Lauf über den Bereich täte: Seiten, an
die ein Extraktor muss (je Extraktor), und Seiten, die nur nachzuprüfen sind (die Fassung der
Seitenart, ohne Extraktor). Die Dauer schätzt es aus den letzten erfolgreichen Läufen dieses
Hauses mit Extraktion (Seiten je Sekunde und Prozess); ohne solche Läufe bleibt sie offen.

Gezeigt wird der Plan von ``check_db.py`` und am Anfang eines Laufs, der mindestens ``ANSAGEN_AB``
Seiten extrahiert; wie weit er ist, zeigt danach die Sicht ``auswahl_fortschritt`` (aw-011).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from auswahlstufe.anzeige import zahl
from auswahlstufe.fortschritt import dauer_text

# Ab so vielen Seiten sagt ein Lauf seinen Plan an (ein Tick mit einem Slot schweigt).
ANSAGEN_AB = 1000
# Läufe mit weniger extrahierten Seiten sagen wenig über die Rate (Start der Worker überwiegt).
RATE_AB_SEITEN = 20

# Je Extraktor: an wie vielen Seiten er arbeiten muss; dazu die Seiten, die nur nachzuprüfen sind.
SQL_PLAN = """
select (select count(*) from v where namen is not null) as zu_extrahieren,
       (select count(*) from v where namen is null) as nachzupruefen,
       (select coalesce(jsonb_object_agg(n, z), '{}') from (
            select n, count(*) as z from v cross join lateral unnest(v.namen) as n group by n
       ) je) as je_extraktor
from (select 1) eins
"""
# Seiten je Sekunde und Prozess in den letzten erfolgreichen Läufen mit Extraktion (ganzer Lauf).
SQL_RATE = """
select sum((l.extraktion ->> 'extrahiert')::float8)
       / nullif(sum(extract(epoch from l.beendet_am - l.begonnen_am) * coalesce(l.prozesse, 1)), 0)
from (
    select * from auswahl_laeufe
    where exit_code = 0 and (extraktion ->> 'extrahiert')::bigint >= %(ab)s
    order by id desc limit 20
) l
"""


@dataclass(frozen=True)
class Plan:
    zu_extrahieren: int
    nachzupruefen: int
    je_extraktor: dict[str, int] = field(default_factory=dict)
    je_prozess_s: float | None = None  # Seiten je Sekunde und Prozess, aus früheren Läufen

    def sekunden(self, prozesse: int) -> float | None:
        if not self.zu_extrahieren:
            return 0.0
        if not self.je_prozess_s:
            return None
        return self.zu_extrahieren / (self.je_prozess_s * prozesse)

    def satz(self, prozesse: int) -> str:
        """„12000 Seiten zu extrahieren (newspaper4k 12000), 30 nur nachzuprüfen …; geschätzt …“"""
        je = ", ".join(f"{n} {z}" for n, z in sorted(self.je_extraktor.items()))
        teile = [f"{self.zu_extrahieren} Seiten zu extrahieren" + (f" ({je})" if je else "")]
        if self.nachzupruefen:
            teile.append(f"{self.nachzupruefen} nur nachzuprüfen (Seitenart, ohne Extraktor)")
        text = ", ".join(teile)
        if not self.zu_extrahieren:
            return text
        sekunden = self.sekunden(prozesse)
        if sekunden is None:
            return f"{text}; die Dauer ist offen (noch kein Lauf dieses Hauses mit Extraktion zum Messen)"
        return (
            f"{text}; geschätzt {dauer_text(sekunden)} mit {prozesse} Prozessen "
            f"({zahl(self.je_prozess_s)} Seiten/s je Prozess in den letzten Läufen)"
        )


def erstellen(conn: psycopg.Connection, veraltet: sql.Composable, params: dict) -> Plan:
    """Der Plan für die Seiten, die ``veraltet`` (``stufe.SQL_VERALTET`` über einen Bereich, ohne
    Seitengrenze) liefert."""
    anfrage = sql.SQL("with v as ({veraltet}) ").format(veraltet=veraltet) + sql.SQL(SQL_PLAN)
    zu_extrahieren, nachzupruefen, je_extraktor = conn.execute(anfrage, params).fetchone()
    try:
        with conn.transaction():
            rate = conn.execute(SQL_RATE, {"ab": RATE_AB_SEITEN}).fetchone()[0]
    except psycopg.errors.InsufficientPrivilege:  # eine Rolle ohne Recht auf das Protokoll
        rate = None
    return Plan(zu_extrahieren, nachzupruefen, dict(je_extraktor), rate)
