"""Diffusion (2x6) as arrays, for compiled search (numba): what the retrograde builder and the
space counts run on. Dev-only: the product plays through games/rules/diffusion.py.

A position is an integer: the base-6 digits of its 12 pits in the engine's order (pit 0 = F
... 5 = A on the top row, 6 = G ... 11 = L on the bottom row), **South to move**. A position
with North to move is the same board turned half round (pit p -> 11 - p) with South to move:
the turn swaps the blocks, the players who own them and the two rows' distribution orders
(E NE N NW W <-> W SW S SE E), so it is the same game for the player to move. Store contents
never change play (RULES.md), so they are not part of a position. 6**12 = 2,176,782,336
positions fit 32 bits.

The scoops are the engine's own tables (DiffusionRules._scoops): the compiled moves are
checked against `play` in tests/test_endgames.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from games.rules import get_rules
from games.rules.diffusion import DiffusionRules

SIZE = 12
BASE = 6
SPACE = BASE**SIZE
# What a move does for the player who made it (South, in the canonical form).
GOES_ON, WINS, LOSES = 0, 1, 2


@dataclass(frozen=True)
class Tables:
    targets: np.ndarray  # int8 [pit, stones, k]: the k-th pit that many stones reach, then -1
    maximum: np.ndarray  # int8 [pit]
    block_of: np.ndarray  # int8 [pit]: 0 (South's, the left half) or 1 (North's)
    block_pits: np.ndarray  # int8 [block, 6]


def tables(rules: DiffusionRules | None = None) -> Tables:
    """The engine's scoops as arrays: the 2x6 board unless told (Four-rank's too: its half
    turn is also pit p -> size - 1 - p)."""
    rules = rules or get_rules("diffusion")  # type: ignore[assignment]
    assert isinstance(rules, DiffusionRules)
    assert rules.owners == (1, 2), "South owns the left block"
    size, most = rules.size, max(rules.maximum)
    targets = np.full((size, most + 1, most + 1), -1, dtype=np.int8)
    for pit in range(size):
        for stones, scoop in enumerate(rules._scoops[pit]):
            for k, target in enumerate(scoop.pits):
                targets[pit, stones, k] = target
    block_pits = np.array(
        [[pit for pit in range(size) if rules.block_of[pit] == b] for b in (0, 1)], dtype=np.int8
    )
    return Tables(
        targets=targets,
        maximum=np.array(rules.maximum, dtype=np.int8),
        block_of=np.array(rules.block_of, dtype=np.int8),
        block_pits=block_pits,
    )


@njit(cache=True)
def decode(index: int, digits: np.ndarray) -> int:
    """The pits of `index` into `digits`; the stones on the board."""
    total = 0
    for i in range(SIZE):
        digits[i] = index % BASE
        total += digits[i]
        index //= BASE
    return total


@njit(cache=True)
def encode(digits: np.ndarray) -> int:
    index = 0
    for i in range(SIZE - 1, -1, -1):
        index = index * BASE + digits[i]
    return index


@njit(cache=True)
def turned(digits: np.ndarray) -> int:
    """The index of the board turned half round (North's view made South's)."""
    index = 0
    for i in range(SIZE):  # digit i of the turned board is pit 11 - i
        index = index * BASE + digits[i]
    return index


@njit(cache=True)
def play(
    digits: np.ndarray,
    pit: int,
    targets: np.ndarray,
    maximum: np.ndarray,
    block_of: np.ndarray,
    block_pits: np.ndarray,
    out: np.ndarray,
) -> int:
    """South scoops `pit` (not empty) of `digits` into `out`: GOES_ON, WINS or LOSES."""
    for i in range(digits.shape[0]):
        out[i] = digits[i]
    stones = out[pit]
    out[pit] = 0
    for k in range(targets.shape[2]):  # the pits this many stones reach (stores left out)
        target = targets[pit, stones, k]
        if target < 0:
            break
        if out[target] < maximum[target]:
            out[target] += 1
    block = block_of[pit]
    for j in range(block_pits.shape[1]):
        if out[block_pits[block, j]] != 0:
            return GOES_ON
    return WINS if block == 0 else LOSES
