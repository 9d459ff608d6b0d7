"""Kommandozeile von auswahl.py: ein Befehl, vier Betriebsarten.

Dieses Modul prüft nur, welche Optionen zusammenpassen, und reicht weiter:
Stapelbetrieb an stapel.py, Datenbankmodi an stufe.py. Die schweren Importe
(psycopg) geschehen erst dort, damit der Stapelbetrieb ohne Datenbank startet.
"""

from __future__ import annotations

import click

from fehler import Aufruffehler, DeutscherBefehl
from version import CODER_VERSION


@click.command(cls=DeutscherBefehl, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument(
    "datei", metavar="[DATEI.json]", required=False, type=click.Path(dir_okay=False, allow_dash=True)
)
@click.option(
    "-o",
    "--ausgabe",
    metavar="AUSGABE.json",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Ausgabedatei im Stapelbetrieb (Voreinstellung: <stamm>_selected.json neben der "
    "Eingabe; - für stdout).",
)
@click.option("--backfill", is_flag=True, help="Alle Items mit mindestens einem Kandidaten kodieren.")
@click.option(
    "--slot",
    metavar="ZEITPUNKT",
    help="Die Items eines Poll-Slots kodieren, z. B. 2026-09-07T08:00 (ohne Offset: Europe/Berlin).",
)
@click.option(
    "--einlesen",
    metavar="DATEI.json",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Kandidaten aus einer Datei im Stapelformat nach extraktionen laden (Artikel tragen item_id).",
)
@click.option(
    "--trocken", is_flag=True, help="Alles berechnen, nichts schreiben; sagen, was sich ändern würde."
)
@click.option(
    "--stichprobe",
    type=click.IntRange(min=1),
    metavar="N",
    help="Die N zweifelhaftesten Entscheidungen als CSV (und HTML) zum Prüfen von Hand schreiben.",
)
@click.option(
    "--teil", metavar="K/N", help="Nur die Items mit id %% N = K-1 (Arbeit auf mehrere Rechner verteilen)."
)
@click.option(
    "--extrahieren",
    is_flag=True,
    help="Vorher aus dem HTML die drei Kandidaten extrahieren (DATEI: Artikel mit „html“; "
    "braucht das Extra extraktion).",
)
@click.option(
    "--prozesse",
    type=click.IntRange(min=1),
    metavar="N",
    help="Worker-Prozesse für die Rechenarbeit (Voreinstellung: Zahl der Kerne).",
)
@click.version_option(
    CODER_VERSION, "--version", message="%(version)s", help="coder_version zeigen und beenden."
)
def cli(datei, ausgabe, backfill, slot, einlesen, trocken, stichprobe, teil, extrahieren, prozesse):
    """Wählt je Item den Volltext eines Extraktors: newspaper4k, readability
    oder trafilatura – deterministisch, über 5-Token-Shingles und ihren Konsens.

    \b
    Stapelbetrieb (ohne Datenbank):
      auswahl.py DATEI.json [-o AUSGABE.json] [--stichprobe N]
      auswahl.py --extrahieren SEITEN.json [-o AUSGABE.json] [--prozesse N]
    Datenbank (DATABASE_URL aus der Umgebung oder .env):
      auswahl.py --backfill [--trocken] [--stichprobe N] [--teil K/N]
      auswahl.py --slot 2026-09-07T08:00 [--trocken] [--stichprobe N]
      auswahl.py --einlesen DATEI.json
      auswahl.py --extrahieren --backfill|--slot … (erst aus seiten extrahieren, dann wählen)

    Exit-Codes: 0 Erfolg, 1 Eingabefehler, 2 Aufruffehler, 3 Datenbank nicht
    erreichbar, 4 Voraussetzung fehlt, 5 anderer Lauf hält die Sperre,
    6 Zeitlimit der Datenbank, 130 abgebrochen.
    """
    modi = [
        name
        for name, gesetzt in (
            ("DATEI", datei),
            ("--backfill", backfill),
            ("--slot", slot),
            ("--einlesen", einlesen),
        )
        if gesetzt
    ]
    if len(modi) != 1:
        raise Aufruffehler(
            "Genau eine Betriebsart angeben: DATEI, --backfill, --slot oder --einlesen"
            + (f" (angegeben: {', '.join(modi)})." if modi else ".")
        )
    if ausgabe is not None and not datei:
        raise Aufruffehler("-o/--ausgabe gilt nur im Stapelbetrieb mit DATEI.")
    if extrahieren:
        # Extraktion vor der Auswahl: extraktion_stapel.py (DATEI), extraktion_stufe.py (Datenbank)
        if einlesen:
            raise Aufruffehler("--extrahieren gilt mit DATEI, --backfill oder --slot.")
        if datei and (trocken or teil):
            raise Aufruffehler("--trocken und --teil gelten nicht im Stapelbetrieb.")
        if datei:
            import extraktion_stapel

            extraktion_stapel.stapel_extrahieren(datei, ausgabe, stichprobe=stichprobe, prozesse=prozesse)
        else:
            import extraktion_stufe

            extraktion_stufe.lauf(
                slot=slot, trocken=trocken, stichprobe=stichprobe, teil=teil, prozesse=prozesse
            )
        return
    if (trocken or teil or prozesse) and not (backfill or slot):
        raise Aufruffehler("--trocken, --teil und --prozesse gelten nur mit --backfill oder --slot.")
    if stichprobe and einlesen:
        raise Aufruffehler("--stichprobe gilt nicht mit --einlesen.")

    if datei:
        import stapel

        stapel.stapel(datei, ausgabe, stichprobe=stichprobe)
    elif einlesen:
        import stufe

        stufe.einlesen(einlesen)
    else:
        import stufe

        stufe.lauf(slot=slot, trocken=trocken, stichprobe=stichprobe, teil=teil, prozesse=prozesse)
