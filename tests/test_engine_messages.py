"""The engine's words said in the reader's language (games/messages.py): a refusal's template
is translated and filled with its values, words among the values translated too; English
reads exactly as the engine wrote it."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import translation

from games import messages
from games.rules import IllegalMove, Outcome, get_rules
from games.rules.base import Message
from games.rules.notation import BadNotation, parse_game

FAKE_FRENCH = {
    "pit %(pit)s is empty": "la case %(pit)s est vide",
    "no such pit: %(pit)s": "pas de case : %(pit)s",
    "(nothing)": "(rien)",
    "move %(number)s (%(move)s): %(error)s": "coup %(number)s (%(move)s) : %(error)s",
    "a broken one %(pit)s": "une cassée %(case)s",
}


@pytest.fixture
def french(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(messages, "_", lambda text: FAKE_FRENCH.get(text, text))


def _refusal(slug: str, move: str) -> IllegalMove:
    rules = get_rules(slug)
    try:
        rules.play(rules.initial_state(), rules.canonical_move(rules.initial_state(), move))
    except IllegalMove as error:
        return error
    raise AssertionError(f"{move} was played")


@pytest.mark.parametrize(
    ("slug", "move"),
    [
        ("diffusion", "Z9"),
        ("zigzag", " "),
        ("diffusion-chess", "a4-a5"),
        ("diffusion-chess", "echo"),
    ],
)
def test_english_reads_as_the_engine_wrote_it(slug: str, move: str) -> None:
    error = _refusal(slug, move)
    with translation.override("en"):
        assert messages.translated(error) == str(error)


def test_a_refusal_is_translated_with_its_values(french: Any) -> None:
    assert messages.translated(_refusal("diffusion", " ")) == "pas de case : (rien)"
    assert messages.translated(IllegalMove("pit %(pit)s is empty", pit="c2")) == (
        "la case c2 est vide"
    )


def test_a_refusal_inside_another_is_translated_too(french: Any) -> None:
    with pytest.raises(BadNotation) as bad:
        parse_game(get_rules("diffusion"), "1. Z9")
    assert messages.translated(bad.value) == "coup 1 (Z9) : pas de case : Z9"


def test_an_outcome_and_a_plain_template(french: Any) -> None:
    made = Outcome.of(1, "pit %(pit)s is empty", pit="a1")
    assert messages.translated(made) == "la case a1 est vide"
    assert messages.translated("(nothing)") == "(rien)"
    assert messages.translated("") == ""


def test_a_translation_that_does_not_fit_its_values_falls_back_to_english(french: Any) -> None:
    assert messages.translated(Message("a broken one %(pit)s", pit="c2")) == "a broken one c2"
