"""Was ``--einlesen`` am Ende sagt: Warnungen und Hinweise auf stderr, die Bilanz auf stdout."""

from __future__ import annotations

import click

from auswahlstufe.anzeige import hinweis, zahl
from auswahlstufe.einlesen.zeilen import Einlesebilanz
from version import PRIORITAET


def _aufzaehlen(werte: list, hoechstens: int = 20) -> str:
    mehr = f" und {len(werte) - hoechstens} weitere" if len(werte) > hoechstens else ""
    return ", ".join(map(str, werte[:hoechstens])) + mehr


def datei_berichten(bilanz: Einlesebilanz, name: str, sekunden: float) -> None:
    """Nach ``--einlesen DATEI.json``: Kandidaten und, wenn die Datei welche trug, Seiten."""
    if bilanz.unbekannte_items:
        click.echo(
            f"Warnung: {len(bilanz.unbekannte_items)} item_id(s) aus {name} gibt es nicht in raw_items "
            f"und wurden übergangen: {_aufzaehlen(bilanz.unbekannte_items)}.",
            err=True,
        )
    if bilanz.ersetzt:
        click.echo(
            f"Hinweis: {bilanz.ersetzt} Werte enthielten NUL-Zeichen oder einzelne Surrogate, die "
            f"PostgreSQL nicht speichert; sie wurden durch U+FFFD ersetzt.",
            err=True,
        )
    if bilanz.doppelt:
        click.echo(
            f"Warnung: {bilanz.doppelt} Kandidaten standen doppelt in {name}; der letzte gilt.", err=True
        )
    fremde = sorted(n for n in bilanz.namen if n not in PRIORITAET)
    if fremde:
        click.echo(
            "Hinweis: unbekannte Extraktornamen werden eingelesen, von der Auswahl aber übergangen: "
            + ", ".join(f"„{n}“{hinweis(n)}" for n in fremde),
            err=True,
        )
    unveraendert = bilanz.zeilen - bilanz.neu - bilanz.geaendert
    click.echo(
        f"eingelesen: {bilanz.artikel} Artikel, {bilanz.zeilen} Kandidaten – neu {bilanz.neu}, "
        f"geändert {bilanz.geaendert}, unverändert {unveraendert}, entfernt {bilanz.entfernt}, "
        f"unbekannte Items {len(bilanz.unbekannte_items)} in {zahl(sekunden, 1)} s"
    )
    if bilanz.seiten:
        _seiten_berichten(bilanz)


def ordner_berichten(bilanz: Einlesebilanz, ordner: str, sekunden: float) -> None:
    """Nach ``--einlesen ORDNER``: Dateien, die zu keinem Item gehören, und die Seiten."""
    if bilanz.unbekannte_dateien:
        click.echo(
            f"Warnung: {len(bilanz.unbekannte_dateien)} Seite(n) aus {ordner} gehören zu keinem Item in "
            f"raw_items und wurden übergangen: {_aufzaehlen(bilanz.unbekannte_dateien)}.",
            err=True,
        )
    click.echo(
        f"eingelesen: {bilanz.artikel} Dateien aus {ordner}, ohne Item {len(bilanz.unbekannte_dateien)} "
        f"in {zahl(sekunden, 1)} s"
    )
    _seiten_berichten(bilanz)


def _seiten_berichten(bilanz: Einlesebilanz) -> None:
    unveraendert = bilanz.seiten_geschrieben - bilanz.seiten_neu - bilanz.seiten_geaendert
    click.echo(
        f"Seiten: {bilanz.seiten_geschrieben} – neu {bilanz.seiten_neu}, geändert "
        f"{bilanz.seiten_geaendert}, unverändert {unveraendert}"
    )
