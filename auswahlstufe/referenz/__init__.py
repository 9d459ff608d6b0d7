"""Maßstäbe für Tests und Benchmarks, nie im Betrieb: die Grundlinie nach Quelle 000
(``grundlinie``), erzeugte Artikel mit drei Kandidaten (``erzeugen``) und die Eigenschaften
fürs Fuzzing (``eigenschaften``). Tests und Benchmarks importieren sie von hier, nie
voneinander; kein Modul des Betriebs importiert dieses Paket (``[tool.importlinter]``)."""
