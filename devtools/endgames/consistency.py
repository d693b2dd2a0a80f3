"""Every position of a Diffusion database checked, not a sample (docs/ENDGAMES.md).

The builder decides positions by distance through buckets; this check ignores how, and asks
of every position in play, one at a time, the question a value must answer: is its code what
its own moves say it is? For each move (the compiled moves, which tests/test_endgames.py
checks against the engine's `play`): a move that wins at once is a win in 1, one that loses
at once a loss in 1, and one to another position a win in d + 1 when that position is lost in
d, a loss in d + 1 when it is won in d, a draw when it is drawn. The position must then be
won in the nearest of its wins, if it has one; else, with no move to a draw, lost in the
farthest of its losses; else drawn. Codes that satisfy this everywhere, with finite distances
for every win and loss, are the true values: by induction on the distance, a win in d is
won by the move to a loss in d - 1, and a loss in d loses whatever is played.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from devtools.endgames.diffusion_arrays import GOES_ON, WINS, Tables, play
from devtools.endgames.diffusion_solve import LOSS, _where, unrank

CHUNKS = 256
NONE = 1 << 30


@njit(cache=True)
def expected(
    stones: int,
    place: int,
    codes: np.ndarray,
    offsets: np.ndarray,
    ways: np.ndarray,
    targets: np.ndarray,
    maximum: np.ndarray,
    block_of: np.ndarray,
    block_pits: np.ndarray,
    digits: np.ndarray,
    out: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """The code position `place` of layer `stones` must have, from its moves' codes; -1 for
    a board with a block empty (not a position in play)."""
    unrank(place, stones, ways, digits)
    south = 0
    north = 0
    for j in range(block_pits.shape[1]):
        south += digits[block_pits[0, j]]
        north += digits[block_pits[1, j]]
    if south == 0 or north == 0:
        return -1
    nearest_win = NONE
    farthest_loss = 0
    drawn = False
    for pit in range(maximum.shape[0]):
        if digits[pit] == 0:
            continue
        result = play(digits, pit, targets, maximum, block_of, block_pits, out)
        if result == WINS:
            nearest_win = min(nearest_win, 1)
        elif result == GOES_ON:
            where, _ = _where(out, offsets, ways, scratch)
            code = codes[where]
            if code > LOSS:
                nearest_win = min(nearest_win, code - LOSS + 1)
            elif code > 0:
                farthest_loss = max(farthest_loss, code + 1)
            else:
                drawn = True
        else:
            farthest_loss = max(farthest_loss, 1)
    if nearest_win < NONE:
        return nearest_win
    if drawn:
        return 0
    return LOSS + farthest_loss


@njit(cache=True, parallel=True)
def _check_layer(
    stones: int,
    codes: np.ndarray,
    offsets: np.ndarray,
    ways: np.ndarray,
    targets: np.ndarray,
    maximum: np.ndarray,
    block_of: np.ndarray,
    block_pits: np.ndarray,
    bad: np.ndarray,
    first_bad: np.ndarray,
    in_play: np.ndarray,
) -> None:
    """Check every position of one layer; per chunk, the disagreements and the first."""
    start = offsets[stones]
    size = offsets[stones + 1] - start
    step = (size + CHUNKS - 1) // CHUNKS
    for chunk in prange(CHUNKS):
        pits = maximum.shape[0]
        digits = np.zeros(pits, dtype=np.int8)
        out = np.zeros(pits, dtype=np.int8)
        scratch = np.zeros(pits, dtype=np.int8)
        for place in range(chunk * step, min(size, (chunk + 1) * step)):
            wanted = expected(
                stones, place, codes, offsets, ways, targets, maximum, block_of,
                block_pits, digits, out, scratch,
            )  # fmt: skip
            if wanted < 0:
                continue
            in_play[chunk] += 1
            if codes[start + place] != wanted:
                if bad[chunk] == 0:
                    first_bad[chunk] = start + place
                bad[chunk] += 1


def check(
    codes: np.ndarray,
    offsets: np.ndarray,
    ways: np.ndarray,
    tables: Tables,
    layers: range,
) -> tuple[int, int, int]:
    """Every position in play of `layers`: (positions checked, disagreements, the database
    index of the first, or -1). Called layer by layer from Python: numba's cache cannot
    hold a compiled function that calls a parallel one."""
    checked = 0
    wrong = 0
    first = -1
    for stones in layers:
        bad = np.zeros(CHUNKS, dtype=np.int64)
        first_bad = np.full(CHUNKS, -1, dtype=np.int64)
        in_play = np.zeros(CHUNKS, dtype=np.int64)
        _check_layer(
            stones, codes, offsets, ways, tables.targets, tables.maximum, tables.block_of,
            tables.block_pits, bad, first_bad, in_play,
        )  # fmt: skip
        checked += int(in_play.sum())
        wrong += int(bad.sum())
        if first < 0 and wrong:
            first = int(first_bad[first_bad >= 0][0])
    return checked, wrong, first
