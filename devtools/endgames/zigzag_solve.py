"""ZigZag endgame databases by retrograde layers: every position with at most N seeds on the
board, its **margin** (the seeds the player to move will still get, captures and leftovers,
minus the opponent's, both playing for their own final margin) and its **distance** (moves to
the game's last capture with that play). docs/ENDGAMES.md, "ZigZag".

A database position is the board seen by the player to move (South: North's boards are
turned half round, devtools/endgames/zigzag_arrays.py), the pit the restriction forbids that
player (none, or one of their pits holding the single seed just sown there), and who captured
last: nobody (only while every seed is on the board) or the mover or the opponent (once one
is off it). The repetition history is not part of it: a database value is the game's from a
position whose history holds no position twice (so a third occurrence cannot cut a line
short), which is every position right after a capture.

Captures take seeds off the board and nothing puts them back, so the layer of k seeds needs
only the layers below it and itself. Within a layer play can go round (no capture); a game
that goes round ends by repetition, or by the engine's proof that no capture can occur any
more, and the seeds left go to the last capturer, who is the same all through a layer. So a
position's "cycle value" c is +k when its mover captured last, -k when the opponent did, 0
when nobody has: what it is worth when nobody leaves the layer, and what a position worth
neither more nor less than that is worth.

How a layer is solved: the moves that capture ("exits") have a known payoff for the mover
(the seeds taken, minus the value of the position they lead to, below). For a threshold t,
the positions whose mover can force at least t > c are those from which the mover can force
reaching an exit worth at least t (the attractor of those exits: some move for the mover,
every move for the opponent); as t falls the attractor only grows. So one sweep of t from k
down to -k, each exit entering when t reaches its payoff, decides each position the first
time it enters an attractor: worth t for the mover (it enters the mover's side) or -t (it
enters the opponent's). What never enters is worth exactly c. Within a threshold the
positions enter in order of distance (a bucket queue, as Dijkstra's algorithm): the side
forcing the value takes the shortest way, the other the longest. A position worth exactly c
is at distance 0 when play can stay in the layer at that value, else the shortest way
through captures worth exactly c.

The file: two little-endian int16 a position, (margin, distance), layer after layer (k = 0
to N seeds); within a layer the positions are (board, forbidden pit, last capturer) in the
order ((rank * (pits + 1) + forbidden) * slots + capturer): rank, the board's combinatorial
rank among the boards of k seeds; forbidden, 0 for none or 1 + the column of the mover's
pit; slots, 1 for the layer holding every seed (capturer 0: nobody) and 2 below (0: the
mover captured last, 1: the opponent). Slots whose forbidden pit does not hold exactly one
seed are no position: (0, 0). A JSON header beside it holds the options, N, the layers'
offsets and the SHA-256.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numba import njit

from devtools.endgames import files
from devtools.endgames.diffusion_solve import rank, unrank, ways_table
from devtools.endgames.zigzag_arrays import Tables, sow, tables
from games.rules import get_rules
from games.rules.zigzag import ZigZagRules

MOST = 32767  # the longest distance an int16 holds
FORMAT = (
    "two little-endian int16 a position: margin (seeds the player to move still gets minus "
    "the opponent's, best play) and distance (moves to the last capture); positions seen by "
    "the player to move (South; North's turned half round), by seeds on the board, each layer "
    "ordered ((rank * (pits + 1) + forbidden) * slots + capturer) "
    "(devtools/endgames/zigzag_solve.py)"
)


@njit(cache=True)
def slots(seeds: int, total: int) -> int:
    """Who captured last, as a layer stores it: nobody while every seed is on the board (1
    slot), else the mover or the opponent (2)."""
    return 1 if seeds == total else 2


def layer_sizes(columns: int, seeds_per_pit: int, most: int) -> list[int]:
    """The positions (slots) of each layer 0..most."""
    size, total = 2 * columns, 2 * columns * seeds_per_pit
    return [
        math.comb(k + size - 1, size - 1) * (columns + 1) * slots(k, total) for k in range(most + 1)
    ]


@njit(cache=True)
def _expand(
    k: int,
    total: int,
    fill: bool,
    values: np.ndarray,
    offsets: np.ndarray,
    ways: np.ndarray,
    columns: int,
    order: np.ndarray,
    where: np.ndarray,
    step: np.ndarray,
    across: np.ndarray,
    first: np.ndarray,
    valid: np.ndarray,
    edge_start: np.ndarray,
    edges: np.ndarray,
    exit_start: np.ndarray,
    exit_pay: np.ndarray,
    exit_dist: np.ndarray,
) -> None:
    """Every move of every position of layer k. Counting (fill False): valid, and each
    position's moves within the layer (edge_start[q + 1]) and captures (exit_start[q + 1]).
    Filling (the starts summed): where the moves within lead (edges, local places) and what
    each capture is worth to the mover (exit_pay: seeds taken minus the value below) and its
    distance (exit_dist: one more than below)."""
    size = 2 * columns
    kinds = slots(k, total)
    digits = np.zeros(size, dtype=np.int64)
    out = np.zeros(size, dtype=np.int64)
    child = np.zeros(size, dtype=np.int64)
    count = offsets[k + 1] - offsets[k]
    for q in range(count):
        capturer = q % kinds
        rest = q // kinds
        forbidden = rest % (columns + 1)
        unrank(rest // (columns + 1), k, ways, digits)
        if forbidden > 0 and digits[columns + forbidden - 1] != 1:
            continue
        if not fill:
            valid[q] = True
        e = edge_start[q]
        x = exit_start[q]
        for pit in range(columns, size):
            if digits[pit] == 0 or pit == columns + forbidden - 1:
                continue
            taken, no_return = sow(digits, pit, columns, order, where, step, across, first, out)
            for p in range(size):  # North to move: turned half round
                child[p] = out[size - 1 - p]
            barred = 0 if no_return < 0 else size - 1 - no_return - columns + 1
            if taken == 0:
                if fill:
                    swapped = capturer if kinds == 1 else 1 - capturer
                    edges[e] = (rank(child, k, ways) * (columns + 1) + barred) * kinds + swapped
                e += 1
            else:
                if fill:
                    below = k - taken
                    at = offsets[below] + (rank(child, below, ways) * (columns + 1) + barred) * 2
                    at += 1  # the capturer is the child's opponent
                    exit_pay[x] = taken - values[at, 0]
                    exit_dist[x] = 1 + values[at, 1]
                x += 1
        if not fill:
            edge_start[q + 1] = e - edge_start[q]
            exit_start[q + 1] = x - exit_start[q]


@njit(cache=True)
def _decide(
    k: int,
    total: int,
    valid: np.ndarray,
    edge_start: np.ndarray,
    edges: np.ndarray,
    exit_start: np.ndarray,
    exit_pay: np.ndarray,
    exit_dist: np.ndarray,
    margin: np.ndarray,
    distance: np.ndarray,
) -> int:
    """The layer's values from its moves (module docstring); returns the farthest distance,
    or -1 if one does not fit an int16."""
    count = valid.shape[0]
    kinds = slots(k, total)
    cycle = np.zeros(count, dtype=np.int64)
    if kinds == 2:
        for q in range(count):
            cycle[q] = k if q % 2 == 0 else -k
    # Predecessors within the layer (one entry a move, so counts match the moves).
    pred_start = np.zeros(count + 1, dtype=np.int64)
    for j in range(edges.shape[0]):
        pred_start[edges[j] + 1] += 1
    for q in range(count):
        pred_start[q + 1] += pred_start[q]
    preds = np.empty(edges.shape[0], dtype=np.int32)
    filled = pred_start[:count].copy()
    for q in range(count):
        for j in range(edge_start[q], edge_start[q + 1]):
            preds[filled[edges[j]]] = q
            filled[edges[j]] += 1
    # Moves not yet good for the opponent's side (all must be, for it to force the value).
    open_moves = np.zeros(count, dtype=np.int64)
    exit_from = np.empty(exit_pay.shape[0], dtype=np.int32)
    for q in range(count):
        open_moves[q] = edge_start[q + 1] - edge_start[q] + exit_start[q + 1] - exit_start[q]
        for j in range(exit_start[q], exit_start[q + 1]):
            exit_from[j] = q
    # The captures by payoff (-k..k), so each threshold finds its own.
    pay_start = np.zeros(2 * k + 2, dtype=np.int64)
    for j in range(exit_pay.shape[0]):
        pay_start[exit_pay[j] + k + 1] += 1
    for p in range(2 * k + 1):
        pay_start[p + 1] += pay_start[p]
    by_pay = np.empty(exit_pay.shape[0], dtype=np.int64)
    put = pay_start[: 2 * k + 1].copy()
    for j in range(exit_pay.shape[0]):
        by_pay[put[exit_pay[j] + k]] = j
        put[exit_pay[j] + k] += 1
    mine = np.zeros(count, dtype=np.bool_)  # the mover forces its value (>= t > c)
    theirs = np.zeros(count, dtype=np.bool_)  # the opponent forces it (<= -t < c)
    # A bucket queue by distance: entries (position, side), linked per distance.
    pool = edges.shape[0] + exit_pay.shape[0] + 1
    entry_at = np.empty(pool, dtype=np.int32)
    entry_side = np.empty(pool, dtype=np.bool_)  # True: the mover's side (an A event)
    entry_next = np.empty(pool, dtype=np.int32)
    head = np.full(MOST + 2, -1, dtype=np.int32)
    farthest = 0
    for t in range(k, -k - 1, -1):
        used = 0
        low = MOST + 1
        high = 0
        for side in range(2):
            p = t if side == 0 else -t
            if p < -k or p > k:
                continue
            for i in range(pay_start[p + k], pay_start[p + k + 1]):
                j = by_pay[i]
                q = exit_from[j]
                if side == 0 and (mine[q] or t <= cycle[q]):
                    continue
                if side == 1 and (theirs[q] or t <= -cycle[q]):
                    continue
                d = exit_dist[j]
                if d > MOST:
                    return -1
                entry_at[used] = q
                entry_side[used] = side == 0
                entry_next[used] = head[d]
                head[d] = used
                used += 1
                low = min(low, d)
                high = max(high, d)
        d = low
        while d <= high:
            entry = head[d]
            head[d] = -1
            while entry != -1:
                q = entry_at[entry]
                side_mine = entry_side[entry]
                entry = entry_next[entry]
                if side_mine:
                    if mine[q]:
                        continue
                    mine[q] = True
                    margin[q] = t
                else:
                    if theirs[q]:
                        continue
                    open_moves[q] -= 1
                    if open_moves[q] > 0:
                        continue
                    theirs[q] = True
                    margin[q] = -t
                distance[q] = d
                farthest = max(farthest, d)
                if d + 1 > MOST:
                    return -1
                for i in range(pred_start[q], pred_start[q + 1]):
                    w = preds[i]
                    # q won by its mover: w's move to q is good for w's opponent, and
                    # the other way round.
                    if side_mine and (theirs[w] or t <= -cycle[w]):
                        continue
                    if not side_mine and (mine[w] or t <= cycle[w]):
                        continue
                    entry_at[used] = w
                    entry_side[used] = not side_mine
                    entry_next[used] = head[d + 1]
                    head[d + 1] = used
                    used += 1
                    high = max(high, d + 1)
            d += 1
    # Worth exactly c: distance 0 where play can stay in the layer at that value (the
    # greatest set whose positions each have a move into it, or no move at all), else the
    # shortest way out through captures worth exactly c, in the order they leave the set.
    rest = np.zeros(count, dtype=np.bool_)
    for q in range(count):
        rest[q] = valid[q] and not mine[q] and not theirs[q]
    inside = np.zeros(count, dtype=np.int64)
    for q in range(count):
        if rest[q]:
            margin[q] = cycle[q]
            distance[q] = 0
            for j in range(edge_start[q], edge_start[q + 1]):
                if rest[edges[j]]:
                    inside[q] += 1
    staying = rest.copy()
    leaving = np.empty(count, dtype=np.int64)
    left = 0
    for q in range(count):
        if (
            rest[q]
            and inside[q] == 0
            and edge_start[q + 1] + exit_start[q + 1] > (edge_start[q] + exit_start[q])
        ):
            staying[q] = False
            leaving[left] = q
            left += 1
    done = 0
    while done < left:
        q = leaving[done]
        done += 1
        for i in range(pred_start[q], pred_start[q + 1]):
            w = preds[i]
            if staying[w]:
                inside[w] -= 1
                if inside[w] == 0:
                    staying[w] = False
                    leaving[left] = w
                    left += 1
    for n in range(left):
        q = leaving[n]
        best = MOST + 1
        for j in range(exit_start[q], exit_start[q + 1]):
            if exit_pay[j] == cycle[q]:
                best = min(best, exit_dist[j])
        for j in range(edge_start[q], edge_start[q + 1]):
            y = edges[j]
            if rest[y] and not staying[y]:
                best = min(best, distance[y] + 1)
        if best > MOST:
            best = 0  # pragma: no cover - a position worth c has a move worth c
        distance[q] = best
        farthest = max(farthest, best)
    return farthest


def _solve_layer(
    k: int, total: int, values: np.ndarray, offsets: np.ndarray, ways: np.ndarray, t: Tables
) -> tuple[int, int, int]:
    """Decide layer k (the layers below are decided) into `values`. Returns (the farthest
    distance, the positions, the moves). Plain Python between the compiled steps."""
    count = int(offsets[k + 1] - offsets[k])
    valid = np.zeros(count, dtype=np.bool_)
    edge_start = np.zeros(count + 1, dtype=np.int64)
    exit_start = np.zeros(count + 1, dtype=np.int64)
    tabs = (t.columns, t.order, t.where, t.step, t.across, t.first)
    none32 = np.zeros(0, dtype=np.int32)
    none64 = np.zeros(0, dtype=np.int64)
    _expand(
        k, total, False, values, offsets, ways, *tabs,
        valid, edge_start, none32, exit_start, none64, none64,
    )  # fmt: skip
    np.cumsum(edge_start, out=edge_start)
    np.cumsum(exit_start, out=exit_start)
    edges = np.empty(int(edge_start[-1]), dtype=np.int32)
    exit_pay = np.empty(int(exit_start[-1]), dtype=np.int64)
    exit_dist = np.empty(int(exit_start[-1]), dtype=np.int64)
    _expand(
        k, total, True, values, offsets, ways, *tabs,
        valid, edge_start, edges, exit_start, exit_pay, exit_dist,
    )  # fmt: skip
    margin = np.zeros(count, dtype=np.int16)
    distance = np.zeros(count, dtype=np.int16)
    farthest = _decide(
        k, total, valid, edge_start, edges, exit_start, exit_pay, exit_dist, margin, distance
    )
    layer = values[offsets[k] : offsets[k + 1]]
    layer[:, 0] = margin
    layer[:, 1] = distance
    return farthest, int(np.count_nonzero(valid)), len(edges) + len(exit_pay)


@dataclass
class Database:
    columns: int  # pits per row
    seeds: int  # seeds per pit at the start
    most: int  # the most seeds on the board it covers
    offsets: np.ndarray  # int64 [k]: where layer k starts
    values: np.ndarray  # int16 [position, 2]: margin, distance
    ways: np.ndarray
    layers: list[dict[str, float]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return 2 * self.columns * self.seeds

    def place(self, pits: tuple[int, ...], forbidden: int, capturer: int) -> int:
        """Where a position is: pits seen by the mover (South's row last), forbidden 0 or
        1 + the column of the mover's forbidden pit, capturer 0 nobody/the mover, 1 the
        opponent."""
        k = sum(pits)
        digits = np.array(pits, dtype=np.int64)
        kinds = slots(k, self.total)
        index = (rank(digits, k, self.ways) * (self.columns + 1) + forbidden) * kinds + capturer
        return int(self.offsets[k] + index)

    def value(self, pits: tuple[int, ...], forbidden: int, capturer: int) -> tuple[int, int]:
        """(margin, distance) of a position, as `place` names it."""
        margin, distance = self.values[self.place(pits, forbidden, capturer)]
        return int(margin), int(distance)


def rules_of(columns: int, seeds: int) -> ZigZagRules:
    rules = get_rules("zigzag", pits=columns, seeds=seeds)
    assert isinstance(rules, ZigZagRules)
    return rules


def build(
    columns: int,
    seeds: int,
    most: int,
    report: Callable[[str], None] = lambda line: None,
    *,
    into: Path | None = None,
) -> Database:
    """Every position with at most `most` seeds on the board, layer by layer. With `into`,
    the values are written to that file as they are decided, and a header beside it says how
    many layers are done: a build stopped half-way goes on from there when run again with
    the same file, options and `most`; `save` then adds the checksum."""
    rules = rules_of(columns, seeds)
    total = rules.total
    most = min(most, total)
    counts = layer_sizes(columns, seeds, most)
    offsets = np.zeros(most + 2, dtype=np.int64)
    offsets[1:] = np.cumsum(counts)
    positions = int(offsets[-1])
    done = 0
    key = {"game": "zigzag", "pits": columns, "seeds": seeds, "most": most}
    values: np.ndarray
    if into is None:
        values = np.zeros((positions, 2), dtype=np.int16)
    else:
        header = Path(f"{into}.json")
        progress = json.loads(header.read_text()) if header.exists() else {}
        if all(progress.get(name) == want for name, want in key.items()) and into.exists():
            done = int(progress.get("done", 0))
            values = np.memmap(into, dtype="<i2", mode="r+", shape=(positions, 2))
        else:
            values = np.memmap(into, dtype="<i2", mode="w+", shape=(positions, 2))
        if done:
            report(f"  layers 0 to {done - 1} were built before: going on from {done}")
    ways = ways_table((most,) * rules.size, most)
    database = Database(columns, seeds, most, offsets, values, ways)
    arrays = tables(rules)
    for k in range(done, most + 1):
        began = time.perf_counter()
        farthest, valid, moves = _solve_layer(k, total, values, offsets, ways, arrays)
        if farthest < 0:
            raise RuntimeError(f"layer {k}: a distance over {MOST} moves")
        seconds = time.perf_counter() - began
        if into is not None:
            assert isinstance(values, np.memmap)
            values.flush()
            Path(f"{into}.json").write_text(json.dumps({**key, "done": k + 1}) + "\n")
        database.layers.append(
            {"seeds": k, "positions": valid, "moves": moves, "seconds": seconds,
             "farthest": farthest}
        )  # fmt: skip
        report(
            f"  {k:2d} seeds: {valid:>12,} positions ({counts[k]:,} slots), {moves:>13,} "
            f"moves, {seconds:7.1f} s; farthest {farthest} moves"
        )
    return database


def save(database: Database, path: Path) -> str:
    """Write the values (`path`, raw little-endian int16 pairs, layer after layer) and a
    header beside it (`path` + ".json"); returns the SHA-256 of the values."""
    header = {
        "game": "zigzag",
        "options": {"pits": database.columns, "seeds": database.seeds},
        "format": FORMAT,
        "most": database.most,
        "offsets": [int(n) for n in database.offsets],
    }
    return files.write(database.values, "<i2", path, header)


def load(path: Path) -> Database:
    """A database written by `save`, memory-mapped; ValueError if its checksum is wrong."""
    header = files.header_of(path)
    if header.get("game") != "zigzag":
        raise ValueError(f"{path}: not a ZigZag database")
    values = files.read(path, "<i2", header).reshape(-1, 2)
    most = int(header["most"])
    options = header["options"]
    columns, seeds = int(options["pits"]), int(options["seeds"])
    return Database(
        columns,
        seeds,
        most,
        np.array(header["offsets"], dtype=np.int64),
        values,
        ways_table((most,) * (2 * columns), most),
    )


def file_name(columns: int, seeds: int) -> str:
    """The database's name in ENDGAMES_DIR, as games/endgames.py looks for it."""
    return f"zigzag-{columns}x{seeds}.bin"


def position_at(database: Database, index: int) -> tuple[tuple[int, ...], int, int] | None:
    """The position at `index` as `Database.place` names it, or None for a slot that is no
    position (its forbidden pit does not hold exactly one seed)."""
    k = int(np.searchsorted(database.offsets, index, side="right") - 1)
    local = index - int(database.offsets[k])
    kinds = slots(k, database.total)
    capturer, rest = local % kinds, local // kinds
    forbidden = rest % (database.columns + 1)
    digits = np.zeros(2 * database.columns, dtype=np.int64)
    unrank(rest // (database.columns + 1), k, database.ways, digits)
    pits = tuple(int(d) for d in digits)
    if forbidden and pits[database.columns + forbidden - 1] != 1:
        return None
    return pits, forbidden, capturer


def engine_position(
    database: Database, pits: tuple[int, ...], forbidden: int, capturer: int, to_move: int
) -> tuple[tuple[int, ...], int, int]:
    """A database position as the engine holds it with `to_move` (1 South, 2 North) to move:
    (pit counts top row first, the forbidden pit or -1, the last capturer 0/1/2)."""
    size = 2 * database.columns
    pit = database.columns + forbidden - 1 if forbidden else -1
    seen = pits if to_move == 1 else tuple(reversed(pits))
    if to_move != 1 and pit >= 0:
        pit = size - 1 - pit
    # Every seed on the board: nobody has captured.
    last = 0 if sum(pits) == database.total else to_move if capturer == 0 else 3 - to_move
    return seen, pit, last
