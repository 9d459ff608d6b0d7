"""Fehler der Stufe und ihre Exit-Codes – eine Stelle für alle Module.

| Code | Bedeutung |
|---|---|
| 0 | Erfolg |
| 1 | Eingabefehler: Datei, JSON, Slot, Argumentwert |
| 2 | Aufruffehler (falsche Optionen; von click) |
| 3 | Datenbank nicht erreichbar, Anmeldung gescheitert, Verbindung verloren |
| 4 | Voraussetzung fehlt: raw_items, Spalten, Migrationen, Rechte |
| 5 | Ein anderer Lauf derselben coder_version hält die Sperre |
| 6 | Zeitlimit der Datenbank (statement_timeout, lock_timeout) überschritten |
| 8 | Ein Worker-Prozess starb, oder ein Stapel überschritt --stapel-zeitlimit |
| 130 | Abgebrochen (SIGINT/SIGTERM) nach dem laufenden Stapel |
"""

from __future__ import annotations

import re
import sys

import click

EXIT_OK = 0
EXIT_EINGABE = 1
EXIT_AUFRUF = 2
EXIT_DATENBANK = 3
EXIT_VORAUSSETZUNG = 4
EXIT_GESPERRT = 5
EXIT_ZEITLIMIT = 6
EXIT_WORKER = 8
EXIT_ABGEBROCHEN = 130


class StufenFehler(click.ClickException):
    """Ein Fehler, den ein Mensch beheben kann: ein Satz, kein Traceback."""

    exit_code = EXIT_EINGABE

    def show(self, file=None) -> None:
        click.echo(f"Fehler: {self.format_message()}", file=file or sys.stderr)


class EingabeFehler(StufenFehler):
    exit_code = EXIT_EINGABE


class DatenbankFehler(StufenFehler):
    exit_code = EXIT_DATENBANK


class VoraussetzungFehlt(StufenFehler):
    exit_code = EXIT_VORAUSSETZUNG


class LaufGesperrt(StufenFehler):
    exit_code = EXIT_GESPERRT


class Zeitlimit(StufenFehler):
    exit_code = EXIT_ZEITLIMIT


class WorkerFehler(StufenFehler):
    """Ein Worker starb oder hing länger als das Zeitlimit je Stapel."""

    exit_code = EXIT_WORKER


class Abgebrochen(StufenFehler):
    exit_code = EXIT_ABGEBROCHEN


# --- Aufruffehler auf Deutsch --------------------------------------------------------
# click spricht Englisch („Usage:“, „Error: No such option“). Die Befehle der
# Stufe nutzen DeutscherBefehl: derselbe Exit-Code 2, derselbe Aufbau, deutsche
# Sätze. Was hier nicht übersetzt ist, erscheint wie von click geliefert.

_UEBERSETZUNGEN = (
    (re.compile(r"^'?(.*?)'? is not a valid integer\.?$"), r"„\1“ ist keine ganze Zahl."),
    (re.compile(r"^'?(.*?)'? is not a valid integer range\.?$"), r"„\1“ ist keine ganze Zahl."),
    (re.compile(r"^(.*) is not in the range x>=(\d+)\.?$"), r"\1 ist kleiner als \2."),
    (re.compile(r"^(?:File|Path|Directory) '(.*)' is a directory\.?$"), r"„\1“ ist ein Verzeichnis."),
    (re.compile(r"^Option '(.*)' requires an argument\.?$"), r"Die Option \1 braucht einen Wert."),
    (re.compile(r"^Got unexpected extra arguments? \((.*)\)$"), r"Unerwartetes Argument: \1"),
    (re.compile(r"^Option '(.*)' does not take a value\.?$"), r"Die Option \1 nimmt keinen Wert."),
)


def _deutsch(fehler: click.UsageError) -> str:
    """Die Meldung eines click-Aufruffehlers, so weit bekannt, auf Deutsch."""
    if isinstance(fehler, click.NoSuchOption):
        satz = f"Unbekannte Option: {fehler.option_name}"
        if fehler.possibilities:
            satz += f" (gemeint: {', '.join(sorted(fehler.possibilities))}?)"
        return satz
    nachricht = fehler.message
    for muster, ersatz in _UEBERSETZUNGEN:
        nachricht = muster.sub(ersatz, nachricht)
    if isinstance(fehler, click.BadParameter):
        wo = fehler.param_hint or (fehler.param.get_error_hint(fehler.ctx) if fehler.param else None)
        return f"Ungültiger Wert für {wo}: {nachricht}" if wo else f"Ungültiger Wert: {nachricht}"
    return nachricht


class Aufruffehler(click.UsageError):
    """Falscher Aufruf (Exit 2): Aufrufzeile, Hinweis auf -h, ein deutscher Satz."""

    def show(self, file=None) -> None:
        file = file or sys.stderr
        if self.ctx is not None:
            click.echo(self.ctx.get_usage(), file=file)
            click.echo(f"Hilfe: {self.ctx.command_path} -h", file=file)
        click.echo(f"Fehler: {self.format_message()}", file=file)


class DeutscherBefehl(click.Command):
    """click.Command mit deutscher Hilfe und deutschen Aufruffehlern."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("options_metavar", "[OPTIONEN]")
        super().__init__(*args, **kwargs)

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
            if isinstance(p, click.Option) and (zeile := p.get_help_record(ctx))
        ]
        if eintraege:
            with formatter.section("Optionen"):
                formatter.write_dl(eintraege)
