"""Property tests over random Diffusion playouts: conservation, maxima, and the win rule."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.rules import get_rules

BOARDS = {"diffusion": (48, 2, 6), "four-rank-diffusion": (144, 4, 8)}
MAXIMA = {"diffusion": [5, 5], "four-rank-diffusion": [5, 6, 6, 5]}


def block_totals(rows: list[list[int]]) -> tuple[int, int]:
    half = len(rows[0]) // 2
    return sum(sum(row[:half]) for row in rows), sum(sum(row[half:]) for row in rows)


@pytest.mark.parametrize("slug", list(BOARDS))
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_stones_are_conserved_and_a_win_comes_exactly_with_an_empty_block(
    slug: str, seed: int
) -> None:
    rules = get_rules(slug)
    total, _, _ = BOARDS[slug]
    rng = random.Random(seed)
    state = rules.initial_state()
    while True:
        data = rules.to_json(state)
        assert sum(map(sum, data["rows"])) + sum(data["stores"]) == total
        for row, maximum in zip(data["rows"], MAXIMA[slug], strict=True):
            assert max(row) <= maximum
        left, right = block_totals(data["rows"])
        outcome = rules.outcome(state)
        if left and right:
            assert outcome is None
        else:
            assert outcome is not None
            # The owner of the empty block wins: South owns the left, North the right.
            assert outcome.winner == (1 if left == 0 else 2)
            break
        state = rules.play(state, rng.choice(rules.legal_moves(state)))
