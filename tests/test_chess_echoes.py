"""Diffusion Chess captures by a move and its echo (bots/search/chess_echoes.py): found by
every route, not only the shortest, and seen by the turn planner on both sides of the board."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bots.search.chess_echoes import echo_captures
from bots.search.chess_turns import plan_turn, threatened
from bots.search.policies import chess_score
from games.rules import get_rules
from games.rules.chess import BLACK, INDEX, WHITE, count_groups
from tests.rules.test_chess import position

RULES: Any = get_rules("diffusion-chess")


def taken_by_echo(state: Any) -> dict[str, int]:
    """Every normal move of the mover that an echo follows with a capture, found the slow
    way: each legal path played, then the echo, if legal, played after it."""
    mover = state.to_move
    found = {}
    for move in RULES.legal_moves(state):
        if move == "echo" or state.board[INDEX[move.rsplit("-", 1)[-1]]]:
            continue  # an echo cannot follow a capture
        walked = RULES.play(state, move)
        if not RULES.is_legal(walked, "echo"):
            continue
        echoed = RULES.play(walked, "echo")
        taken = [
            cell
            for cell, colour in enumerate(echoed.board)
            if colour == mover and walked.board[cell] == 3 - mover
        ]
        if taken:
            found[move] = taken[0]
    return found


def test_white_s_first_turn_has_echo_captures_up_the_middle_files() -> None:
    found = echo_captures(RULES, RULES.initial_state())
    assert found["k3-k4-k5-k6-k7-k8-k9-k10-k11"] == INDEX["k17"]  # strategy text, section 6
    assert found == taken_by_echo(RULES.initial_state())
    # Only the nine-stone group reaches: the groups of four are too small and too far.
    assert {route.split("-")[0] for route in found} <= {"i3", "j3", "k3", "i2", "k2", "i1"}


def test_an_echo_takes_what_its_route_turns_towards_and_stops_at_a_smaller_stone() -> None:
    # White's b2 (a group of three: two steps) has two routes to c3; their echoes differ.
    state = position(
        """
        . . . . . .
        . X . X X .
        . . . X k .
        . O . . . .
        K O . . . .
        """
    )
    found = echo_captures(RULES, state)
    assert found["b2-c2-c3"] == INDEX["d3"]  # east, north; then east onto d3
    assert found["b2-b3-c3"] == INDEX["d4"]  # north, east; then north, east onto d4
    assert "b2-b3" not in found  # its echo meets b4's lone stone, smaller than a three
    assert "b1-c1-c2" not in found  # its echo would take d3, but the move leaves K alone
    assert found == taken_by_echo(state)


def test_no_echo_capture_is_offered_without_a_move_left_for_the_echo() -> None:
    state = RULES.initial_state()
    for move in ["a2-a3", "b2-b3", "e2-e3"]:
        state = RULES.play(state, move)
    assert state.moves_left == 1 and echo_captures(RULES, state) == {}


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), plies=st.integers(0, 40))
def test_the_echo_captures_found_are_exactly_those_of_every_legal_path(
    seed: int, plies: int
) -> None:
    rng = random.Random(seed)
    state = RULES.initial_state()
    for _ in range(plies):
        following = RULES.play(state, RULES.random_move(state, rng))
        if RULES.outcome(following) is not None:
            break
        state = following
    assert echo_captures(RULES, state, routes=10**9) == taken_by_echo(state)


def test_a_stone_open_to_an_echo_counts_as_threatened() -> None:
    # At the start White can take i17, j17 or k17 by an echo and nothing by a move.
    assert threatened(RULES, RULES.initial_state()) == 3


def test_level_5_as_white_takes_a_stone_by_an_echo_on_its_first_turn_and_stays_clean() -> None:
    state = RULES.initial_state()
    plan = plan_turn(RULES, state, 5, chess_score, seed=1, ms=1500)
    assert "echo" in plan.moves
    for move in plan.moves:
        state = RULES.play(state, move)
    assert state.to_move == BLACK
    assert count_groups(state.board, WHITE) == 10  # exactly one new group: clean
    assert count_groups(state.board, BLACK) >= 10  # and Black has one it did not make
