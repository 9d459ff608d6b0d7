"""Alles, was nur die Auswahl-Stufe braucht – die Räume hinter der Karte an der Wurzel.

Die gemeinsamen Dateien des Hauses (``db`` mit ``db_anmeldung``, ``normalisierung``,
``version``) stehen an der Wurzel, unter diesem Paket, und importieren nichts aus ihm. Hier:
die Regeln (``regeln``), der Stapelbetrieb (``stapel``), die Kommandozeile
(``cli``) und je ein Unterpaket für die Läufe in der Datenbank (``lauf``),
``--einlesen`` (``einlesen``), die Extraktion aus HTML (``extraktion``), das Prüfen
von Hand (``pruefung``) und die
Maßstäbe der Tests und Benchmarks (``referenz``, nie im Betrieb).
Welche Schicht welche importieren darf, steht in ``pyproject.toml``
(``[tool.importlinter]``); CI prüft es mit ``lint-imports``.
"""

# Die Fassung der Stufe: steigt mit jeder Änderung, die ein Haus bemerkt (docs/aenderungen.md). Aus
# ihr macht pip die Fassung der Installation (pyproject.toml, dynamic); ``pakete`` vergleicht beide.
VERSION = "2.2.0"
