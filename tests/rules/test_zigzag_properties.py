"""Property tests for ZigZag (hypothesis).

Random positions are played both by the engine and by a deliberately plain model written
from RULES.md's formal path rule, next = (1-r, c+d, d) or (1-r, c, -d), with lists and no
tables, so the engine's precomputed cycle and bit fields are checked against something
built another way. Random playouts check the invariants for several option sets.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from games.rules import get_rules

OPTION_SETS = [(6, 5), (2, 1), (2, 49), (4, 3), (8, 5), (26, 1), (26, 3)]
# Whole games: on 26-pit boards or with 49 seeds on 2 pits a game can run for tens of
# thousands of plies, as the rules allow (RULES-NOTES.md); those boards get a fixed
# number of plies below instead.
PLAYOUT_SETS = [(6, 5), (2, 1), (2, 7), (4, 3), (8, 5), (12, 9), (16, 3)]


def model_move(rows: list[list[int]], player: int, column: int) -> tuple[list[list[int]], int, int]:
    """RULES.md's lap rules, literally: (rows after, seeds captured, laps sown)."""
    rows = [row[:] for row in rows]
    n = len(rows[0])
    own = 1 if player == 1 else 0  # row index: 0 top (North), 1 bottom (South)
    r, c = own, column
    d = 1 if c < n // 2 else -1
    laps = 0
    while True:
        laps += 1
        seeds, rows[r][c] = rows[r][c], 0
        for _ in range(seeds):
            r, c, d = (1 - r, c + d, d) if 0 <= c + d < n else (1 - r, c, -d)
            rows[r][c] += 1
        before = rows[r][c] - 1
        if r == own and before:
            continue  # relay from here, same direction
        if r != own and not before:
            taken, rows[own][c] = rows[own][c], 0
            return rows, taken, laps
        return rows, 0, laps


@st.composite
def positions(draw: Any) -> tuple[Any, dict[str, Any], list[list[int]]]:
    pits, seeds = draw(st.sampled_from(OPTION_SETS))
    rules = get_rules("zigzag", pits=pits, seeds=seeds)
    on_board = draw(st.integers(1, rules.total))
    cells = draw(st.lists(st.integers(0, 2 * pits - 1), min_size=on_board, max_size=on_board))
    counts = [0] * (2 * pits)
    for cell in cells:
        counts[cell] += 1
    rows = [counts[:pits], counts[pits:]]
    off = rules.total - on_board
    data = {
        "rows": rows,
        "stores": [off // 2, off - off // 2],
        "captured": [off - off // 2, off // 2],
        "to_move": draw(st.sampled_from([1, 2])),
        "no_return": None,
        "last_capturer": 1 if off else 0,
        "repetition": [],
        "end": None,
    }
    return rules, data, rows


@settings(max_examples=400, deadline=None)
@given(position=positions(), column=st.integers(0, 25))
def test_every_move_matches_the_plain_model_of_the_rules(
    position: tuple[Any, dict[str, Any], list[list[int]]], column: int
) -> None:
    rules, data, rows = position
    column %= rules.columns
    player = data["to_move"]
    own = rows[1] if player == 1 else rows[0]
    assume(own[column])
    try:
        state = rules.from_json(data)
    except ValueError as error:
        assume("ends the game" not in str(error))
        raise
    after = rules.to_json(rules.play(state, "abcdefghijklmnopqrstuvwxyz"[column]))
    expected, taken, laps = model_move(rows, player, column)
    # Every move ends, within as many laps as there are seeds (docs/RULES-NOTES.md).
    assert laps <= sum(map(sum, rows))
    mover = player - 1
    if after["end"] is None:
        assert after["rows"] == expected
        assert after["captured"][mover] == data["captured"][mover] + taken
    else:  # the board has gone to the last capturer; the total still adds up
        assert sum(after["captured"]) + sum(map(sum, after["rows"])) == rules.total


def playout(rules: Any, rng: random.Random) -> list[Any]:
    """A game between players who take a capture whenever they see one.

    (Purely random players on a 26-pit board can wander for tens of thousands of plies
    with captures still possible but never made: the rules let such a game go on.)
    """
    state = rules.initial_state()
    states = [state]
    for _ in range(20_000):
        if rules.outcome(state) is not None:
            return states
        after = [rules.play(state, move) for move in rules.legal_moves(state)]
        captures = [s for s in after if sum(s.captured) > sum(state.captured)]
        state = rng.choice(captures or after)
        states.append(state)
    raise AssertionError("no result after 20,000 plies")


@pytest.mark.parametrize(("pits", "seeds"), PLAYOUT_SETS)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_conserve_seeds_end_and_score_the_total(
    pits: int, seeds: int, seed: int
) -> None:
    rules = get_rules("zigzag", pits=pits, seeds=seeds)
    states = playout(rules, random.Random(seed))
    for ply, state in enumerate(states):
        assert sum(rules.unpack(state.board)) + sum(state.captured) == rules.total
        if ply % (len(states) // 100 + 1) == 0 or ply == len(states) - 1:
            data = rules.to_json(state)  # (long games: a sample, JSON grows with history)
            assert json.loads(json.dumps(data)) == data
            assert rules.from_json(copy.deepcopy(data)) == state
    final = rules.to_json(states[-1])
    outcome = rules.outcome(states[-1])
    assert outcome is not None
    if final["last_capturer"]:
        assert sum(final["captured"]) == rules.total
        assert final["rows"] == [[0] * pits, [0] * pits]
    south, north = final["captured"]
    assert outcome.winner == (1 if south > north else 2 if north > south else None)


@pytest.mark.parametrize(("pits", "seeds"), OPTION_SETS)
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(0, 80))
def test_play_never_changes_its_input(pits: int, seeds: int, seed: int, plies: int) -> None:
    rules = get_rules("zigzag", pits=pits, seeds=seeds)
    rng = random.Random(seed)
    state = rules.initial_state()
    for _ in range(plies):
        moves = rules.legal_moves(state)
        if not moves:
            break
        before, before_json = copy.deepcopy(state), copy.deepcopy(rules.to_json(state))
        for move in moves:
            rules.play(state, move)
        assert state == before
        assert rules.to_json(state) == before_json
        state = rules.play(state, rng.choice(moves))


@pytest.mark.parametrize(("pits", "seeds"), [(26, 1), (26, 49), (2, 49)])
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_large_and_crowded_boards_conserve_seeds_and_round_trip(
    pits: int, seeds: int, seed: int
) -> None:
    rules = get_rules("zigzag", pits=pits, seeds=seeds)
    rng = random.Random(seed)
    state = rules.initial_state()
    for _ in range(300):
        if rules.outcome(state) is not None:
            break
        state = rules.play(state, rng.choice(rules.legal_moves(state)))
        assert sum(rules.unpack(state.board)) + sum(state.captured) == rules.total
    data = rules.to_json(state)
    assert rules.from_json(copy.deepcopy(data)) == state
