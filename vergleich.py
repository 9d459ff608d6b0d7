"""Vergleich zweier Fassungen der Auswahl: wo eine Variante anders wählt.

Aufruf::

    python vergleich.py KANDIDATEN.json --variante k4:0.03
    python vergleich.py KANDIDATEN.json --variante quelle000 --gegen k4:0.03

Entscheidet jedes Item einer Datei im Stapelformat zweimal – mit der
Grundlage (``--gegen``, Voreinstellung: die Regeln, wie sie gelten) und mit der
Variante (``version.Variante``, dieselbe Schreibweise wie ``bewertung.py
--variante``) – und schreibt die Items, bei denen beide verschieden wählen,
als Prüfseite mit CSV daneben (wie ``--stichprobe``), in derselben
Zweifelsordnung: zweifelhafteste Entscheidung der Grundlage zuerst (Dateien
``vergleich-<coder_version der Grundlage>-<zeit>.csv`` und ``.html``). Grün ist
die Wahl der Grundlage; was die Variante wählt, steht in der Zeile unter dem
Schlüssel (Spalte ``variante`` der CSV). Ein Urteil auf der Seite sagt damit
auch, welche Fassung recht hatte.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import click

from bewertung import json_laden
from fehler import Aufruffehler, DeutscherBefehl, EingabeFehler
from regeln import waehle
from stichprobe import Fall, Stichprobe, schreiben
from version import PRIORITAET, Variante, variante_lesen


def _variante(ctx, param, wert: str | None) -> Variante | None:
    if wert is None:
        return None
    try:
        return variante_lesen(wert)
    except ValueError as fehler:
        raise click.BadParameter(str(fehler)) from None


def _texte(extraktionen: object) -> dict[str, str | None]:
    texte: dict[str, str | None] = {}
    if isinstance(extraktionen, Mapping):
        for name in PRIORITAET:
            eintrag = extraktionen.get(name)
            text = eintrag.get("text") if isinstance(eintrag, Mapping) else None
            texte[name] = text if isinstance(text, str) else None
    return texte


def vergleichen(pfad: str, grundlage: Variante, variante: Variante) -> tuple[int, Stichprobe]:
    """Die Zahl der Items und die Fälle, in denen die Variante anders wählt als die Grundlage."""
    daten = json_laden(pfad)
    if not isinstance(daten, list):
        raise EingabeFehler(f"{pfad}: erwartet ein JSON-Array von Artikeln.")
    anders: list[Fall] = []
    for index, art in enumerate(daten):
        if not isinstance(art, Mapping):
            raise EingabeFehler(f"{pfad}: Artikel {index} ist kein Objekt.")
        extraktionen = art.get("extractions")
        a = waehle(extraktionen, **grundlage.argumente())
        b = waehle(extraktionen, **variante.argumente())
        if a.extraktor != b.extraktor:
            schluessel = next(
                (str(art[n]) for n in ("id", "item_id") if isinstance(art.get(n), str | int)), f"[{index}]"
            )
            info = {"variante": f"{variante.name} wählt {b.extraktor} ({b.regel})"}
            info |= {n: art[n] for n in ("url", "titel") if isinstance(art.get(n), str)}
            anders.append(Fall(schluessel, a, _texte(extraktionen), info))
    probe = Stichprobe(max(1, len(anders)))
    for fall in anders:
        probe.beachte(fall)
    return len(daten), probe


@click.command(cls=DeutscherBefehl, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("datei", metavar="KANDIDATEN.json")
@click.option(
    "--variante",
    metavar="VARIANTE",
    callback=_variante,
    help="Die Variante, z. B. k4:0.03, quelle000 oder k4:0.03+quelle000 (Pflicht).",
)
@click.option(
    "--gegen",
    metavar="VARIANTE",
    callback=_variante,
    help="Die Grundlage des Vergleichs (Voreinstellung: die Regeln, wie sie gelten).",
)
def cli(datei: str, variante: Variante | None, gegen: Variante | None) -> None:
    """Schreibt die Items, bei denen eine Variante anders wählt, als Prüfseite in Zweifelsordnung.

    KANDIDATEN.json ist eine Datei im Stapelformat (Artikel mit extractions).
    Seite und CSV landen im aktuellen Verzeichnis; die Zusammenfassung geht nach stderr.
    """
    if variante is None:
        raise Aufruffehler("--variante fehlt (z. B. --variante k4:0.03).")
    grundlage = gegen or Variante()
    if grundlage == variante:
        raise Aufruffehler(f"--variante und --gegen sind dieselbe Fassung ({variante.coder_version}).")
    gesamt, probe = vergleichen(datei, grundlage, variante)
    anders = len(probe.faelle())
    zaehlung = {"Items": gesamt, f"anders gewählt von {variante.coder_version}": anders}
    pfad = schreiben(probe, grundlage.coder_version, zaehlung=zaehlung, praefix="vergleich")
    click.echo(
        f"{gesamt} Items; {variante.coder_version} wählt bei {anders} anders als {grundlage.coder_version}.\n"
        f"Vergleich: {pfad}",
        err=True,
    )


if __name__ == "__main__":
    sys.modules.setdefault("vergleich", sys.modules[__name__])
    cli()
