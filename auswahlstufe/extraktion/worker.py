"""Im Worker der Extraktion: sein Anfang und ein Aufruf eines Extraktors.

``anfang`` (einmal je Worker): Extraktoren laden, das Netz sperren, die Speichergrenze setzen;
``aufrufen``: ein Extraktor auf einer Seite als ``(text, fehler)``, die Speichergrenze als
``Umgebungsfehler``. Die Isolation im Ganzen: docs/extraktion.md, „Isolation“. Dieses Modul lädt
der forkserver vorab (``seiten.VORLADEN``): es kennt weder Datenbank noch Lauf.
"""

from __future__ import annotations

import logging
import os
import re
import resource
import socket

from auswahlstufe.extraktion import aufrufe, fassungen


class NetzGesperrt(OSError):
    pass


def _netz_sperren() -> None:
    """Kein Netz in der Extraktion: jeder Verbindungsversuch scheitert sofort."""

    def gesperrt(*args, **kwargs):
        raise NetzGesperrt("Netzzugriff ist in der Extraktion gesperrt")

    socket.socket.connect = gesperrt
    socket.socket.connect_ex = gesperrt
    socket.create_connection = gesperrt
    socket.getaddrinfo = gesperrt


def _adressraum() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


# Ob dieser Worker die Beschleuniger eingespielt hat (``anfang``, wie ein initializer).
_beschleuniger = False


def anfang(speichergrenze_mb: int) -> str | None:
    """Anfang jedes Workers. Gibt zurück, warum er ohne Beschleuniger läuft (None: mit ihnen) –
    der Pool bringt es dem Hauptprozess, der es einmal sagt. Scheitert er (ein Paket fehlt, der
    Fix von newspaper4k ist ungeprüft: ``fassungen.FassungUngeprueft``), sagt der Pool warum.
    Die Prüfung kostet hier Millisekunden: der forkserver hat die Extraktoren schon geladen."""
    global _beschleuniger
    logging.disable(logging.CRITICAL)  # readability & Co. schrieben sonst Tracebacks nach stderr
    fassungen.newspaper_fest_pruefen()
    grund = fassungen.beschleuniger_abweichung()
    _beschleuniger = grund is None
    aufrufe.vorbereiten(beschleuniger=_beschleuniger)
    _netz_sperren()
    grenze = _adressraum() + speichergrenze_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (grenze, grenze))
    return grund


class Umgebungsfehler(str):
    """Der Fehler eines Kandidaten, der nichts über die Seite sagt, sondern über die Umgebung – ein
    späterer Versuch kann gelingen (``seiten.voruebergehend``). ``art``: ``zeitlimit``, ``tot``
    (der Worker starb) oder ``speicher``. Ein ``str``, weil der Fehler eines Kandidaten Text ist;
    die Art trägt er daneben, niemand liest sie aus dem Wortlaut."""

    def __new__(cls, text: str, art: str) -> Umgebungsfehler:
        selbst = super().__new__(cls, text)
        selbst.art = art
        return selbst

    def __reduce__(self):  # bleibt auf dem Weg vom Worker zum Hauptprozess (pickle), was er ist
        return (Umgebungsfehler, (str(self), self.art))


def speicher_fehler(grenze_mb: int, wobei: str = "") -> Umgebungsfehler:
    return Umgebungsfehler(f"Speichergrenze {grenze_mb} MB überschritten{wobei}", "speicher")


def aufrufen(extraktor: str, html: str, url: str, speichergrenze_mb: int) -> tuple[str | None, str | None]:
    """``(text, None)`` oder ``(None, fehler)`` für einen Extraktor auf einer Seite."""
    try:
        return aufrufe.extrahieren(extraktor, html, url, beschleuniger=_beschleuniger), None
    except MemoryError:
        return None, speicher_fehler(speichergrenze_mb)
    except RecursionError:
        return None, "Seite zu tief verschachtelt (Rekursionsgrenze)"
    except Exception as e:  # ein Extraktor darf an einer Seite scheitern
        beschreibung = f"{type(e).__name__}: {str(e)[:300]}"
        if _speichermangel(e):  # libxml2 meldet fehlenden Speicher als eigene Ausnahme
            return None, speicher_fehler(speichergrenze_mb, f" ({extraktor}: {beschreibung})")
        return None, f"Extraktor scheiterte: {beschreibung}"


# So nennt libxml2 (über lxml) fehlenden Speicher; an der Speichergrenze kommt er so statt als
# MemoryError – readability etwa meldet „Unparseable: unknown error (<string>, line 0)“.
_SPEICHERMANGEL = re.compile(r"out of memory|memory allocation failed|^unknown error\b", re.IGNORECASE)


def _speichermangel(fehler: BaseException | None) -> bool:
    """Scheiterte der Aufruf am Speicher, auch wenn die Ausnahme anders heißt? Dann ist es ein
    Fehler der Umgebung, kein Urteil über die Seite (im Zweifel kostet das höchstens zwei
    weitere Versuche, ``extraktion.stufe.GRENZE``)."""
    for _ in range(10):  # die Kette aus __cause__/__context__, nicht endlos
        if fehler is None:
            return False
        if isinstance(fehler, MemoryError) or _SPEICHERMANGEL.search(str(fehler)):
            return True
        fehler = fehler.__cause__ or fehler.__context__
    return False
