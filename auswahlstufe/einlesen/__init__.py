"""``--einlesen``: die Eingabe der Stufe aus Dateien, nicht ihre Auswahl.

Schreibt ``extraktionen`` und ``seiten``, nicht ``selected_extractor``: ``datei``
(``--einlesen DATEI.json``, mit ``quelle``) und ``ordner`` (``--einlesen ORDNER``); beide teilen
``zeilen``, ``stuecke`` und ``bericht``. Verhalten: docs/extraktion.md, „Seiten mit ``--einlesen``“.
"""
