"""Checks of a ZigZag database against the pure engine (games/rules/zigzag.py), for
`python -m devtools endgames verify` and the tests. docs/ENDGAMES.md, "ZigZag".

- `expected`: what a position's (margin, distance) must be given its moves, the moves
  played by the engine and the positions they lead to read from the database (a local
  check: it catches a wrong value, not a consistent wrong set of values round a cycle).
- `forward`: positions drawn at random, each valued by the independent forward search
  (devtools/endgames/zigzag_forward.py), which reads nothing of the database: the margins
  must be equal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from devtools.endgames.zigzag_forward import Forward
from devtools.endgames.zigzag_solve import Database, engine_position, position_at, rules_of
from games.rules.zigzag import ZigZagRules, ZigZagState


@dataclass
class Report:
    checked: int = 0
    seconds: float = 0.0
    wrong: list[str] = field(default_factory=list)


def database_value(
    database: Database, rules: ZigZagRules, state: ZigZagState
) -> tuple[int, int, int]:
    """(margin, distance, cycle value) the database gives an engine state in play, for its
    player to move."""
    n, size = database.columns, rules.size
    pits = tuple(rules.unpack(state.board))
    pit = state.no_return
    if state.to_move != 1:
        pits = tuple(reversed(pits))
        pit = size - 1 - pit if pit >= 0 else -1
    forbidden = pit - n + 1 if pit >= 0 else 0
    left = sum(pits)
    if left == database.total:
        capturer, cycle = 0, 0
    elif state.last_capturer == state.to_move:
        capturer, cycle = 0, left
    else:
        capturer, cycle = 1, -left
    margin, distance = database.value(pits, forbidden, capturer)
    return margin, distance, cycle


def expected(database: Database, rules: ZigZagRules, state: ZigZagState) -> tuple[int, int]:
    """The (margin, distance) a position must have given its moves (module docstring): the
    best of the moves' values; the distance the shortest of the best moves' when the mover
    gains on the cycle value, the longest when it loses on it, and at the cycle value 0 if a
    best move stays in the layer at distance 0 (or there is no move), else the shortest."""
    if state.end:
        return 0, 0
    here = state.captured[0] - state.captured[1]
    sign = 1 if state.to_move == 1 else -1
    options: list[tuple[int, int, bool]] = []  # (value, distance after it, a capture)
    for move in rules.legal_moves(state):
        after = rules.play(state, move)
        gained = sign * (after.captured[0] - after.captured[1] - here)  # leftovers included
        took = rules._sow(state.board, rules._parse(state, move), state.to_move).taken > 0
        if after.end:
            options.append((gained, 0, took))
            continue
        margin, distance, _cycle = database_value(database, rules, after._replace(history=()))
        options.append((gained - margin, distance, took))
    _margin, _distance, cycle = database_value(database, rules, state)
    if not options:
        return cycle, 0
    best = max(value for value, _, _ in options)
    ways = [(distance, took) for value, distance, took in options if value == best]
    if best > cycle:
        return best, 1 + min(d for d, _ in ways)
    if best < cycle:
        return best, 1 + max(d for d, _ in ways)
    if any(not took and d == 0 for d, took in ways):
        return best, 0
    return best, 1 + min(d for d, _ in ways)


def _sample(
    database: Database, rng: np.random.Generator, most: int
) -> tuple[tuple[int, ...], int, int] | None:
    stop = int(database.offsets[min(most, database.most) + 1])
    return position_at(database, int(rng.integers(0, stop)))


def local(database: Database, samples: int, seed: int = 1) -> Report:
    """`samples` positions drawn at random, for either side, against `expected`."""
    rules = rules_of(database.columns, database.seeds)
    forward = Forward(rules)  # only for its engine states
    rng = np.random.default_rng(seed)
    report = Report()
    began = time.perf_counter()
    while report.checked < samples:
        found = _sample(database, rng, database.most)
        if found is None:
            continue
        to_move = int(rng.integers(1, 3))
        pits, pit, last = engine_position(database, *found, to_move)
        state = forward.state(pits, to_move, pit, last)
        have = database.value(*found)
        want = expected(database, rules, state) if not state.end else _ended(database, found)
        if have != want:
            report.wrong.append(f"{found} ({to_move} to move): {have}, expected {want}")
        report.checked += 1
    report.seconds = time.perf_counter() - began
    return report


def _ended(database: Database, found: tuple[tuple[int, ...], int, int]) -> tuple[int, int]:
    """A position the engine says is over: the leftovers to the last capturer, distance 0."""
    pits, _forbidden, capturer = found
    left = sum(pits)
    if left == database.total:
        return 0, 0
    return (left if capturer == 0 else -left), 0


def forward(database: Database, samples: int, seed: int = 1, most: int | None = None) -> Report:
    """`samples` positions with at most `most` seeds on the board drawn at random, for either
    side, valued by the forward search (one memo for all: positions met again are not
    searched again); the margins must be the database's."""
    rules = rules_of(database.columns, database.seeds)
    search = Forward(rules)
    rng = np.random.default_rng(seed + 7)
    report = Report()
    began = time.perf_counter()
    while report.checked < samples:
        found = _sample(database, rng, database.most if most is None else most)
        if found is None:
            continue
        to_move = int(rng.integers(1, 3))
        pits, pit, last = engine_position(database, *found, to_move)
        state = search.state(pits, to_move, pit, last)
        have = database.value(*found)[0]
        want = search.margin(state) if not state.end else _ended(database, found)[0]
        if have != want:
            report.wrong.append(f"{found} ({to_move} to move): {have}, the search {want}")
        report.checked += 1
    report.seconds = time.perf_counter() - began
    return report
