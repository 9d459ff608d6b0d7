"""Befehle auf Deutsch: Hilfe, Aufruffehler (Exit 2) und Optionstypen für click.

Alle Befehle der Stufe (``auswahl.py``, ``check_db.py``, ``demo.py``, ``bewertung.py``,
``vergleich.py``, die Benchmarks) bauen auf ``DeutscherBefehl``; ein Fehler der
Datenbankschicht (``db.Fehler``) wird dort zum Fehler der Stufe mit seinem Exit-Code.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import click

import db
from auswahlstufe.fehler import Abgebrochen, RechtFehlt, als_stufenfehler
from version import Variante, variante_lesen

# click's Satz (msgid, mit seinen Platzhaltern) → deutscher Satz mit denselben Namen; warum ein
# eigener Katalog statt gettext: docs/kommandozeile.md, „Wie die Kommandozeile Deutsch spricht“.
KLICK_MELDUNGEN = (
    ("{value!r} is not a valid {number_type}.", "„{value}“ ist keine {number_type}."),
    ("{value} is not in the range {range}.", "{value} {range}."),
    (
        "{value!r} is not a valid boolean. Recognized values: {states}",
        "„{value}“ ist kein Wahrheitswert (erkannt: {states}).",
    ),
    # erst die Mehrzahl: das Muster der Einzahl („is not {choice}“) fängt sie sonst mit
    ("{value!r} is not one of {choices}.", "„{value}“ ist keiner der Werte {choices}."),
    ("{value!r} is not {choice}.", "„{value}“ ist nicht {choice}."),
    ("{name} {filename!r} does not exist.", "„{filename}“ gibt es nicht."),
    ("{name} {filename!r} is a file.", "„{filename}“ ist eine Datei, erwartet wird ein Verzeichnis."),
    ("{name} {filename!r} is a directory.", "„{filename}“ ist ein Verzeichnis."),
    ("{name} {filename!r} is not readable.", "„{filename}“ ist nicht lesbar."),
    ("{name} {filename!r} is not writable.", "„{filename}“ ist nicht beschreibbar."),
    ("{name} {filename!r} is not executable.", "„{filename}“ ist nicht ausführbar."),
    ("Option {name!r} requires an argument.", "Die Option {name} braucht einen Wert."),
    ("Option {name!r} requires {nargs} arguments.", "Die Option {name} braucht {nargs} Werte."),
    ("Option {name!r} does not take a value.", "Die Option {name} nimmt keinen Wert."),
    ("Got unexpected extra argument ({args})", "Unerwartetes Argument: {args}"),
    ("Got unexpected extra arguments ({args})", "Unerwartete Argumente: {args}"),
)
ZAHLTYPEN = {"integer": "ganze Zahl", "integer range": "ganze Zahl", "float": "Zahl", "float range": "Zahl"}
_PLATZHALTER = re.compile(r"\{(\w+)(!r)?\}")


def _muster(msgid: str) -> re.Pattern[str]:
    """Aus click's msgid ein Muster: ``{x!r}`` fängt einen Wert in Anführungszeichen, ``{x}`` alles."""
    teile, ende = [], 0
    for platz in _PLATZHALTER.finditer(msgid):
        teile.append(re.escape(msgid[ende : platz.start()]))
        name = platz[1]
        teile.append(f"['\"](?P<{name}>.*?)['\"]" if platz[2] else f"(?P<{name}>.*?)")
        ende = platz.end()
    teile.append(re.escape(msgid[ende:]))
    return re.compile("^" + "".join(teile) + "$", re.DOTALL)


_KATALOG = tuple((_muster(msgid), deutsch) for msgid, deutsch in KLICK_MELDUNGEN)


def bereich_deutsch(typ: click.ParamType) -> str | None:
    """„ab 1“, „höchstens 9“, „1 bis 9“ für IntRange/FloatRange; sonst None."""
    if not isinstance(typ, click.IntRange | click.FloatRange):
        return None
    if typ.min is not None and typ.max is not None:
        return f"{typ.min} bis {typ.max}" + (" (ohne die Grenzen)" if typ.min_open or typ.max_open else "")
    if typ.min is not None:
        return f"größer als {typ.min}" if typ.min_open else f"ab {typ.min}"
    if typ.max is not None:
        return f"kleiner als {typ.max}" if typ.max_open else f"höchstens {typ.max}"
    return None


def _ausserhalb(typ: click.ParamType | None) -> str:
    """Das Prädikat zu „{value} … .“ für einen Wert außerhalb des Bereichs."""
    if isinstance(typ, click.IntRange | click.FloatRange):
        if typ.max is None and typ.min is not None:
            return f"ist nicht größer als {typ.min}" if typ.min_open else f"ist kleiner als {typ.min}"
        if typ.min is None and typ.max is not None:
            return f"ist nicht kleiner als {typ.max}" if typ.max_open else f"ist größer als {typ.max}"
    return f"liegt nicht im Bereich {bereich_deutsch(typ) if typ else ''}".rstrip()


def meldung_deutsch(nachricht: str, typ: click.ParamType | None = None) -> str:
    """click's Satz auf Deutsch, wenn er im Katalog steht; sonst unverändert."""
    for muster, deutsch in _KATALOG:
        if treffer := muster.match(nachricht):
            werte = treffer.groupdict()
            if "number_type" in werte:
                werte["number_type"] = ZAHLTYPEN.get(werte["number_type"], "Zahl")
            if "range" in werte:
                werte["range"] = _ausserhalb(typ)
            return deutsch.format(**werte)
    return nachricht


def _deutsch(fehler: click.UsageError) -> str:
    """Die Meldung eines click-Aufruffehlers auf Deutsch: aus seinen Feldern oder dem Katalog."""
    if isinstance(fehler, click.NoSuchOption):
        satz = f"Unbekannte Option: {fehler.option_name}"
        if fehler.possibilities:
            satz += f" (gemeint: {', '.join(sorted(fehler.possibilities))}?)"
        return satz
    if isinstance(fehler, click.MissingParameter):
        param = fehler.param
        if isinstance(param, click.Argument):
            return f"Es fehlt das Argument {param.make_metavar(fehler.ctx)}."
        if isinstance(param, click.Option):
            return f"Es fehlt die Option {'/'.join(param.opts)}."
        return "Es fehlt ein Wert."
    if isinstance(fehler, click.BadParameter):
        nachricht = meldung_deutsch(fehler.message, fehler.param.type if fehler.param else None)
        wo = fehler.param_hint or (fehler.param.get_error_hint(fehler.ctx) if fehler.param else None)
        return f"Ungültiger Wert für {wo}: {nachricht}" if wo else f"Ungültiger Wert: {nachricht}"
    return meldung_deutsch(fehler.message)


# Metavars nach Typ, wo ein Befehl keinen eigenen nennt (click sagt sonst INTEGER, TEXT, FILE …).
def metavar_deutsch(typ: click.ParamType) -> str | None:
    if isinstance(typ, click.Choice):
        return None  # click zeigt die Werte selbst: [basis|waehle]
    if isinstance(typ, click.Path):
        if typ.file_okay and not typ.dir_okay:
            return "DATEI"
        return "ORDNER" if typ.dir_okay and not typ.file_okay else "PFAD"
    if isinstance(typ, click.types.IntParamType):
        return "ZAHL"
    if isinstance(typ, click.types.FloatParamType):
        return "KOMMAZAHL"
    if isinstance(typ, click.types.BoolParamType):
        return "JA|NEIN"
    return "WERT"


def option_deutsch(option: click.Option, ctx: click.Context) -> tuple[str, str] | None:
    """(Schalter mit Metavar, Hilfe mit deutschen Zusätzen) – wie click's get_help_record."""
    if option.hidden:
        return None
    # Schalter und Metavar zeichnet click (der Metavar ist schon deutsch, siehe DeutscherBefehl).
    schalter = option.get_help_record(ctx)[0]
    extra = option.get_help_extra(ctx)
    zusaetze = []
    if "envvars" in extra:
        zusaetze.append(f"Umgebungsvariable: {', '.join(extra['envvars'])}")
    if "default" in extra:
        vorgabe = {"True": "ja", "False": "nein", "(dynamic)": "wird berechnet"}.get(
            extra["default"], extra["default"]
        )
        zusaetze.append(f"Voreinstellung: {vorgabe}")
    if bereich := bereich_deutsch(option.type):
        zusaetze.append(bereich)
    if "required" in extra:
        zusaetze.append("Pflicht")
    hilfe = option.help or ""
    if zusaetze:
        hilfe = f"{hilfe}  [{'; '.join(zusaetze)}]" if hilfe else f"[{'; '.join(zusaetze)}]"
    return schalter, hilfe


# Die Wurzel des Klons: dort stehen die Skripte, die man beim Namen ruft (auswahl.py, check_db.py …).
WURZEL = Path(__file__).resolve().parents[1]


def hilfe_aufruf(ctx: click.Context) -> str:
    """Der Aufruf der Hilfe, wie der Mensch den Befehl rief: ein Skript an der Wurzel mit dem
    Interpreter, wie getippt (``.venv/bin/python auswahl.py -h``, aus ``sys.orig_argv``), sonst
    der Befehl unter seinem Namen (installiert: ``wurzelwerk-auswahl -h``)."""
    skript = getattr(sys.modules.get("__main__"), "__file__", None)
    if skript and Path(skript).resolve().parent == WURZEL and sys.argv[0] in sys.orig_argv:
        getippt = sys.orig_argv[: sys.orig_argv.index(sys.argv[0]) + 1]
        return f"{shlex.join(getippt)}{ctx.command_path[len(ctx.find_root().command_path) :]} -h"
    return f"{ctx.command_path} -h"


class Aufruffehler(click.UsageError):
    """Falscher Aufruf (Exit 2): Aufrufzeile, Hinweis auf -h, ein deutscher Satz."""

    def show(self, file=None) -> None:
        file = file or sys.stderr
        sys.stdout.flush()  # wie StufenFehler.show: was auf stdout wartet, steht davor
        if self.ctx is not None:
            click.echo(self.ctx.get_usage(), file=file)
            click.echo(f"Hilfe: {hilfe_aufruf(self.ctx)}", file=file)
        click.echo(f"Fehler: {self.format_message()}", file=file)


class DeutscherBefehl(click.Command):
    """click.Command mit deutscher Hilfe und deutschen Aufruffehlern. ``naechster_schritt``: aus
    den Parametern des Aufrufs der Satz, der an ein fehlendes Recht (``RechtFehlt``) angehängt wird."""

    def __init__(self, *args, naechster_schritt=None, **kwargs) -> None:
        self.naechster_schritt = naechster_schritt
        kwargs.setdefault("options_metavar", "[OPTIONEN]")
        kwargs.setdefault("context_settings", {}).setdefault("help_option_names", ["-h", "--help"])
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, click.Option) and param.metavar is None and not param.is_flag:
                param.metavar = metavar_deutsch(param.type)  # None: click's eigener (Choice)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except Aufruffehler:
            raise
        except click.UsageError as fehler:
            raise Aufruffehler(_deutsch(fehler), ctx) from None

    def invoke(self, ctx: click.Context):
        # Strg-C, bevor ein Lauf seine eigene Behandlung eingerichtet hat (beim
        # Start der Worker, beim Verbinden): Exit 130 wie sonst, nicht click's
        # „Aborted!“ mit Exit 1.
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Abgebrochen("Abgebrochen (SIGINT), bevor etwas geschrieben war.") from None
        except (db.Fehler, RechtFehlt) as fehler:  # db.py kennt keine Exit-Codes; hier bekommt er seinen
            stufenfehler = als_stufenfehler(fehler)
            schritt = self.naechster_schritt(ctx.params) if self.naechster_schritt else None
            if isinstance(stufenfehler, RechtFehlt) and schritt:
                stufenfehler = RechtFehlt(f"{stufenfehler.format_message()} {schritt}")
            raise stufenfehler from None

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        option = super().get_help_option(ctx)
        if option is not None:
            option.help = "Diese Hilfe zeigen und beenden."
        return option

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, " ".join(self.collect_usage_pieces(ctx)), prefix="Aufruf: ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        eintraege = [
            zeile
            for p in self.get_params(ctx)
            if isinstance(p, click.Option) and (zeile := option_deutsch(p, ctx))
        ]
        if eintraege:
            with formatter.section("Optionen"):
                formatter.write_dl(eintraege)

    def format_arguments(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click ab 8.5: ein Abschnitt für Argumente mit eigener Hilfe
        argumente = [p for p in self.get_params(ctx) if isinstance(p, click.Argument)]
        if any(getattr(a, "help", None) for a in argumente):
            with formatter.section("Argumente"):
                formatter.write_dl([a.get_help_record(ctx) for a in argumente])


class _VarianteTyp(click.ParamType):
    name = "variante"

    def convert(self, wert, param, ctx) -> Variante:
        if isinstance(wert, Variante):
            return wert
        try:
            return variante_lesen(wert)
        except ValueError as fehler:
            self.fail(str(fehler), param, ctx)


VARIANTE = _VarianteTyp()
"""Typ der Option ``--variante`` (click): ``k4:0.03`` … → Variante; Unsinn ist ein Aufruffehler (Exit 2)."""
