"""Diffusion's endgame database, read by the product: a position's exact result with best play
(docs/ENDGAMES.md). The database is built by the tooling (`make endgames`, `python -m devtools
endgames build`) into ENDGAMES_DIR; this module only reads it, memory-mapped, through the
Python standard library (a lookup is a rank of twelve pit counts and one read).

A position is covered when it has at most the database's stones on the board. The file holds
one uint16 a position, South to move (North's positions are South's turned half round):
0 a draw, d a win in d moves, 32768 + d a loss in d moves, moves of both players counted.
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


def best_move(found: DiffusionTable, rules: Any, state: Any) -> str | None:
    """Perfect play where the database covers the position: the nearest win, else a draw,
    else the loss held out longest; None when it is not covered."""
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


def probe(slug: str, options: dict[str, Any], state: Any) -> Verdict | None:
    """The exact result of a position in play, if a database covers it (Diffusion and
    Four-rank Diffusion)."""
    over = bool(getattr(state, "winner", 0))
    if slug not in FILES or options or over:
        return None
    found = table(slug)
    return None if found is None else found.probe(tuple(state.pits), int(state.to_move))
