"""Kommandozeile von auswahl.py: ein Befehl, vier Betriebsarten.

Dieses Modul prüft nur, welche Optionen zusammenpassen – eine Tabelle (``REGELN``) in einer
Schleife –, und reicht weiter:
Stapelbetrieb an stapel.py, --einlesen an einlesen.py (einen Ordner mit dem Lesecode aus
extraktion/stapel.py), die Läufe (--backfill, --slot, --nachholen) an stufe.py. Die schweren Importe
(psycopg) geschehen erst dort, damit der Stapelbetrieb ohne Datenbank startet.
"""

from __future__ import annotations

import auswahlstufe.pakete  # noqa: F401 – zuerst: das richtige Python, die richtige Installation?

from pathlib import Path

import click

from auswahlstufe.befehl import VARIANTE, Aufruffehler, DeutscherBefehl
from auswahlstufe.betrieb import protokoll
from version import CODER_VERSION

BEFEHL = "wurzelwerk-auswahl"  # [project.scripts] in pyproject.toml; auswahl.py startet denselben


def _naechster_schritt(params: dict) -> str | None:
    """An ein fehlendes Recht angehängt: welcher check_db.py-Modus es prüft, wer es gibt."""
    from auswahlstufe.lauf import rechte

    return rechte.naechster_schritt(params)


# Die Betriebsarten (genau eine je Aufruf): Parameter → wie sie die Meldung nennt.
BETRIEBSARTEN = {
    "datei": "DATEI",
    "backfill": "--backfill",
    "slot": "--slot",
    "nachholen": "--nachholen",
    "einlesen": "--einlesen",
}
DATENBANK = frozenset({"backfill", "slot", "nachholen"})
STAPEL = frozenset({"datei", "extraktion"})  # extraktion: DATEI mit --extrahieren
ALLE = STAPEL | DATENBANK | {"einlesen"}
# Welche Optionen wo gelten: (Optionen, Marken des Aufrufs, in denen sie gelten, Satz sonst).
# Die Marken eines Aufrufs: seine Betriebsart (DATEI mit --extrahieren heißt „extraktion“), dazu
# „extrahieren“, wenn --extrahieren gesetzt ist, und „pruefseite“ mit --trocken und --stichprobe.
# Geprüft in dieser Reihenfolge; die erste Option, die in keiner Marke des Aufrufs gilt, ist der
# Aufruffehler.
REGELN: tuple[tuple[tuple[str, ...], frozenset[str], str], ...] = (
    (("hoechstens",), frozenset({"nachholen"}), "--hoechstens gilt nur mit --nachholen."),
    (
        ("teil", "stichprobe"),
        ALLE - {"nachholen"},
        "--teil und --stichprobe gelten nicht mit --nachholen (es kodiert ganze Slots, einen nach dem anderen).",
    ),
    (("ausgabe",), STAPEL, "-o/--ausgabe gilt nur im Stapelbetrieb mit DATEI."),
    (("streng",), STAPEL, "--streng gilt nur im Stapelbetrieb mit DATEI."),
    (("mit_entscheidung",), STAPEL, "--mit-entscheidung gilt nur im Stapelbetrieb mit DATEI."),
    (
        ("variante",),
        DATENBANK,
        "--variante gilt nur mit --backfill, --slot oder --nachholen (für eine Datei: vergleich.py oder "
        "bewertung.py --variante).",
    ),
    (
        ("extraktion_zeitlimit",),
        frozenset({"extrahieren"}),
        "--extraktion-zeitlimit gilt nur mit --extrahieren.",
    ),
    (
        ("extrahieren",),
        STAPEL | DATENBANK,
        "--extrahieren gilt mit DATEI, --backfill, --slot oder --nachholen.",
    ),
    (("trocken", "teil"), ALLE - {"extraktion"}, "--trocken und --teil gelten nicht im Stapelbetrieb."),
    (
        ("streng", "mit_entscheidung"),
        ALLE - {"extraktion"},
        "--streng und --mit-entscheidung gelten nicht mit --extrahieren (die Kandidaten entstehen hier; die "
        "Entscheidung zeigt: auswahl.py --mit-entscheidung AUSGABE.json).",
    ),
    (
        ("trocken", "teil", "prozesse"),
        DATENBANK | {"extraktion"},
        "--trocken, --teil und --prozesse gelten nur mit --backfill, --slot oder --nachholen.",
    ),
    (("stichprobe",), ALLE - {"einlesen"}, "--stichprobe gilt nicht mit --einlesen."),
    (
        ("haus", "seit"),
        frozenset({"pruefseite"}),
        "--haus und --seit gelten nur mit --trocken und --stichprobe N (zu --backfill oder --slot): sie "
        "zeigen die Prüfseite eines Hauses seit einem Zeitpunkt und schreiben nichts.",
    ),
)


@click.command(
    cls=DeutscherBefehl,
    naechster_schritt=_naechster_schritt,
)
@click.argument(
    # ein Ordner nur mit --extrahieren (Seiten als .html/.html.gz); das prüft cli() selbst
    "datei",
    metavar="[DATEI.json]",
    required=False,
    # Lesen prüft jsoneingabe.lesen selbst: fehlt die Datei oder ist sie nicht lesbar, ist das ein
    # Eingabefehler (Exit 1) wie jede andere kaputte Eingabe, kein Aufruffehler von click (Exit 2)
    type=click.Path(allow_dash=True, readable=False),
)
@click.option(
    "-o",
    "--ausgabe",
    "--output",  # so heißt die Option in Quelle 000; beide Namen gelten
    "ausgabe",
    metavar="AUSGABE.json",
    type=click.Path(dir_okay=False, allow_dash=True, readable=False),
    help="Ausgabedatei im Stapelbetrieb (Voreinstellung: <stamm>_selected.json neben der "
    "Eingabe; - für stdout).",
)
@click.option(
    "--mit-entscheidung",
    is_flag=True,
    help="Stapelbetrieb: neben selected_extractor das Feld auswahl mit Regel, Konsensgröße "
    "und bereinigtem Text (wie die Datenbank sie speichert).",
)
@click.option(
    "--streng",
    is_flag=True,
    help="Stapelbetrieb: falsche Feldnamen (content statt text, extraction statt extractions) "
    "sind ein Fehler statt einer Warnung; dann wird nichts geschrieben.",
)
@click.option("--backfill", is_flag=True, help="Alle Items mit mindestens einem Kandidaten kodieren.")
@click.option(
    "--slot",
    metavar="ZEITPUNKT",
    help="Die Items eines Poll-Slots kodieren, z. B. 2026-09-07T08:00 (ohne Offset: Europe/Berlin).",
)
@click.option(
    "--nachholen",
    is_flag=True,
    help="Jeden offenen Slot kodieren, der neueste zuerst, jeden als eigenen Slot-Lauf (für cron: holt "
    "nach, was ein gesperrter, gestoppter oder toter Lauf liegen ließ). Offen ist ein Slot, in dem ein "
    "Item Kandidaten, aber keine Entscheidung dieser coder_version hat – mit --extrahieren auch eine "
    "Seite, aber keine Kandidaten. Geänderte Kandidaten oder eine neue Seite eines schon entschiedenen "
    "Items nimmt erst --backfill (die nächtliche cron-Zeile).",
)
@click.option(
    "--hoechstens",
    type=click.IntRange(min=1),
    metavar="N",
    help="Mit --nachholen: höchstens N Slots je Aufruf (Voreinstellung: 48); der nächste Aufruf macht "
    "weiter.",
)
@click.option(
    "--einlesen",
    metavar="DATEI.json|ORDNER",
    type=click.Path(allow_dash=True, readable=False),
    help="Kandidaten aus einer Datei im Stapelformat nach extraktionen laden, Artikel mit „html“ "
    "nach seiten (Artikel tragen item_id); oder die Seiten eines Ordners nach seiten "
    "(<item_id>.html[.gz] oder <SHA-256 der URL>.html[.gz]).",
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
    "--haus",
    metavar="NAME",
    help="Mit --trocken --stichprobe N: nur Items dieses Hauses (raw_items.haus), ohne --seit ab dem "
    "offenen Befund der Quellenwache (docs/quellenwache.md).",
)
@click.option(
    "--seit",
    metavar="ZEITPUNKT",
    help="Mit --trocken --stichprobe N: nur Items ab diesem Slot, z. B. 2026-12-03T14:00 (wie --slot).",
)
@click.option(
    "--teil", metavar="K/N", help="Nur die Items mit id % N = K-1 (Arbeit auf mehrere Rechner verteilen)."
)
@click.option(
    "--extrahieren",
    is_flag=True,
    help="Vorher aus dem HTML die drei Kandidaten extrahieren (DATEI: Artikel mit „html“ oder ein "
    "Ordner mit .html/.html.gz; braucht das Extra extraktion).",
)
@click.option(
    "--variante",
    metavar="VARIANTE",
    type=VARIANTE,
    help="Eine Variante der Regeln neben der Voreinstellung kodieren, z. B. k4:0.03, quelle000 "
    "oder k4:0.03+quelle000 (eigene coder_version; nur mit --backfill, --slot oder --nachholen).",
)
@click.option(
    "--prozesse",
    type=click.IntRange(min=1),
    metavar="N",
    help="Worker-Prozesse für die Rechenarbeit (Voreinstellung: Zahl der Kerne, die dieser Prozess "
    "nutzen darf).",
)
@click.option(
    "--stapel-zeitlimit",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SEKUNDEN",
    default=300,
    show_default=True,
    help="So lange darf ein Worker an einem Stapel rechnen; danach endet der Lauf mit Exit 8.",
)
@click.option(
    "--extraktion-zeitlimit",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SEKUNDEN",
    default=30,
    show_default=True,
    help="Nur mit --extrahieren: so lange darf ein Extraktor an einer Seite rechnen; danach bekommt er "
    "einen Fehler, den ein späterer Lauf wiederholt (docs/extraktion.md).",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, wert: _fassungen(ctx) if wert else None,
    help="Fassung der Stufe, coder_version und Fassungen der Extraktoren zeigen und beenden.",
)
def cli(
    datei,
    ausgabe,
    mit_entscheidung,
    streng,
    backfill,
    slot,
    nachholen,
    hoechstens,
    einlesen,
    trocken,
    stichprobe,
    haus,
    seit,
    teil,
    extrahieren,
    variante,
    prozesse,
    stapel_zeitlimit,
    extraktion_zeitlimit,
):
    """Wählt je Item den Volltext eines Extraktors: newspaper4k, readability
    oder trafilatura – deterministisch, über 5-Token-Shingles und ihren Konsens.

    \b
    Stapelbetrieb (ohne Datenbank):
      wurzelwerk-auswahl DATEI.json [-o AUSGABE.json] [--stichprobe N]
                         [--streng] [--mit-entscheidung]
      wurzelwerk-auswahl --extrahieren SEITEN.json|ORDNER [-o AUSGABE.json]
    Datenbank (DATABASE_URL aus der Umgebung oder .env):
      wurzelwerk-auswahl --backfill [--trocken] [--stichprobe N] [--teil K/N]
                         [--variante k4:0.03]
      wurzelwerk-auswahl --slot 2026-09-07T08:00 [--trocken] [--stichprobe N]
      wurzelwerk-auswahl --backfill --trocken --stichprobe N --haus taz
                         [--seit 2026-12-03T14:00]  (Prüfseite eines Hauses)
      wurzelwerk-auswahl --nachholen [--hoechstens 48] [--trocken]  (für cron)
      wurzelwerk-auswahl --einlesen DATEI.json|ORDNER
      wurzelwerk-auswahl --extrahieren --backfill|--slot|--nachholen …
                         (erst extrahieren, dann wählen)

    wurzelwerk-auswahl ist der installierte Befehl (pip install -e .);
    .venv/bin/python auswahl.py ist derselbe Befehl ohne Installation.

    --nachholen ist der Aufruf für cron: er kodiert jeden offenen Slot (ein
    Item mit Kandidaten ohne Entscheidung, mit --extrahieren auch eine Seite
    ohne Kandidaten; Geändertes an schon entschiedenen Items nimmt erst
    --backfill), der neueste zuerst, höchstens --hoechstens je Aufruf. Ist nichts offen, endet
    er still mit 0; hält ein anderer Lauf die Sperre, mit 5 und einem Hinweis
    auf stdout – der nächste Aufruf holt nach. Ohne Terminal trägt jede Zeile
    Zeit, Modus, Slot und coder_version (AUSWAHL_ZEILENKOPF=auto|an|aus);
    stdout ist das Protokoll, stderr nur, was ein Mensch sehen muss.

    Exit-Codes: 0 Erfolg, 1 Eingabefehler, 2 Aufruffehler, 3 Datenbank nicht
    erreichbar, 4 Voraussetzung fehlt, 5 anderer Lauf hält die Sperre (oder
    sie ging verloren), 6 Zeitlimit der Datenbank, 7 Konfiguration
    (DATABASE_URL, Option), 8 Worker gestorben oder Stapel-Zeitlimit,
    130 abgebrochen.

    Alle Optionen, das Stapelformat und die Warnungen: docs/kommandozeile.md.
    """
    protokoll.einrichten()
    ctx = click.get_current_context()
    modi = [name for param, name in BETRIEBSARTEN.items() if ctx.params[param]]
    if len(modi) != 1:
        raise Aufruffehler(
            "Genau eine Betriebsart angeben: DATEI, --backfill, --slot, --nachholen oder --einlesen"
            + (f" (angegeben: {', '.join(modi)})." if modi else ".")
        )
    if datei and not extrahieren and _ist_ordner(datei):
        raise Aufruffehler(
            f"„{datei}“ ist ein Verzeichnis; ein Ordner mit .html/.html.gz-Seiten ist nur mit "
            "--extrahieren Eingabe."
        )
    art = next(param for param in BETRIEBSARTEN if ctx.params[param])
    marken = {"extraktion" if art == "datei" and extrahieren else art}
    marken |= {"extrahieren"} if extrahieren else set()
    marken |= {"pruefseite"} if trocken and stichprobe else set()
    gegeben = {
        param.name
        for param in ctx.command.params
        if ctx.get_parameter_source(param.name) is click.core.ParameterSource.COMMANDLINE
    }
    for optionen, erlaubt, satz in REGELN:
        if gegeben & set(optionen) and not marken & erlaubt:
            raise Aufruffehler(satz)

    if datei and extrahieren:
        from auswahlstufe.extraktion import stapel as extraktion_stapel

        extraktion_stapel.stapel_extrahieren(
            datei, ausgabe, stichprobe=stichprobe, prozesse=prozesse, zeitlimit_s=extraktion_zeitlimit
        )
    elif datei:
        from auswahlstufe import stapel

        stapel.stapel(datei, ausgabe, stichprobe=stichprobe, streng=streng, mit_auswahl=mit_entscheidung)
    elif einlesen and _ist_ordner(einlesen):
        # Seiten eines Ordners: gelesen wie von --extrahieren ORDNER, geschrieben von einlesen/ordner.py
        from auswahlstufe.einlesen import ordner as einlesen_modul
        from auswahlstufe.extraktion import stapel as extraktion_stapel

        dateien = extraktion_stapel.ordner_dateien(Path(einlesen))
        einlesen_modul.ordner_einlesen(einlesen, dateien, extraktion_stapel.seite_lesen)
    elif einlesen:
        from auswahlstufe.einlesen import datei as einlesen_modul

        einlesen_modul.einlesen(einlesen)
    else:
        from auswahlstufe import kerne
        from auswahlstufe.lauf import nachholen as nachholen_modul
        from auswahlstufe.lauf import stufe
        from version import Variante

        # Ab hier trägt jede Zeile (auch die letzte Fehlermeldung) ohne Terminal den Zeilenkopf.
        modus = "nachholen" if nachholen else "slot" if slot else "backfill"
        modus += "+extrahieren" if extrahieren else ""
        modus += f"+teil-{teil}" if teil else ""
        modus += "+trocken" if trocken else ""
        version = (variante or Variante()).coder_version
        protokoll.kopf_setzen(modus, version)
        vorlauf = None
        if extrahieren:  # erst extrahieren, dann im selben Lauf wählen (unter seiner Sperre)
            from auswahlstufe.extraktion.stufe import Extrahieren

            vorlauf = Extrahieren(prozesse, extraktion_zeitlimit)
        einstellungen = stufe.Einstellungen(
            version=version,
            variante=variante.name if variante is not None else None,
            argumente=variante.argumente() if variante is not None else {},
            prozesse=prozesse or kerne.nutzbar(),
            trocken=trocken,
            stichprobe=stichprobe,
            stapel_zeitlimit=stapel_zeitlimit,
        )
        stufe.lauf(
            einstellungen,
            slot=slot,
            teil=teil,
            haus=haus,
            seit=seit,
            nachholen_hoechstens=(hoechstens or nachholen_modul.HOECHSTENS) if nachholen else None,
            vorlauf=vorlauf,
        )


def _fassungen(ctx: click.Context) -> None:
    """``--version``: was ein Haus von seiner Stufe wissen muss, je eine Zeile."""
    import importlib.metadata

    from auswahlstufe import VERSION

    pakete = {"trafilatura": "trafilatura", "newspaper4k": "newspaper4k", "readability": "readability-lxml"}
    try:
        extraktoren = ", ".join(f"{p} {importlib.metadata.version(p)}" for p in pakete.values())
    except importlib.metadata.PackageNotFoundError:
        extraktoren = "nicht installiert (.venv/bin/pip install -e '.[extraktion]')"
    click.echo(f"{BEFEHL} {VERSION}\ncoder_version {CODER_VERSION}\nExtraktoren: {extraktoren}")
    ctx.exit()


def _ist_ordner(datei: str) -> bool:
    """Ist DATEI ein Ordner? Ist das nicht festzustellen (keine Rechte), meldet es das Lesen."""
    try:
        return Path(datei).is_dir()
    except OSError:
        return False
