"""Seitenart gemessen: wie weit liegen echte Seiten und Binärdaten von den Grenzen in art.py?

Für jeden Ordner mit ``.html``/``.html.gz``-Seiten (Voreinstellung die 181 von
bench/aeb/html): Seiten, wie viele ``art.keine_html`` ablehnt (soll: keine), der
größte Anteil an Steuer- und an Ersatzzeichen und die Zeit der Prüfung je Seite
(ohne die Zeichensatzregel, die ohnehin läuft). Dann dieselben Seiten mit 5 und mit
50 verirrten Steuerbytes (``referenz.binaer.verirrte_steuerzeichen``; soll: keine
abgelehnt) und die erzeugten Nicht-Seiten aus ``referenz.binaer`` – jede mit und
ohne ihre ersten 64 Bytes, also auch ohne magische Zahl (soll: alle abgelehnt).

Aufruf (aus dem Projektverzeichnis)::

    python -m bench.seitenart
    python -m bench.seitenart bench/aeb/html ANDERER/ORDNER
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # als Datei gestartet: Projektwurzel in den Pfad
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from auswahlstufe.anzeige import zahl
from auswahlstufe.befehl import DeutscherBefehl
from auswahlstufe.extraktion import art, stapel, zeichensatz
from auswahlstufe.referenz import binaer

AEB_HTML = Path(__file__).resolve().parent / "aeb" / "html"


def pruefen(roh: bytes) -> tuple[str | None, art.Mass, float]:
    """(Befund, Maß, Sekunden der Prüfung) nach der Zeichensatzregel wie in der Extraktion."""
    text, herkunft = zeichensatz.dekodieren_roh(roh)
    start = time.perf_counter()
    befund = art.keine_html(text, roh, herkunft.split(" ", 1)[0])
    dauer = time.perf_counter() - start
    return befund, art.messen(text, roh, herkunft.split(" ", 1)[0]), dauer


def prozent(anteil: float) -> str:
    return f"{zahl(100 * anteil, 3)} %"


def ordner_messen(ordner: Path) -> None:
    seiten = [stapel.seite_lesen(pfad) for _, pfad in stapel.ordner_dateien(ordner)]
    click.echo(f"\n{ordner} – {len(seiten)} Seiten")
    for name, verirrt in (("wie sie sind", 0), ("mit 5 verirrten Steuerbytes", 5), ("mit 50", 50)):
        ergebnisse = [pruefen(binaer.verirrte_steuerzeichen(s, verirrt) if verirrt else s) for s in seiten]
        abgelehnt = sum(befund is not None for befund, _, _ in ergebnisse)
        steuer = max(mass.steuer_anteil for _, mass, _ in ergebnisse)
        ersatz = max(mass.ersatz_anteil for _, mass, _ in ergebnisse)
        ms = 1000 * sum(d for *_, d in ergebnisse) / len(ergebnisse)
        click.echo(
            f"  {name:30} abgelehnt {abgelehnt:3}   Steuerzeichen höchstens {prozent(steuer):>9}   "
            f"Ersatzzeichen höchstens {prozent(ersatz):>9}   Prüfung {zahl(ms, 2)} ms je Seite"
        )


def binaer_messen() -> None:
    click.echo(
        "\nKeine HTML-Seiten (referenz.binaer); rechts ohne die ersten 64 Bytes, also ohne magische Zahl"
    )
    for name, (erzeugen, _) in binaer.DATEIEN.items():
        roh = erzeugen()
        befund, _, _ = pruefen(roh)
        befund_ohne, mass_ohne, _ = pruefen(binaer.ohne_anfang(roh))
        if not befund_ohne or not befund:
            click.echo(f"  {name}: NICHT abgelehnt", err=True)
        click.echo(
            f"  {name:26} {len(roh):6} B  {befund or 'durchgelassen':55.55} | "
            f"Steuer {prozent(mass_ohne.steuer_anteil):>9}  Ersatz {prozent(mass_ohne.ersatz_anteil):>9}  "
            f"{befund_ohne or 'durchgelassen'}"
        )


@click.command(cls=DeutscherBefehl)
@click.argument("ordner", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
def main(ordner: tuple[Path, ...]) -> None:
    """Misst den Abstand echter Seiten und erzeugter Binärdaten zu den Grenzen von art.py."""
    click.echo(
        f"Grenzen: {prozent(art.STEUER_ANTEIL)} Steuerzeichen, {prozent(art.ERSATZ_ANTEIL)} Ersatzzeichen, "
        f"je mindestens {art.MINDESTENS}"
    )
    for pfad in ordner or (AEB_HTML,):
        ordner_messen(pfad)
    binaer_messen()


if __name__ == "__main__":
    main()
