"""One conformance test for every registered game (OpenSpiel's random_sim_test, in spirit):
random playouts through the public API, checking what every engine promises."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.rules import IllegalMove, available_games, get_rules

SLUGS = [game["slug"] for game in available_games()]
MAX_PLIES = 5000


def playout(rules: Any, rng: random.Random) -> list[Any]:
    """Every state of one random game, first to last."""
    state = rules.initial_state()
    states = [state]
    for _ in range(MAX_PLIES):
        if rules.outcome(state) is not None:
            return states
        moves = list(rules.legal_moves(state))
        assert moves, "a game in progress must offer a move"
        state = rules.play(state, rng.choice(moves))
        states.append(state)
    raise AssertionError(f"no result after {MAX_PLIES} plies")


@pytest.mark.parametrize("slug", SLUGS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_promise(slug: str, seed: int) -> None:
    rules = get_rules(slug)
    rng = random.Random(seed)
    states = playout(rules, rng)
    for state in states:
        data = rules.to_json(state)
        # The JSON is plain JSON and round-trips exactly.
        assert json.loads(json.dumps(data)) == data
        assert rules.from_json(data) == state
        assert rules.to_move(state) in (1, 2)
        assert isinstance(rules.render_text(state), str)
    last = states[-1]
    outcome = rules.outcome(last)
    assert outcome is not None and outcome.reason
    assert outcome.winner in (1, 2, None)
    assert list(rules.legal_moves(last)) == []
    with pytest.raises(IllegalMove, match="the game is over"):
        rules.play(last, "A")


@pytest.mark.parametrize("slug", SLUGS)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(0, 60))
def test_play_never_changes_the_state_it_is_given(slug: str, seed: int, plies: int) -> None:
    rules = get_rules(slug)
    rng = random.Random(seed)
    state = rules.initial_state()
    for _ in range(plies):
        moves = list(rules.legal_moves(state))
        if not moves:
            break
        before_json = copy.deepcopy(rules.to_json(state))
        before = copy.deepcopy(state)
        rules.play(state, rng.choice(moves))
        assert state == before
        assert rules.to_json(state) == before_json
        state = rules.play(state, rng.choice(moves))


@pytest.mark.parametrize("slug", SLUGS)
@settings(max_examples=200, deadline=None)
@given(
    move=st.one_of(
        st.text(max_size=30),
        st.integers(),
        st.none(),
        st.binary(max_size=8),
        st.lists(st.text(max_size=3), max_size=3),
    )
)
def test_garbage_is_an_illegal_move_never_another_error(slug: str, move: Any) -> None:
    rules = get_rules(slug)
    state = rules.initial_state()
    legal = set(rules.legal_moves(state))
    try:
        rules.play(state, move)
    except IllegalMove as error:
        assert str(error)
    else:
        # Only a legal move, however it was spelled, may pass.
        assert rules.canonical_move(state, move) in legal


def test_every_game_describes_itself_for_forms() -> None:
    for game in available_games():
        assert game["slug"] and game["name"]
        for option in game["options"]:
            assert {"name", "type", "default", "min", "max", "constraint"} <= set(option)
            assert option["min"] <= option["default"] <= option["max"]
            get_rules(game["slug"], **{option["name"]: option["default"]})
