"""``--einlesen``: die Eingabe der Stufe aus Dateien, nicht ihre Auswahl.

Eine eigene Betriebsart neben den Läufen der Stufe (``lauf.stufe``): sie schreibt
nicht ``selected_extractor``, sondern ``extraktionen`` und ``seiten``. Zwei Wege,
je ein Modul:

- ``datei`` – ``--einlesen DATEI.json``: Kandidaten (und Seiten aus Artikeln mit
  ``html``) aus einer Datei im Stapelformat, zweimal Artikel für Artikel gelesen;
  ``quelle`` entscheidet vorher, was beide Durchgänge lesen.
- ``ordner`` – ``--einlesen ORDNER``: ``.html``- und ``.html.gz``-Seiten nach ``seiten``.

Beide teilen ``zeilen`` (aus einem Artikel die Zeilen für die Datenbank),
``stuecke`` (die Zeilen Stück für Stück als kurze Upserts, alle in einer
Transaktion) und ``bericht`` (was am Ende auf stdout und stderr steht).
"""
