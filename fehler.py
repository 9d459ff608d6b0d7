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
| 130 | Abgebrochen (SIGINT/SIGTERM) nach dem laufenden Stapel |
"""

from __future__ import annotations

import sys

import click

EXIT_OK = 0
EXIT_EINGABE = 1
EXIT_AUFRUF = 2
EXIT_DATENBANK = 3
EXIT_VORAUSSETZUNG = 4
EXIT_GESPERRT = 5
EXIT_ZEITLIMIT = 6
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


class Abgebrochen(StufenFehler):
    exit_code = EXIT_ABGEBROCHEN
