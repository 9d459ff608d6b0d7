"""Vom HTML zu den drei Kandidaten: die Extraktoren in isolierten Workern (``seiten``), die
Zeichensatzregel (``zeichensatz``), ``--extrahieren`` im Stapelbetrieb (``stapel``) und in der
Datenbank (``stufe``)."""
