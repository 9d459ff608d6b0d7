"""Die Postgres-Stufe: ein Lauf (``stufe``) und seine Teile – lesen, kodieren, schreiben,
sperren, protokollieren –, dazu die Migrationen und die Rechte je Modus (``--einlesen``
steht im eigenen Paket ``auswahlstufe.einlesen``)."""
