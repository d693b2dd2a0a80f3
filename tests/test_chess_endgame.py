"""Diffusion Chess's endgame read out (bots/search/chess_endgame.py): the turns a side can
still complete alone, and the levels that read it choosing the turn that keeps them
(bots/search/chess_turns.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from bots.search import think
from bots.search.chess_endgame import Reader
from bots.search.chess_turns import plan_turn
from bots.search.policies import chess_score
from games.rules import IllegalMove, get_rules
from games.rules.chess import WHITE, count_groups
from tests.rules.test_chess import play, position

RULES: Any = get_rules("diffusion-chess")

# Drawn from a1 up.
KING_PAIR_ONLY = """
    . . . . . .
    . . . k X .
    . . . . . .
    . . . . . .
    . . . . . O
    O K . . . .
"""
KING_IN_AN_L = """
    . . . . . .
    . . . k X .
    . . . . . .
    . . . . . .
    . O . . . .
    . K O . . .
"""

# White: the king in an L of three, and a line of three elsewhere; Black far away.
TWO_GROUPS = """
    . . . . . . . .
    . . . . . k X .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . O . . . O O O
    . K O . . . . .
"""


def far_future() -> float:
    return time.perf_counter() + 60


def test_skipping_the_opponents_turn_starts_the_same_side_s_next_turn() -> None:
    state = play(position(KING_IN_AN_L), "c1-d1", "b2-a2-a1", "b1-b2-a2")
    assert state.to_move == 2 and not state.moved  # White's turn is over
    again = RULES.own_next_turn(state)
    assert (again.to_move, again.turn, again.moves_left) == (WHITE, state.turn + 1, 5)
    assert again.start_groups == count_groups(state.board, WHITE)
    with pytest.raises(IllegalMove):
        RULES.own_next_turn(RULES.play(position(KING_IN_AN_L), "c1-d1"))


@pytest.mark.parametrize(
    ("diagram", "turns"),
    [
        # Only the king's pair can move, and it must: either stone's step leaves the king alone.
        (KING_PAIR_ONLY, 0),
        # c1 walks off (the new group), b2 walks round to a1's side, the king steps beside it;
        # the turn after, only the king's pair is left to move: one turn, not two.
        (KING_IN_AN_L, 1),
    ],
)
def test_the_reading_counts_the_turns_a_side_can_still_complete(diagram: str, turns: int) -> None:
    reader = Reader(RULES, WHITE, far_future())
    assert reader.turns(position(diagram), 5) == turns


def test_the_reading_completes_its_turn_with_exactly_one_more_group() -> None:
    state = position(TWO_GROUPS)
    start = count_groups(state.board, WHITE)
    for move in plan_turn(RULES, state, 5, chess_score, seed=1, ms=3_000).moves:
        assert state.to_move == WHITE
        state = RULES.play(state, move)
    assert state.to_move != WHITE and RULES.outcome(state) is None
    assert count_groups(state.board, WHITE) == start + 1
    # And at least one more such turn is still possible after it.
    assert Reader(RULES, WHITE, far_future()).turns(RULES.own_next_turn(state), 1) == 1


@pytest.mark.parametrize("number", [4, 5])
def test_the_levels_that_read_keep_a_later_turn_possible_in_an_l(number: int) -> None:
    # The king in an L of three and nothing else: one clean turn is left, and only the
    # turns that keep the king beside a partner leave it.
    state = position(KING_IN_AN_L)
    for move in plan_turn(RULES, state, number, chess_score, seed=2, ms=3_000).moves:
        state = RULES.play(state, move)
    assert RULES.outcome(state) is None
    assert state.to_move != WHITE


def test_level_five_plans_the_turn_once_and_answers_its_next_moves_from_the_plan() -> None:
    state = position(KING_IN_AN_L)
    read = think(RULES, state, 5, seed=1)
    assert read.playouts > 0  # the positions its planning played
    after = RULES.play(state, read.move)
    assert after.to_move == WHITE
    assert think(RULES, after, 5, seed=2).playouts == 0
