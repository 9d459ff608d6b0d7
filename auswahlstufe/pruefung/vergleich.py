"""Vergleich zweier Fassungen der Auswahl: wo eine Variante anders wählt.

    .venv/bin/python vergleich.py KANDIDATEN.json --variante k4:0.03
    .venv/bin/python vergleich.py KANDIDATEN.json --variante quelle000 --gegen k4:0.03
    .venv/bin/python vergleich.py --datenbank GRUNDLAGE VARIANTE [--hoechstens N]

Die Items, bei denen Grundlage und Variante verschieden wählen, als Prüfseite mit CSV (wie
``--stichprobe``); mit ``--datenbank`` liest ``vergleich_db.py`` beide aus ``selected_extractor``.
Was Seite und Zählung zeigen: docs/stichprobe.md, „Varianten nebeneinander“.
"""

from __future__ import annotations

import click

from auswahlstufe.befehl import VARIANTE, Aufruffehler, DeutscherBefehl
from auswahlstufe.jsoneingabe import laden
from auswahlstufe.pruefung import pruefseite
from auswahlstufe.pruefung.auslese import fall_aus_artikel
from auswahlstufe.pruefung.stichprobe import Stichprobe, schreiben
from auswahlstufe.regeln import waehle
from version import CODER_VERSION, Variante, variante_lesen

HOECHSTENS = 200  # so viele Fälle zeigt die Seite mit --datenbank höchstens


def version_lesen(text: str) -> str:
    """Eine coder_version (``auswahl-…``) bleibt, wie sie ist; ``voreinstellung`` und die
    Schreibweise einer Variante (``k4:0.03``, ``quelle000``) werden zu ihrer coder_version."""
    text = text.strip()
    if text.startswith("auswahl-"):
        return text
    if text.lower() == "voreinstellung":
        return CODER_VERSION
    return variante_lesen(text).coder_version


def _versionen(ctx, param, werte: tuple[str, str] | None) -> tuple[str, str] | None:
    if not werte:
        return None
    try:
        return version_lesen(werte[0]), version_lesen(werte[1])
    except ValueError as fehler:
        raise click.BadParameter(f"{fehler}; oder eine coder_version wie {CODER_VERSION}") from None


def vergleichen(pfad: str, grundlage: Variante, variante: Variante) -> tuple[int, Stichprobe]:
    """Die Zahl der Items und die Fälle, in denen die Variante anders wählt als die Grundlage."""
    daten, _ = laden(pfad)
    probe = Stichprobe(max(1, len(daten)))  # behält jeden Fall, in Zweifelsordnung
    for index, art in enumerate(daten):
        extraktionen = art.get("extractions")
        a = waehle(extraktionen, **grundlage.argumente())
        b = waehle(extraktionen, **variante.argumente())
        if a.extraktor != b.extraktor:
            probe.beachte(
                fall_aus_artikel(art, index, a, variante=f"{variante.name} wählt {b.extraktor} ({b.regel})")
            )
    return len(daten), probe


@click.command(cls=DeutscherBefehl)
@click.argument("datei", metavar="[KANDIDATEN.json]", required=False)
@click.option(
    "--variante",
    metavar="VARIANTE",
    type=VARIANTE,
    help="Die Variante, z. B. k4:0.03, quelle000 oder k4:0.03+quelle000 (Pflicht).",
)
@click.option(
    "--gegen",
    metavar="VARIANTE",
    type=VARIANTE,
    help="Die Grundlage des Vergleichs (Voreinstellung: die Regeln, wie sie gelten).",
)
@click.option(
    "--datenbank",
    nargs=2,
    metavar="GRUNDLAGE VARIANTE",
    callback=_versionen,
    help="Zwei coder_versionen aus der Datenbank vergleichen (DATABASE_URL); je eine coder_version "
    "oder eine Schreibweise wie voreinstellung, k4:0.03, quelle000.",
)
@click.option(
    "--hoechstens",
    type=click.IntRange(min=1),
    default=HOECHSTENS,
    show_default=True,
    metavar="N",
    help="Mit --datenbank: die N zweifelhaftesten verschieden gewählten Items auf die Seite.",
)
def cli(
    datei: str | None,
    variante: Variante | None,
    gegen: Variante | None,
    datenbank: tuple[str, str] | None,
    hoechstens: int,
) -> None:
    """Schreibt die Items, bei denen eine Variante anders wählt, als Prüfseite in Zweifelsordnung.

    KANDIDATEN.json ist eine Datei im Stapelformat (Artikel mit extractions);
    die Zusammenfassung geht dann nach stderr. Mit --datenbank GRUNDLAGE VARIANTE
    statt der Datei kommen beide Fassungen aus selected_extractor, die Zählung geht
    nach stdout. Seite und CSV landen im aktuellen Verzeichnis.
    """
    if datenbank is not None:
        if datei or variante or gegen:
            raise Aufruffehler("--datenbank steht allein: ohne KANDIDATEN.json, --variante und --gegen.")
        _datenbank(*datenbank, hoechstens)
        return
    if datei is None:
        raise Aufruffehler("KANDIDATEN.json oder --datenbank GRUNDLAGE VARIANTE angeben.")
    if variante is None:
        raise Aufruffehler("--variante fehlt (z. B. --variante k4:0.03).")
    grundlage = gegen or Variante()
    if grundlage == variante:
        raise Aufruffehler(f"--variante und --gegen sind dieselbe Fassung ({variante.coder_version}).")
    gesamt, probe = vergleichen(datei, grundlage, variante)
    anders = len(probe.faelle())
    zaehlung = {"Items": gesamt, f"anders gewählt von {variante.coder_version}": anders}
    pfad = schreiben(
        probe, grundlage.coder_version, zaehlung=zaehlung, art=pruefseite.vergleich(variante.coder_version)
    )
    click.echo(
        f"{gesamt} Items; {variante.coder_version} wählt bei {anders} anders als {grundlage.coder_version}.\n"
        f"Vergleich: {pfad}",
        err=True,
    )


def _datenbank(grundlage: str, variante: str, hoechstens: int) -> None:
    import db
    from auswahlstufe.pruefung import vergleich_db

    if grundlage == variante:
        raise Aufruffehler(f"Beide Seiten von --datenbank sind dieselbe coder_version ({grundlage}).")
    zaehlung, probe = vergleich_db.vergleichen(db.datenbank_url(), grundlage, variante, hoechstens)
    kopf = {
        "Items unter beiden Versionen": zaehlung.beide,
        f"anders gewählt von {variante}": zaehlung.anders,
        f"nur unter {grundlage}": zaehlung.nur_grundlage,
        f"nur unter {variante}": zaehlung.nur_variante,
    }
    pfad = schreiben(probe, grundlage, zaehlung=kopf, art=pruefseite.vergleich(variante))
    gezeigt = len(probe.faelle())
    click.echo(f"Grundlage: {grundlage}\nVariante:  {variante}")
    for name, zahl in kopf.items():
        click.echo(f"{name}: {zahl}")
    click.echo(f"Vergleich: {pfad} ({gezeigt} zweifelhafteste von {zaehlung.anders})")
