"""Diffusion's endgame database, read by the product: a position's exact result with best play
(docs/ENDGAMES.md). The database is built by the tooling (`make endgames`, `python -m devtools
endgames build`) into ENDGAMES_DIR; this module only reads it, memory-mapped, through the
Python standard library (a lookup is a rank of twelve pit counts and one read).

A position is covered when it has at most the database's stones on the board. The file holds
one uint16 a position, South to move (North's positions are South's turned half round):
0 a draw, d a win in d moves, 32768 + d a loss in d moves, moves of both players counted.

ZigZag's databases (one per option set, `zigzag-6x5.bin` for pits=6, seeds=5) hold two int16
a position: the margin (the seeds the player to move will still get minus the opponent's)
and the distance to the last capture (devtools/endgames/zigzag_solve.py). Their verdicts carry
the final margin, the seeds already captured counted.
"""

from __future__ import annotations

import functools
import json
import logging
import mmap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

FILE = "diffusion.bin"
# Each board's database in ENDGAMES_DIR (Four-rank's: devtools `build --game`).
FILES = {"diffusion": FILE, "four-rank-diffusion": "four-rank-diffusion.bin"}
LOSS = 32768


@dataclass(frozen=True)
class Verdict:
    """A covered position's result for the player to move."""

    result: str  # "win", "loss" or "draw"
    moves: int | None  # to the end with best play (both players' moves); None for a draw
    # ZigZag: the player to move's final captured seeds minus the opponent's with best play
    # (`moves` is then the distance to the last capture); None for the other games.
    margin: int | None = None

    @classmethod
    def of(cls, code: int) -> Verdict:
        if code == 0:
            return cls("draw", None)
        if code > LOSS:
            return cls("loss", code - LOSS)
        return cls("win", code)


def _ways(maxima: list[int], most: int) -> list[list[int]]:
    """ways[i][s]: the boards of pits i.. holding s stones together (s up to `most`)."""
    size = len(maxima)
    ways = [[0] * (most + 1) for _ in range(size + 1)]
    ways[size][0] = 1
    for i in range(size - 1, -1, -1):
        for s in range(most + 1):
            ways[i][s] = sum(ways[i + 1][s - v] for v in range(maxima[i] + 1) if s >= v)
    return ways


class DiffusionTable:
    """One database file, memory-mapped."""

    def __init__(self, path: Path) -> None:
        header = json.loads(Path(f"{path}.json").read_text())
        if header.get("game") not in FILES or "sha256" not in header:
            raise ValueError(f"{path}: not a finished Diffusion database")
        self.game = str(header["game"])
        self.most = int(header["most"])
        self.maxima = [int(n) for n in header.get("maxima", [5] * 12)]
        self.offsets = [int(n) for n in header["offsets"]]
        with path.open("rb") as file:
            self._map = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        if len(self._map) != 2 * self.offsets[-1]:
            raise ValueError(f"{path}: {len(self._map)} bytes, not {2 * self.offsets[-1]}")
        self._codes = memoryview(self._map).cast("H")  # little-endian machines: as written
        self._ways = _ways(self.maxima, self.most)

    def code(self, pits: tuple[int, ...]) -> int | None:
        """The code of a board, South to move; None when it holds more stones than covered."""
        stones = sum(pits)
        if stones > self.most or len(pits) != len(self.maxima):
            return None
        place, left = 0, stones
        for i, count in enumerate(pits):
            for v in range(count):
                if left >= v:
                    place += self._ways[i + 1][left - v]
            left -= count
        return int(self._codes[self.offsets[stones] + place])

    def probe(self, pits: tuple[int, ...], to_move: int) -> Verdict | None:
        """The result for the player to move, or None when the position is not covered."""
        code = self.code(pits if to_move == 1 else tuple(reversed(pits)))
        return None if code is None else Verdict.of(code)


def zigzag_file(pits: int, seeds: int) -> str:
    """The name of a ZigZag option set's database in ENDGAMES_DIR."""
    return f"zigzag-{pits}x{seeds}.bin"


class ZigZagTable:
    """One ZigZag database file, memory-mapped: positions seen by the player to move (South;
    North's boards turned half round, pit p -> 2 * pits - 1 - p), by seeds on the board, each
    layer ordered ((rank * (pits + 1) + forbidden) * slots + capturer) as the builder writes
    them (devtools/endgames/zigzag_solve.py)."""

    def __init__(self, path: Path) -> None:
        header = json.loads(Path(f"{path}.json").read_text())
        if header.get("game") != "zigzag" or "sha256" not in header:
            raise ValueError(f"{path}: not a finished ZigZag database")
        self.columns = int(header["options"]["pits"])
        self.seeds = int(header["options"]["seeds"])
        self.size = 2 * self.columns
        self.total = self.size * self.seeds
        self.most = int(header["most"])
        self.offsets = [int(n) for n in header["offsets"]]
        with path.open("rb") as file:
            self._map = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        if len(self._map) != 4 * self.offsets[-1]:
            raise ValueError(f"{path}: {len(self._map)} bytes, not {4 * self.offsets[-1]}")
        self._values = memoryview(self._map).cast("h")  # little-endian machines: as written
        # Seeds in a pit are not capped: ways[i][s] = C(s + size - i - 1, s).
        self._ways = _ways([self.most] * self.size, self.most)

    def value(self, pits: tuple[int, ...], forbidden: int, capturer: int) -> tuple[int, int] | None:
        """(margin, distance) of a position seen by its mover (pits top row first, the mover's
        row last; forbidden 0 or 1 + the column of the mover's forbidden pit; capturer 0 for
        nobody or the mover, 1 the opponent); None when not covered."""
        seeds = sum(pits)
        if seeds > self.most or len(pits) != self.size:
            return None
        place, left = 0, seeds
        for i, count in enumerate(pits):
            for v in range(count):
                place += self._ways[i + 1][left - v]
            left -= count
        kinds = 1 if seeds == self.total else 2
        at = self.offsets[seeds] + (place * (self.columns + 1) + forbidden) * kinds + capturer
        return int(self._values[2 * at]), int(self._values[2 * at + 1])

    def probe_state(self, state: Any) -> Verdict | None:
        """The verdict of an engine state (games/rules/zigzag.py) in play, or None when not
        covered: more seeds than covered, or a position already met twice since the last
        capture, this one counted (its third occurrence would end a line the database plays
        on: docs/ENDGAMES.md)."""
        from games.rules.zigzag import _position  # the engine's own repetition key

        if state.end:
            return None
        met = (*state.history, _position((state.board, state.to_move, state.no_return)))
        if len(met) != len(set(met)):
            return None
        width = self.total.bit_length()  # the engine's bit field a pit
        mask = (1 << width) - 1
        pits = tuple((state.board >> (width * p)) & mask for p in range(self.size))
        pit = int(state.no_return)
        mover = int(state.to_move)
        if mover != 1:  # North's board turned half round
            pits = tuple(reversed(pits))
            pit = self.size - 1 - pit if pit >= 0 else -1
        forbidden = pit - self.columns + 1 if pit >= 0 else 0
        capturer = 0 if state.last_capturer in (0, mover) else 1
        found = self.value(pits, forbidden, capturer)
        if found is None:
            return None
        mine, theirs = state.captured if mover == 1 else state.captured[::-1]
        final = mine - theirs + found[0]
        result = "win" if final > 0 else "loss" if final < 0 else "draw"
        return Verdict(result, found[1], final)


@functools.cache
def open_zigzag(directory: str, pits: int, seeds: int) -> ZigZagTable | None:
    """The ZigZag database of this option set in `directory`, opened once per process; None
    when there is none (or it cannot be read: logged)."""
    path = Path(directory) / zigzag_file(pits, seeds)
    if not path.exists():
        return None
    try:
        return ZigZagTable(path)
    except (OSError, ValueError, KeyError) as error:
        logger.warning("the endgame database %s cannot be read: %s", path, error)
        return None


def _zigzag_options(options: dict[str, Any]) -> tuple[int, int] | None:
    """(pits, seeds) of valid ZigZag options, the defaults filled in; None if invalid."""
    from games.rules import InvalidOptions, get_rules

    try:
        rules: Any = get_rules("zigzag", **options)
    except InvalidOptions:
        return None
    return int(rules.columns), int(rules.seeds)


@functools.cache
def open_at(directory: str, game: str = "diffusion") -> DiffusionTable | None:
    """The database of `game` in `directory`, opened once per process; None when there is
    none (or it cannot be read: logged). Pure: the bots' search processes call it with the
    directory."""
    path = Path(directory) / FILES[game]
    if not path.exists():
        return None
    try:
        return DiffusionTable(path)
    except (OSError, ValueError) as error:
        logger.warning("the endgame database %s cannot be read: %s", path, error)
        return None


def table(game: str = "diffusion") -> DiffusionTable | None:
    """This site's database of `game` (ENDGAMES_DIR), or None."""
    from django.conf import settings  # here: the module is pure for the bots' processes

    return open_at(str(settings.ENDGAMES_DIR), game) if game in FILES else None


def table_for(directory: str, rules: Any) -> DiffusionTable | ZigZagTable | None:
    """The database in `directory` for the game `rules` play (Diffusion, Four-rank, or
    ZigZag with these rules' options), or None."""
    if rules.slug == "zigzag":
        return open_zigzag(directory, int(rules.columns), int(rules.seeds))
    return open_at(directory, rules.slug) if rules.slug in FILES else None


def zigzag_table(options: dict[str, Any]) -> ZigZagTable | None:
    """This site's ZigZag database for these options (ENDGAMES_DIR), or None."""
    from django.conf import settings

    chosen = _zigzag_options(options)
    return None if chosen is None else open_zigzag(str(settings.ENDGAMES_DIR), *chosen)


def best_move(found: DiffusionTable | ZigZagTable, rules: Any, state: Any) -> str | None:
    """Perfect play where the database covers the position: the nearest win, else a draw,
    else the loss held out longest (ZigZag: the best final margin, the last capture nearest);
    None when it is not covered."""
    if isinstance(found, ZigZagTable):
        return _zigzag_best(found, rules, state)
    if found.probe(tuple(state.pits), int(state.to_move)) is None:
        return None
    mover = int(state.to_move)
    best: tuple[int, int, str] | None = None  # (rank: win 0 / draw 1 / loss 2, key, move)
    for move in rules.legal_moves(state):
        after = rules.play(state, move)
        if after.winner:
            ranked = (0, 1, move) if after.winner == mover else (2, -1, move)
        else:
            reply = found.probe(tuple(after.pits), int(after.to_move))
            if reply is None:  # pragma: no cover - a move never adds stones
                return None
            if reply.result == "loss":
                ranked = (0, (reply.moves or 0) + 1, move)
            elif reply.result == "draw":
                ranked = (1, 0, move)
            else:
                ranked = (2, -((reply.moves or 0) + 1), move)
        if best is None or ranked[:2] < best[:2]:
            best = ranked
    return None if best is None else best[2]


def zigzag_move(found: ZigZagTable, rules: Any, state: Any, move: str) -> Verdict | None:
    """A ZigZag move's verdict for the player who makes it: its final margin and result, and
    the moves to the last capture (0 when it captures nothing and none follows)."""
    after = rules.play(state, move)
    # Whether the move itself captures (the engine's own sowing; the leftovers swept at
    # the end are not a capture).
    took = rules._sow(state.board, rules._parse(state, move), state.to_move).taken > 0
    if after.end:
        mine, theirs = after.captured if state.to_move == 1 else after.captured[::-1]
        final = mine - theirs
        distance = 0
    else:
        # The database's own value of the position the move leads to (docs/ENDGAMES.md: the
        # repetition history is not part of a database position).
        reply = found.probe_state(after._replace(history=()))
        if reply is None or reply.margin is None:
            return None
        final, distance = -reply.margin, reply.moves or 0
    result = "win" if final > 0 else "loss" if final < 0 else "draw"
    return Verdict(result, distance + 1 if took or distance else 0, final)


def _zigzag_best(found: ZigZagTable, rules: Any, state: Any) -> str | None:
    if found.probe_state(state) is None:
        return None
    best: tuple[int, int, str] | None = None  # (-final margin, distance, move)
    for move in rules.legal_moves(state):
        verdict = zigzag_move(found, rules, state, move)
        if verdict is None or verdict.margin is None:  # pragma: no cover - covered below
            return None
        ranked = (-verdict.margin, verdict.moves or 0, move)
        if best is None or ranked[:2] < best[:2]:
            best = ranked
    return None if best is None else best[2]


def probe(slug: str, options: dict[str, Any], state: Any) -> Verdict | None:
    """The exact result of a position in play, if a database covers it (Diffusion,
    Four-rank Diffusion, and ZigZag for the option sets whose database is present)."""
    if slug == "zigzag":
        chosen = zigzag_table(options)
        return None if chosen is None else chosen.probe_state(state)
    over = bool(getattr(state, "winner", 0))
    if slug not in FILES or options or over:
        return None
    found = table(slug)
    return None if found is None else found.probe(tuple(state.pits), int(state.to_move))
