"""An endgame database for Diffusion (2x6) by retrograde layers: every position with at most N
stones on the board, South to move (devtools/endgames/diffusion_arrays.py), its value for the
player to move (win, loss, or draw: neither can force a win, the play goes round for ever) and
the number of moves to the end with best play (the winner hurrying, the loser holding out).
docs/ENDGAMES.md.

Stones on the board never increase, so the positions with k stones need only those with k
and fewer: layer k is solved once layers 0..k-1 are. In a layer, pass 1 makes every move of
every position (over all cores): a move to a lower layer reads its final result, a move within
the layer is counted; pass 2 records where the moves within the layer lead, turned round into
predecessors. Then by distance d = 1, 2, ...: a position is won in d when a move wins at once
(d = 1) or leads to a position lost in d - 1, lost in d when every move loses at once or leads
to a position won, the farthest in d - 1; each decision is passed to its predecessors through
buckets by distance. What is never decided is a draw.

A layer's positions are ranked (the combinatorial rank of their pits among the boards of k
stones, each pit 0..5). The database is one uint16 `code` a position: 0 a draw, d a win in d
moves, LOSS + d a loss in d. Boards with a block already empty are not positions of a game in
progress: their code is 0 and never read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numba import njit, prange

from devtools.endgames import diffusion_arrays as arrays
from devtools.endgames import files
from devtools.endgames.diffusion_arrays import BASE, GOES_ON, SIZE, WINS, play
from devtools.endgames.spaces import by_stones
from games.rules import get_rules
from games.rules.diffusion import DiffusionRules, DiffusionState

MOST = 32767  # the longest distance a code holds
LOSS = 32768  # a loss in n moves is LOSS + n


def ways_table(maxima: tuple[int, ...] = (BASE - 1,) * SIZE, most: int = 60) -> np.ndarray:
    """ways[i, s]: the boards of pits i.. holding s stones together (each pit at most its
    maximum), for s up to `most` (Four-rank's counts past that do not fit 64 bits)."""
    size = len(maxima)
    ways = np.zeros((size + 1, most + 1), dtype=np.int64)
    ways[size, 0] = 1
    for i in range(size - 1, -1, -1):
        for s in range(most + 1):
            ways[i, s] = sum(ways[i + 1, s - v] for v in range(maxima[i] + 1) if s - v >= 0)
    return ways


@njit(cache=True)
def rank(digits: np.ndarray, stones: int, ways: np.ndarray) -> int:
    """The board's place among the boards of `stones` stones (in the order of its pits)."""
    place = 0
    left = stones
    for i in range(digits.shape[0]):
        for v in range(digits[i]):
            if left - v >= 0:
                place += ways[i + 1, left - v]
        left -= digits[i]
    return place


@njit(cache=True)
def unrank(place: int, stones: int, ways: np.ndarray, digits: np.ndarray) -> None:
    left = stones
    for i in range(digits.shape[0]):
        v = 0
        while True:
            count = ways[i + 1, left - v] if left - v >= 0 else 0
            if place < count:
                break
            place -= count
            v += 1
        digits[i] = v
        left -= v


@njit(cache=True)
def _where(
    out: np.ndarray, offsets: np.ndarray, ways: np.ndarray, scratch: np.ndarray
) -> tuple[int, int]:
    """(place in the database, layer) of the position `out` leads to, North to move: read
    turned half round (pit p is pit size - 1 - p), as South's."""
    size = out.shape[0]
    stones = 0
    for i in range(size):
        scratch[i] = out[size - 1 - i]
        stones += scratch[i]
    return offsets[stones] + rank(scratch, stones, ways), stones


INFINITE = 1 << 30


# Pass 1 and pass 2 run in this many chunks of positions, over the cores (numba's prange):
# each chunk has its own scratch arrays and writes only its own positions.
CHUNKS = 256


@njit(cache=True, parallel=True)
def _pass_one(
    stones: int,
    codes: np.ndarray,
    offsets: np.ndarray,
    ways: np.ndarray,
    targets: np.ndarray,
    maximum: np.ndarray,
    block_of: np.ndarray,
    block_pits: np.ndarray,
    in_play: np.ndarray,
    win_at: np.ndarray,
    longest: np.ndarray,
    open_moves: np.ndarray,
    drawn_below: np.ndarray,
) -> None:
    """Every move of every position of the layer once. Moves below are final: they give the
    nearest win, the farthest loss, a draw; moves within the layer are counted."""
    size = offsets[stones + 1] - offsets[stones]
    step = (size + CHUNKS - 1) // CHUNKS
    for chunk in prange(CHUNKS):
        pits = maximum.shape[0]
        digits = np.zeros(pits, dtype=np.int8)
        out = np.zeros(pits, dtype=np.int8)
        scratch = np.zeros(pits, dtype=np.int8)
        for place in range(chunk * step, min(size, (chunk + 1) * step)):
            unrank(place, stones, ways, digits)
            south = 0
            north = 0
            for j in range(block_pits.shape[1]):
                south += digits[block_pits[0, j]]
                north += digits[block_pits[1, j]]
            if south == 0 or north == 0:
                continue  # a block is empty: not a position of a game in progress
            in_play[place] = True
            for pit in range(pits):
                if digits[pit] == 0:
                    continue
                result = play(digits, pit, targets, maximum, block_of, block_pits, out)
                if result == WINS:
                    win_at[place] = 1
                elif result == GOES_ON:
                    where, layer = _where(out, offsets, ways, scratch)
                    if layer == stones:
                        open_moves[place] += 1
                        continue
                    code = codes[where]
                    if code > LOSS:
                        win_at[place] = min(win_at[place], code - LOSS + 1)
                    elif code > 0:
                        longest[place] = max(longest[place], code + 1)
                    else:
                        drawn_below[place] = True
                else:  # LOSES: this move empties the opponent's block
                    longest[place] = max(longest[place], 1)


@njit(cache=True, parallel=True)
def _pass_two(
    stones: int,
    offsets: np.ndarray,
    ways: np.ndarray,
    targets: np.ndarray,
    maximum: np.ndarray,
    block_of: np.ndarray,
    block_pits: np.ndarray,
    open_moves: np.ndarray,
    out_start: np.ndarray,
    outs: np.ndarray,
) -> None:
    """The moves within the layer again, each position writing where they lead into its own
    rows of `outs` (from out_start[place])."""
    start = offsets[stones]
    size = offsets[stones + 1] - start
    step = (size + CHUNKS - 1) // CHUNKS
    for chunk in prange(CHUNKS):
        pits = maximum.shape[0]
        digits = np.zeros(pits, dtype=np.int8)
        out = np.zeros(pits, dtype=np.int8)
        scratch = np.zeros(pits, dtype=np.int8)
        for place in range(chunk * step, min(size, (chunk + 1) * step)):
            if open_moves[place] == 0:
                continue
            unrank(place, stones, ways, digits)
            k = out_start[place]
            for pit in range(pits):
                if digits[pit] == 0:
                    continue
                if play(digits, pit, targets, maximum, block_of, block_pits, out) != GOES_ON:
                    continue
                where, layer = _where(out, offsets, ways, scratch)
                if layer == stones:
                    outs[k] = where - start
                    k += 1


def _solve_layer(
    stones: int,
    codes: np.ndarray,
    offsets: np.ndarray,
    ways: np.ndarray,
    targets: np.ndarray,
    maximum: np.ndarray,
    block_of: np.ndarray,
    block_pits: np.ndarray,
) -> tuple[int, int, int]:
    """Decide layer `stones` (the layers below are decided). Returns (the farthest distance,
    wins, losses); -1 for the distance if one does not fit a code. (Plain Python between the
    compiled steps: numba's cache cannot hold a compiled function that calls a parallel one.)"""
    size = int(offsets[stones + 1] - offsets[stones])
    in_play = np.zeros(size, dtype=np.bool_)  # both blocks hold stones
    win_at = np.full(size, INFINITE, dtype=np.int32)  # the nearest win found so far
    longest = np.zeros(size, dtype=np.int32)  # the farthest loss so far (moves to the end)
    open_moves = np.zeros(size, dtype=np.int8)  # moves to this layer not decided yet (<= 12)
    drawn_below = np.zeros(size, dtype=np.bool_)  # a move to a draw: never lost
    _pass_one(
        stones, codes, offsets, ways, targets, maximum, block_of, block_pits,
        in_play, win_at, longest, open_moves, drawn_below,
    )  # fmt: skip
    # Pass 2: who leads to whom within the layer: each position's moves within it (rows of
    # `outs`), then turned round into predecessors (compressed rows).
    out_start = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(open_moves, out=out_start[1:])
    outs = np.empty(int(out_start[size]), dtype=np.int32)
    _pass_two(
        stones, offsets, ways, targets, maximum, block_of, block_pits, open_moves, out_start, outs
    )
    return _decide(
        int(offsets[stones]), codes, in_play, win_at, longest, open_moves, drawn_below,
        out_start, outs,
    )  # fmt: skip


@njit(cache=True)
def _decide(
    start: int,
    codes: np.ndarray,
    in_play: np.ndarray,
    win_at: np.ndarray,
    longest: np.ndarray,
    open_moves: np.ndarray,
    drawn_below: np.ndarray,
    out_start: np.ndarray,
    outs: np.ndarray,
) -> tuple[int, int, int]:
    """The predecessors within the layer, then the decisions by distance."""
    size = in_play.shape[0]
    preds_count = np.zeros(size + 1, dtype=np.int64)
    for k in range(outs.shape[0]):
        preds_count[outs[k] + 1] += 1
    for place in range(size):
        preds_count[place + 1] += preds_count[place]
    preds = np.empty(preds_count[size], dtype=np.int32)
    filled = preds_count[:size].copy()
    for place in range(size):
        for k in range(out_start[place], out_start[place + 1]):
            target = outs[k]
            preds[filled[target]] = place
            filled[target] += 1
    # By distance: the wins in d and the losses in d are decided together; a decision
    # tells the positions that lead to it (a loss: they win in d + 1; a win: one move less
    # to decide, and they lose no sooner than d + 1). Each distance has a bucket of the
    # positions that may be decided at it (linked entries; an entry whose position was
    # decided since, or now has a nearer win, is passed over). A position enters at most
    # three buckets: its first candidate, a nearer win, its loss.
    loss_at = np.full(size, INFINITE, dtype=np.int32)
    head = np.full(MOST + 2, -1, dtype=np.int32)
    entry_place = np.empty(3 * size + 1, dtype=np.int32)
    entry_next = np.empty(3 * size + 1, dtype=np.int32)  # 3 x 145 million fits
    entries = 0
    pending = 0
    for place in range(size):
        if not in_play[place]:
            continue
        if open_moves[place] == 0 and win_at[place] == INFINITE and not drawn_below[place]:
            loss_at[place] = longest[place]
        first = min(win_at[place], loss_at[place])
        if first < INFINITE:
            if first > MOST:
                return -1, 0, 0
            entry_place[entries] = place
            entry_next[entries] = head[first]
            head[first] = entries
            entries += 1
            pending += 1
    decided = np.zeros(size, dtype=np.bool_)
    wins = 0
    losses = 0
    distance = 0
    while pending > 0:
        distance += 1
        if distance > MOST:
            return -1, wins, losses
        entry = head[distance]
        while entry != -1:
            place = entry_place[entry]
            entry = entry_next[entry]
            if decided[place]:
                continue
            if win_at[place] == distance:
                decided[place] = True
                pending -= 1
                codes[start + place] = distance
                wins += 1
                for k in range(preds_count[place], preds_count[place + 1]):
                    q = preds[k]
                    open_moves[q] -= 1
                    longest[q] = max(longest[q], distance + 1)
                    if (
                        open_moves[q] == 0
                        and win_at[q] == INFINITE
                        and not drawn_below[q]
                        and not decided[q]
                    ):
                        loss_at[q] = longest[q]
                        if loss_at[q] > MOST:
                            return -1, wins, losses
                        entry_place[entries] = q
                        entry_next[entries] = head[loss_at[q]]
                        head[loss_at[q]] = entries
                        entries += 1
                        pending += 1
            elif loss_at[place] == distance:
                decided[place] = True
                pending -= 1
                codes[start + place] = LOSS + distance
                losses += 1
                for k in range(preds_count[place], preds_count[place + 1]):
                    q = preds[k]
                    if decided[q] or win_at[q] <= distance + 1:
                        continue
                    if win_at[q] == INFINITE:
                        pending += 1  # a result in view at last (it had none, nor a loss)
                    win_at[q] = distance + 1
                    entry_place[entries] = q
                    entry_next[entries] = head[distance + 1]
                    head[distance + 1] = entries
                    entries += 1
    for place in range(size):
        if (
            in_play[place]
            and not decided[place]
            and (win_at[place] < INFINITE or loss_at[place] < INFINITE)
        ):
            return -1, wins, losses  # a win or loss further than a code holds
    return distance, wins, losses


@dataclass
class Database:
    most: int  # the most stones on the board it covers
    offsets: np.ndarray  # int64 [k]: where layer k starts in `codes`
    codes: np.ndarray  # uint16: per position, 0 draw, d win in d, LOSS + d loss in d
    ways: np.ndarray
    layers: list[dict[str, float]] = field(default_factory=list)
    game: str = "diffusion"  # or "four-rank-diffusion"

    def code(self, pits: tuple[int, ...]) -> int:
        """The code of a board, South to move (pits in the engine's order)."""
        stones = sum(pits)
        digits = np.array(pits, dtype=np.int8)
        return int(self.codes[self.offsets[stones] + rank(digits, stones, self.ways)])


@njit(cache=True)
def _tally(
    seen: np.ndarray,
    codes: np.ndarray,
    offsets: np.ndarray,
    ways: np.ndarray,
    most: int,
    counts: np.ndarray,
    longest: np.ndarray,
) -> None:
    """For each position marked in `seen` (one bit an index of diffusion_arrays' encoding)
    with at most `most` stones: counts[stones, 0/1/2] += drawn/won/lost (South to move),
    longest[0/1] the farthest win and loss; counts[stones, 3] the marked ones beyond."""
    digits = np.zeros(SIZE, dtype=np.int8)
    for byte in range(seen.shape[0]):
        bits = seen[byte]
        if bits == 0:
            continue
        for bit in range(8):
            if not bits & (1 << bit):
                continue
            stones = arrays.decode(np.int64(byte) * 8 + bit, digits)
            if stones > most:
                counts[stones, 3] += 1
                continue
            code = codes[offsets[stones] + rank(digits, stones, ways)]
            if code == 0:
                counts[stones, 0] += 1
            elif code < LOSS:
                counts[stones, 1] += 1
                longest[0] = max(longest[0], code)
            else:
                counts[stones, 2] += 1
                longest[1] = max(longest[1], code - LOSS)


@dataclass(frozen=True)
class Values:
    """The values of a set of positions, by stones on the board (South to move)."""

    drawn: list[int]
    won: list[int]
    lost: list[int]
    beyond: int  # positions with more stones than the database covers
    longest_win: int
    longest_loss: int


def values_of(database: Database, seen: np.ndarray) -> Values:
    """The database's values of the positions marked in `seen` (spaces.reachable's bits)."""
    counts = np.zeros((SIZE * (BASE - 1) + 1, 4), dtype=np.int64)
    longest = np.zeros(2, dtype=np.int64)
    _tally(
        seen,
        np.asarray(database.codes),
        database.offsets,
        database.ways,
        database.most,
        counts,
        longest,
    )
    return Values(
        drawn=[int(n) for n in counts[:, 0]],
        won=[int(n) for n in counts[:, 1]],
        lost=[int(n) for n in counts[:, 2]],
        beyond=int(counts[:, 3].sum()),
        longest_win=int(longest[0]),
        longest_loss=int(longest[1]),
    )


def build(
    most: int,
    report: Callable[[str], None] = lambda line: None,
    *,
    into: Path | None = None,
    game: str = "diffusion",
) -> Database:
    """Every position with at most `most` stones on the board, layer by layer. With `into`,
    the codes are written to that file as they are decided, and a header beside it says how
    many layers are done (`done`): a build stopped half-way goes on from there when run again
    with the same file and `most`; `save` then adds the checksum."""
    rules = get_rules(game)
    assert isinstance(rules, DiffusionRules)
    tables = arrays.tables(rules)
    counts = by_stones(list(rules.maximum))[: most + 1]
    offsets = np.zeros(most + 2, dtype=np.int64)
    offsets[1:] = np.cumsum(counts)
    # Positions past `most` are never read: a move never adds stones to the board.
    total = int(offsets[-1])
    done = 0
    if into is None:
        codes = np.zeros(total, dtype=np.uint16)
    else:
        header = Path(f"{into}.json")
        progress = json.loads(header.read_text()) if header.exists() else {}
        if progress.get("most") == most and into.exists():
            done = int(progress.get("done", 0))
            codes = np.memmap(into, dtype="<u2", mode="r+", shape=(total,))
        else:
            codes = np.memmap(into, dtype="<u2", mode="w+", shape=(total,))
        if done:
            report(f"  layers 0 to {done - 1} were built before: going on from {done}")
    ways = ways_table(rules.maximum, most)
    database = Database(most=most, offsets=offsets, codes=codes, ways=ways, game=game)
    farthest = 0
    for stones in range(done):
        layer = codes[offsets[stones] : offsets[stones + 1]]
        if len(layer):
            farthest = max(farthest, int(np.max(np.where(layer > LOSS, layer - LOSS, layer))))
    for stones in range(done, most + 1):
        began = time.perf_counter()
        rounds, wins, losses = _solve_layer(
            stones,
            codes,
            offsets,
            ways,
            tables.targets,
            tables.maximum,
            tables.block_of,
            tables.block_pits,
        )
        if rounds < 0:
            raise RuntimeError(
                f"layer {stones}: a distance over {MOST} moves; codes need more bits"
            )
        layer = codes[offsets[stones] : offsets[stones + 1]]
        if len(layer):
            farthest = max(farthest, int(np.max(np.where(layer > LOSS, layer - LOSS, layer))))
        seconds = time.perf_counter() - began
        if into is not None:
            codes.flush()  # type: ignore[attr-defined]
            Path(f"{into}.json").write_text(json.dumps({"most": most, "done": stones + 1}) + "\n")
        database.layers.append(
            {
                "stones": stones,
                "positions": int(counts[stones]),
                "wins": wins,
                "losses": losses,
                "rounds": rounds,
                "seconds": seconds,
                "farthest": farthest,
            }
        )
        report(
            f"  {stones:2d} stones: {counts[stones]:>11,} boards, {wins:>11,} won, "
            f"{losses:>11,} lost, {seconds:7.1f} s; longest so far {farthest} moves"
        )
    return database


def expected_code(database: Database, rules: DiffusionRules, pits: tuple[int, ...]) -> int:
    """The code a position must have given the codes of the positions its moves lead to, as
    the pure engine plays the moves (games/rules/diffusion.py), South to move: the nearest
    win, else a draw if any move leads to one, else the farthest loss."""
    state = DiffusionState(pits, (0, 0), 1)
    nearest_win = None
    farthest_loss = 0
    drawn = False
    for move in rules.legal_moves(state):
        after = rules.play(state, move)
        if after.winner == 1:
            nearest_win = 1
            continue
        if after.winner == 2:
            farthest_loss = max(farthest_loss, 1)
            continue
        code = database.code(tuple(reversed(after.pits)))  # North's turn, turned
        if code > LOSS:
            nearest_win = min(nearest_win or INFINITE, code - LOSS + 1)
        elif code > 0:
            farthest_loss = max(farthest_loss, code + 1)
        else:
            drawn = True
    if nearest_win is not None:
        return nearest_win
    return 0 if drawn else LOSS + farthest_loss


def verify(database: Database, samples: int, seed: int = 1) -> tuple[int, list[str]]:
    """Positions drawn at random from those the database covers (in play: both blocks hold
    stones), each checked against `expected_code` through the pure engine. Returns (checked,
    disagreements)."""
    rules = get_rules(database.game)
    assert isinstance(rules, DiffusionRules)
    rng = np.random.default_rng(seed)
    total = int(database.offsets[-1])
    digits = np.zeros(rules.size, dtype=np.int8)
    south = [pit for pit in range(rules.size) if rules.block_of[pit] == 0]
    north = [pit for pit in range(rules.size) if rules.block_of[pit] == 1]
    checked = 0
    wrong: list[str] = []
    while checked < samples:
        where = int(rng.integers(0, total))
        stones = int(np.searchsorted(database.offsets, where, side="right") - 1)
        unrank(where - int(database.offsets[stones]), stones, database.ways, digits)
        pits = tuple(int(d) for d in digits)
        if not any(pits[p] for p in south) or not any(pits[p] for p in north):
            continue
        have, want = int(database.codes[where]), expected_code(database, rules, pits)
        if have != want:
            wrong.append(f"{pits}: {have}, expected {want}")
        checked += 1
    return checked, wrong


def save(database: Database, path: Path) -> str:
    """Write the codes (`path`, raw little-endian uint16, layer after layer) and a header
    beside it (`path` + ".json": the layers' offsets, the format, the SHA-256 of the codes);
    returns the SHA-256."""
    rules = get_rules(database.game)
    assert isinstance(rules, DiffusionRules)
    header = {
        "game": database.game,
        "maxima": list(rules.maximum),
        "format": "one uint16 a position: 0 draw, d a win in d moves, 32768 + d a loss in d; "
        "positions South to move (North's turned half round), by stones on the board, each "
        "layer in the combinatorial order of its pits (devtools/endgames/diffusion_solve.py)",
        "most": database.most,
        "offsets": [int(n) for n in database.offsets],
    }
    return files.write(database.codes, "<u2", path, header)


def load(path: Path) -> Database:
    """A database written by `save`, memory-mapped; ValueError if its checksum is wrong."""
    header = files.header_of(path)
    codes = files.read(path, "<u2", header)
    most = int(header["most"])
    maxima = tuple(header.get("maxima", (BASE - 1,) * SIZE))
    return Database(
        most=most,
        offsets=np.array(header["offsets"], dtype=np.int64),
        codes=codes,
        ways=ways_table(maxima, most),
        game=str(header["game"]),
    )
