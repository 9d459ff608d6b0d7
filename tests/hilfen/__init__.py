"""Hilfen für die Tests, nach Anliegen.

* ``server``: den PostgreSQL-Server der Sitzung holen, anhalten und wieder starten,
  PostgreSQL 15 aus dem Debian-Paket, pg_hba.conf und pg_ident.conf eines Servers;
* ``daten``: Items und Kandidaten anlegen, Tabellen lesen, Fingerabdrücke, der Slot;
* ``prozesse``: die Stufe als Unterprozess, /proc lesen, auf einen Lauf warten;
* ``haus``: das Haus aus docs/betrieb.md (die Einrichtung, Schritt für Schritt).

Die Fixtures stehen in ``conftest.py``; hier steht, was Tests (und Fixtures)
aufrufen. Tests importieren von hier, nie aus ``conftest`` oder einer anderen
Testdatei.
"""

from __future__ import annotations

from pathlib import Path

PROJEKT = Path(__file__).resolve().parents[2]
