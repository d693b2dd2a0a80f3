"""The engine's words for people stay English text (str(), Outcome.reason) and carry their
template and values, for the site to say them in the reader's language (games/messages.py)."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import pytest

from games.rules import IllegalMove, InvalidOptions, Outcome, get_rules
from games.rules.base import Message, as_typed, gettext_noop
from games.rules.notation import BadNotation, parse_game, parse_position

RULES_DIR = Path(__file__).resolve().parents[2] / "games" / "rules"
PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def test_a_refusal_reads_as_its_filled_template() -> None:
    error = IllegalMove(gettext_noop("pit %(pit)s is empty"), pit="c2")
    assert str(error) == "pit c2 is empty"
    assert (error.template, error.params) == ("pit %(pit)s is empty", {"pit": "c2"})
    assert isinstance(error, ValueError)


def test_a_refusal_without_values_is_its_template_as_it_is() -> None:
    assert str(IllegalMove("100% sure")) == "100% sure"


def test_a_refusal_survives_pickling_with_its_template() -> None:
    error = pickle.loads(pickle.dumps(IllegalMove("pit %(pit)s is empty", pit="c2")))
    assert isinstance(error, IllegalMove)
    assert (str(error), error.template, error.params["pit"]) == (
        "pit c2 is empty",
        "pit %(pit)s is empty",
        "c2",
    )


def test_messages_nest() -> None:
    inner = Message("pit %(pit)s is empty", pit="c2")
    assert str(Message("move 3 (c2): %(error)s", error=inner)) == "move 3 (c2): pit c2 is empty"
    assert str(as_typed("   ")) == "(nothing)" and as_typed(" c2 ") == "c2"


def test_an_outcome_compares_by_its_winner_and_english_reason() -> None:
    made = Outcome.of(1, "block %(block)s is empty", block="B")
    assert made == Outcome(1, "block B is empty")
    assert (made.template, dict(made.params)) == ("block %(block)s is empty", {"block": "B"})
    assert repr(made) == "Outcome(winner=1, reason='block B is empty')"
    plain = Outcome(None, "both kings are stranded")
    assert (plain.template, dict(plain.params)) == ("both kings are stranded", {})


@pytest.mark.parametrize(
    ("slug", "move", "english"),
    [
        ("diffusion", "Z9", "no such pit: Z9"),
        ("diffusion", " ", "no such pit: (nothing)"),
        ("zigzag", "z", "no such pit: z (columns a-f)"),
        ("diffusion-chess", "a4-a5", "there is no stone on a4"),
        ("diffusion-chess", "echo", "an echo may only follow a normal move of this turn"),
    ],
)
def test_the_engines_refusals_carry_their_templates(slug: str, move: str, english: str) -> None:
    rules = get_rules(slug)
    with pytest.raises(IllegalMove) as refused:
        rules.play(rules.initial_state(), rules.canonical_move(rules.initial_state(), move))
    assert str(refused.value) == english
    assert "%(" in refused.value.template or not refused.value.params
    assert str(Message(refused.value.template, **refused.value.params)) == english


def test_options_and_notation_refusals_carry_their_templates() -> None:
    with pytest.raises(InvalidOptions) as refused:
        get_rules("zigzag", pits=3)
    assert refused.value.template == "%(option)s must be %(wanted)s, not %(number)s"
    assert str(refused.value) == "pits must be an even number from 2 to 26, not 3"
    rules = get_rules("diffusion")
    with pytest.raises(BadNotation) as bad:
        parse_game(rules, "1. Z9")
    assert str(bad.value) == "move 1 (Z9): no such pit: Z9"
    assert isinstance(bad.value.params["error"], IllegalMove)
    with pytest.raises(BadNotation) as bad:
        parse_position(rules, "4,4 x 1")
    assert bad.value.template.startswith("%(what)s must be a whole number")


def _marked(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == "gettext_noop"


def test_every_marked_text_is_a_literal_with_named_placeholders_only() -> None:
    """xgettext reads the literal; a translator can reorder named placeholders only."""
    for path in RULES_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and _marked(node):
                assert len(node.args) == 1, f"{path.name}:{node.lineno}"
                (text,) = node.args
                assert isinstance(text, ast.Constant), f"{path.name}:{node.lineno}"
                assert isinstance(text.value, str)
                rest = PLACEHOLDER.sub("", text.value)
                assert "%" not in rest, f"{path.name}:{node.lineno}: {text.value!r}"
