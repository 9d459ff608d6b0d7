"""Zwei coder_versionen in der Datenbank vergleichen: wo sie verschieden wählten.

``vergleich.py --datenbank GRUNDLAGE VARIANTE``: die Items, die beide Versionen verschieden
wählten, als ``stichprobe.Fall`` in eine ``stichprobe.Stichprobe`` (docs/stichprobe.md, „Zwei
coder_versionen aus der Datenbank vergleichen“). Die Zeilen kommen über einen Cursor des Servers
in Seiten: der Speicher hält nur die behaltenen Fälle. Geschrieben wird nichts in die Datenbank.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import db
from auswahlstufe.fehler import EingabeFehler
from auswahlstufe.pruefung.auslese import Fall, Stichprobe
from auswahlstufe.regeln import Entscheidung, Kandidat
from version import PRIORITAET

# Wie viele Items unter beiden Versionen stehen, wie viele davon verschieden
# gewählt sind, und wie viele nur unter einer der beiden.
SQL_ZAEHLUNG = """
select count(*) filter (where a.item_id is not null and b.item_id is not null),
       count(*) filter (where a.extraktor <> b.extraktor),
       count(*) filter (where b.item_id is null),
       count(*) filter (where a.item_id is null)
from (select item_id, extraktor from selected_extractor where coder_version = %(grundlage)s) a
full join (select item_id, extraktor from selected_extractor where coder_version = %(variante)s) b
    on b.item_id = a.item_id
"""
# Die verschieden gewählten Items mit Entscheidung der Grundlage, Wahl der
# Variante und den heutigen Texten der bekannten Extraktoren.
SQL_ANDERS = """
select a.item_id, a.extraktor, a.regel, a.konsens, a.metriken, b.extraktor, b.regel,
       r.url, r.titel, t.namen, t.texte
from selected_extractor a
join selected_extractor b on b.item_id = a.item_id and b.coder_version = %(variante)s
join raw_items r on r.id = a.item_id
left join lateral (
    select array_agg(e.extraktor order by e.extraktor) as namen,
           array_agg(e.text order by e.extraktor) as texte
    from extraktionen e
    where e.item_id = a.item_id and e.extraktor = any(%(bekannt)s)
) t on true
where a.coder_version = %(grundlage)s and a.extraktor <> b.extraktor
order by a.item_id
"""
# Welche Versionen es gibt, mit der Zahl ihrer Zeilen (für die Meldung, wenn eine fehlt).
SQL_VERSIONEN = (
    "select coder_version, count(*) from selected_extractor group by coder_version order by coder_version"
)
SEITE = 500  # Zeilen je Abruf vom Cursor des Servers
KODIEREN = ".venv/bin/python auswahl.py --backfill"  # im Klon


@dataclass
class Zaehlung:
    beide: int  # Items mit einer Zeile unter beiden Versionen
    anders: int  # davon verschieden gewählt
    nur_grundlage: int
    nur_variante: int


def entscheidung_aus_zeile(extraktor: str, regel: str, konsens: int, metriken: Mapping) -> Entscheidung:
    """Die gespeicherte Entscheidung (selected_extractor) als ``regeln.Entscheidung``.

    Die Marge ist nicht gespeichert und bleibt leer. Zeilen aus Versionen vor
    auswahl-2 tragen keinen Abstand: ein aktiver anderer Kandidat gilt dann als
    weit weg (Abstand 1), die Entscheidung also als zweifelhaft.
    """
    kandidaten = []
    for name in PRIORITAET:
        m = metriken.get(name) or {}
        aktiv = bool(m.get("aktiv"))
        abstand = m.get("abstand")
        if abstand is None and aktiv:
            abstand = 0.0 if name == extraktor else 1.0
        kandidaten.append(
            Kandidat(
                name,
                m.get("klasse", "nicht_verfuegbar"),
                m.get("shingles", 0),
                aktiv,
                m.get("abdeckung"),
                m.get("stuetzung"),
                m.get("score"),
                abstand,
            )
        )
    return Entscheidung(extraktor, regel, konsens, tuple(kandidaten))


def ohne_zeilen(version: str, versionen: list[tuple[str, int]]) -> str:
    """Der Satz, wenn unter ``version`` nichts steht: welche Versionen es gibt, mit ihren Zeilen."""
    satz = f"Unter coder_version {version} steht keine Zeile in selected_extractor."
    kodieren = f"{KODIEREN} (eine Variante mit --variante, etwa k4:0.03)"
    if not versionen:
        return f"{satz} Die Tabelle ist leer; kodieren: {kodieren}."
    liste = "; ".join(f"{name} ({zeilen} Zeile{'' if zeilen == 1 else 'n'})" for name, zeilen in versionen)
    return f"{satz} Vorhanden {'ist' if len(versionen) == 1 else 'sind'}: {liste}. Kodieren: {kodieren}."


def vergleichen(url: str, grundlage: str, variante: str, hoechstens: int) -> tuple[Zaehlung, Stichprobe]:
    """Die Zählung und die ``hoechstens`` zweifelhaftesten verschieden gewählten Items."""
    params = {"grundlage": grundlage, "variante": variante, "bekannt": list(PRIORITAET)}
    probe = Stichprobe(hoechstens)
    with db.fehler_uebersetzen(url), db.verbinden(url, "vergleich") as conn:
        conn.read_only = True
        zaehlung = Zaehlung(*conn.execute(SQL_ZAEHLUNG, params).fetchone())
        vorhanden = {
            grundlage: zaehlung.beide + zaehlung.nur_grundlage,
            variante: zaehlung.beide + zaehlung.nur_variante,
        }
        for version, zeilen in vorhanden.items():
            if not zeilen:
                raise EingabeFehler(ohne_zeilen(version, conn.execute(SQL_VERSIONEN).fetchall()))
        with conn.cursor(name="vergleich") as cur:
            cur.itersize = SEITE
            cur.execute(SQL_ANDERS, params)
            for item_id, *grundlage_zeile, b_wahl, b_regel, adresse, titel, namen, texte in cur:
                entscheidung = entscheidung_aus_zeile(*grundlage_zeile)
                info = {"variante": f"{variante} wählt {b_wahl} ({b_regel})"}
                info |= {n: w for n, w in (("url", adresse), ("titel", titel)) if isinstance(w, str)}
                texte_je_name = dict(zip(namen or [], texte or [], strict=True))
                probe.beachte(Fall(str(item_id), entscheidung, texte_je_name, info))
        conn.rollback()
    return zaehlung, probe
