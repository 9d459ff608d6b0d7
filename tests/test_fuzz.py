"""Fuzzing mit hypothesis: bereinigen, tokens, waehle und der JSON-Lader.

Strategien und Prüfungen stehen in ``auswahlstufe/referenz/eigenschaften.py`` (dort, weil
``python -m bench.fuzzen`` dieselben Eigenschaften mit 100 000 und mehr
Beispielen laufen lässt); hier prüft CI je Eigenschaft ``AW_FUZZ_BEISPIELE``
Beispiele (Voreinstellung 200).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from auswahlstufe.referenz import eigenschaften as e

BEISPIELE = int(os.environ.get("AW_FUZZ_BEISPIELE", "200"))

fuzz = settings(
    max_examples=BEISPIELE,
    deadline=None,  # die Maschine teilt sich zwei Kerne; Zeit ist hier kein Kriterium
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@fuzz
@given(e.texte)
def test_bereinigen_wirft_nie_und_ist_deterministisch(text):
    e.bereinigen_pruefen(text)


@fuzz
@given(e.texte)
def test_tokens_wirft_nie_deterministisch_und_zeilenweise_gleich(text):
    e.tokens_pruefen(text)


@fuzz
@given(e.texte)
def test_tokens_idempotent_auf_eigenem_ergebnis(text):
    e.tokens_idempotent_pruefen(text)


@fuzz
@given(e.extraktionen)
def test_waehle_wirft_nie_und_entscheidet_stabil(eingabe):
    e.waehle_pruefen(eingabe)


@fuzz
@given(e.roh_eingaben)
def test_lader_gibt_artikel_oder_eingabefehler(roh):
    e.lader_pruefen(roh)


def test_jede_eigenschaft_hat_hier_einen_test():
    assert len(e.EIGENSCHAFTEN) == 5


def test_eigenschaftstests_laufen_ohne_zufall_zeitgrenze_und_beispieldatenbank():
    """Das Profil aus conftest.py gilt für jeden Eigenschaftstest: dieselben Beispiele in jedem
    Lauf, aus einem frischen Klon (kein .hypothesis) wie aus einem alten, auch auf einer
    ausgelasteten Maschine (keine Frist, keine Gesundheitsprüfung aufs Tempo)."""
    if os.environ.get("HYPOTHESIS_PROFILE"):
        return  # wer ein anderes Profil wählt, will es so
    for gilt in (settings.default, settings(fuzz)):
        assert gilt.derandomize and gilt.database is None and gilt.deadline is None
        assert HealthCheck.too_slow in gilt.suppress_health_check
