"""Was jeder Lauf in der Datenbank braucht – die Auswahl wie die Extraktion davor.

Die Module und ihr Anliegen: docs/betrieb-lauf.md, „Aufbau“.
"""
