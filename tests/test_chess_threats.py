"""Diffusion Chess: what a side behind in the race plays for (bots/search/chess_threats.py)."""

from __future__ import annotations

from typing import Any

import pytest

from bots.search.chess_threats import approach, attack, behind, captures, threats
from bots.search.chess_turns import TURN_LEVELS
from games.rules import get_rules
from games.rules.chess import INDEX, WHITE
from tests.rules.test_chess import position

RULES: Any = get_rules("diffusion-chess")

# White: the king's pair a6-b6 and the pair c1-c2, whose c1 can take Black's d1 (a group of
# three is at least as big as a pair). The captured stone lands on c1, alone: Black one group
# more. White 2 groups, Black 2.
A_CAPTURE_THAT_HURTS = """
    K O . . . .
    . . . . . .
    . . . . X X
    . . . . . .
    . . O . . .
    . . O X X k
"""
# The same with a Black stone on b1: the captured stone lands beside it and joins it, and
# Black's groups stay three (b1 alone before, b1-c1 after). White 2 groups, Black 3.
A_CAPTURE_THAT_DOES_NOT = """
    K O . . . .
    . . . . . .
    . . . . X X
    . . . . . .
    . . O . . .
    . X O X X k
"""


@pytest.mark.parametrize(
    ("diagram", "to_move", "is_behind"),
    [
        # Equal groups: the side to move runs out first (it plays first from here).
        (A_CAPTURE_THAT_HURTS, 1, True),
        (A_CAPTURE_THAT_HURTS, 2, True),
        # White 2 against Black 3: White, to move, has more turns left; Black, to move, fewer.
        (A_CAPTURE_THAT_DOES_NOT, 1, False),
        (A_CAPTURE_THAT_DOES_NOT, 2, True),
    ],
)
def test_a_side_is_behind_when_its_turns_run_out_first(
    diagram: str, to_move: int, is_behind: bool
) -> None:
    assert behind(position(diagram, to_move=to_move)) is is_behind


@pytest.mark.parametrize(
    ("diagram", "hurting"),
    [(A_CAPTURE_THAT_HURTS, 1), (A_CAPTURE_THAT_DOES_NOT, 0)],
)
def test_a_threat_is_a_capture_next_turn_that_leaves_the_opponent_a_group_more(
    diagram: str, hurting: int
) -> None:
    # Black to move: what White could take at its next turn, were Black to pass.
    end = position(diagram, to_move=2)
    assert threats(RULES, end) == hurting
    assert (attack(RULES, end) >= 2.0) is bool(hurting)


def test_only_the_strongest_level_attacks_when_behind() -> None:
    assert [level.attack for level in TURN_LEVELS] == [False, False, False, False, True]


def test_the_opening_echo_capture_is_a_threat_though_no_single_move_takes_anything() -> None:
    # From the start, were White to move again: no stone reaches Black's in one move, but
    # a stone of the central group walking up its file and its echo takes one of Black's
    # i17, j17 and k17, which lands alone.
    black_to_move = RULES.own_next_turn(RULES.initial_state())
    white_again = RULES.own_next_turn(black_to_move)
    assert captures(RULES, white_again) == []
    assert threats(RULES, black_to_move) == 3


# White's king in a line of three (a1-c1) and another line of three (f1-h1); Black's line of
# three f8-h8 is what both could take (a group at least as big), its king's pair is not.
TWO_LINES = """
    . . . . . . . .
    . . . . . X X X
    . . . . . . . .
    . . . . . . . .
    k X . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    K O O . . O O O
"""


def test_a_side_behind_brings_its_small_groups_near_but_leaves_its_king_s_at_home() -> None:
    board = position(TWO_LINES).board
    king = INDEX["a1"]
    # f1-h1 is 7 rows from f8-h8 and reaches 2 steps: 5 short, 12 - 5 = 7 a stone. The king's
    # line is 10, 9 and 8 steps short of f8: 2 + 3 + 4.
    assert approach(board, WHITE) == 21 + 9
    assert approach(board, WHITE, king) == 21
    # One row nearer: 4 short, 8 a stone.
    nearer = position(
        TWO_LINES.replace(". . . . . . . .\n    K", ". . . . . O O O\n    K", 1).replace(
            "K O O . . O O O", "K O O . . . . ."
        )
    ).board
    assert approach(nearer, WHITE, king) == 24
