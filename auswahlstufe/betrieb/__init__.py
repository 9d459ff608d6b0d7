"""Was jeder Lauf in der Datenbank braucht – die Auswahl wie die Extraktion davor.

Ein Lauf hat einen Kontext (``kontext.Laufkontext``): die Verbindung, die seine Sperre hält
und über die er alles schreibt, die Leseverbindung, den Abbruch durch Signale und den
Zeilenkopf seines Protokolls. Dazu hier: die Sperren (``sperre``), das Protokoll der Läufe
(``laeufe``), welche Items ein Lauf nimmt (``bereich``), das Lesen in Keyset-Seiten
(``keyset``), Items, die Ingest mitten im Lauf löschte (``ingest``), die Worker-Prozesse
(``pool``) und die Ausgabe über ``logging`` (``protokoll``).
"""
