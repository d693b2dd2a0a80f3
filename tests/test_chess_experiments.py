"""Diffusion Chess's dev-only experiments: the benchmarks' count of wasted turns
(devtools/chess_waste.py) and White's attacker (devtools/chess_attack.py)."""

from __future__ import annotations

from typing import Any

from bots.search import chess_threats
from bots.search.chess_turns import TurnLevel, plan_turn
from bots.search.policies import chess_score
from devtools import chess_attack, chess_waste
from games.rules import get_rules
from games.rules.chess import BLACK, INDEX, WHITE, count_groups, group_sizes
from tests.rules.test_chess import play, position

RULES: Any = get_rules("diffusion-chess")

# White: a line of three (c1-e1) and the king's pair far off; Black's king in a line of three.
A_LINE_OF_THREE = """
    . . . . . . . .
    . . . . . k X X
    . . . . . . . .
    K O . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . O O O . . .
"""
# White's pair c1-c2 can take Black's d1 (of a pair) with c1; the pair e4-f4 is out of reach.
ONE_THREAT = """
    K O . . . .
    . . . . . .
    . . . . X X
    . . . . . .
    . . O . . .
    . . O X k .
"""
# The same with Black's king pair moved out of reach.
NO_THREAT = """
    K O . . . .
    . . . . . .
    . . . . X X
    . . . . . .
    . . O . . .
    . . O . . k X
"""


def test_a_turn_that_adds_two_groups_is_counted_as_wasted_and_avoidable() -> None:
    start = position(A_LINE_OF_THREE)
    # c1 and e1 both walk off: the line falls into three pieces, two new groups.
    end = play(start, "c1-c2", "e1-f1-g1")
    assert count_groups(end.board, WHITE) == start.start_groups + 2
    # The turn is not over yet; count it as if it were, against White (south).
    tally: dict[str, list[int]] = {}
    chess_waste.count(RULES, start, end, tally, "planner", "5")
    assert tally == {"planner": [1, 1, 1]}
    assert chess_waste.clean_turn_exists(RULES, start)


def test_a_clean_turn_is_counted_as_played_and_not_wasted() -> None:
    start = position(A_LINE_OF_THREE)
    end = play(start, "c1-c2")  # one stone walks off: exactly one new group
    tally: dict[str, list[int]] = {}
    chess_waste.count(RULES, start, end, tally, "planner", "5")
    assert tally == {"planner": [1, 0, 0]}


def test_the_attacker_counts_the_stones_it_could_take_next_turn() -> None:
    # Black to move: what White could take were Black to pass.
    assert chess_attack.threats(RULES, position(ONE_THREAT, to_move=2)) == 1
    assert chess_attack.threats(RULES, position(NO_THREAT, to_move=2)) == 0


def test_the_attacker_brings_a_group_of_three_nearer_what_it_can_take() -> None:
    near = position(A_LINE_OF_THREE)
    far = play(near, "d1-d2-d3")  # the line broken: no group of three left

    # The attacker's measure of it (its groups of three to six, counted from its own FAR).
    def nearness(board: tuple[int, ...]) -> float:
        return chess_threats.nearness(board, WHITE, 3, 6, far=chess_attack.FAR)

    assert nearness(near.board) > nearness(far.board)


def test_the_attacker_plans_clean_turns() -> None:
    # A narrow search (two completions judged, each with Black's answer read): the attacker's
    # own is wider, and slower than a test should be.
    narrow = TurnLevel(width=1, sample=8, threat=False, reading=False, judged=2, choice=1)
    state = RULES.initial_state()
    for seed in range(2):
        need = state.start_groups + 1
        mover = state.to_move
        plan = plan_turn(
            RULES,
            state,
            narrow,
            chess_score,
            seed,
            400,
            chess_attack.attack_bonus,
        )
        for move in plan.moves:
            state = RULES.play(state, move)
        assert state.to_move != mover and count_groups(state.board, mover) == need


def test_white_takes_a_stone_on_its_first_turn_with_an_echo() -> None:
    # docs/DIFFUSION-CHESS-STRATEGY.md, section 6: eight steps up the k file, then the echo.
    state = RULES.initial_state()
    assert count_groups(state.board, BLACK) == 9
    walked = RULES.play(state, "k3-k4-k5-k6-k7-k8-k9-k10-k11")
    echoed = RULES.play(walked, "echo")
    board = echoed.board
    assert board[INDEX["k17"]] == WHITE and board[INDEX["k16"]] == BLACK
    # Black has a tenth group before it has moved; the White stone among its stones is alone.
    assert count_groups(board, BLACK) == 10
    assert group_sizes(board)[INDEX["k17"]] == 1 and group_sizes(board)[INDEX["k16"]] == 1
    assert RULES.outcome(echoed) is None and echoed.to_move == WHITE  # two moves still to make
