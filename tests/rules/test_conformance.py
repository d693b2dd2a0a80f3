"""One conformance test for every registered game (OpenSpiel's random_sim_test, in spirit).

Random playouts through the public API check what every engine promises, whatever the game.
A newly registered game joins these tests by being registered: nothing here names a game.
"""

from __future__ import annotations

import copy
import json
import random
from itertools import islice
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.rules import IllegalMove, InvalidOptions, Outcome, available_games, get_rules

SLUGS = [game["slug"] for game in available_games()]
MAX_PLIES = 20_000
SAMPLE = 300  # legal moves looked at per position (Diffusion Chess lists thousands)


def random_move(rules: Any, state: Any, rng: random.Random) -> str:
    """The engine's own random_move when it has one (huge move lists), else a uniform pick."""
    pick = getattr(rules, "random_move", None)
    if pick is not None:
        return str(pick(state, rng))
    return str(rng.choice(list(rules.legal_moves(state))))


def playout(rules: Any, rng: random.Random) -> list[Any]:
    """Every state of one random game, first to last."""
    state = rules.initial_state()
    states = [state]
    for _ in range(MAX_PLIES):
        if rules.outcome(state) is not None:
            return states
        assert next(iter(rules.legal_moves(state)), None), "a game in progress must offer a move"
        state = rules.play(state, random_move(rules, state, rng))
        states.append(state)
    raise AssertionError(f"no result after {MAX_PLIES} plies")


def test_it_registers_all_four_games() -> None:
    assert {"diffusion", "four-rank-diffusion", "zigzag", "diffusion-chess"} <= set(SLUGS)


@pytest.mark.parametrize("slug", SLUGS)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_promise_of_the_engine_api(slug: str, seed: int) -> None:
    rules = get_rules(slug)
    rng = random.Random(seed)
    states = playout(rules, rng)
    assert rules.to_move(states[0]) == 1  # player 1 moves first in every game
    for ply, state in enumerate(states):
        data = rules.to_json(state)
        # The JSON is plain JSON and round-trips exactly, both ways.
        assert json.loads(json.dumps(data)) == data
        assert rules.from_json(data) == state
        assert rules.to_json(rules.from_json(copy.deepcopy(data))) == data
        assert rules.to_move(state) in (1, 2)
        assert isinstance(rules.render_text(state), str)
        over = rules.outcome(state) is not None
        moves = list(islice(rules.legal_moves(state), SAMPLE))
        assert over == (not moves), "legal moves are empty exactly when the game is over"
        assert all(isinstance(move, str) for move in moves)
        assert len(set(moves)) == len(moves)
        if ply % 7 == 0:  # every listed move is playable and already canonical
            for move in moves[:40]:
                assert rules.canonical_move(state, move) == move
                rules.play(state, move)
    last = states[-1]
    outcome = rules.outcome(last)
    assert isinstance(outcome, Outcome) and outcome.reason
    assert outcome.winner in (1, 2, None)
    with pytest.raises(IllegalMove, match="the game is over"):
        rules.play(last, "A")


@pytest.mark.parametrize("slug", SLUGS)
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(0, 60))
def test_play_never_changes_the_state_it_is_given(slug: str, seed: int, plies: int) -> None:
    rules = get_rules(slug)
    rng = random.Random(seed)
    state = rules.initial_state()
    for _ in range(plies):
        if rules.outcome(state) is not None:
            break
        before_json = copy.deepcopy(rules.to_json(state))
        before = copy.deepcopy(state)
        rules.play(state, random_move(rules, state, rng))
        assert state == before
        assert rules.to_json(state) == before_json
        state = rules.play(state, random_move(rules, state, rng))


@pytest.mark.parametrize("slug", SLUGS)
@settings(max_examples=200, deadline=None)
@given(
    move=st.one_of(
        st.text(max_size=30),
        st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789- ."),
        st.integers(),
        st.floats(),
        st.none(),
        st.binary(max_size=8),
        st.lists(st.text(max_size=3), max_size=3),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    )
)
def test_it_answers_garbage_with_an_illegal_move_never_another_error(slug: str, move: Any) -> None:
    rules = get_rules(slug)
    state = rules.initial_state()
    try:
        rules.play(state, move)
    except IllegalMove as error:
        assert str(error)
    else:
        # Only a legal move, however it was spelled, may pass.
        canonical = rules.canonical_move(state, move)
        assert canonical in set(rules.legal_moves(state))


@pytest.mark.parametrize("slug", SLUGS)
@settings(max_examples=100, deadline=None)
@given(
    data=st.recursive(
        st.none() | st.booleans() | st.integers(-3, 200) | st.floats() | st.text(max_size=4),
        lambda inner: (
            st.lists(inner, max_size=9)
            | st.dictionaries(
                st.sampled_from(["rows", "stores", "to_move", "x"]) | st.text(max_size=3), inner
            )
        ),
        max_leaves=40,
    )
)
def test_it_refuses_malformed_state_json_with_a_value_error(slug: str, data: Any) -> None:
    rules = get_rules(slug)
    try:
        state = rules.from_json(data)
    except ValueError as error:
        assert str(error)
    else:
        assert rules.to_json(state) == data


def test_every_game_describes_itself_for_forms() -> None:
    for game in available_games():
        assert game["slug"] and game["name"]
        assert json.loads(json.dumps(game)) == game
        for option in game["options"]:
            assert {"name", "type", "default", "min", "max", "constraint"} <= set(option)
            assert option["min"] <= option["default"] <= option["max"]
            get_rules(game["slug"], **{option["name"]: option["default"]})


def test_it_rejects_an_unknown_game_naming_the_known_ones() -> None:
    with pytest.raises(InvalidOptions, match=r"unknown game 'go'; the games are: .*diffusion"):
        get_rules("go")
    with pytest.raises(InvalidOptions, match="unknown game"):
        get_rules(None)  # type: ignore[arg-type]


def test_an_option_named_slug_is_an_unknown_option_not_a_crash() -> None:
    with pytest.raises(InvalidOptions, match="has no option slug"):
        get_rules("diffusion", slug=1)


@pytest.mark.parametrize("slug", SLUGS)
def test_every_game_says_how_to_draw_its_board(slug: str) -> None:
    rules = get_rules(slug)
    board = rules.board()
    state = rules.initial_state()
    if board["renderer"] == "pits":
        rows = rules.to_json(state)["rows"]
        # One name per pit, laid out as the state's rows are, and the moves are pit names.
        assert [len(row) for row in board["names"]] == [len(row) for row in rows]
        names = {name for row in board["names"] for name in row}
        assert len(names) == sum(map(len, rows))
        assert set(rules.legal_moves(state)) <= names
        for block in board["blocks"]:
            first, last = block["columns"]
            assert 0 <= first <= last < len(rows[0]) and block["owner"] in (1, 2)
    else:
        assert board["renderer"] == "grid"
        assert len(board["files"]) == board["size"]
