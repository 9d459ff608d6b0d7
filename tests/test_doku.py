"""Die Dokumente: kurzes README, keine toten Links, kein ``../shared``, Befehle wie in CI.

Das README ist die Vordertür; alles andere steht in ``docs/``. Diese Tests
halten fest, was dabei leicht verrottet: die Länge des README, relative Links
(auch ihre Sprungmarken), Verweise auf Ordner außerhalb des Klons, die
Schnellstart-Befehle gegen ``.ci/run``, die Dateitabelle gegen die Dateien an
der Wurzel und die Räume (Ordner, Unterpakete) mit ihren Modulen, und dass jede
genannte Datei und jeder genannte Test noch dort steht, wo das Dokument sagt.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
import sys
import tomllib
import unicodedata
from pathlib import Path

import pytest

import version
from auswahlstufe import fehler

PROJEKT = Path(__file__).resolve().parents[1]
README = PROJEKT / "README.md"

# Alle Markdown-Dateien, die Menschen lesen: README, docs/, die READMEs daneben.
DOKUMENTE = sorted(
    [README, *(PROJEKT / "docs").glob("*.md")]
    + [
        PROJEKT / p
        for p in (
            "bench/README.md",
            "bench/aeb/README.md",
            "bench/newspaper4k-zufall/README.md",
            "beispiele/README.md",
        )
    ]
)

# Schnellstart 1: die Vorführung der Postgres-Stufe an einem Wegwerf-Server.
VORFUEHRUNG = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[demo]' && .venv/bin/python demo.py"
STAPEL = ".venv/bin/python auswahl.py beispiele/artikel.json"

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_CODEBLOCK = re.compile(r"^```.*?^```", re.S | re.M)


def _relativ(pfad: Path) -> str:
    return pfad.relative_to(PROJEKT).as_posix()


def _ohne_code(text: str) -> str:
    """Text ohne Codeblöcke und Inline-Code: Links darin sind keine."""
    text = _CODEBLOCK.sub("", text)
    return re.sub(r"`[^`\n]*`", "", text)


def _marke(ueberschrift: str) -> str:
    """Sprungmarke einer Überschrift wie auf GitHub: klein, ohne Satzzeichen, Leerzeichen zu -."""
    text = ueberschrift.strip().lower().replace("`", "")
    text = "".join(z for z in text if z in " -_" or unicodedata.category(z)[0] in "LN")
    return text.replace(" ", "-")


def _marken(pfad: Path) -> set[str]:
    text = _CODEBLOCK.sub("", pfad.read_text(encoding="utf-8"))
    return {_marke(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def _links(pfad: Path) -> list[str]:
    return _LINK.findall(_ohne_code(pfad.read_text(encoding="utf-8")))


def _schnellstart() -> list[str]:
    """Die Befehlszeilen im Codeblock des Abschnitts Schnellstart, ohne Kommentare."""
    text = README.read_text(encoding="utf-8")
    abschnitt = text.split("\n## Schnellstart\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```sh\n(.*?)^```", abschnitt, re.S | re.M)
    assert block, "Im Abschnitt Schnellstart fehlt der Codeblock"
    return [z.strip() for z in block.group(1).splitlines() if z.strip() and not z.lstrip().startswith("#")]


def _testbefehl_aus_ci() -> str:
    zeilen = (PROJEKT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    befehle = [z for z in zeilen if "pytest" in z and not z.lstrip().startswith("#")]
    assert len(befehle) == 1, f".ci/run sollte genau einen pytest-Aufruf haben: {befehle}"
    return befehle[0].strip()


def test_readme_ist_die_kurze_vordertuer():
    zeilen = README.read_text(encoding="utf-8").count("\n")
    assert zeilen <= 250, f"README.md hat {zeilen} Zeilen; höchstens 250, der Rest gehört nach docs/"


@pytest.mark.parametrize("pfad", DOKUMENTE, ids=_relativ)
def test_kein_platzhalter_steht_noch_da(pfad):
    """Ein „TODO“ im Text ist eine Zahl oder ein Satz, der fehlt (etwa die Dauer der Suite)."""
    zeilen = [
        f"{i}: {z}" for i, z in enumerate(pfad.read_text(encoding="utf-8").splitlines(), 1) if "TODO" in z
    ]
    assert not zeilen, f"{_relativ(pfad)}: Platzhalter:\n" + "\n".join(zeilen)


@pytest.mark.parametrize("pfad", DOKUMENTE, ids=_relativ)
def test_jeder_relative_link_zeigt_auf_eine_datei(pfad):
    tot = []
    for ziel in _links(pfad):
        if re.match(r"[a-z]+:", ziel):  # https:, mailto: – nicht unsere Sache
            continue
        datei, _, marke = ziel.partition("#")
        zielpfad = (pfad.parent / datei).resolve() if datei else pfad
        name = _relativ(zielpfad) if zielpfad.is_relative_to(PROJEKT) else str(zielpfad)
        if not zielpfad.exists():
            tot.append(f"{ziel} (Datei {name} fehlt)")
            continue
        if marke and zielpfad.suffix == ".md" and marke not in _marken(zielpfad):
            tot.append(f"{ziel} (keine Überschrift mit der Marke #{marke} in {name})")
    assert not tot, f"{_relativ(pfad)}: tote Links:\n" + "\n".join(tot)


@pytest.mark.parametrize("pfad", DOKUMENTE, ids=_relativ)
def test_nichts_verweist_auf_shared(pfad):
    text = pfad.read_text(encoding="utf-8")
    treffer = [n for n, zeile in enumerate(text.splitlines(), 1) if "../shared" in zeile]
    assert not treffer, f"{_relativ(pfad)} verweist auf ../shared (Zeilen {treffer}); ein Klon hat es nicht"


def test_schnellstart_testbefehl_ist_der_aus_ci():
    assert _testbefehl_aus_ci() in _schnellstart()


def test_schnellstart_beginnt_mit_der_vorfuehrung_dann_der_stapelbetrieb():
    befehle = _schnellstart()
    assert befehle[:2] == [VORFUEHRUNG, STAPEL], befehle
    assert (PROJEKT / "demo.py").exists()
    assert (PROJEKT / "beispiele" / "artikel.json").exists()


def test_schnellstart_installiert_nur_extras_die_es_gibt():
    extras = set(tomllib.loads((PROJEKT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    genannt = {e for befehl in _schnellstart() for e in re.findall(r"\.\[(\w+)\]", befehl)}
    assert genannt <= extras, f"Extras fehlen in pyproject.toml: {genannt - extras}"


def _von_git_uebergangen(pfad: Path) -> bool:
    """Was .gitignore übergeht (.venv/, bench/daten/, *_selected.json …): erzeugt, nicht gepflegt."""
    muster = [
        z.strip().rstrip("/")
        for z in (PROJEKT / ".gitignore").read_text(encoding="utf-8").splitlines()
        if z.strip() and not z.startswith("#")
    ]
    relativ = _relativ(pfad)
    return any(fnmatch.fnmatch(relativ, m) or fnmatch.fnmatch(pfad.name, m) for m in muster)


def _raeume() -> list[Path]:
    """Die Ordner an der Wurzel und die Unterpakete von auswahlstufe/ – je einer eine Zeile."""
    oben = [
        d
        for d in PROJEKT.iterdir()
        if d.is_dir() and not d.name.startswith((".", "__")) and not _von_git_uebergangen(d)
    ]
    unter = [d for d in (PROJEKT / "auswahlstufe").iterdir() if (d / "__init__.py").is_file()]
    return sorted(oben + unter)


def _dateitabelle() -> dict[str, str]:
    """Erste Spalte (ohne Backticks) → die ganze Zeile, aus dem Abschnitt Dateien des README."""
    text = README.read_text(encoding="utf-8")
    tabelle = text.split("\n## Dateien\n", 1)[1].split("\n## ", 1)[0]
    return {
        name: zeile for zeile in tabelle.splitlines() for name in re.findall(r"^\| `([\w./-]+)` \|", zeile)
    }


def test_dateitabelle_nennt_jede_datei_an_der_wurzel_und_jeden_raum():
    zeilen = _dateitabelle()
    wurzel = {p.name for p in PROJEKT.glob("*.py")}
    raeume = {_relativ(d) + "/" for d in _raeume()}
    fehlen = sorted((wurzel | raeume) - set(zeilen))
    assert not fehlen, f"Dateien oder Räume ohne Zeile in der Dateitabelle: {fehlen}"
    tot = sorted(name for name in zeilen if not (PROJEKT / name).exists())
    assert not tot, f"Zeilen der Dateitabelle für Dateien oder Ordner, die es nicht gibt: {tot}"


@pytest.mark.parametrize("raum", _raeume(), ids=_relativ)
def test_dateitabelle_nennt_jedes_modul_eines_raums(raum):
    # Die Zeile eines Raums nennt jedes seiner Module (`name` oder `name.py`); die Tests in
    # tests/ stehen dort als `test_*.py`, ihre Beweise in docs/zuverlaessigkeit.md.
    zeile = _dateitabelle().get(_relativ(raum) + "/", "")
    module = [
        p
        for p in sorted(raum.glob("*.py"))
        if p.name != "__init__.py" and not (raum.name == "tests" and p.name.startswith("test_"))
    ]
    fehlen = [p.name for p in module if f"`{p.stem}`" not in zeile and f"`{p.name}`" not in zeile]
    if raum.name == "tests" and "`test_*.py`" not in zeile:
        fehlen.append("test_*.py")
    assert not fehlen, f"Die Zeile von {_relativ(raum)}/ nennt nicht: {fehlen}"


def test_bench_readme_nennt_jedes_skript_und_nur_vorhandene():
    text = (PROJEKT / "bench" / "README.md").read_text(encoding="utf-8")
    genannt = set(re.findall(r"^\| `([\w.]+\.py)` \|", text, re.M))
    skripte = {p.name for p in (PROJEKT / "bench").glob("*.py") if p.name != "__init__.py"}
    assert skripte - genannt == set(), (
        f"bench-Skripte ohne Zeile in bench/README.md: {sorted(skripte - genannt)}"
    )
    assert genannt - skripte == set(), (
        f"Zeilen für bench-Skripte, die es nicht gibt: {sorted(genannt - skripte)}"
    )


def test_jeder_exit_code_steht_im_readme():
    codes = {wert for name, wert in vars(fehler).items() if name.startswith("EXIT_")}
    tabelle = README.read_text(encoding="utf-8").split("\n### Exit-Codes\n", 1)[1].split("\n#", 1)[0]
    im_readme = {int(c) for c in re.findall(r"^\| (\d+) \|", tabelle, re.M)}
    assert codes <= im_readme, f"Exit-Codes aus fehler.py fehlen im README: {sorted(codes - im_readme)}"


@pytest.mark.parametrize("pfad", DOKUMENTE, ids=_relativ)
def test_befehle_nehmen_das_venv(pfad):
    # Mit dem System-Python fehlen die Abhängigkeiten; jeder Befehl nimmt .venv/bin/python.
    bloecke = "\n".join(_CODEBLOCK.findall(pfad.read_text(encoding="utf-8")))
    nackt = re.findall(r"(?:^|[\s|;&(])(python3? (?:-m (?!venv)|[\w/]+\.py).*)", bloecke, re.M)
    assert not nackt, f"{_relativ(pfad)}: Befehle ohne .venv/bin/python: {nackt}"


def test_zahlen_im_readme_stehen_auch_dort_wo_sie_gemessen_sind():
    # Das README nennt Zahlen nur und verlinkt; gemessen sind sie in docs/ (Güte und
    # Tempo in messungen.md, Skala in betrieb-lauf.md, Extraktion in extraktion.md …).
    # Geprüft werden Zahlen mit Einheit (s, MB, GB, %, ×) außerhalb der Codeblöcke.
    text = _CODEBLOCK.sub("", README.read_text(encoding="utf-8"))
    quellen = "".join(p.read_text(encoding="utf-8") for p in sorted((PROJEKT / "docs").glob("*.md")))
    zahl = r"\d+(?:,\d+)?(?:–\d+(?:,\d+)?)?"
    zahlen = set(re.findall(rf"{zahl}(?:×| ?%| s\b| MB| GB)", text))
    kern = text.split("\n## Kernzahlen\n", 1)[1].split("\n## ", 1)[0]
    zahlen |= set(re.findall(r"\d+,\d+", kern))  # dort auch die F1-Werte ohne Einheit
    assert len(zahlen) >= 10, sorted(zahlen)
    fehlen = sorted(z for z in zahlen if z not in quellen)
    assert not fehlen, f"Zahlen im README ohne Messung in docs/: {fehlen}"


@pytest.mark.parametrize("pfad", DOKUMENTE, ids=_relativ)
def test_befehle_nennen_nur_vorhandene_skripte_module_und_daten(pfad):
    bloecke = "\n".join(_CODEBLOCK.findall(pfad.read_text(encoding="utf-8")))
    bloecke = re.sub(r"(^|\s)#.*$", "", bloecke, flags=re.M)  # Kommentare nennen auch Ausgaben
    fehlt = []
    for modul in set(re.findall(r"python -m ((?:bench|auswahlstufe)(?:\.\w+)+)", bloecke)):
        if not (PROJEKT / (modul.replace(".", "/") + ".py")).exists():
            fehlt.append(modul)
    for datei in set(
        re.findall(
            r"(?<![\w/.-])((?:bench/aeb|beispiele)/[\w.-]+|(?:tests/|auswahlstufe/(?:\w+/)?)?\w+\.py)\b",
            bloecke,
        )
    ):
        if not (PROJEKT / datei).exists() and not _von_git_uebergangen(PROJEKT / datei):
            fehlt.append(datei)
    assert not fehlt, f"{_relativ(pfad)}: Befehle nennen, was es nicht gibt: {sorted(fehlt)}"


@pytest.mark.parametrize("pfad", DOKUMENTE, ids=_relativ)
def test_genannte_dateien_gibt_es_dort(pfad):
    # Ein Pfad in Backticks (`auswahl.py`, `auswahlstufe/lauf/stufe.py`, in bench/README.md auch
    # `erzeugen.py`) zeigt auf eine Datei – von der Wurzel oder vom Ordner des Dokuments aus.
    # Module im Paket heißen darum mit Pfad oder als Modul ohne .py (`lauf.stufe`, `regeln.waehle`);
    # ein Test steht unter tests/ (nur test_auswahl.py an der Wurzel).
    text = pfad.read_text(encoding="utf-8")
    genannt = set(re.findall(r"`((?:\.\./)?[\w/.-]+\.py)`", text))
    genannt |= set(re.findall(r"(?<![\w.])((?:[\w.]+/)*test_\w+\.py)\b", text))
    fehlt = []
    for datei in sorted(genannt):
        if not ((PROJEKT / datei).exists() or (pfad.parent / datei).exists()):
            wo = [_relativ(p) for raum in [PROJEKT, *_raeume()] for p in raum.glob(Path(datei).name)]
            fehlt.append(f"{datei} (liegt in {', '.join(wo)})" if wo else datei)
    assert not fehlt, f"{_relativ(pfad)}: genannte Dateien, die es dort nicht gibt: {sorted(fehlt)}"


def test_genannte_tests_gibt_es():
    # Die Beweistabellen nennen ihre Tests, mit Datei (`tests/test_x.py::test_y`,
    # `test_auswahl.py::test_y`) oder abgekürzt (`…::test_y`, `test_y`); ein umbenannter
    # oder verschobener Test darf nicht still verschwinden.
    alle = {
        _relativ(datei): set(
            re.findall(r"^(?:async )?def (test_\w+)\(", datei.read_text(encoding="utf-8"), re.M)
        )
        for datei in [*PROJEKT.glob("test_*.py"), *(PROJEKT / "tests").glob("test_*.py")]
    }
    irgendwo = set().union(*alle.values())
    fehlt = []
    for pfad in DOKUMENTE:
        text = pfad.read_text(encoding="utf-8")
        for datei, name in set(re.findall(r"(?<![\w/.])((?:tests/)?test_\w+\.py)::(test_\w+)", text)):
            if name not in alle.get(datei, ()):
                fehlt.append(f"{_relativ(pfad)}: {datei}::{name}")
        for name in set(re.findall(r"(?<![\w.])(test_\w+)(?![\w.*])", text)):
            if name not in irgendwo:
                fehlt.append(f"{_relativ(pfad)}: {name}")
    assert not fehlt, "Tests, die es nicht gibt:\n" + "\n".join(sorted(fehlt))


# --- Die Zahlen der Dokumente laufen nach ---------------------------------------------


def _abschnitt(pfad: Path, ueberschrift: str) -> str:
    text = pfad.read_text(encoding="utf-8")
    return text.split(f"\n{ueberschrift}\n", 1)[1].split("\n## ", 1)[0]


def _zeilen_der_tabelle(text: str) -> dict[str, list[str]]:
    """Zeilenname → Zahlen (mit Komma) aus einer Markdown-Tabelle oder der Ausgabe von bewertung.py."""
    zeilen = {}
    for zeile in text.splitlines():
        zeile = zeile.replace("**", "")
        if zeile.startswith("|"):
            zellen = [z.strip() for z in zeile.strip("|").split("|")]
            name, rest = zellen[0], " ".join(zellen[1:])
        else:
            treffer = re.match(r"(\S.*?)\s{2,}(\d.*)$", zeile)
            if not treffer:
                continue
            name, rest = treffer.groups()
        zahlen = re.findall(r"\d+,\d+", rest)
        if zahlen:
            zeilen[name] = zahlen
    return zeilen


def test_guete_in_messungen_ist_was_die_befehle_dort_ausgeben(tmp_path):
    # Die Kernzahl F1 0,973: die Befehle aus docs/messungen.md, wörtlich bis auf den
    # Pfad der Zwischendatei, aus dem Projektverzeichnis ohne jeden Nachbarordner.
    abschnitt = _abschnitt(PROJEKT / "docs" / "messungen.md", "## Güte gegen die Handreferenz")
    befehle = re.search(r"^```sh\n(.*?)^```", abschnitt, re.S | re.M).group(1).strip().splitlines()
    assert len(befehle) == 2, befehle
    ausgabe = zusammenfassung = ""
    for befehl in befehle:
        befehl = befehl.replace("/tmp/aeb_selected.json", str(tmp_path / "aeb_selected.json"))
        teile = shlex.split(befehl)
        assert teile[0] == ".venv/bin/python", befehl
        lauf = subprocess.run(
            [sys.executable, *teile[1:]], cwd=PROJEKT, capture_output=True, text=True, timeout=300
        )
        assert lauf.returncode == 0, lauf.stderr
        ausgabe, zusammenfassung = lauf.stdout, zusammenfassung or lauf.stderr
    gemessen = _zeilen_der_tabelle(ausgabe)
    dokumentiert = _zeilen_der_tabelle(abschnitt.split("\n\n| 181 Seiten", 1)[1].split("\n\n", 1)[0])
    assert set(dokumentiert) == set(gemessen), (sorted(dokumentiert), sorted(gemessen))
    for name, zahlen in gemessen.items():
        assert dokumentiert[name] == zahlen, f"{name}: dokumentiert {dokumentiert[name]}, gemessen {zahlen}"
    # Die Zusammenfassung des ersten Befehls: Entscheidungen je Extraktor und je Regel.
    verteilung = (PROJEKT / "docs" / "messungen.md").read_text(encoding="utf-8")
    verteilung = verteilung.split("\n### Wie die Entscheidungen auf den 181 Seiten fallen\n", 1)[1].split(
        "\n## ", 1
    )[0]
    zaehlungen = re.findall(r"^  (\w+) +(\d+) +(\d+,\d) %$", zusammenfassung, re.M)
    assert len(zaehlungen) == 10, zusammenfassung  # drei Extraktoren, sieben Regeln
    for name, zahl, anteil in zaehlungen:
        if zahl != "0":
            assert f"{zahl} ({anteil} %)" in verteilung, f"{name}: {zahl} ({anteil} %) fehlt in messungen.md"


# Kleine Skripte, die Zahlen im Fließtext nachmessen: was sie ausgeben, und wie es im Text steht.
SKRIPTE = {
    "docs/regeln.md": [
        ("Seiten mit Formatzeichen: 6 ", "sechs\nSeiten Formatzeichen"),
        (
            "'U+200B': 40, 'U+00AD': 10, 'U+2060': 4, 'U+200D': 1",
            "(40 × U+200B, 10 × U+00AD, 4 × U+2060, 1 × U+200D)",
        ),
        ("Kandidaten mit anderen Tokens: 2", "bei\nzwei Kandidaten ändern sich dadurch die Tokens"),
        ("comwrap.com/die-elektronische-patientenakte", "(comwrap, elektronische Patientenakte)"),
        (
            "mit: readability 1.0 ohne: trafilatura 0.995",
            "gewählt (Seiten-F1 gegen die Handreferenz 1,000), nach Quelle 000 trafilatura\n(0,995)",
        ),
    ],
    "docs/messungen.md": [
        ("wie Orakel: 133 Verlust > 0,05: 6 höchstens: 0.23", "auf 133 der 181 Seiten trifft die Auswahl"),
        (
            "wie Orakel: 133 Verlust > 0,05: 6 höchstens: 0.23",
            "auf 6 verliert sie mehr als 0,05\nSeiten-F1 (höchstens 0,23)",
        ),
        (
            "'newspaper4k': 4, 'readability': 2, 'trafilatura': 4, 'Auswahl': 1, "
            "'Orakel (bester je Seite)': 1, 'immer der längste': 5",
            "Unter 0,5 Seiten-F1 liegt die Auswahl auf 1 Seite,\nnewspaper4k und trafilatura auf je 4, "
            "readability auf 2, „immer der längste“\nauf 5",
        ),
    ],
}


@pytest.mark.parametrize("name", sorted(SKRIPTE))
def test_skripte_in_den_dokumenten_geben_aus_was_im_text_steht(name):
    text = (PROJEKT / name).read_text(encoding="utf-8")
    skripte = re.findall(r"^(?:PYTHONPATH=\. )?\.venv/bin/python - <<'EOF'\n(.*?)^EOF$", text, re.S | re.M)
    assert skripte, f"{name}: kein Skript gefunden"
    ausgabe = ""
    for skript in skripte:
        lauf = subprocess.run(
            [sys.executable, "-"],
            input=skript,
            cwd=PROJEKT,
            env={**os.environ, "PYTHONPATH": str(PROJEKT)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert lauf.returncode == 0, lauf.stderr
        ausgabe += lauf.stdout
    for erwartet, im_text in SKRIPTE[name]:
        assert erwartet in ausgabe, f"{name}: das Skript gibt nicht mehr „{erwartet}“ aus:\n{ausgabe}"
        assert im_text in text, f"{name}: im Text steht nicht mehr „{im_text}“"


def test_coder_version_in_den_regeln_ist_die_aktuelle():
    # Eine neue Fassung der Regeln (version.py) muss auch in der Spezifikation stehen.
    text = (PROJEKT / "docs" / "regeln.md").read_text(encoding="utf-8")
    genannt = set(re.findall(r"auswahl-\d+\+norm-\d+\+rein-\d+\+k\d+\+t[\d.]+\+[\w>]+", text))
    assert genannt == {version.coder_version()}, (
        f"regeln.md nennt {genannt}, version.py sagt {version.coder_version()}"
    )


# --- Änderungsnotizen: jede Fassung, die ein Haus bemerkt, hat ihre ---------------------------

AENDERUNGEN = PROJEKT / "docs" / "aenderungen.md"


def _neueste_notiz() -> tuple[str, str]:
    """(Überschrift, Text) des ersten Abschnitts ``## …`` in docs/aenderungen.md."""
    abschnitte = re.split(r"^## ", AENDERUNGEN.read_text(encoding="utf-8"), flags=re.M)[1:]
    kopf, _, text = abschnitte[0].partition("\n")
    return kopf, text


def test_die_neueste_notiz_ist_die_fassung_des_codes():
    from auswahlstufe import VERSION

    kopf, _ = _neueste_notiz()
    assert kopf.split()[0] == VERSION, f"docs/aenderungen.md beginnt mit {kopf!r}, der Code ist {VERSION}"


def _git(*args: str) -> str:
    lauf = subprocess.run(["git", "-C", str(PROJEKT), *args], capture_output=True, text=True)
    return lauf.stdout.strip() if lauf.returncode == 0 else ""


def test_jede_fassung_hat_ihren_tag_und_schritt_3_holt_ihn():
    """Ein Haus holt eine Fassung über ihren Tag (betrieb.md, Aktualisieren, Schritt 3), auch auf einem
    losgelösten Stand, wo ``git pull`` scheitert. Zu jeder Nummer in docs/aenderungen.md gibt es den
    annotierten Tag ``vX.Y.Z`` in der Geschichte des Codes (die neueste, solange sie nicht freigegeben
    ist, noch ohne), mit jeder Migration, die ihre Notiz nennt:
    ab 2.0.0 auf einem Commit mit dieser ``VERSION``; 1.0.0 (zwei Stände ohne ``VERSION``) auf dem
    ersten Stand im Betrieb."""
    from tests.hilfen.haus import aktualisieren, code_in, notizen

    schritt = aktualisieren()[3]
    assert "git fetch --tags && git checkout vX.Y.Z" in code_in(schritt), schritt
    assert "git pull" in schritt and "Schritt 4" in schritt, schritt
    if _git("rev-parse", "--is-shallow-repository") != "false" or not _git("tag", "-l", "v*"):
        pytest.skip("ohne die Geschichte des Codes oder ohne ihre Tags (flacher Klon, kein git, --no-tags)")
    stand_je_nummer: dict[str, str] = {}
    for kopf in notizen():  # die neueste zuerst: übrig bleibt je Nummer ihr ältester Stand
        stand_je_nummer[kopf.split(",")[0]] = kopf
    neueste = next(iter(stand_je_nummer))
    for nummer, kopf in stand_je_nummer.items():
        if nummer == neueste and not _git("tag", "-l", f"v{nummer}"):
            continue  # ihr Tag kommt mit der Freigabe; die früheren müssen ihn haben
        tag = f"v{nummer}"
        assert _git("cat-file", "-t", tag) == "tag", (
            f"{tag} fehlt oder ist nicht annotiert (git fetch --tags)"
        )
        vorfahr = subprocess.run(["git", "-C", str(PROJEKT), "merge-base", "--is-ancestor", tag, "HEAD"])
        assert vorfahr.returncode == 0, f"{tag} liegt nicht in der Geschichte von HEAD"
        if ", Stand " in kopf:
            assert _git("rev-parse", f"{tag}^{{commit}}").startswith(kopf.split(", Stand ")[1]), (tag, kopf)
        else:
            assert f'VERSION = "{nummer}"' in _git("show", f"{tag}:auswahlstufe/__init__.py"), tag
        dort = _git("ls-tree", "--name-only", tag, "migrations/")
        for migration in set(re.findall(r"`(aw-\d{3}-[\w-]+)`", notizen()[kopf])):
            assert f"migrations/{migration}.sql" in dort.split(), (tag, migration)


def test_die_notizen_nennen_jede_migration_und_die_heutigen_fassungen():
    """Eine Migration, eine neue coder_version oder Fassung eines Extraktors ohne Notiz fiele erst
    im Haus auf: jede steht in docs/aenderungen.md, die heutigen in der neuesten Notiz."""
    from auswahlstufe.betrieb import migrationen
    from auswahlstufe.extraktion import art, aufrufe

    text = AENDERUNGEN.read_text(encoding="utf-8")
    fehlen = [d.stem for d in migrationen.migrationsdateien() if d.stem not in text]
    assert not fehlen, f"Migrationen ohne Notiz: {fehlen}"
    neueste = " ".join(_neueste_notiz()[1].split())
    assert version.CODER_VERSION in neueste
    for extraktor, paket in aufrufe.PAKETE.items():
        assert f"{paket} {aufrufe.versionen()[extraktor]}" in neueste, paket
    nummer = int(art.FASSUNG.rsplit(" ", 1)[1])
    seitenart = (
        f"Fassung der Seitenart geht von {nummer - 1} auf {nummer}",
        f"Fassung der Seitenart bleibt {nummer}",
    )
    assert any(satz in neueste for satz in seitenart), "Seitenart fehlt"
