"""Property tests for Diffusion and Four-rank Diffusion (hypothesis).

Random playouts check the invariants RULES.md implies; random positions are checked
against a deliberately plain model written from RULES.md's text (grid, compass steps), so
the engine's precomputed tables are compared with something built another way.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from games.rules import IllegalMove, get_rules


@dataclass(frozen=True)
class Board:
    """RULES.md sections 1 and 2 restated: what the model and the checks need."""

    slug: str
    total: int
    maxima: list[int]  # per row, top first
    orders: list[list[str]]  # per row, compass directions
    names: list[list[str]]


TOP = ["W", "SW", "S", "SE", "E"]
BOTTOM = ["E", "NE", "N", "NW", "W"]
BOARDS = [
    Board("diffusion", 48, [5, 5], [TOP, BOTTOM], [list("FEDCBA"), list("GHIJKL")]),
    Board(
        "four-rank-diffusion",
        144,
        [5, 6, 6, 5],
        [TOP, ["NE", "N", "NW", "SW", "S", "SE"], ["SW", "S", "SE", "NE", "N", "NW"], BOTTOM],
        [[f"{file}{rank}" for file in "abcdefgh"] for rank in "4321"],
    ),
]
COMPASS = {
    "N": (-1, 0),
    "NE": (-1, 1),
    "E": (0, 1),
    "SE": (1, 1),
    "S": (1, 0),
    "SW": (1, -1),
    "W": (0, -1),
    "NW": (-1, -1),
}
BY_SLUG = {b.slug: b for b in BOARDS}
MAX_PLIES = 20_000  # far beyond any game seen; only a broken engine gets here


def block_totals(rows: list[list[int]]) -> tuple[int, int]:
    """Stones in the left block (South's) and the right block (North's)."""
    half = len(rows[0]) // 2
    return sum(sum(row[:half]) for row in rows), sum(sum(row[half:]) for row in rows)


def model_play(b: Board, data: dict[str, Any], pit: str) -> dict[str, Any]:
    """RULES.md's move, step by step on a grid: the expected JSON after scooping `pit`."""
    rows = [list(row) for row in data["rows"]]
    stores = list(data["stores"])
    columns = len(rows[0])
    row, column = next(
        (r, c) for r in range(len(rows)) for c in range(columns) if b.names[r][c] == pit
    )
    stones, rows[row][column] = rows[row][column], 0
    hand_side = 0 if column < columns // 2 else 1
    for direction in b.orders[row][:stones]:
        dr, dc = COMPASS[direction]
        r, c = row + dr, column + dc
        if c < 0:
            stores[0] += 1  # off the left end: the left store
        elif c >= columns:
            stores[1] += 1
        elif rows[r][c] + 1 > b.maxima[r]:
            stores[hand_side] += 1  # overflow: the store on the emptied pit's side
        else:
            rows[r][c] += 1
    return {"rows": rows, "stores": stores, "to_move": 3 - data["to_move"]}


@st.composite
def positions(draw: st.DrawFn, b: Board) -> dict[str, Any]:
    """Any position the rules allow: pits within their maxima, all stones accounted for."""
    rows = [
        [draw(st.integers(0, maximum)) for _ in b.names[0]] for maximum in b.maxima
    ]  # fmt: skip
    on_board = sum(map(sum, rows))
    assume(on_board <= b.total and all(block_totals(rows)))
    left = draw(st.integers(0, b.total - on_board))
    to_move = draw(st.sampled_from([1, 2]))
    return {"rows": rows, "stores": [left, b.total - on_board - left], "to_move": to_move}


@pytest.mark.parametrize("board", BOARDS, ids=lambda b: b.slug)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_it_moves_every_pit_of_any_position_as_the_rules_say(board: Board, data: Any) -> None:
    rules = get_rules(board.slug)
    position = data.draw(positions(board))
    state = rules.from_json(position)
    assert rules.to_json(state) == position
    moves = rules.legal_moves(state)
    assert sorted(moves) == sorted(
        name
        for names, counts in zip(board.names, position["rows"], strict=True)
        for name, n in zip(names, counts, strict=True)
        if n
    )
    for move in moves:
        expected = model_play(board, position, move)
        after = rules.play(state, move)
        assert rules.to_json(after) == expected, move
        left, right = block_totals(expected["rows"])
        outcome = rules.outcome(after)
        if left and right:
            assert outcome is None
        else:
            assert outcome is not None and outcome.winner == (1 if left == 0 else 2)
    for name in (n for row in board.names for n in row if n not in moves):
        with pytest.raises(IllegalMove, match=f"pit {name} is empty"):
            rules.play(state, name)


@pytest.mark.parametrize("board", BOARDS, ids=lambda b: b.slug)
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_it_keeps_the_invariants_through_random_games_and_always_ends_with_a_winner(
    board: Board, seed: int
) -> None:
    rules = get_rules(board.slug)
    rng = random.Random(seed)
    state = rules.initial_state()
    for ply in range(MAX_PLIES):
        data = rules.to_json(state)
        assert rules.from_json(data) == state
        assert rules.to_move(state) == 1 + ply % 2
        # Stones are conserved, stores included, and no pit goes above its maximum.
        assert sum(map(sum, data["rows"])) + sum(data["stores"]) == board.total
        for row, maximum in zip(data["rows"], board.maxima, strict=True):
            assert min(row) >= 0 and max(row) <= maximum
        left, right = block_totals(data["rows"])
        outcome = rules.outcome(state)
        if left and right:
            assert outcome is None
            assert rules.legal_moves(state)
        else:
            # Never a draw: the owner of the empty block (South left, North right) wins.
            assert outcome is not None
            assert outcome.winner == (1 if left == 0 else 2)
            assert rules.legal_moves(state) == []
            return
        state = rules.play(state, rng.choice(rules.legal_moves(state)))
    raise AssertionError(f"no winner after {MAX_PLIES} plies")


@pytest.mark.parametrize("board", BOARDS, ids=lambda b: b.slug)
@settings(max_examples=300, deadline=None)
@given(move=st.text(max_size=6))
def test_it_rejects_any_string_that_names_no_pit(board: Board, move: str) -> None:
    rules = get_rules(board.slug)
    state = rules.initial_state()
    names = {n.lower() for row in board.names for n in row}
    if move.strip().lower() in names and move.strip().isascii():
        assert rules.canonical_move(state, move).lower() == move.strip().lower()
    else:
        with pytest.raises(IllegalMove, match="no such pit"):
            rules.play(state, move)
