"""The pit games' `sowing` traces, which clients animate, lead exactly where `play` does:
replayed step by step over the position before the move, they give the position after it.
Random playouts of every pit game and size, from the start to the end (the biggest board's
first plies)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from games.rules import IllegalMove, get_rules

# (slug, options, games played, most plies of each): the biggest ZigZag board's games run to
# thousands of plies, each dearer than on the other boards (15 s for one game): its first
# plies hold every kind of step; the smaller boards are played to the end.
GAMES = [
    ("diffusion", {}, 15, None),
    ("four-rank-diffusion", {}, 15, None),
    ("zigzag", {}, 15, None),
    ("zigzag", {"pits": 4, "seeds": 3}, 15, None),
    ("zigzag", {"pits": 8, "seeds": 7}, 15, None),
    ("zigzag", {"pits": 26, "seeds": 3}, 1, 300),
]


def places(rules: Any) -> dict[str, tuple[int, int]]:
    """Each pit's (row, column) on the board."""
    return {n: (r, c) for r, row in enumerate(rules.board()["names"]) for c, n in enumerate(row)}


def replay(
    data: dict[str, Any], where: dict[str, tuple[int, int]], steps: list[list[Any]]
) -> tuple[list[list[int]], list[int]]:
    """The rows and stores after applying the steps to a position's JSON."""
    rows = [list(row) for row in data["rows"]]
    stores = list(data["stores"])
    for step in steps:
        kind, place = step[0], step[1]
        if kind == "lift":
            r, c = where[place]
            rows[r][c] = 0
        elif kind == "sow":
            r, c = where[place]
            rows[r][c] += 1
        elif kind == "store":
            stores[place] += 1
        elif kind == "capture":
            r, c = where[place]
            stores[step[2]] += rows[r][c]
            rows[r][c] = 0
        elif kind == "sweep":
            stores[place] += sum(map(sum, rows))
            rows = [[0] * len(row) for row in rows]
        else:
            raise AssertionError(f"unknown step {step}")
    return rows, stores


@pytest.mark.parametrize(("slug", "options", "games", "most"), GAMES)
def test_a_trace_replayed_gives_the_position_play_gives(
    slug: str, options: dict[str, int], games: int, most: int | None
) -> None:
    rules = get_rules(slug, **options)
    rng = random.Random(f"{slug}{options}")
    where = places(rules)  # the board drawn once: it was most of the test's time
    kinds: set[str] = set()
    for _ in range(games):
        state = rules.initial_state()
        data = rules.to_json(state)
        plies = 0
        while rules.outcome(state) is None and (most is None or plies < most):
            plies += 1
            move = rng.choice(list(rules.legal_moves(state)))
            steps = rules.sowing(state, move)
            after = rules.play(state, move)
            assert steps[0] == ["lift", move]
            data_after = rules.to_json(after)
            assert replay(data, where, steps) == (data_after["rows"], data_after["stores"]), (
                move,
                steps,
            )
            kinds |= {step[0] for step in steps}
            state, data = after, data_after
    assert {"lift", "sow"} <= kinds


def test_a_refused_move_has_no_trace() -> None:
    rules = get_rules("diffusion")
    state = rules.play(rules.initial_state(), "I")
    with pytest.raises(IllegalMove):
        rules.sowing(state, "I")  # pit I is empty now
    zigzag = get_rules("zigzag")
    with pytest.raises(IllegalMove):
        zigzag.sowing(zigzag.initial_state(), "z")  # no such pit
