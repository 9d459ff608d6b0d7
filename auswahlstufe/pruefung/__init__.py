"""Prüfen von Hand: die zweifelhaftesten Entscheidungen (``auslese``), ihre CSV und Prüfseite
(``stichprobe``, ``pruefseite``), Urteile (``urteile``) und zwei Fassungen aus der Datenbank
(``vergleich_db``)."""
