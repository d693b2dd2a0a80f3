"""Diffusion Chess played by whole turns (bots/search/chess_turns.py): a move's change to the
mover's groups read exactly off the board, and every level's turn clean."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.search import think
from bots.search.chess_endgame import turn_moves
from bots.search.chess_groups import group_change, labels
from bots.search.chess_turns import PLANS, plan_turn
from bots.search.policies import chess_score
from devtools.chess_waste import clean_turn_exists
from games.rules import get_rules
from games.rules.chess import INDEX, WHITE, count_groups
from tests.rules.test_chess import position

RULES: Any = get_rules("diffusion-chess")

# c1 takes d1 (a pair takes a pair): the captured stone lands on c1 and Black's king is alone.
A_WIN_NOW = """
    . . . . . .
    . K O . . .
    . . . . . .
    . . . . . .
    . . O . . .
    . . O X k .
"""


def midgame(seed: int, plies: int) -> Any:
    """A position reached by random moves from the start (a turn begun, often)."""
    rng = random.Random(seed)
    state = RULES.initial_state()
    for _ in range(plies):
        if RULES.outcome(state) is not None:
            break
        following = RULES.play(state, RULES.random_move(state, rng))
        if RULES.outcome(following) is not None:
            break
        state = following
    return state


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), plies=st.integers(0, 60), pick=st.integers(0, 10_000))
def test_a_move_s_change_to_the_mover_s_groups_is_read_exactly(
    seed: int, plies: int, pick: int
) -> None:
    state = midgame(seed, plies)
    me = state.to_move
    label, groups = labels(state.board, me)
    assert len(groups) == count_groups(state.board, me)
    moves = [move for move in turn_moves(RULES, state) if move != "echo"]
    for move in random.Random(pick).sample(moves, min(20, len(moves))):
        cells = move.split("-")
        start, end = INDEX[cells[0]], INDEX[cells[-1]]
        after = RULES.play(state, move)
        expected = count_groups(after.board, me) - len(groups)
        assert group_change(label, groups, start, end) == expected, move


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_every_level_takes_a_win_that_is_there(number: int) -> None:
    state = position(A_WIN_NOW)
    moves = plan_turn(RULES, state, number, chess_score, seed=number, ms=1_000).moves
    assert moves[0] == "c1-d1"
    outcome = RULES.outcome(RULES.play(state, moves[0]))
    assert outcome is not None and outcome.winner == WHITE


def turn_start(seed: int, turns: int) -> Any:
    """The start of a turn, after `turns` turns of level 1's planning (quick and clean)."""
    state = RULES.initial_state()
    for turn in range(turns):
        for move in plan_turn(RULES, state, 1, chess_score, seed=seed * 100 + turn, ms=300).moves:
            state = RULES.play(state, move)
    return state


@pytest.mark.parametrize(("number", "ms"), [(1, 300), (3, 800), (5, 0.0)])
def test_every_level_s_turn_adds_exactly_one_group_where_it_can(number: int, ms: float) -> None:
    # Level 5 with no time at all plays hurried: a narrow beam, still clean.
    for seed in range(3):
        state = turn_start(seed * 7 + number, 8 * seed + 1)
        assert RULES.outcome(state) is None and not state.moved
        assert clean_turn_exists(RULES, state)
        me, need = state.to_move, state.start_groups + 1
        for move in plan_turn(RULES, state, number, chess_score, seed=seed, ms=ms).moves:
            assert state.to_move == me
            state = RULES.play(state, move)
        assert RULES.outcome(state) is None and state.to_move != me
        assert count_groups(state.board, me) == need


def test_the_turn_s_later_moves_are_the_plan_s_and_cost_no_planning() -> None:
    state = RULES.initial_state()
    first = think(RULES, state, 2, seed=9)
    planned = PLANS.next_move(state, 2)
    assert planned == first.move
    state = RULES.play(state, first.move)
    while state.to_move == WHITE:
        kept = PLANS.next_move(state, 2)
        assert kept is not None
        assert think(RULES, state, 2, seed=10).move == kept
        state = RULES.play(state, kept)
    # White's first turn (four moves) ended with exactly one more group.
    assert count_groups(state.board, WHITE) == RULES.initial_state().start_groups + 1
