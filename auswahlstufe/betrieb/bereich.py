"""Welche Items ein Lauf nimmt: alle, ein Slot (Europe/Berlin), ein Teil ``K/N``, ein Haus ab einem Slot.

``Bereich`` ist die eine Stelle für die Bedingung über ``raw_items r``, die Auswahl und
Extraktion gleich lesen; ``slot_parsen`` und ``teil_parsen`` prüfen die Angaben der
Kommandozeile, bevor eine Verbindung entsteht.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from psycopg import sql

from auswahlstufe.anzeige import BERLIN
from auswahlstufe.fehler import EingabeFehler

# Die Bedingungen der Betriebsarten über raw_items r; werden mit " and " verbunden.
BEDINGUNG_ALLE = sql.SQL("true")
BEDINGUNG_SLOT = sql.SQL("r.slot = %(slot)s")
# mod() ist bei negativen ids negativ; so landet jede id in genau einem Teil.
BEDINGUNG_TEIL = sql.SQL("mod(mod(r.id, %(n)s) + %(n)s, %(n)s) = %(k)s")
BEDINGUNG_HAUS = sql.SQL("r.haus = %(haus)s")
BEDINGUNG_SEIT = sql.SQL("r.slot >= %(seit)s")


@dataclass(frozen=True)
class Bereich:
    """Alles (alle Felder None), ein Slot, ein Teil ``(K, N)``, ein Haus, ab einem Slot – oder
    mehreres davon (``haus`` und ``seit`` nur für einen Blick: --trocken --stichprobe)."""

    slot: datetime | None = None
    teil: tuple[int, int] | None = None
    haus: str | None = None
    seit: datetime | None = None

    def bedingung(self) -> sql.Composable:
        teile: list[sql.Composable] = [BEDINGUNG_ALLE]
        if self.slot is not None:
            teile.append(BEDINGUNG_SLOT)
        if self.teil is not None:
            teile.append(BEDINGUNG_TEIL)
        if self.haus is not None:
            teile.append(BEDINGUNG_HAUS)
        if self.seit is not None:
            teile.append(BEDINGUNG_SEIT)
        return sql.SQL(" and ").join(teile)

    def parameter(self) -> dict[str, object]:
        params: dict[str, object] = {}
        if self.slot is not None:
            params["slot"] = self.slot
        if self.teil is not None:
            params["k"], params["n"] = self.teil[0] - 1, self.teil[1]
        if self.haus is not None:
            params["haus"] = self.haus
        if self.seit is not None:
            params["seit"] = self.seit
        return params


def slot_parsen(text: str, option: str = "--slot") -> datetime:
    """``2026-09-07T08:00`` (Europe/Berlin) oder mit Offset ``…+02:00``/``…Z``; ein Tag ohne
    Uhrzeit ist ein Eingabefehler (kein stilles Mitternacht), ebenso eine Ortszeit, die es an der
    Zeitumstellung nicht oder zweimal gibt (docs/betrieb-lauf.md, „Slot in Ortszeit an der
    Zeitumstellung“).
    """
    try:
        zeitpunkt = datetime.fromisoformat(text.strip())
    except ValueError:
        raise EingabeFehler(
            f"{option} „{text}“ ist kein Zeitpunkt; erwartet z. B. 2026-09-07T08:00 "
            "(Europe/Berlin) oder 2026-09-07T08:00+02:00."
        ) from None
    try:  # nur ein Tag (2026-09-07, 20260907, 2026-W36-1) wäre sonst still Mitternacht
        date.fromisoformat(text.strip())
    except ValueError:
        pass
    else:
        raise EingabeFehler(
            f"{option} „{text}“ nennt keine Uhrzeit – ein Slot ist ein Zeitpunkt; erwartet z. B. "
            "2026-09-07T08:00 (Europe/Berlin) oder 2026-09-07T08:00+02:00."
        )
    if zeitpunkt.tzinfo is not None:
        return zeitpunkt
    erste = zeitpunkt.replace(tzinfo=BERLIN, fold=0)
    zweite = zeitpunkt.replace(tzinfo=BERLIN, fold=1)
    if erste.utcoffset() == zweite.utcoffset():
        return erste
    ohne = f"{zeitpunkt:%Y-%m-%dT%H:%M}"
    # In der Lücke führt der Weg über UTC zu einer anderen Wanduhrzeit zurück.
    if erste.astimezone(UTC).astimezone(BERLIN).replace(tzinfo=None) != zeitpunkt:
        danach = erste.astimezone(UTC).astimezone(BERLIN)
        davor = (erste.astimezone(UTC) - timedelta(hours=1)).astimezone(BERLIN)
        raise EingabeFehler(
            f"{option} „{text}“ gibt es in Europe/Berlin nicht (Beginn der Sommerzeit: die Uhr springt "
            f"von 02:00 auf 03:00). Gemeint ist eine Stunde davor oder danach, mit Offset eindeutig: "
            f"{davor:%Y-%m-%dT%H:%M}{_offset(davor)} oder {danach:%Y-%m-%dT%H:%M}{_offset(danach)}."
        )
    raise EingabeFehler(
        f"{option} „{text}“ gibt es in Europe/Berlin zweimal (Ende der Sommerzeit). Bitte mit Offset "
        f"angeben: {ohne}{_offset(erste)} (Sommerzeit, das erste Mal) oder {ohne}{_offset(zweite)} "
        "(Winterzeit, das zweite Mal)."
    )


def _offset(zeitpunkt: datetime) -> str:
    """``+02:00`` (strftime kann ``%:z`` erst ab Python 3.12)."""
    minuten = int(zeitpunkt.utcoffset().total_seconds()) // 60
    return f"{'+' if minuten >= 0 else '-'}{abs(minuten) // 60:02d}:{abs(minuten) % 60:02d}"


def teil_parsen(text: str) -> tuple[int, int]:
    """``K/N`` mit 1 ≤ K ≤ N."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise EingabeFehler(f"--teil „{text}“: erwartet K/N, z. B. 1/4.") from None
    if not 1 <= k <= n:
        raise EingabeFehler(f"--teil „{text}“: K muss zwischen 1 und N liegen.")
    return k, n
