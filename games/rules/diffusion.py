"""Mark Steere's Diffusion (2x6) and Four-rank Diffusion (4x8): one engine, two geometries.

RULES.md sections 1 and 2. A board is described as data (`Geometry`): rows, columns, each
row's pit maximum and distribution order, pit names and the block split. Everything the
engine needs per pit (where each stone goes, which store takes overflow) is computed from it
once, so playing a move is a few tuple operations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from games.rules.base import GameInfo, IllegalMove, Outcome, register

# Compass steps as (row, column) offsets; row 0 is the top row, as South sees the board.
STEPS = {
    "N": (-1, 0),
    "NE": (-1, 1),
    "E": (0, 1),
    "SE": (1, 1),
    "S": (1, 0),
    "SW": (1, -1),
    "W": (0, -1),
    "NW": (-1, -1),
}
LEFT, RIGHT = 0, 1
# A distribution target: a pit index, or a store (-1 left, -2 right).
LEFT_STORE, RIGHT_STORE = -1, -2


@dataclass(frozen=True)
class Geometry:
    """A Diffusion board as data."""

    rows: int
    columns: int
    maxima: tuple[int, ...]  # per row, top first
    start: tuple[int, ...]  # stones per pit at the start, per row
    orders: tuple[tuple[str, ...], ...]  # distribution order per row, compass directions
    names: tuple[tuple[str, ...], ...]  # canonical pit names per row, left to right
    # South (player 1) owns the left half of the columns, North (player 2) the right half.
    block_names: tuple[str, str]


class DiffusionState(NamedTuple):
    """Immutable: pits row by row from the top, stores [left, right], whose turn, winner."""

    pits: tuple[int, ...]
    stores: tuple[int, int]
    to_move: int
    winner: int = 0  # 0 while the game goes on


class DiffusionRules:
    """The rules of one Diffusion board; build through get_rules()."""

    def __init__(self, slug: str, geometry: Geometry) -> None:
        self.slug = slug
        self.geometry = g = geometry
        self.size = g.rows * g.columns
        self.names: tuple[str, ...] = tuple(name for row in g.names for name in row)
        self.index: dict[str, int] = {}
        for i, name in enumerate(self.names):
            self.index[name] = i
            self.index[name.lower()] = i
            self.index[name.upper()] = i
        self.maximum: tuple[int, ...] = tuple(g.maxima[i // g.columns] for i in range(self.size))
        self.targets: tuple[tuple[int, ...], ...] = tuple(
            self._targets(i) for i in range(self.size)
        )
        half = g.columns // 2
        self.side: tuple[int, ...] = tuple(
            LEFT if i % g.columns < half else RIGHT for i in range(self.size)
        )
        self.blocks: tuple[tuple[int, ...], tuple[int, ...]] = (
            tuple(i for i in range(self.size) if i % g.columns < half),
            tuple(i for i in range(self.size) if i % g.columns >= half),
        )
        self.total = sum(g.start[i // g.columns] for i in range(self.size))

    def _targets(self, pit: int) -> tuple[int, ...]:
        g = self.geometry
        row, column = divmod(pit, g.columns)
        targets = []
        for direction in g.orders[row]:
            dr, dc = STEPS[direction]
            r, c = row + dr, column + dc
            if not 0 <= r < g.rows:
                raise ValueError(f"{g.names[row][column]} {direction} leaves the board's rows")
            # RULES.md: positions off the end of the board are the adjacent store.
            if c < 0:
                targets.append(LEFT_STORE)
            elif c >= g.columns:
                targets.append(RIGHT_STORE)
            else:
                targets.append(r * g.columns + c)
        return tuple(targets)

    # --- the engine API -----------------------------------------------------------------------

    def initial_state(self) -> DiffusionState:
        g = self.geometry
        pits = tuple(g.start[i // g.columns] for i in range(self.size))
        return DiffusionState(pits, (0, 0), 1)

    def to_move(self, state: DiffusionState) -> int:
        return state.to_move

    def legal_moves(self, state: DiffusionState) -> list[str]:
        """Every non-empty pit (either player may scoop any pit); none once the game is over."""
        if state.winner:
            return []
        names = self.names
        return [names[i] for i, stones in enumerate(state.pits) if stones]

    def canonical_move(self, state: DiffusionState, move: str) -> str:
        return self.names[self._parse(move)]

    def _parse(self, move: Any) -> int:
        pit = self.index.get(move) if isinstance(move, str) else None
        if pit is None:
            if not isinstance(move, str):
                raise IllegalMove(f"a move is a pit name, not {type(move).__name__}")
            pit = self.index.get(move.strip())
            if pit is None:
                shown = move.strip()[:20] or "(nothing)"
                raise IllegalMove(f"no such pit: {shown}")
        return pit

    def play(self, state: DiffusionState, move: str) -> DiffusionState:
        """The state after scooping the pit named by `move`; IllegalMove if it cannot be."""
        if state.winner:
            raise IllegalMove("the game is over")
        pit = self._parse(move)
        pits = list(state.pits)
        stones = pits[pit]
        if not stones:
            raise IllegalMove(f"pit {self.names[pit]} is empty")
        pits[pit] = 0
        stores = list(state.stores)
        maximum = self.maximum
        overflow = self.side[pit]
        for target in self.targets[pit][:stones]:
            if target < 0:
                stores[-1 - target] += 1
            elif pits[target] < maximum[target]:
                pits[target] += 1
            else:
                # A full pit's stone goes to the store on the emptied pit's side (Decision).
                stores[overflow] += 1
        # Only the scooped pit's block can have become empty; its owner wins.
        block = self.blocks[overflow]
        winner = 0 if any(pits[i] for i in block) else overflow + 1
        return DiffusionState(tuple(pits), (stores[0], stores[1]), 3 - state.to_move, winner)

    def outcome(self, state: DiffusionState) -> Outcome | None:
        if not state.winner:
            return None
        return Outcome(state.winner, f"{self.geometry.block_names[state.winner - 1]} is empty")

    # --- JSON and text --------------------------------------------------------------------------

    def to_json(self, state: DiffusionState) -> dict[str, Any]:
        columns = self.geometry.columns
        pits = state.pits
        return {
            "rows": [list(pits[r : r + columns]) for r in range(0, self.size, columns)],
            "stores": list(state.stores),
            "to_move": state.to_move,
        }

    def from_json(self, data: Mapping[str, Any]) -> DiffusionState:
        """A state from its JSON; ValueError when the JSON does not describe a legal position."""
        g = self.geometry
        if not isinstance(data, Mapping):
            raise ValueError("a state is a JSON object")
        rows, stores, to_move = data.get("rows"), data.get("stores"), data.get("to_move")
        if (
            not isinstance(rows, Sequence)
            or len(rows) != g.rows
            or any(not isinstance(row, Sequence) or len(row) != g.columns for row in rows)
        ):
            raise ValueError(f"rows must be {g.rows} lists of {g.columns} pits")
        pits = tuple(stone for row in rows for stone in row)
        if any(isinstance(n, bool) or not isinstance(n, int) for n in (*pits, *(stores or ()))):
            raise ValueError("stone counts must be whole numbers")
        if any(not 0 <= n <= self.maximum[i] for i, n in enumerate(pits)):
            raise ValueError("a pit holds more stones than it may, or fewer than none")
        if not isinstance(stores, Sequence) or len(stores) != 2 or min(stores) < 0:
            raise ValueError("stores must be [left, right], each at least 0")
        if to_move not in (1, 2):
            raise ValueError("to_move must be 1 or 2")
        if sum(pits) + sum(stores) != self.total:
            raise ValueError(f"the board holds {sum(pits) + sum(stores)} stones, not {self.total}")
        winners = [
            owner + 1 for owner, block in enumerate(self.blocks) if not any(pits[i] for i in block)
        ]
        if len(winners) > 1:
            raise ValueError("both blocks are empty")
        return DiffusionState(pits, (stores[0], stores[1]), to_move, winners[0] if winners else 0)

    def render_text(self, state: DiffusionState) -> str:
        """The board as pbmserv printed it: pit names above/below, counts, stores at the ends."""
        g = self.geometry
        width = 4
        lines = []
        rows = [state.pits[r : r + g.columns] for r in range(0, self.size, g.columns)]
        pad = " " * 5
        for r, row in enumerate(rows):
            names = "".join(f"{name:>{width}}" for name in g.names[r])
            counts = "".join(f"{n:>{width}}" for n in row)
            if r == 0:
                lines.append(pad + names)
            if r == g.rows // 2:
                lines.append(
                    f"[{state.stores[0]:>2}]"
                    + " " * (g.columns * width + 2)
                    + f"[{state.stores[1]:>2}]"
                )
            lines.append(pad + counts)
            if r == g.rows - 1:
                lines.append(pad + names)
        outcome = self.outcome(state)
        if outcome is None:
            lines.append(
                f"Player {state.to_move} ({'South' if state.to_move == 1 else 'North'}) to move."
            )
        else:
            lines.append(f"Player {outcome.winner} wins: {outcome.reason}.")
        return "\n".join(lines) + "\n"


# RULES.md section 1: the pbmserv pit letters, top row F..A and bottom row G..L.
DIFFUSION = Geometry(
    rows=2,
    columns=6,
    maxima=(5, 5),
    start=(4, 4),
    orders=(("W", "SW", "S", "SE", "E"), ("E", "NE", "N", "NW", "W")),
    names=(("F", "E", "D", "C", "B", "A"), ("G", "H", "I", "J", "K", "L")),
    block_names=("block A", "block B"),
)

# RULES.md section 2: files a-h, ranks 4 (top, North's outer row) to 1 (South's outer row).
FOUR_RANK = Geometry(
    rows=4,
    columns=8,
    maxima=(5, 6, 6, 5),
    start=(4, 5, 5, 4),
    orders=(
        ("W", "SW", "S", "SE", "E"),  # rank 4
        ("NE", "N", "NW", "SW", "S", "SE"),  # rank 3, above the centre: own row skipped
        ("SW", "S", "SE", "NE", "N", "NW"),  # rank 2, below the centre: own row skipped
        ("E", "NE", "N", "NW", "W"),  # rank 1
    ),
    names=tuple(tuple(f"{file}{rank}" for file in "abcdefgh") for rank in (4, 3, 2, 1)),
    block_names=("South's block (files a-d)", "North's block (files e-h)"),
)

register(
    GameInfo(
        slug="diffusion",
        name="Diffusion",
        factory=lambda: DiffusionRules("diffusion", DIFFUSION),
        summary="Mark Steere, 2006: two rows of six pits; empty your own block to win.",
    )
)
register(
    GameInfo(
        slug="four-rank-diffusion",
        name="Four-rank Diffusion",
        factory=lambda: DiffusionRules("four-rank-diffusion", FOUR_RANK),
        summary="Mark Steere, 2006: four ranks of eight pits, inner pits hold six.",
    )
)
