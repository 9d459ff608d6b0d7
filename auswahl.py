"""wurzelwerk-auswahl: der Einstieg von der Kommandozeile.

``python auswahl.py --help`` zeigt alle Betriebsarten. Die Regeln stehen in
``regeln.py``, die Kommandozeile in ``cli.py``; dieses Skript startet nur.
"""

from cli import cli

if __name__ == "__main__":
    cli()
