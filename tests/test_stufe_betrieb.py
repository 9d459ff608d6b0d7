"""Betrieb ohne Aufsicht: tote und hängende Worker, kurze Lesetransaktionen,
das Protokoll der Läufe.

Jeder Test startet ``python auswahl.py`` als eigenen Prozess in einer eigenen
Prozessgruppe, damit er den Hauptprozess und seine Worker so treffen kann, wie
der OOM-Killer, ``kill -STOP`` oder cron es täten.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from auswahlstufe.betrieb import laeufe as protokoll
from auswahlstufe.betrieb import sperre
from auswahlstufe.betrieb.pool import Fehlschlag
from auswahlstufe.fehler import EXIT_ABGEBROCHEN, EXIT_OK, EXIT_WORKER
from auswahlstufe.lauf.bilanz import Bilanz, Stapel
from auswahlstufe.lauf.stufe import STAPEL, Einstellungen, worker_fehler
from tests.hilfen import PROJEKT
from tests.hilfen.daten import SLOT, SLOT_TEXT
from tests.hilfen.prozesse import (
    Halt,
    bilanzzeile,
    bis_beendet,
    ende,
    haengen,
    im_hintergrund,
    in_sitzung,
    kinder,
    ruhen_lassen,
    warten_bis_getrennt,
)
from version import CODER_VERSION

pytestmark = pytest.mark.datenbank

ITEMS = 5000
SATZ = "Der Rat der Stadt tagte bis in die Nacht und beschloss den Haushalt mit knapper Mehrheit. "
# Items und Kandidaten im Server erzeugen: schneller als 15.000 einzelne Inserts.
SQL_ITEMS = (
    "insert into raw_items (id, slot) select g, '2026-09-07 06:00+00' from generate_series(1, %(n)s) g"
)
SQL_KANDIDATEN = """
insert into extraktionen (item_id, extraktor, text)
select g, x, 'Meldung ' || g || '. ' || repeat(%(satz)s, 3 + g %% 5) || case when x = 'newspaper4k' then
    'Jetzt abonnieren.' else '' end
from generate_series(1, %(n)s) g, unnest(array['newspaper4k', 'readability', 'trafilatura']) x
"""
SQL_GESCHRIEBEN = "select count(*) from selected_extractor"
SQL_LAEUFE = """
select modus, slot, teil, coder_version, neu, geaendert, unveraendert, entfernt, exit_code, meldung,
       beendet_am is not null as beendet, rechner, pid
from auswahl_laeufe order by id
"""


def bestand(url: str, n: int = ITEMS) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SQL_ITEMS, {"n": n})
        conn.execute(SQL_KANDIDATEN, {"n": n, "satz": SATZ})


def geschrieben(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute(SQL_GESCHRIEBEN).fetchone()[0]


def laeufe(url: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(SQL_LAEUFE).fetchall()


def zweiter_lauf_macht_den_rest(url: str, cwd: Path, schon: int) -> None:
    zweiter = im_hintergrund(url, "--backfill", cwd=cwd)
    code, out, err = ende(zweiter, timeout=120)
    assert code == EXIT_OK, err  # die Sperre ist frei
    assert bilanzzeile(out).startswith(f"neu {ITEMS - schon}, geändert 0, unverändert {schon},"), out


# --- Ein Worker stirbt ----------------------------------------------------------------------


def test_toter_worker_beendet_den_lauf_mit_exit_8_und_der_naechste_macht_weiter(db_url, tmp_path):
    """Gleich, ob der Worker an einem Stapel rechnete oder auf den nächsten wartete: der Lauf
    endet binnen Sekunden mit Exit 8, geschrieben sind nur ganze Stapel."""
    bestand(db_url)
    halt = Halt(tmp_path, "stapel", 1)
    prozess = im_hintergrund(db_url, "--backfill", "--prozesse", "2", cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(prozess)
    worker_pids = kinder(prozess.pid)
    assert len(worker_pids) == 2, worker_pids
    os.kill(worker_pids[0], signal.SIGKILL)  # wie der OOM-Killer
    gesendet = time.monotonic()
    halt.weiter()
    code, out, err = ende(prozess, timeout=60)
    dauer = time.monotonic() - gesendet
    schon = geschrieben(db_url)

    assert code == EXIT_WORKER, f"exit {code}\n{out}\n{err}"
    assert "Traceback" not in err
    assert "Worker" in err and "getötet (SIGKILL" in err and "Stapel" in err and "Items " in err, err
    assert "Zeitlimit" not in err, err
    assert f"Bis zum Fehler geschrieben: neu {schon}," in err, err
    assert STAPEL <= schon < ITEMS and schon % STAPEL == 0
    assert dauer < 30, dauer  # binnen Sekunden, nicht nie
    # Der Lauf steht mit Exit-Code und Meldung im Protokoll.
    (eintrag,) = laeufe(db_url)
    assert eintrag[0] == "backfill" and eintrag[8] == EXIT_WORKER and eintrag[10], eintrag
    assert "getötet (SIGKILL" in eintrag[9] and eintrag[4] == schon, eintrag
    zweiter_lauf_macht_den_rest(db_url, tmp_path, schon)


# --- Ein Worker hängt -----------------------------------------------------------------------


# Die Stapel 3 und 4 (Items 401–600, 601–800) hängen im Worker: Worker 0 rechnet Stapel 1 und 3,
# Worker 1 Stapel 2 und 4 – danach hängen beide, beim Rechnen, wie in einer Endlosschleife.
BEIDE_HAENGEN = haengen(401, 601)


def test_haengende_worker_beendet_das_stapel_zeitlimit(db_url, tmp_path):
    """Beide Worker hängen: der Lauf endet mit Exit 8 und dem Zeitlimit – nie mit „getötet“ für
    einen Worker, den der Pool selbst beendete, gleich in welcher Folge er sie bemerkt."""
    bestand(db_url)
    prozess = im_hintergrund(
        db_url, "--backfill", "--prozesse", "2", "--stapel-zeitlimit", "2", cwd=tmp_path, env=BEIDE_HAENGEN
    )
    code, out, err = ende(prozess, timeout=120)
    schon = geschrieben(db_url)

    assert code == EXIT_WORKER, f"exit {code}\n{out}\n{err}"
    assert "Zeitlimit" in err and "2 s" in err, err
    # der hängende Stapel, dessen Zeitlimit zuerst um war – welcher, hängt an der Maschine
    assert "Stapel 3 (Items 401–600" in err or "Stapel 4 (Items 601–800" in err, err
    assert "getötet" not in err and "gestorben" not in err and "OOM" not in err and "Traceback" not in err, (
        err
    )
    assert schon == 2 * STAPEL
    # Die hängenden Worker sind beendet, nicht zurückgelassen.
    bis_beendet(in_sitzung(prozess.pid))
    zweiter_lauf_macht_den_rest(db_url, tmp_path, schon)


def test_haengt_einer_und_wird_einer_getoetet_nennt_der_lauf_den_getoeteten(db_url, tmp_path):
    """Beide Worker hängen (Zeitlimit 600 s), einer wird getötet: der Lauf endet binnen Sekunden mit
    Exit 8 und nennt den getöteten – den anderen beendet der Pool selbst, das ist keine zweite
    Ursache."""
    bestand(db_url)
    halt = Halt(tmp_path, "stapel", 2)
    prozess = im_hintergrund(
        db_url,
        "--backfill",
        "--prozesse",
        "2",
        "--stapel-zeitlimit",
        "600",
        cwd=tmp_path,
        env={**halt.umgebung, **BEIDE_HAENGEN},
    )
    halt.abwarten(prozess)
    worker = kinder(prozess.pid)
    os.kill(worker[0], signal.SIGKILL)
    halt.weiter()
    code, out, err = ende(prozess, timeout=120)
    schon = geschrieben(db_url)

    assert code == EXIT_WORKER, f"exit {code}\n{out}\n{err}"
    assert "getötet (SIGKILL" in err and "Stapel" in err and "Traceback" not in err, err
    assert "Zeitlimit" not in err, err
    bis_beendet(worker)
    zweiter_lauf_macht_den_rest(db_url, tmp_path, schon)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_wirkt_auch_beim_warten_auf_worker(sig, db_url, tmp_path):
    """Die Worker hängen; der Hauptprozess wartet auf ihren nächsten Stapel – ein Signal beendet
    das Warten (gleich, ob es vor oder während des Wartens kommt), Exit 130."""
    bestand(db_url)
    halt = Halt(tmp_path, "stapel", 2)
    prozess = im_hintergrund(
        db_url, "--backfill", "--prozesse", "2", cwd=tmp_path, env={**halt.umgebung, **BEIDE_HAENGEN}
    )
    halt.abwarten(prozess)
    halt.weiter()
    prozess.send_signal(sig)
    code, out, err = ende(prozess, timeout=60)
    schon = geschrieben(db_url)
    assert code == EXIT_ABGEBROCHEN, f"exit {code}\n{out}\n{err}"
    assert "Abgebrochen" in err and "Traceback" not in err, err
    assert bilanzzeile(out).startswith(f"neu {schon}, "), out
    zweiter_lauf_macht_den_rest(db_url, tmp_path, schon)


# --- Kurze Lesetransaktionen ----------------------------------------------------------------


def test_keine_transaktion_bleibt_offen_waehrend_die_worker_rechnen(pg, db_name, db_url, tmp_path):
    """Die Stufe liest in Seiten, jede in eigener kurzer Transaktion: ein Lauf übersteht ein
    winziges idle_in_transaction_session_timeout, auch wenn die Worker eine Weile stehen."""
    bestand(db_url)
    with pg.verwalten() as conn:
        conn.execute(
            sql.SQL("alter database {} set idle_in_transaction_session_timeout = '1s'").format(
                sql.Identifier(db_name)
            )
        )
    halt = Halt(tmp_path, "stapel", 1)
    prozess = im_hintergrund(db_url, "--backfill", "--prozesse", "2", cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(prozess)
    try:
        # Eine offene Transaktion hätte der Server nach 1 s beendet; beide ruhen länger.
        ruhen_lassen(db_url, ["wurzelwerk-auswahl lesen", "wurzelwerk-auswahl schreiben"], 1.5)
    finally:
        halt.weiter()
    code, out, err = ende(prozess, timeout=120)
    assert code == EXIT_OK, f"exit {code}\n{out}\n{err}"
    assert bilanzzeile(out).startswith(f"neu {ITEMS}, "), out


# --- Protokoll der Läufe --------------------------------------------------------------------


def test_jeder_lauf_ausser_trocken_steht_im_protokoll(db_url, cli):
    bestand(db_url, 300)
    assert cli("--backfill").code == EXIT_OK
    assert cli("--backfill", "--trocken").code == EXIT_OK
    assert cli("--slot", "2026-09-07T08:00", "--teil", "1/2").code == EXIT_OK
    assert cli("--slot", "2026-09-07T09:00").code == EXIT_OK  # leer, aber gelaufen
    eintraege = laeufe(db_url)
    assert [e[0] for e in eintraege] == ["backfill", "slot", "slot"]
    backfill, teil, leer = eintraege
    assert backfill[4:10] == (300, 0, 0, 0, EXIT_OK, None) and backfill[10], backfill
    assert teil[2] == "1/2" and teil[4:9] == (0, 0, 150, 0, EXIT_OK), teil
    assert teil[1] == datetime(2026, 9, 7, 6, 0, tzinfo=UTC)
    assert backfill[11] and backfill[12] > 0  # Rechner und PID
    with psycopg.connect(db_url) as conn:
        letzter = conn.execute("select slot from auswahl_letzter_slot").fetchone()[0]
        ohne = conn.execute("select slot from auswahl_slots_ohne_lauf").fetchall()
        items = conn.execute("select items from auswahl_laeufe order by id").fetchall()
    # Der ganze Backfill kodierte den Slot mit den Items (er trägt jeden Slot ein, den er sah);
    # der leere Slot lief, aber mit 0 Items – er ist nicht „kodiert“ und nicht der letzte Slot
    # (sonst sähe die Überwachung gesund aus, während nichts kodiert wird).
    assert items == [(300,), (150,), (0,)]
    assert letzter == teil[1] != leer[1]
    assert ohne == []
    # Ein Item mit Kandidaten kommt dazu: der Slot ist offen, bis ein Lauf es kodiert.
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("insert into raw_items (id, slot) values (301, %s)", (teil[1],))
        conn.execute(
            "insert into extraktionen (item_id, extraktor, text) values (301, 'readability', 'Neu.')"
        )
        assert conn.execute("select slot, ohne_entscheidung from auswahl_slots_ohne_lauf").fetchall() == [
            (teil[1], 1)
        ]
    assert cli("--slot", "2026-09-07T08:00", "--teil", "1/2").code == EXIT_OK  # 301 ist in Teil 2/2
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from auswahl_slots_ohne_lauf").fetchone()[0] == 1
    assert cli("--slot", "2026-09-07T08:00").code == EXIT_OK
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select slot from auswahl_slots_ohne_lauf").fetchall() == []


def test_stirbt_der_hauptprozess_gehen_seine_worker_mit(db_url, tmp_path):
    """SIGKILL nur auf den Hauptprozess – der OOM-Killer trifft einen Prozess, nicht die Gruppe.
    Blieben Worker verwaist, hielten sie stdout und stderr des Laufs offen, und die cron-Zeile
    (``… 2>&1 >>log | tee -a log``) endete nie. Die Worker enden mit ihm: ihre Auftragsleitung
    schreibt nur der Hauptprozess, mit ihm ist sie zu."""
    bestand(db_url)
    halt = Halt(tmp_path, "stapel", 1)
    prozess = im_hintergrund(db_url, "--backfill", "--prozesse", "2", cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(prozess)
    worker = kinder(prozess.pid)
    assert len(worker) == 2, worker
    try:
        os.kill(prozess.pid, signal.SIGKILL)
        ende(prozess, timeout=60)  # stdout und stderr zu: kein Worker hält sie mehr offen
        frist = time.monotonic() + 60
        while lebende := [pid for pid in worker if Path(f"/proc/{pid}").exists()]:
            assert time.monotonic() < frist, f"Worker leben nach dem Tod des Hauptprozesses: {lebende}"
            time.sleep(0.02)
    finally:
        for pid in in_sitzung(prozess.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# Ein Worker, der mitten in einem Auftrag rechnet und seine Leitung nie liest (ein Extraktor, der
# sich an einer feindlichen Seite festläuft). Die Funktion steht in einem Modul, das auch ein
# Worker des forkservers importieren kann.
RECHNER = """
import os

def rechnen(datei):
    with open(datei, "w") as f:
        f.write(str(os.getpid()))
    while True:
        pass
"""
BESCHAEFTIGT = """
import sys
sys.path.insert(0, sys.argv[3])
from rechner import rechnen
from auswahlstufe.betrieb.pool import Auftrag, Pool

with Pool(1, zeitlimit=300, start=sys.argv[2]) as pool:
    list(pool.reihe([Auftrag(0, rechnen, (sys.argv[1],))], fenster=1))
"""


@pytest.mark.parametrize("start", ["fork", "forkserver"])
def test_stirbt_der_hauptprozess_endet_auch_ein_rechnender_worker(start, tmp_path):
    """SIGKILL auf den Hauptprozess, während sein Worker rechnet: der liest seine Leitung nicht
    und sähe ihr Ende nie. Er endet trotzdem (der Kern schickt ihm SIGKILL, wenn sein Elternprozess
    stirbt; bei forkserver endet der mit dem Hauptprozess) – sonst rechnete er weiter und hielte
    die Ausgabe der cron-Zeile offen. Auf stderr – in die Mail von cron – schreibt danach
    niemand etwas, auch nicht der resource_tracker, der die Semaphoren des Pools abräumt."""
    datei = tmp_path / "worker"
    (tmp_path / "rechner.py").write_text(RECHNER)
    prozess = subprocess.Popen(
        [sys.executable, "-c", BESCHAEFTIGT, str(datei), start, str(tmp_path)],
        cwd=PROJEKT,
        stderr=(tmp_path / "stderr").open("w"),
        start_new_session=True,
    )
    worker = None
    try:
        frist = time.monotonic() + 120
        while not (datei.exists() and datei.read_text()):
            assert prozess.poll() is None and time.monotonic() < frist, "der Worker begann nicht"
            time.sleep(0.02)
        worker = int(datei.read_text())
        os.kill(prozess.pid, signal.SIGKILL)
        prozess.wait(timeout=60)
        frist = time.monotonic() + 60
        while lebt(worker):
            assert time.monotonic() < frist, f"Worker {worker} rechnet nach dem Tod des Hauptprozesses weiter"
            time.sleep(0.02)
        while in_sitzung(prozess.pid):
            assert time.monotonic() < frist, f"nach dem Hauptprozess laufen noch {in_sitzung(prozess.pid)}"
            time.sleep(0.02)
        assert (tmp_path / "stderr").read_text() == ""
    finally:
        for pid in [prozess.pid, *in_sitzung(prozess.pid), *([worker] if worker else [])]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def lebt(pid: int) -> bool:
    """Läuft der Prozess noch (ein Zombie, den niemand abholt, läuft nicht)?"""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_ein_getoeteter_lauf_zaehlt_nicht_und_der_naechste_schliesst_ihn(db_url, tmp_path):
    """Der Lauf trägt sich beim Start ein, in eigener Transaktion: wer ihn mit SIGKILL trifft
    (OOM-Killer, kill -9), hinterlässt eine Zeile ohne beendet_am und Exit-Code – und der Slot
    gilt weiter als ohne Lauf, bis ein ganzer Lauf gelingt. Der nächste schreibende Lauf sieht,
    dass die Sitzung des toten nicht mehr lebt, und schließt ihn als abgebrochen ."""
    bestand(db_url)
    halt = Halt(tmp_path, "stapel", 1)
    prozess = im_hintergrund(db_url, "--slot", SLOT_TEXT, "--prozesse", "2", cwd=tmp_path, env=halt.umgebung)
    halt.abwarten(prozess)  # angehalten mitten im Lauf: die Zeile steht schon da
    ((modus, slot, *_, code, meldung, beendet, _rechner, pid),) = laeufe(db_url)
    assert (modus, slot, code, meldung, beendet, pid) == ("slot", SLOT, None, None, False, prozess.pid)
    os.killpg(prozess.pid, signal.SIGKILL)
    ende(prozess, timeout=30)
    schon = geschrieben(db_url)
    assert schon == STAPEL  # genau der erste Stapel
    warten_bis_getrennt(db_url)  # der Server gibt mit der Verbindung die Sperre frei

    (getoetet,) = laeufe(db_url)
    assert getoetet[8:11] == (None, None, False), getoetet  # kein Exit-Code, keine Meldung, kein Ende
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select slot, ohne_entscheidung from auswahl_slots_ohne_lauf").fetchall() == [
            (SLOT, ITEMS - schon)
        ]
        # Der letzte Slot mit kodierten Items ist dieser – halb, und ohne erfolgreichen Lauf.
        assert conn.execute("select slot, items, kodiert, lauf_id from auswahl_letzter_slot").fetchall() == [
            (SLOT, ITEMS, schon, None)
        ]

    zweiter = im_hintergrund(db_url, "--slot", SLOT_TEXT, cwd=tmp_path)
    code, out, err = ende(zweiter, timeout=120)
    assert code == EXIT_OK, err
    assert bilanzzeile(out).startswith(f"neu {ITEMS - schon}, geändert 0, unverändert {schon},"), out
    erster, danach = laeufe(db_url)
    assert erster[:8] == getoetet[:8]  # die Bilanz bleibt, wie er starb: unbekannt
    assert erster[8] is None and erster[10], erster  # kein Exit-Code, aber geschlossen
    assert (
        erster[9].startswith("abgebrochen: trug sein Ende nicht ein") and "bemerkt von Lauf 2" in erster[9]
    ), erster
    assert danach[8] == EXIT_OK and danach[10]
    assert (
        f"Hinweis: Lauf 1 (--slot 2026-09-07T08:00+02:00, Prozess {prozess.pid} auf {erster[11]}, begonnen "
        in err
    ), err
    assert "trug sein Ende nicht ein (Datenbanksitzung weg: " in err and "endete nie" not in err
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select zustand from auswahl_laeufe order by id").fetchall() == [
            ("abgebrochen",),
            ("erfolg",),
        ]
        assert conn.execute("select count(*) from auswahl_offene_laeufe").fetchone()[0] == 0
        assert conn.execute("select slot from auswahl_slots_ohne_lauf").fetchall() == []
        assert conn.execute("select slot from auswahl_letzter_slot").fetchone()[0] == SLOT


def test_ein_gesperrter_lauf_steht_mit_exit_5_im_protokoll(db_url, cli):
    bestand(db_url, 10)
    with psycopg.connect(db_url, autocommit=True) as halter:
        halter.execute(
            "select pg_advisory_lock(hashtextextended(%s, 0))", (sperre.slot(CODER_VERSION, SLOT),)
        )
        ergebnis = cli("--slot", SLOT.isoformat())
    assert ergebnis.code == 5
    ((modus, *_, code, meldung, beendet, _rechner, _pid),) = laeufe(db_url)
    assert (modus, code, beendet) == ("slot", 5, True) and "Sperre" in meldung


def test_protokoll_braucht_genau_select_insert_update(db_url, capsys):
    """Die dokumentierten Rechte genügen (keins auf die Sequenz der Identitätsspalte);
    ohne sie läuft die Stufe weiter und warnt."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("create role aw_protokoll_test nologin")
        try:
            conn.execute("set role aw_protokoll_test")
            assert (
                protokoll.beginnen(conn, slot=None, teil=None, version="v", prozesse=1, stichprobe=None)
                is None
            )
            assert "nicht protokolliert" in capsys.readouterr().err
            conn.execute("reset role")
            conn.execute("grant select, insert, update on auswahl_laeufe to aw_protokoll_test")
            conn.execute("set role aw_protokoll_test")
            lauf_id = protokoll.beginnen(
                conn, slot=None, teil=(1, 2), version="v", prozesse=1, stichprobe=None
            )
            protokoll.beenden(conn, lauf_id, Bilanz(neu=3), 0, None)
            conn.execute("reset role")
            assert conn.execute(
                "select teil, neu, exit_code, beendet_am is not null from auswahl_laeufe where id = %s",
                (lauf_id,),
            ).fetchone() == ("1/2", 3, 0, True)
        finally:
            conn.execute("reset role")
            conn.execute("drop owned by aw_protokoll_test")
            conn.execute("drop role aw_protokoll_test")


# --- Ein Worker stirbt mitten im Senden seines Ergebnisses ------------------------------------

# Ein Worker stirbt, während er sein Ergebnis schreibt: das erste MB ist schon hinaus, dann trifft
# ihn SIGKILL – wie der OOM-Killer mitten im Senden eines großen Stapels. Der Pool darf am Rest nicht
# hängen bleiben: der tote Auftrag bekommt seinen Fehlschlag, ein neuer Worker kommt, die anderen
# Aufträge laufen weiter.
HALBE_NACHRICHT = r"""
import os, signal, sys, time
from auswahlstufe.betrieb.pool import Auftrag, Pool

class Sterben:
    def __reduce__(self):  # beim Schreiben des Ergebnisses, nach dem ersten MB
        os.kill(os.getpid(), signal.SIGKILL)

def halb_senden_und_sterben():
    return [b"x" * 2**20, Sterben()]

def langsam(i):
    time.sleep(0.5)
    return i

if __name__ == "__main__":
    beginn = time.monotonic()
    with Pool(2, zeitlimit=300, start=sys.argv[1]) as pool:
        auftraege = [Auftrag(0, langsam, (0,)), Auftrag(1, halb_senden_und_sterben)]
        auftraege += [Auftrag(i, langsam, (i,)) for i in range(2, 6)]
        ergebnisse = list(pool.reihe(auftraege, fenster=4))
        neustarts = pool.neustarts
    print(ergebnisse, neustarts >= 1)
    print(f"{time.monotonic() - beginn:.1f}")
"""


@pytest.mark.parametrize("start", ["fork", "forkserver"])
def test_stirbt_ein_worker_mitten_im_senden_gehen_die_anderen_auftraege_nicht_verloren(start, tmp_path):
    """Der tote Auftrag bekommt seinen Fehlschlag, jeder andere sein Ergebnis – in Sekunden, nicht
    nach dem Zeitlimit (300 s), und ohne dass ein Worker am verstopften Rest hängen bleibt."""
    skript = tmp_path / "halb.py"
    skript.write_text(HALBE_NACHRICHT)
    lauf = subprocess.run(
        [sys.executable, str(skript), start], cwd=PROJEKT, capture_output=True, text=True, timeout=120
    )
    assert lauf.returncode == 0 and "Traceback" not in lauf.stderr, lauf.stderr
    erste, zweite = lauf.stdout.splitlines()
    assert erste == (
        "[(0, 0), (1, Fehlschlag(art='tot', exitcode=-9)), (2, 2), (3, 3), (4, 4), (5, 5)] True"
    ), lauf.stdout
    assert float(zweite) < 60, zweite


# Auftrag und Ergebnis liegen als Datei in /dev/shm; in einem Container ist es klein (64 MB bei
# Docker). Ist es voll, gehen sie durch die Leitung des Executors. Hier scheitert jede Datei über 1 MB
# (RLIMIT_FSIZE, mit SIGXFSZ ignoriert: EFBIG statt ENOSPC) – im Hauptprozess wie in den Workern:
# große Argumente, ein großes Ergebnis zu kleinen Argumenten, und kleine davor und danach.
KEIN_PLATZ = r"""
import os, resource, signal, sys
from auswahlstufe.betrieb.pool import Auftrag, Pool

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
gross = bytes(range(256)) * 2**14  # 4 MB
auftraege = [
    (bytes.upper, (b"klein",)),
    (bytes.__mul__, (b"ab", 2**21)),  # 4 MB Ergebnis
    (bytes.upper, (gross,)),
    (bytes.upper, (b"danach",)),
    (bytes.__mul__, (b"cd", 2**21)),
    (bytes.upper, (gross + b"!",)),
]
with Pool(2, start=sys.argv[1], neustart=sys.argv[2] == "neustart", zeitlimit=60) as pool:
    ergebnisse = list(pool.reihe([Auftrag(i, f, a) for i, (f, a) in enumerate(auftraege)], fenster=4))
    liegen = os.listdir(pool._ordner)  # nichts bleibt im Ordner der Dateien liegen
print([(k, w == f(*a)) for (k, w), (f, a) in zip(ergebnisse, auftraege)], liegen)
"""


@pytest.mark.parametrize(("start", "neustart"), [("fork", "ohne"), ("forkserver", "neustart")])
def test_ohne_platz_fuer_die_dateien_gehen_auftrag_und_ergebnis_durch_die_leitung(start, neustart):
    """Ein volles /dev/shm (oder eine Datei, die nicht geschrieben werden kann) ist kein Fehler eines
    Auftrags: jeder bekommt sein Ergebnis, und keine halbe Datei bleibt liegen. Vorher brach der Lauf
    mit OSError ab, oder die Extraktion (mit Neustart) vergab dieselben Aufträge endlos neu."""
    lauf = subprocess.run(
        [sys.executable, "-c", KEIN_PLATZ, start, neustart],
        cwd=PROJEKT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert lauf.returncode == 0 and "Traceback" not in lauf.stderr, lauf.stderr
    assert lauf.stdout.strip() == f"{[(i, True) for i in range(6)]} []", lauf.stdout


# Ein Worker, der schon am Empfang seines Auftrags stirbt (zu groß für seine Speichergrenze, durch die
# Leitung), hat ihn nie eingetragen: kein Auftrag erklärt seinen Tod. Der Pool mit Neustart vergibt ihn
# neu – beim dritten Mal in Folge trägt ihn der Auftrag, der nie begann, als „tot“, nicht der, der
# neben ihm rechnete (und mit jedem Neustart mit beendet wurde); die übrigen laufen weiter.
KEIN_SPEICHER = r"""
import functools, resource, signal, time
from auswahlstufe.betrieb.pool import Auftrag, Pool

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
gross = b"x" * (96 * 2**20)
vm = int(next(z for z in open("/proc/self/status") if z.startswith("VmSize")).split()[1]) * 1024
grenze = functools.partial(resource.setrlimit, resource.RLIMIT_AS, (vm + 48 * 2**20, resource.RLIM_INFINITY))
auftraege = [Auftrag(0, time.sleep, (1,)), Auftrag(1, len, (gross,)), Auftrag(2, bytes.upper, (b"danach",))]
with Pool(2, neustart=True, vorbereitung=grenze, zeitlimit=60) as pool:
    print(list(pool.reihe(auftraege, fenster=3)))
"""


def test_stirbt_ein_worker_schon_am_empfang_traegt_es_der_auftrag_der_nie_begann():
    lauf = subprocess.run(
        [sys.executable, "-c", KEIN_SPEICHER], cwd=PROJEKT, capture_output=True, text=True, timeout=120
    )
    assert lauf.returncode == 0, lauf.stderr
    assert lauf.stdout.strip() == ("[(0, None), (1, Fehlschlag(art='tot', exitcode=1)), (2, b'DANACH')]"), (
        lauf.stdout + lauf.stderr[-2000:]
    )


# Ein Ergebnis, das sich nicht einpacken lässt, ist ein Fehler im Code dieses Auftrags, kein Bruch des
# Pools: er kommt als WorkerAusnahme, mit und ohne Neustart, sofort und ohne einen Worker zu beenden.
NICHT_EINZUPACKEN = r"""
import sys
from auswahlstufe.betrieb.pool import Auftrag, Pool, WorkerAusnahme

with Pool(1, neustart=sys.argv[1] == "neustart", zeitlimit=60) as pool:
    try:
        list(pool.reihe([Auftrag(0, bytes.upper, (b"a",)), Auftrag(1, eval, ("lambda: 1",))], fenster=2))
    except WorkerAusnahme as fehler:
        print("WorkerAusnahme", "pickle" in str(fehler).lower(), pool.neustarts)
"""


@pytest.mark.parametrize("neustart", ["ohne", "neustart"])
def test_ein_ergebnis_das_sich_nicht_einpacken_laesst_ist_ein_fehler_im_code(neustart):
    lauf = subprocess.run(
        [sys.executable, "-c", NICHT_EINZUPACKEN, neustart],
        cwd=PROJEKT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert lauf.returncode == 0 and lauf.stdout.strip() == "WorkerAusnahme True 0", lauf.stdout + lauf.stderr


# --- Die Ursache, gleich in welcher Folge der Pool sie bemerkt --------------------------------

# Zwei Worker ohne Neustart (wie die Auswahl). Wer Ergebnis 0 bekommt, schläft 6 s – so lange sieht
# der Pool nach keinem Worker, und alles, was in der Zeit geschieht, bemerkt er danach in einem
# Schritt. Jeder Auftrag bekommt seine eigene Ursache: („art“, Exit-Code, Schlüssel, Art und
# Exit-Code der Ursache) oder sein Ergebnis; die Ursache der mitgerissenen ist der erste
# gescheiterte Auftrag in der Reihenfolge der Aufträge.
URSACHE = r"""
import os, signal, sys, time
from auswahlstufe.betrieb.pool import Auftrag, Fehlschlag, Pool

def fertig(i):
    return i

def haengen():
    os.kill(os.getpid(), signal.SIGSTOP)  # wie eine Endlosschleife, nur ohne Prozessorzeit

def sterben():
    time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGKILL)  # wie der OOM-Killer

faelle = {
    # beide Zeitlimits sind um, wenn der Pool wieder hinsieht
    "zwei_ueber_der_frist": (2, True, [fertig, haengen, haengen, haengen]),
    # ein Worker ist tot, der andere über der Frist, wenn der Pool wieder hinsieht
    "tot_und_ueber_der_frist": (2, True, [fertig, sterben, haengen, fertig]),
    # Worker 1 stirbt, Worker 0 hängt (das Zeitlimit ist noch lange nicht um)
    "einer_haengt_einer_stirbt": (600, False, [haengen, sterben, fertig, fertig]),
}
zeitlimit, schlafen, funktionen = faelle[sys.argv[1]]
auftraege = [Auftrag(i, f, (i,) if f is fertig else ()) for i, f in enumerate(funktionen)]

def zeigen(wert):
    if not isinstance(wert, Fehlschlag):
        return wert
    if wert.ursache is None:
        return (wert.art, wert.exitcode)
    schluessel, ursache = wert.ursache
    return (wert.art, wert.exitcode, schluessel, ursache.art, ursache.exitcode)

beginn = time.monotonic()
ergebnisse = []
with Pool(2, zeitlimit=zeitlimit, neustart=False) as pool:
    for schluessel, wert in pool.reihe(auftraege, fenster=4):
        ergebnisse.append((schluessel, zeigen(wert)))
        if schluessel == 0 and schlafen:
            time.sleep(6)
print(ergebnisse)
print(f"{time.monotonic() - beginn:.1f}")
"""


@pytest.mark.parametrize(
    ("fall", "erwartet"),
    [
        (
            "zwei_ueber_der_frist",
            [
                (0, 0),
                (1, ("zeitlimit", None)),  # über seiner Frist: kein „tot“, obwohl der Pool ihn tötete
                (2, ("zeitlimit", None)),
                (3, ("mitgerissen", None, 1, "zeitlimit", None)),  # wartete noch
            ],
        ),
        (
            "tot_und_ueber_der_frist",
            [
                (0, 0),
                (1, ("tot", -9)),
                (2, ("zeitlimit", None)),
                (3, ("mitgerissen", None, 1, "tot", -9)),
            ],
        ),
        (
            "einer_haengt_einer_stirbt",
            [
                (0, ("mitgerissen", None, 1, "tot", -9)),  # hängt, aber nicht über seiner Frist
                (1, ("tot", -9)),
                (2, ("mitgerissen", None, 1, "tot", -9)),
                (3, ("mitgerissen", None, 1, "tot", -9)),  # wartete noch
            ],
        ),
    ],
)
def test_jeder_auftrag_traegt_seine_eigene_ursache(fall, erwartet):
    lauf = subprocess.run(
        [sys.executable, "-c", URSACHE, fall], cwd=PROJEKT, capture_output=True, text=True, timeout=300
    )
    assert lauf.returncode == 0 and "Traceback" not in lauf.stderr, lauf.stderr
    ergebnisse, dauer = lauf.stdout.splitlines()
    assert ast.literal_eval(ergebnisse) == erwartet
    assert float(dauer) < 120, dauer  # in Sekunden, nicht nach dem Zeitlimit (600 s) des hängenden


@pytest.mark.parametrize(
    ("fehlschlag", "satz"),
    [
        (Fehlschlag("zeitlimit"), "Zeitlimit je Stapel (2 s, --stapel-zeitlimit) überschritten: Stapel 3"),
        (Fehlschlag("tot", -9), "Ein Worker-Prozess wurde getötet (SIGKILL: der OOM-Killer"),
        (Fehlschlag("tot", -11), "Ein Worker-Prozess ist abgestürzt (SIGSEGV), während Stapel 3"),
        (Fehlschlag("tot", 75), "Ein Worker-Prozess endete unerwartet mit Exit-Code 75, während Stapel 3"),
        # Nur mit den Workern beendet: die Meldung nennt die Ursache und deren Stapel.
        (
            Fehlschlag("mitgerissen", ursache=((Stapel(5, 801, 1000, 200), None), Fehlschlag("zeitlimit"))),
            "Zeitlimit je Stapel (2 s, --stapel-zeitlimit) überschritten: Stapel 5 (Items 801–1000",
        ),
    ],
)
def test_die_meldung_nennt_die_ursache(fehlschlag, satz):
    meldung = worker_fehler(
        Einstellungen("v", stapel_zeitlimit=2), Stapel(3, 401, 600, 200), fehlschlag, 3
    ).format_message()
    assert satz in meldung, meldung
    assert ("OOM" in meldung) == (fehlschlag.exitcode == -9), meldung


# --- Ein Worker startet nicht ---------------------------------------------------------------


def test_scheitert_die_vorbereitung_traegt_der_fehler_ihre_ursache():
    """``WorkerStartetNicht`` sagt, woran die Vorbereitung im Worker scheiterte – als Daten
    (``ursache``: Klasse, Text, ein fehlendes Modul), nicht nur als Satz."""
    from auswahlstufe.betrieb.pool import Pool, Ursache, WorkerStartetNicht

    vorbereitung = functools.partial(
        exec, "raise ModuleNotFoundError('beim Start nicht da', name='aw_fehlt')"
    )
    with pytest.raises(WorkerStartetNicht) as e, Pool(1, vorbereitung=vorbereitung):
        pass
    assert e.value.ursache == Ursache("ModuleNotFoundError", "beim Start nicht da", modul="aw_fehlt")
    assert str(e.value) == "ModuleNotFoundError: beim Start nicht da"


@pytest.mark.parametrize(
    ("quelltext", "grund"),
    [
        ("import aw_gibt_es_nicht", "das Modul aw_gibt_es_nicht fehlt"),
        # das fehlende Modul steht in der Ursache, nicht im Wortlaut
        ("raise ModuleNotFoundError('beim Start nicht da', name='aw_fehlt')", "das Modul aw_fehlt fehlt"),
        ("raise RuntimeError('kaputt')", "RuntimeError: kaputt"),
    ],
)
def test_startet_kein_worker_der_extraktion_sagt_die_meldung_warum(monkeypatch, quelltext, grund):
    from auswahlstufe.extraktion import seiten
    from auswahlstufe.fehler import EXIT_VORAUSSETZUNG, VoraussetzungFehlt

    echt = seiten.Pool

    def pool(*args, **kwargs):
        return echt(*args, **{**kwargs, "vorbereitung": functools.partial(exec, quelltext), "argumente": ()})

    monkeypatch.setattr(seiten, "Pool", pool)
    with pytest.raises(VoraussetzungFehlt) as e, seiten.Extraktion(1):
        pass
    assert e.value.exit_code == EXIT_VORAUSSETZUNG
    assert e.value.format_message() == (
        f"Ein Worker der Extraktion startet nicht ({grund}). Sind die Extraktoren installiert "
        "(.venv/bin/pip install -e '.[extraktion]')?"
    )
