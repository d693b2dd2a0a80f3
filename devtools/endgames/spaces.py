"""How big the games are: positions by stones on the board, exact, and for Diffusion (2x6) how
many are reachable from the start (docs/ENDGAMES.md). Dev-only.

Counting positions with k stones is counting ways to put k stones in the pits under each
pit's maximum: the coefficient of x**k in the product of (1 + x + ... + x**max) over the
pits (exact, Python integers). Reachability is a search over every position the start leads
to, compiled (numba), on the canonical form of devtools/endgames/diffusion_arrays.py: one bit
a position (272 MB for 6**12), a stack of the positions found and not yet expanded.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from devtools.endgames import diffusion_arrays as arrays
from devtools.endgames.diffusion_arrays import BASE, GOES_ON, SIZE, SPACE, decode, play, turned


def by_stones(maxima: Sequence[int]) -> list[int]:
    """Positions (boards) with k stones on them, for each k from 0 to the sum of maxima."""
    counts = [1]
    for most in maxima:
        grown = [0] * (len(counts) + most)
        for k, ways in enumerate(counts):
            for added in range(most + 1):
                grown[k + added] += ways
        counts = grown
    return counts


@njit(cache=True)
def _reach(
    start: int,
    seen: np.ndarray,
    stack: np.ndarray,
    targets: np.ndarray,
    maximum: np.ndarray,
    block_of: np.ndarray,
    block_pits: np.ndarray,
    found: np.ndarray,
    ends: np.ndarray,
) -> int:
    """Every position reachable from `start` (South to move), counted by stones on the board
    into `found`; `ends[0]` the moves that win at once, `ends[1]` those that lose. Returns
    the positions expanded, or -1 if the stack was too small."""
    digits = np.zeros(SIZE, dtype=np.int8)
    out = np.zeros(SIZE, dtype=np.int8)
    seen[start >> 3] |= np.uint8(1 << (start & 7))
    stack[0] = start
    top = 1
    expanded = 0
    capacity = stack.shape[0]
    while top > 0:
        top -= 1
        index = np.int64(stack[top])
        found[decode(index, digits)] += 1
        expanded += 1
        for pit in range(SIZE):
            if digits[pit] == 0:
                continue
            result = play(digits, pit, targets, maximum, block_of, block_pits, out)
            if result != GOES_ON:
                ends[result - 1] += 1
                continue
            following = turned(out)
            byte, bit = following >> 3, np.uint8(1 << (following & 7))
            if seen[byte] & bit:
                continue
            seen[byte] |= bit
            if top == capacity:
                return -1
            stack[top] = following
            top += 1
    return expanded


@dataclass(frozen=True)
class Reached:
    positions: int
    by_stones: list[int]
    winning_moves: int
    losing_moves: int
    seconds: float
    per_position_ns: float
    seen: np.ndarray  # one bit a position (its index in diffusion_arrays' encoding): reached


def reachable(stack_entries: int = 1 << 30) -> Reached:
    """Every Diffusion (2x6) position reachable from the start, South to move (canonical)."""
    tables = arrays.tables()
    rules_start = np.full(SIZE, 4, dtype=np.int8)
    start = arrays.encode(rules_start)
    seen = np.zeros(SPACE // 8 + 1, dtype=np.uint8)
    stack = np.empty(stack_entries, dtype=np.uint32)
    found = np.zeros(SIZE * (BASE - 1) + 1, dtype=np.int64)
    ends = np.zeros(2, dtype=np.int64)
    # Compiled (or loaded from numba's cache) before the clock starts.
    _reach(0, np.zeros(1, dtype=np.uint8), np.empty(1, dtype=np.uint32), tables.targets,
           tables.maximum, tables.block_of, tables.block_pits, np.zeros(61, dtype=np.int64),
           np.zeros(2, dtype=np.int64))  # fmt: skip
    began = time.perf_counter()
    expanded = _reach(
        start,
        seen,
        stack,
        tables.targets,
        tables.maximum,
        tables.block_of,
        tables.block_pits,
        found,
        ends,
    )
    seconds = time.perf_counter() - began
    if expanded < 0:
        raise RuntimeError(f"the stack of {stack_entries:,} positions was too small")
    return Reached(
        positions=expanded,
        by_stones=[int(n) for n in found],
        winning_moves=int(ends[0]),
        losing_moves=int(ends[1]),
        seconds=seconds,
        per_position_ns=seconds / max(1, expanded) * 1e9,
        seen=seen,
    )


@njit(cache=True)
def _expand_all(
    boards: np.ndarray,
    targets: np.ndarray,
    maximum: np.ndarray,
    block_of: np.ndarray,
    block_pits: np.ndarray,
) -> tuple[int, int]:
    """Every move of every board, each successor encoded and turned: the cost of move
    generation in the compact form. Returns the moves made and a checksum of the successors
    (returned, so that the compiler cannot leave their computation out)."""
    digits = np.zeros(SIZE, dtype=np.int8)
    out = np.zeros(SIZE, dtype=np.int8)
    moves = 0
    checksum = 0
    for i in range(boards.shape[0]):
        decode(boards[i], digits)
        for pit in range(SIZE):
            if digits[pit] == 0:
                continue
            result = play(digits, pit, targets, maximum, block_of, block_pits, out)
            checksum ^= turned(out) + result
            moves += 1
    return moves, checksum


def expand_all(boards: np.ndarray, tables: arrays.Tables) -> int:
    """The moves of every board in `boards`, made in compiled code; how many."""
    moves, _checksum = _expand_all(
        boards, tables.targets, tables.maximum, tables.block_of, tables.block_pits
    )
    return int(moves)
