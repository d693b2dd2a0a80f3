"""`position_key`: the opening explorer's key of a position (docs/EXPLORER.md).

Two positions share a key exactly when the rules cannot tell them apart: the same moves are
legal from both, and they lead to positions that share keys again. What the state keeps only
because of the way the game came (ZigZag's earlier positions for threefold repetition,
Diffusion Chess's turn number after the first turn) is left out, so transpositions merge.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.rules import IllegalMove, get_rules

GAMES = [
    ("diffusion", {}),
    ("four-rank-diffusion", {}),
    ("zigzag", {}),
    ("zigzag", {"pits": 4, "seeds": 3}),
    ("diffusion-chess", {}),
]
# What a state's JSON keeps about the way the game came, not about the position.
PATH_FIELDS = {"repetition", "turn"}


def _line(rules: Any, moves: list[str]) -> Any:
    state = rules.initial_state()
    for move in moves:
        state = rules.play(state, move)
    return state


def _position(rules: Any, state: Any) -> dict[str, Any]:
    data = rules.to_json(state)
    return {name: value for name, value in data.items() if name not in PATH_FIELDS}


def _tree(rules: Any, depth: int) -> dict[bytes, list[tuple[str, ...]]]:
    """Every line of `depth` moves from the start, grouped by the key it ends on."""
    reached: dict[bytes, list[tuple[str, ...]]] = {}
    frontier = [((), rules.initial_state())]
    for _ in range(depth):
        frontier = [
            ((*line, move), rules.play(state, move))
            for line, state in frontier
            for move in rules.legal_moves(state)
        ]
    for line, state in frontier:
        reached.setdefault(rules.position_key(state), []).append(line)
    return reached


@pytest.mark.parametrize(
    ("slug", "options", "depth"),
    [
        ("diffusion", {}, 3),
        ("four-rank-diffusion", {}, 3),
        ("zigzag", {"pits": 4, "seeds": 3}, 5),
    ],
)
def test_mancala_transpositions_share_a_key_and_nothing_else_does(
    slug: str, options: dict[str, Any], depth: int
) -> None:
    rules = get_rules(slug, **options)
    reached = _tree(rules, depth)
    merged = [lines for lines in reached.values() if len(lines) > 1]
    assert merged, "some position is reached by two move orders"
    for lines in reached.values():
        states = [_line(rules, list(line)) for line in lines]
        positions = {repr(_position(rules, state)) for state in states}
        assert len(positions) == 1, lines  # one key: one position
        assert len({tuple(rules.legal_moves(state)) for state in states}) == 1
    # ... and different positions never share one.
    seen: dict[str, bytes] = {}
    for key, lines in reached.items():
        position = repr(_position(rules, _line(rules, list(lines[0]))))
        assert seen.setdefault(position, key) == key


def test_zigzag_keys_leave_out_the_repetition_history() -> None:
    rules = get_rules("zigzag", pits=4, seeds=3)
    reached = _tree(rules, 5)
    differing = [
        lines
        for lines in reached.values()
        if len({repr(rules.to_json(_line(rules, list(line)))["repetition"]) for line in lines}) > 1
    ]
    assert differing, "a transposition whose earlier positions differ still shares the key"


def _commuting_turn(rules: Any) -> tuple[list[str], list[str]]:
    """White's first turn played in two orders that end on the same board: two moves that
    commute, then the same moves to the end of the turn (no echo, which repeats the last)."""
    start = rules.initial_state()
    moves = list(itertools.islice(rules.legal_moves(start), 60))
    for first, second in itertools.combinations(moves, 2):
        try:
            one = rules.play(rules.play(start, first), second)
            two = rules.play(rules.play(start, second), first)
        except IllegalMove:  # the second is not legal after the first
            continue
        if _position(rules, one) | {"last_move": None} != _position(rules, two) | {
            "last_move": None
        }:
            continue
        rest: list[str] = []
        rng = random.Random(5)
        while rules.to_move(one) == 1:
            move = rng.choice([move for move in rules.legal_moves(one) if move != "echo"])
            one, two = rules.play(one, move), rules.play(two, move)
            rest.append(move)
        return [first, second, *rest], [second, first, *rest]
    raise AssertionError("no two first moves commute")


def test_diffusion_chess_turn_orders_merge_once_the_turn_is_over() -> None:
    rules = get_rules("diffusion-chess")
    one, two = _commuting_turn(rules)
    a, b = _line(rules, one), _line(rules, two)
    assert one != two
    assert rules.to_move(a) == rules.to_move(b) == 2  # Black's turn: White's is over
    assert rules.position_key(a) == rules.position_key(b)
    # Within the turn the order matters (an echo repeats the last move): keys differ.
    mid_a, mid_b = _line(rules, one[:2]), _line(rules, two[:2])
    assert rules.position_key(mid_a) != rules.position_key(mid_b)


@pytest.mark.parametrize(("slug", "options"), GAMES)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(0, 40))
def test_a_key_fixes_what_the_rules_do_next(
    slug: str, options: dict[str, Any], seed: int, length: int
) -> None:
    """A state and its JSON round trip share a key; the key changes with every move."""
    rules = get_rules(slug, **options)
    rng = random.Random(seed)
    state = rules.initial_state()
    keys = [rules.position_key(state)]
    for _ in range(length):
        if rules.outcome(state) is not None:
            break
        state = rules.play(state, rng.choice(list(rules.legal_moves(state))))
        keys.append(rules.position_key(state))
    assert isinstance(keys[-1], bytes)
    assert rules.position_key(rules.from_json(rules.to_json(state))) == keys[-1]
    assert all(before != after for before, after in itertools.pairwise(keys))
