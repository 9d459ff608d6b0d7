"""Eine Nacht im echten Haus: cron tickt, Ingest arbeitet nebenan, dann Störungen.

Das Haus steht, wie docs/betrieb.md es baut (``hilfen.haus.Haus``, die Blöcke der Einrichtung auf
PostgreSQL 18 und 15 aus dem Debian-Paket): der Superuser legte nur die Datenbank und die Rollen
``ingest`` und ``aw_admin`` an; Ingest besitzt ``raw_items`` und holt als Abholer die Seiten
(„Als Admin, für den Abholer“), der Admin besitzt die Tabellen der Stufe, die Betriebsrolle
``aw_stufe`` fährt cron, ``aw_blick`` liest nur. Jeder Tick ist eine Zeile aus Schritt 7,
wörtlich, wie cron sie ausführt (``env -i``, ``PATH=/usr/bin:/bin``, ``/bin/sh -c``); was sie auf
stdout und stderr schreibt, ist die Mail von cron. Ingest schreibt mit eigener Verbindung, wie im
Betrieb: neue Items je Poll, ihre Seiten, Löschen nach der Aufbewahrungsfrist und ein
zurückgezogenes Item, während ein Tick läuft.

Verschränkt wird nach Ereignissen, nie nach der Uhr: Ingest hält eine Zeile von ``raw_items`` in
einer offenen Transaktion (gelöscht oder ``for update``); das Schreiben der Extraktion des Ticks
wartet am Fremdschlüssel darauf – sichtbar in ``pg_stat_activity`` –, und erst dann geschieht,
was geschehen soll:

1. ein zweiter Tick, während der erste die Sperre hält: Exit 5, keine Mail, ein Hinweis im Log;
   Ingest löscht nach seiner Frist, pollt und gibt frei – der erste endet mit ``entfallen 1``;
2. der Server hält an (PostgreSQL 18: ``-m fast``, 15: ``-m immediate``) und kommt wieder: der
   Tick endet mit einer deutschen Meldung in Mail und Log, sein Lauf bleibt offen;
3. der nächste Tick schließt ihn (ein Hinweis, eine Mail) und wird mitten im Slot getötet
   (SIGKILL nur auf den Hauptprozess, wie vom OOM-Killer): sein Lauf bleibt offen.

Dann zeigen die Sichten – gelesen von ``aw_stufe`` und ``aw_blick`` mit den Abfragen der Doku –
genau die offenen Slots, den toten Lauf und den letzten wirklich kodierten Slot; die nächsten
Ticks und die Zeile der Nacht holen alles nach, ohne dass ein Mensch etwas tut; das Protokoll
erzählt die Nacht, wie sie war; und ``selected_extractor`` und ``extraktionen`` sind Zeile für
Zeile, was ein sauberer Neubau aus denselben Items und Seiten ergibt.

Der Neubau ist eine zweite Datenbank mit dem Schema der Stufe und nur den Items und Seiten des
Hauses vom Ende der Nacht, einmal ``--extrahieren --backfill``: derselbe Weg durch Extraktion und
Auswahl, aber ohne Geschichte. ``waehle`` im Prozess über die Kandidaten des Hauses prüfte nur die
Auswahl – und gegen die Kandidaten, die die Nacht selbst schrieb.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
from datetime import timedelta

import psycopg
import pytest
from psycopg import sql

from auswahlstufe.betrieb import migrationen
from auswahlstufe.fehler import EXIT_OK
from tests.hilfen import PROJEKT
from tests.hilfen.daten import SLOT, Daten, raw_items_anlegen
from tests.hilfen.haus import HAUS_DB, Haus, abfrage_der_doku, abfragen_der_doku, cron_zeilen, schritt
from tests.hilfen.prozesse import SQL_WARTET, auswahl_starten, ende, warten_bis, warten_bis_getrennt
from version import CODER_VERSION as V

pytestmark = pytest.mark.datenbank

SEITEN = [s["html"] for s in json.loads((PROJEKT / "beispiele" / "seiten.json").read_text(encoding="utf-8"))]
ALT = SLOT - timedelta(days=1)  # ein Slot von gestern: ihn löscht Ingest nach seiner Frist
S1, S2, S3 = (SLOT + timedelta(minutes=15 * n) for n in range(3))  # 08:00, 08:15, 08:30 in Berlin
EXTRAKTION_SCHREIBT = "wurzelwerk-auswahl schreiben"
SQL_ITEM = "insert into raw_items (id, slot, haus, titel, url) values (%s, %s, 'Nord', %s, %s)"
# So schreibt der Abholer (docs/betrieb.md, „Als Admin, für den Abholer“).
SQL_SEITE = """
insert into seiten (item_id, html, url, content_type) values (%s, %s, %s, 'text/html; charset=utf-8')
on conflict (item_id) do update
set html = excluded.html, url = excluded.url, content_type = excluded.content_type, geholt_am = now()
"""
SQL_PROTOKOLL = "select modus, slot, exit_code, zustand from auswahl_laeufe order by id"
# Die Kandidaten, wie die Extraktion sie schrieb (ohne extrahiert_am: der Zeitpunkt ist kein Ergebnis).
SQL_KANDIDATEN = """
select item_id, extraktor, text, fehler, extraktor_fassung, seite_sha256, versuche, vorlaeufig
from extraktionen order by item_id, extraktor
"""
NEUBAU = "wurzelwerk_neubau"
SQL_KOPIE_RAUS = sql.SQL("copy (select {} from {}) to stdout")
SQL_KOPIE_REIN = sql.SQL("copy {} ({}) from stdin")
KOPF = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d modus=\S+( slot=\S+)? version=\S+ \| (.*)$")
TOT = (
    ") trug sein Ende nicht ein (Datenbanksitzung weg: getötet, Server gestoppt oder Verbindung verloren); "
    "jetzt als abgebrochen geschlossen, sein Aufruf {} ebenso."
)


def texte(ausgabe: str) -> list[str]:
    """Die Zeilen einer Ausgabe der Stufe ohne Zeilenkopf (kein Terminal: jede Zeile hat einen)."""
    zeilen = [KOPF.match(z) for z in ausgabe.splitlines()]
    assert all(zeilen), ausgabe
    return [z.group(2) for z in zeilen]


class Nacht:
    """Das Haus mit Ingest nebenan (eine eigene Verbindung), dem cron-Log und den Augen des Tests."""

    def __init__(self, haus: Haus) -> None:
        self.haus = haus
        self.zeilen = cron_zeilen()
        self.log = haus.klon / "log" / "auswahl.log"
        self.gelesen = 0
        self.ingest = psycopg.connect(haus.url("ingest"))  # Transaktionen, wie Ingest sie hätte

    def poll(self, slot, ids: list[int]) -> None:
        """Ingest trägt die Items eines Polls ein (in seiner offenen Transaktion)."""
        for i in ids:
            self.ingest.execute(SQL_ITEM, (i, slot, f"Meldung {i}", f"https://tagblatt.example/{i}"))

    def seiten_holen(self, ids: list[int]) -> None:
        """Der Abholer (als ingest) schreibt die Seiten der Items – die drei aus beispiele/seiten.json."""
        for i in ids:
            self.ingest.execute(SQL_SEITE, (i, SEITEN[i % 3].encode(), f"https://tagblatt.example/{i}"))
        self.ingest.commit()

    def tick(self, zeile: str = "tick"):
        """Eine Zeile der crontab im Hintergrund."""
        return self.haus.cron_starten(self.zeilen[zeile])

    def mail(self, zeile: str = "tick") -> str:
        """Eine Zeile der crontab bis zum Ende; was cron mailen würde (stdout und stderr)."""
        lauf = self.haus.wie_cron(self.zeilen[zeile])
        return lauf.stdout + lauf.stderr

    def neu_im_log(self) -> list[str]:
        """Was seit dem letzten Blick ins Log kam, ohne Zeilenkopf."""
        text = self.log.read_text(encoding="utf-8")
        neu, self.gelesen = text[self.gelesen :], len(text)
        return texte(neu)

    def warten_bis_er_wartet(self, prozess) -> None:
        """Bis die Extraktion des Ticks am Fremdschlüssel auf die Zeile von Ingest wartet."""
        warten_bis(
            self.haus.server.url(HAUS_DB),
            prozess,
            lambda conn: conn.execute(SQL_WARTET, (EXTRAKTION_SCHREIBT,)).fetchone()[0],
            "seine Extraktion am Fremdschlüssel wartet",
            frist=300,  # die Extraktoren starten auf belasteten Kernen langsam
        )

    def sehen(self, anfrage, params=None) -> list[tuple]:
        """Die Augen des Tests (Superuser), für das, was keine Abfrage der Doku zeigt."""
        with psycopg.connect(self.haus.server.url(HAUS_DB), autocommit=True) as conn:
            return conn.execute(anfrage, params).fetchall()

    def offener_slot_lauf(self) -> tuple:
        """(id, aufruf, pid) des einen offenen Slot-Laufs."""
        (zeile,) = self.sehen(
            "select id, aufruf, pid from auswahl_laeufe where beendet_am is null and modus = 'slot'"
        )
        return zeile

    def schliessen(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self.ingest.close()


def ueberwachung(haus: Haus, rolle: str) -> dict[int, list[tuple]]:
    """Die Abfragen „Überwachung 1–3“ der Doku, wie sie dastehen, unter ``rolle``."""
    return {n: haus.sql(rolle, abfrage_der_doku(f"Überwachung {n}:")) for n in (1, 2, 3)}


@pytest.fixture
def nacht(haus: Haus):
    haus.bauen(8)  # Superuser, Ingest, migrieren, Rezept, .env, prüfen, cron-Log, aw_blick
    haus.schritt("Als Admin, für den Abholer")
    n = Nacht(haus)
    yield n
    n.schliessen()


def test_eine_nacht_mit_ingest_nebenan_und_stoerungen(nacht: Nacht, haus: Haus):
    # --- Der Abend: Ingest pollt, der Abholer holt die Seiten, cron kodiert – still. ------------
    nacht.poll(ALT, [1, 2, 3])
    nacht.seiten_holen([1, 2, 3])
    assert nacht.mail() == ""  # Arbeit ohne Befund: keine Mail
    assert "neu 3, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0" in " ".join(nacht.neu_im_log())
    assert nacht.mail() == "" and nacht.neu_im_log() == []  # nichts zu tun: nicht einmal eine Zeile

    # --- 1. Ingest zieht ein Item zurück, während der Tick es extrahiert; ein zweiter Tick trifft
    #     auf den ersten; Ingest löscht nach seiner Frist, pollt und gibt frei. --------------------
    nacht.poll(S1, [4, 5, 6])
    nacht.seiten_holen([4, 5, 6])
    nacht.ingest.execute("delete from raw_items where id = 6")  # noch offen: die Zeile ist gesperrt
    erster = nacht.tick()
    nacht.warten_bis_er_wartet(erster)
    assert nacht.mail() == ""  # der zweite Tick überspringt den Slot des ersten, keine Mail …
    (hinweis,) = [z for z in nacht.neu_im_log() if not z.startswith("Extrahieren: ")]  # … sein Hinweis
    halter, aufruf, pid = nacht.offener_slot_lauf()
    assert hinweis.startswith("Hinweis: Slot 2026-09-07T08:00+02:00 bearbeitet gerade ein anderer Lauf: "), (
        hinweis
    )
    erster_lauf = (
        f"Lauf {halter} (--extrahieren --slot 2026-09-07T08:00+02:00 aus --nachholen {aufruf}, Prozess {pid} "
    )
    assert erster_lauf in hinweis, hinweis
    assert hinweis.endswith("; übersprungen."), hinweis
    nacht.ingest.execute("delete from raw_items where slot < %s", (SLOT - timedelta(hours=12),))  # Frist
    nacht.poll(S2, [7, 8, 9])
    nacht.ingest.commit()
    code, out, err = ende(erster)
    assert (code, out, err) == (0, "", ""), f"{out}\n{err}"  # die Mail des ersten: leer
    log = nacht.neu_im_log()
    (extraktion,) = [z for z in log if z.startswith("Extraktion: ")]
    assert extraktion.startswith("Extraktion: 3 Seiten neu oder veraltet, 3 extrahiert, ") and (
        ", entfallen 1, " in extraktion
    ), log
    assert [z.split(" in ")[0] for z in log if z.startswith("neu ")] == [
        "neu 2, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0"
    ], log
    # Die Frist nahm Items, Seiten, Kandidaten und Entscheidungen von gestern mit (als ingest).
    for tabelle in ("seiten", "extraktionen", "selected_extractor"):
        assert nacht.sehen(
            sql.SQL("select count(*) from {} where item_id <= 3").format(sql.Identifier(tabelle))
        ) == [(0,)], tabelle
    assert ueberwachung(haus, "aw_stufe")[2] == []  # 08:15 hat noch keine Seiten: nichts zu tun

    # --- 2. Der Server hält mitten im Tick an und kommt wieder. -------------------------------
    nacht.seiten_holen([7, 8, 9])
    nacht.ingest.execute("select 1 from raw_items where id = 8 for update")
    dritter = nacht.tick()
    nacht.warten_bis_er_wartet(dritter)
    try:
        haus.server.stoppen("fast" if haus.version >= 16 else "immediate")
        code, out, err = ende(dritter)
    finally:
        haus.server.starten()
    nacht.schliessen()
    nacht.ingest = psycopg.connect(haus.url("ingest"))
    # Was die Stufe auf stderr schreibt, geht durch tee: in die Mail und ins Log. Deutsch, kein
    # Traceback, kein Passwort; davor, was die Extraktion bis dahin tat.
    *bis_dahin, fehler = mail = texte(out + err)
    assert re.fullmatch(
        r"Fehler: (Verbindung zur Datenbank verloren|Der Datenbankserver wurde heruntergefahren) "
        r"\(postgresql://aw_stufe@/wurzelwerk\?host=[^)]*\)(: „[^“]+“)?\. Geschriebene Stapel bleiben; "
        r"ein erneuter Lauf setzt fort\.",
        fehler,
    ), mail
    assert haus.passwort("aw_stufe") not in out + err, mail
    assert all(z.startswith("Extraktion bis zum Fehler: ") for z in bis_dahin), mail
    log = nacht.neu_im_log()  # (dort vielleicht dazwischen Fortschritt: stdout, alle 10 s)
    assert [z for z in log if z in mail] == mail, log
    toter, toter_aufruf, _ = nacht.offener_slot_lauf()
    assert [z[0] for z in ueberwachung(haus, "aw_stufe")[2]] == [S2]

    # --- 3. Ingest pollt; der nächste Tick schließt den Lauf des Servers (ein Hinweis) und wird
    #     mitten im Slot getötet. -------------------------------------------------------------
    nacht.poll(S3, [10, 11, 12])
    nacht.seiten_holen([10, 11, 12])
    nacht.ingest.execute("select 1 from raw_items where id = 10 for update")  # 08:30 kommt zuerst dran
    vierter = nacht.tick()
    nacht.warten_bis_er_wartet(vierter)
    getoetet, aufruf, pid = nacht.offener_slot_lauf()
    os.kill(pid, signal.SIGKILL)  # nur der Hauptprozess, wie vom OOM-Killer
    nacht.ingest.rollback()
    _, out, err = ende(vierter)  # endet: die Worker gehen mit, niemand hält stdout und stderr offen
    warten_bis_getrennt(haus.server.url(HAUS_DB))
    # Die Mail dieses Ticks: der Hinweis auf den Lauf des Servers, den er noch schloss, und das
    # Wort der Shell über den getöteten Prozess (dash: „Killed“).
    (geschlossen,) = texte(out)
    assert geschlossen.startswith(
        f"Hinweis: Lauf {toter} (--extrahieren --slot 2026-09-07T08:15+02:00 aus --nachholen {toter_aufruf}, "
    ), geschlossen
    assert geschlossen.endswith(TOT.format(toter_aufruf)), geschlossen
    assert re.fullmatch(r"(.*Killed\n)?", err), err
    assert geschlossen in nacht.neu_im_log()

    # --- Die Überwachung sagt die Wahrheit – als Betriebsrolle und als aw_blick: offen sind 08:15
    #     und 08:30, der getötete Aufruf und sein Slot-Lauf stehen ohne Ende und ohne Sitzung da,
    #     zuletzt kodiert ist 08:00 (zwei Items, eins zog Ingest zurück). -------------------------
    for rolle in ("aw_stufe", "aw_blick"):
        blick = ueberwachung(haus, rolle)
        assert [(z[0], z[1], z[2], z[3], z[5]) for z in blick[1]] == [(S1, V, 2, 2, halter)], blick[1]
        assert blick[2] == [(S3, V, 3, 0, 3), (S2, V, 3, 0, 3)], blick[2]  # der neueste zuerst
        assert [(z[0], z[1], z[2], z[7], z[8]) for z in blick[3]] == [
            (aufruf, "nachholen", None, pid, False),
            (getoetet, "slot", S3, pid, False),
        ], blick[3]
    offen, _ = schritt("Von Hand").sh()  # die Liste für einen Menschen, wie die Doku sie zeigt
    liste = haus.ausfuehren(offen)
    assert liste.returncode == 0, liste.stderr
    assert re.findall(r"2026-09-07T\d\d:\d\d", liste.stdout) == ["2026-09-07T08:30", "2026-09-07T08:15"]

    # --- Die nächsten Ticks und die Nacht holen nach, ohne dass ein Mensch etwas tut. ---------
    (geschlossen,) = texte(nacht.mail())  # eine Mail: der getötete Lauf ist geschlossen
    assert geschlossen.startswith(
        f"Hinweis: Lauf {getoetet} (--extrahieren --slot 2026-09-07T08:30+02:00 aus --nachholen {aufruf}, "
        f"Prozess {pid} auf "
    ), geschlossen
    assert geschlossen.endswith(TOT.format(aufruf)), geschlossen
    assert [z.split(" in ")[0] for z in nacht.neu_im_log() if z.startswith("neu ")] == [
        "neu 3, geändert 0, unverändert 0, entfernt 0, ohne Kandidaten 0"
    ] * 2
    assert nacht.mail() == "" and nacht.neu_im_log() == []
    assert nacht.mail("nacht") == ""
    assert [z.split(" in ")[0] for z in nacht.neu_im_log() if z.startswith("neu ")] == [
        "neu 0, geändert 0, unverändert 8, entfernt 0, ohne Kandidaten 0"
    ]
    for rolle in ("aw_stufe", "aw_blick"):
        blick = ueberwachung(haus, rolle)
        assert [(z[0], z[1], z[2], z[3]) for z in blick[1]] == [(S3, V, 3, 3)], blick[1]
        assert blick[2] == [] and blick[3] == [], blick

    # Das Protokoll erzählt die Nacht, wie sie war – und die Abfragen der Doku sagen es auch.
    assert haus.sql("aw_blick", SQL_PROTOKOLL) == [
        ("nachholen", None, 0, "erfolg"),  # der Abend
        ("slot", ALT, 0, "erfolg"),
        ("nachholen", None, 0, "erfolg"),  # nichts zu tun
        ("nachholen", None, 0, "erfolg"),  # 1.: der erste Tick …
        ("slot", S1, 0, "erfolg"),
        ("nachholen", None, 0, "erfolg"),  # … und der zweite daneben (übersprang den Slot des ersten)
        ("nachholen", None, None, "abgebrochen"),  # 2.: der Server hielt an
        ("slot", S2, None, "abgebrochen"),
        ("nachholen", None, None, "abgebrochen"),  # 3.: SIGKILL
        ("slot", S3, None, "abgebrochen"),
        ("nachholen", None, 0, "erfolg"),  # nachgeholt, der neueste zuerst
        ("slot", S3, 0, "erfolg"),
        ("slot", S2, 0, "erfolg"),
        ("nachholen", None, 0, "erfolg"),  # still
        ("backfill", None, 0, "erfolg"),  # die Zeile der Nacht
    ]
    # Die Zählung je Tag (über Mitternacht: zwei Tage): 8 Aufrufe, 6 erfolgreich, keiner gesperrt,
    # keiner mit einem Fehler, zwei starben (Serverhalt, SIGKILL) – nicht unter „fehler“.
    tage = haus.sql("aw_blick", abfrage_der_doku("Hat cron heute gelaufen"))
    assert [sum(z[i] for z in tage) for i in (1, 2, 3, 4, 5)] == [8, 6, 0, 0, 2], tage
    abgebrochen = haus.sql("aw_blick", abfrage_der_doku("Läufe, die ihr Ende nicht eintrugen"))
    assert [z[0] for z in abgebrochen] == [getoetet, aufruf, toter, toter_aufruf], abgebrochen
    lauf = haus.psql("aw_stufe", "-v", "version=" + V, "-v", "item=4", eingabe=abfragen_der_doku())
    assert lauf.returncode == 0 and not lauf.stderr, lauf.stderr
    e = haus.stufe("check_db.py")
    assert e.code == EXIT_OK and f"Noch nicht kodiert mit {V}: 0" in e.out, str(e)
    assert "Traceback" not in nacht.log.read_text(encoding="utf-8")

    # --- Die Tabellen sind, was ein sauberer Neubau aus denselben Items und Seiten ergibt. -----
    assert nacht.sehen("select count(*), count(distinct item_id) from extraktionen") == [(24, 8)]
    url = neubau(haus)
    try:
        e = auswahl_starten("--extrahieren", "--backfill", "--prozesse", "1", url=url, cwd=haus.home)
        assert e.code == EXIT_OK, str(e)
        assert _lesen(haus.server.url(HAUS_DB)) == _lesen(url)
    finally:
        with haus.server.verwalten() as conn:
            conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(NEUBAU)))


def neubau(haus: Haus) -> str:
    """Eine zweite Datenbank auf demselben Server: das Schema der Stufe und die Items und Seiten
    des Hauses, wie sie am Ende der Nacht stehen – keine Kandidaten, Entscheidungen oder Läufe.
    Ein Werkzeug des Tests (als Superuser), kein Teil der Doku."""
    with haus.server.verwalten() as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(NEUBAU)))
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(NEUBAU)))
    url = haus.server.url(NEUBAU)
    raw_items_anlegen(url)
    migrationen.migrieren(url, ausgabe=lambda _: None)
    with psycopg.connect(haus.server.url(HAUS_DB)) as quelle, psycopg.connect(url) as ziel:
        for tabelle, spalten in (
            ("raw_items", ("id", "slot", "haus", "titel", "teaser", "url", "veroeffentlicht_am")),
            ("seiten", ("item_id", "html", "url", "content_type", "geholt_am")),
        ):
            namen = sql.SQL(", ").join(map(sql.Identifier, spalten))
            with (
                quelle.cursor().copy(SQL_KOPIE_RAUS.format(namen, sql.Identifier(tabelle))) as raus,
                ziel.cursor().copy(SQL_KOPIE_REIN.format(sql.Identifier(tabelle), namen)) as rein,
            ):
                for stueck in raus:
                    rein.write(stueck)
    return url


def _lesen(url: str) -> tuple[list[tuple], list[tuple]]:
    """Die Entscheidungen (``Daten.kodierungen``: alles außer pruefsumme und kodiert_am) und die
    Kandidaten einer Datenbank."""
    daten = Daten(url)
    try:
        return daten.kodierungen(), daten.abfrage(SQL_KANDIDATEN)
    finally:
        daten.schliessen()
