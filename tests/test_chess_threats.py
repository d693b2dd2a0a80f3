"""Diffusion Chess: what a side behind in the race plays for (bots/search/chess_threats.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from bots.search.chess_threats import FAR, attack, behind, captures, march, nearness, threats
from bots.search.chess_turns import TURN_LEVELS, TurnLevel, plan_turn
from bots.search.policies import chess_score
from games.rules import get_rules
from games.rules.chess import BLACK, INDEX, WHITE, count_groups
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
    # f1-h1 is 7 rows from f8-h8 and reaches 2 steps: 5 short, FAR - 5 a stone. The king's
    # line is 10, 9 and 8 steps short of f8.
    line = 3 * (FAR - 5)
    kings_line = (FAR - 10) + (FAR - 9) + (FAR - 8)
    assert nearness(board, WHITE, 3, 6) == line + kings_line
    assert nearness(board, WHITE, 3, 6, king) == line
    # One row nearer: 4 short.
    nearer = position(
        TWO_LINES.replace(". . . . . . . .\n    K", ". . . . . O O O\n    K", 1).replace(
            "K O O . . O O O", "K O O . . . . ."
        )
    ).board
    assert nearness(nearer, WHITE, 3, 6, king) == 3 * (FAR - 4)
    # Black's pair b5 (the king's partner, left at home) and line f8-h8 as seen from Black:
    # the line's targets are White's lines of three (f1-h1 is 7 rows away, 5 short), and
    # the march counts it.
    assert march(board, BLACK, INDEX["a5"]) > 0
    # A stone alone is nobody's target, nor a group smaller than the one that comes: White's
    # stones alone but for its king's pair, Black's line of three has nothing to go for.
    alone = position(
        """
        . . . . . . . .
        . . . . . X X X
        . . . . . . . .
        . . . . . . . .
        k X . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        K O . O . O . O
        """
    ).board
    assert nearness(alone, BLACK, 2, 5, INDEX["a5"]) == 0


# Greedy-2's first turn in the benchmark's game 7 (seed 10007): the echo capture of k17 and two
# walks; Black, a group behind before it has moved.
OPENING_CAPTURE = (
    "k3-k4-k5-k6-k7-k8-k9-k10-k11",
    "echo",
    "i2-h2-h3-h4-g4-f4-e4-d4-c4",
    "i3-i4-h4-g4-f4-f5-f6-e6",
)


def test_level_5_behind_walks_its_groups_towards_what_they_could_take() -> None:
    state = RULES.initial_state()
    for move in OPENING_CAPTURE:
        state = RULES.play(state, move)
    assert behind(state)
    five = TURN_LEVELS[4]

    def nearness_after(level: TurnLevel) -> float:
        end = state
        for move in plan_turn(RULES, state, level, chess_score, 1, 500).moves:
            end = RULES.play(end, move)
        assert count_groups(end.board, BLACK) == state.start_groups + 1  # clean all the same
        return nearness(end.board, BLACK, 2, 5, end.kings[1])

    # Measured: 261-287 marching, 209-250 not (seeds 0-3, 500 and 2,000 ms).
    assert nearness_after(five) > nearness_after(replace(five, attack=False)) + 10
