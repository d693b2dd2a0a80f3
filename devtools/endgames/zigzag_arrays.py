"""ZigZag as arrays, for compiled search (numba): the moves the retrograde builder
(devtools/endgames/zigzag_solve.py) makes. Dev-only: the product plays through
games/rules/zigzag.py, whose tables (the sowing cycle, the first lap's direction, the pit
across, the pit a lone seed reaches) these arrays copy.

A position is seen by the player to move, **South**: a board where North is to move is the
board turned half round (pit p -> 2 * pits - 1 - p). The turn maps the sowing cycle onto
itself walked the other way, the left half onto the right half (so the first lap still heads
for the centre line) and North's row onto South's: it is the same game for the player to
move (tests/test_zigzag_endgames.py plays it both ways through the engine).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from games.rules.zigzag import ZigZagRules


@dataclass(frozen=True)
class Tables:
    columns: int  # pits per row
    order: np.ndarray  # int64 [i]: the pit at place i of the sowing cycle
    where: np.ndarray  # int64 [pit]: its place in the cycle
    step: np.ndarray  # int64 [pit]: +1 or -1, the first lap's way along the cycle
    across: np.ndarray  # int64 [pit]: the pit in the same column, other row
    first: np.ndarray  # int64 [pit]: the pit a lone seed lifted there reaches


def tables(rules: ZigZagRules) -> Tables:
    """The engine's own sowing tables as arrays."""
    as_array = lambda values: np.array(values, dtype=np.int64)  # noqa: E731
    return Tables(
        columns=rules.columns,
        order=as_array(rules._order),
        where=as_array(rules._where),
        step=as_array(rules._step),
        across=as_array(rules.across),
        first=as_array(rules._first),
    )


@njit(cache=True)
def sow(
    counts: np.ndarray,
    pit: int,
    columns: int,
    order: np.ndarray,
    where: np.ndarray,
    step: np.ndarray,
    across: np.ndarray,
    first: np.ndarray,
    out: np.ndarray,
) -> tuple[int, int]:
    """South lifts `pit` (one of its own, pits columns..2*columns-1, not empty) of `counts`
    into `out`: (seeds captured, the pit North may not lift next or -1), as
    ZigZagRules._sow plays it (relays keep the first lap's way; "non-empty" is judged before
    the last seed drops; the no-return pit only when sowing it back would capture nothing)."""
    size = 2 * columns
    for p in range(size):
        out[p] = counts[p]
    origin = pit
    i = where[pit]
    way = step[pit]
    laps = 0
    while True:
        seeds = out[pit]
        out[pit] = 0
        full = seeds // size
        rest = seeds % size
        if full:
            for p in range(size):
                out[p] += full
        for j in range(1, rest + 1):
            out[order[(i + way * j) % size]] += 1
        i = (i + way * seeds) % size
        last = order[i]
        filled = out[last] > 1
        if last >= columns:  # South's own row
            if not filled:
                return 0, -1
            pit = last
            laps += 1
            continue
        if filled:
            return 0, -1
        opposite = across[last]
        taken = out[opposite]
        out[opposite] = 0
        no_return = -1
        if laps == 0 and seeds == 1 and taken == 0 and first[last] == origin:
            back = across[origin]
            if back == last or out[back] == 0:
                no_return = last
        return taken, no_return
