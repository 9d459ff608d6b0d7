"""Die Postgres-Stufe: ein Lauf (``stufe``) und seine Teile – lesen, kodieren, schreiben,
sperren, protokollieren –, dazu ``--einlesen``, die Migrationen und die Rechte je Modus."""
