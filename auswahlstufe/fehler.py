"""Fehler der Stufe und ihre Exit-Codes – eine Stelle für alle Module; was jeder Code bedeutet,
steht im README (Exit-Codes).

Die Fehler der Datenbankschicht (``db.Fehler``) bekommen ihren Code hier (``als_stufenfehler``);
Aufruffehler und die deutsche Hilfe stehen in ``befehl.py``.
"""

from __future__ import annotations

import logging
import sys

import click

# Die Meldungen gehen über logging (``betrieb.protokoll.einrichten``).
_MELDUNG = logging.getLogger("auswahlstufe")

EXIT_OK = 0
EXIT_EINGABE = 1
EXIT_AUFRUF = 2
EXIT_DATENBANK = 3
EXIT_VORAUSSETZUNG = 4
EXIT_GESPERRT = 5
EXIT_ZEITLIMIT = 6
EXIT_KONFIGURATION = 7
EXIT_WORKER = 8
EXIT_ABGEBROCHEN = 130


class StufenFehler(click.ClickException):
    """Ein Fehler, den ein Mensch beheben kann: ein Satz, kein Traceback."""

    exit_code = EXIT_EINGABE

    def show(self, file=None) -> None:
        # Was auf stdout wartet (die Liste, auf die „Liste oben“ zeigt), zuerst: in einer Röhre
        # (``2>&1 | …``) ist stdout gepuffert, stderr nicht.
        sys.stdout.flush()
        if file is None:
            _MELDUNG.error(f"Fehler: {self.format_message()}")
        else:
            click.echo(f"Fehler: {self.format_message()}", file=file)


class EingabeFehler(StufenFehler):
    exit_code = EXIT_EINGABE


class DatenbankFehler(StufenFehler):
    exit_code = EXIT_DATENBANK


class VoraussetzungFehlt(StufenFehler):
    exit_code = EXIT_VORAUSSETZUNG


class RechtFehlt(VoraussetzungFehlt):
    """Der Rolle fehlt ein Recht; ``DeutscherBefehl`` hängt den nächsten Schritt an."""


class LaufGesperrt(StufenFehler):
    exit_code = EXIT_GESPERRT


class Zeitlimit(StufenFehler):
    exit_code = EXIT_ZEITLIMIT


class KonfigurationsFehler(StufenFehler):
    """DATABASE_URL oder eine Option aus der Umgebung ist kaputt – kein Fehler des Servers."""

    exit_code = EXIT_KONFIGURATION


class WorkerFehler(StufenFehler):
    """Ein Worker starb oder hing länger als das Zeitlimit je Stapel."""

    exit_code = EXIT_WORKER


class Abgebrochen(StufenFehler):
    exit_code = EXIT_ABGEBROCHEN


# Die Fehler von db.py tragen ``ART``; über den Namen, nicht die Klasse, damit dieses Modul
# db.py (und psycopg) nicht mitlädt – auch nicht in den Workern der Extraktion.
_NACH_ART: dict[str, type[StufenFehler]] = {
    "datenbank": DatenbankFehler,
    "voraussetzung": VoraussetzungFehlt,
    "recht": RechtFehlt,
    "zeitlimit": Zeitlimit,
    "konfiguration": KonfigurationsFehler,
}


def als_stufenfehler(fehler: BaseException) -> StufenFehler | None:
    """Der Fehler der Stufe zu ``fehler``: er selbst, oder für einen ``db.Fehler`` derselbe
    Satz mit dem Code seiner Art; sonst None."""
    if isinstance(fehler, StufenFehler):
        return fehler
    art = getattr(type(fehler), "ART", None)
    if isinstance(art, str) and art in _NACH_ART:
        return _NACH_ART[art](str(fehler))
    return None
