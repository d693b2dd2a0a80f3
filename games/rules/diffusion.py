"""Mark Steere's Diffusion (2x6) and Four-rank Diffusion (4x8): one engine, two geometries.

RULES.md sections 1 and 2. A board is described as data (`Geometry`): rows, columns, each
row's pit maximum, starting stones and distribution order, pit names and the two blocks.
`DiffusionRules` computes from it, once, where every stone of every scoop goes; playing a
move is then a few tuple operations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter
from typing import Any, NamedTuple, TypeGuard

from games.rules.base import GameInfo, IllegalMove, Outcome, as_typed, gettext_noop, register

# Compass steps as (row, column) offsets; row 0 is the top row, as South sees the board.
STEPS: dict[str, tuple[int, int]] = {
    "N": (-1, 0),
    "NE": (-1, 1),
    "E": (0, 1),
    "SE": (1, 1),
    "S": (1, 0),
    "SW": (1, -1),
    "W": (0, -1),
    "NW": (-1, -1),
}
LEFT, RIGHT = 0, 1  # store indices in `stores`
# Distribution positions that are stores, not pits (pit indices are >= 0).
_LEFT_STORE, _RIGHT_STORE = -1, -2


@dataclass(frozen=True)
class Block:
    """A block of columns; when it is empty at the end of a move its owner wins."""

    name: str
    owner: int
    columns: range


@dataclass(frozen=True)
class Geometry:
    """A Diffusion board as data. Rows run top (North's outer row) to bottom (South's)."""

    columns: int
    maxima: tuple[int, ...]  # per row: a pit never holds more
    start: tuple[int, ...]  # per row: stones in each pit at the start
    orders: tuple[tuple[str, ...], ...]  # per row: compass directions, clockwise limit first
    names: tuple[tuple[str, ...], ...]  # per row: canonical pit names, left to right
    blocks: tuple[Block, Block]
    # For render_text: labels printed above and below the columns, and beside each row.
    labels_above: tuple[str, ...]
    labels_below: tuple[str, ...]
    row_labels: tuple[str, ...] = ()

    @property
    def rows(self) -> int:
        return len(self.maxima)


class DiffusionState(NamedTuple):
    """Immutable: pits row by row from the top, stores (left, right), whose turn, winner.

    `winner` (0 while the game goes on) follows from the pits; it is kept so that
    `outcome()` and `legal_moves()` need not look at the board.
    """

    pits: tuple[int, ...]
    stores: tuple[int, int]
    to_move: int
    winner: int = 0


class _Scoop(NamedTuple):
    """Where the stones of one scoop go: pits in order, and stones falling off each end."""

    pits: tuple[int, ...]
    off_left: int
    off_right: int


# The end: "block A is empty" (a block's name is "block" and its label).
EMPTY_BLOCK = gettext_noop("block %(block)s is empty")


class DiffusionRules:
    """The rules of one Diffusion board; build it through get_rules()."""

    def __init__(self, slug: str, geometry: Geometry) -> None:
        self.slug = slug
        self.geometry = g = geometry
        columns = g.columns
        per_row = (g.maxima, g.start, g.orders, g.names)
        if len({len(table) for table in per_row}) != 1 or any(
            len(names) != columns for names in g.names
        ):
            raise ValueError(f"{slug}: every row needs a maximum, a start, an order and names")
        if any(start > maximum for start, maximum in zip(g.start, g.maxima, strict=True)):
            raise ValueError(f"{slug}: a row starts above its maximum")
        self.size = size = g.rows * columns
        cells = [divmod(pit, columns) for pit in range(size)]
        self.names: tuple[str, ...] = tuple(name for row in g.names for name in row)
        # Lenient notation: the exact, lower- and upper-case spellings of every name.
        self.index: dict[str, int] = {}
        for pit, name in enumerate(self.names):
            for spelling in (name, name.lower(), name.upper()):
                if self.index.setdefault(spelling, pit) != pit:
                    raise ValueError(f"{slug}: pit names clash when case is ignored: {name}")
        self.maximum: tuple[int, ...] = tuple(g.maxima[row] for row, _ in cells)
        self.total = sum(g.start[row] for row, _ in cells)
        # Block and store side of every pit, checked to cover the board exactly once.
        block_of = [-1] * size
        for b, block in enumerate(g.blocks):
            for pit, (_, column) in enumerate(cells):
                if column in block.columns:
                    if block_of[pit] != -1:
                        raise ValueError(f"{slug}: blocks overlap at {self.names[pit]}")
                    block_of[pit] = b
        if -1 in block_of or len({block.owner for block in g.blocks}) != 2:
            raise ValueError(f"{slug}: the two blocks must cover the board and have two owners")
        if not all(block.name.startswith("block ") for block in g.blocks):
            raise ValueError(f"{slug}: a block's name is 'block ' and its label")  # EMPTY_BLOCK
        if block_of.count(0) < 2 or block_of.count(1) < 2:
            raise ValueError(f"{slug}: a block needs two pits at least")  # see itemgetter below
        self.block_of: tuple[int, ...] = tuple(block_of)
        # Decision (RULES.md): overflow goes to the store on the emptied pit's half.
        if columns % 2:
            raise ValueError(f"{slug}: the board needs an even number of columns")
        self.side: tuple[int, ...] = tuple(
            LEFT if column < columns // 2 else RIGHT for _, column in cells
        )
        self.owners = (g.blocks[0].owner, g.blocks[1].owner)
        # itemgetter returns a block's counts as a tuple in C: `any()` of it is the win test.
        self._block_counts = tuple(
            itemgetter(*(pit for pit in range(size) if block_of[pit] == b)) for b in (0, 1)
        )
        self._outcomes: dict[int, Outcome] = {
            block.owner: Outcome.of(
                block.owner, EMPTY_BLOCK, block=block.name.removeprefix("block ")
            )
            for block in g.blocks
        }
        # _scoops[pit][stones]: the whole distribution of that many stones from that pit.
        self._scoops: tuple[tuple[_Scoop, ...], ...] = tuple(
            self._scoops_from(pit) for pit in range(size)
        )

    def _positions(self, pit: int) -> list[int]:
        """The pit's distribution positions in order: pit indices, or _LEFT/_RIGHT_STORE."""
        g = self.geometry
        row, column = divmod(pit, g.columns)
        positions = []
        for direction in g.orders[row]:
            dr, dc = STEPS[direction]
            r, c = row + dr, column + dc
            if not 0 <= r < g.rows:
                # No order of either board points off the top or bottom; a new board must not.
                raise ValueError(f"{self.names[pit]} {direction} leaves the board's rows")
            # RULES.md: a position off the end of the board is the adjacent store.
            if c < 0:
                positions.append(_LEFT_STORE)
            elif c >= g.columns:
                positions.append(_RIGHT_STORE)
            else:
                positions.append(r * g.columns + c)
        if len(set(positions) - {_LEFT_STORE, _RIGHT_STORE}) != sum(p >= 0 for p in positions):
            raise ValueError(f"{self.names[pit]}: a distribution visits a pit twice")
        if self.maximum[pit] > len(positions):
            # RULES.md: "a distribution never wraps"; a board where it could is not Diffusion.
            raise ValueError(f"{self.names[pit]} may hold more stones than it has positions")
        return positions

    def _scoops_from(self, pit: int) -> tuple[_Scoop, ...]:
        positions = self._positions(pit)
        return tuple(
            _Scoop(
                tuple(p for p in positions[:stones] if p >= 0),
                positions[:stones].count(_LEFT_STORE),
                positions[:stones].count(_RIGHT_STORE),
            )
            for stones in range(self.maximum[pit] + 1)
        )

    # --- the engine API -----------------------------------------------------------------------

    def initial_state(self) -> DiffusionState:
        """The opening position: every pit at its row's start count, stores empty, South to move."""
        g = self.geometry
        pits = tuple(g.start[pit // g.columns] for pit in range(self.size))
        return DiffusionState(pits, (0, 0), 1)

    def to_move(self, state: DiffusionState) -> int:
        """The player to move: 1 (South) or 2 (North); after the last move, the next in turn."""
        return state.to_move

    def legal_moves(self, state: DiffusionState) -> list[str]:
        """Every non-empty pit (either player may scoop any pit); none once the game is over."""
        if state.winner:
            return []
        return list(compress(self.names, state.pits))

    def canonical_move(self, state: DiffusionState, move: str) -> str:
        """The canonical name of the pit `move` names ("c2" for " C2"); IllegalMove if none."""
        return self.names[self._parse(move)]

    def _parse(self, move: object) -> int:
        if not isinstance(move, str):
            raise IllegalMove(
                gettext_noop("a move is a pit name, not %(kind)s"), kind=type(move).__name__
            )
        pit = self.index.get(move.strip())
        if pit is None:
            raise IllegalMove(gettext_noop("no such pit: %(pit)s"), pit=as_typed(move))
        return pit

    def play(self, state: DiffusionState, move: str) -> DiffusionState:
        """The state after scooping the pit `move` names; IllegalMove if that cannot be done."""
        if state.winner:
            raise IllegalMove(gettext_noop("the game is over"))
        try:
            pit = self.index[move]  # the usual case: a canonical or lower-case name
        except (KeyError, TypeError):  # TypeError: an unhashable non-move such as a list
            pit = self._parse(move)
        pits = list(state.pits)
        stones = pits[pit]
        if not stones:
            raise IllegalMove(gettext_noop("pit %(pit)s is empty"), pit=self.names[pit])
        pits[pit] = 0
        targets, left, right = self._scoops[pit][stones]
        maximum = self.maximum
        overflow = 0
        for target in targets:
            if pits[target] < maximum[target]:
                pits[target] += 1
            else:
                overflow += 1
        left += state.stores[0]
        right += state.stores[1]
        if overflow:
            # Decision: a full pit's stone goes to the store on the emptied pit's side.
            if self.side[pit] == LEFT:
                left += overflow
            else:
                right += overflow
        # Only the scooped pit's block can have emptied (sowing only adds stones elsewhere).
        block = self.block_of[pit]
        winner = 0 if any(self._block_counts[block](pits)) else self.owners[block]
        return DiffusionState(tuple(pits), (left, right), 3 - state.to_move, winner)

    def sowing(self, state: DiffusionState, move: str) -> list[list[str | int]]:
        """The legal move `move`, stone by stone, for a client to show: ["lift", pit], then
        ["sow", pit] or ["store", i] (i indexes `stores`) for each stone in order, a full
        pit's stone going to its store. `play` is the authority (and its refusals apply)."""
        self.play(state, move)
        pit = self.index.get(move)
        if pit is None:
            pit = self._parse(move)
        pits = list(state.pits)
        stones, pits[pit] = pits[pit], 0
        steps: list[list[str | int]] = [["lift", self.names[pit]]]
        for target in self._positions(pit)[:stones]:
            if target == _LEFT_STORE:
                steps.append(["store", LEFT])
            elif target == _RIGHT_STORE:
                steps.append(["store", RIGHT])
            elif pits[target] < self.maximum[target]:
                pits[target] += 1
                steps.append(["sow", self.names[target]])
            else:  # Decision: a full pit's stone goes to the store on the emptied pit's side
                steps.append(["store", LEFT if self.side[pit] == LEFT else RIGHT])
        return steps

    def outcome(self, state: DiffusionState) -> Outcome | None:
        """None while the game goes on; else the owner of the empty block wins."""
        return self._outcomes[state.winner] if state.winner else None

    # --- JSON and text --------------------------------------------------------------------------

    def to_json(self, state: DiffusionState) -> dict[str, Any]:
        """{"rows": [top row, ..., bottom row], "stores": [left, right], "to_move": 1|2}."""
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
        extra = sorted(map(str, set(data) - {"rows", "stores", "to_move"}))
        if extra:
            raise ValueError(f"unexpected keys in a {self.slug} state: {', '.join(extra)}")
        rows, stores, to_move = data.get("rows"), data.get("stores"), data.get("to_move")
        if (
            not _is_list(rows)
            or len(rows) != g.rows
            or not all(_is_list(row) and len(row) == g.columns for row in rows)
        ):
            raise ValueError(f"rows must be {g.rows} lists of {g.columns} pits")
        if not _is_list(stores) or len(stores) != 2:
            raise ValueError("stores must be [left, right]")
        pits = tuple(n for row in rows for n in row)
        if not all(_is_count(n) for n in (*pits, *stores)):
            raise ValueError("stone counts must be whole numbers, at least 0")
        for pit, n in enumerate(pits):
            if n > self.maximum[pit]:
                raise ValueError(
                    f"pit {self.names[pit]} holds {n} stones; it never holds more than "
                    f"{self.maximum[pit]}"
                )
        if type(to_move) is not int or to_move not in (1, 2):
            raise ValueError("to_move must be 1 or 2")
        on_board = sum(pits) + sum(stores)
        if on_board != self.total:
            raise ValueError(f"the board holds {on_board} stones, not {self.total}")
        empty = [b for b in (0, 1) if not any(self._block_counts[b](pits))]
        if len(empty) == 2:
            # Impossible: only the scooped pit's block can empty, and the game stops there.
            raise ValueError("both blocks are empty")
        winner = self.owners[empty[0]] if empty else 0
        return DiffusionState(pits, (stores[0], stores[1]), to_move, winner)

    def board(self) -> dict[str, Any]:
        """What a client needs to draw this board: a pit board, its pit names row by row
        (top row first, left to right) and each block's columns and owner."""
        return {
            "renderer": "pits",
            "names": [list(row) for row in self.geometry.names],
            "blocks": [
                {
                    "label": block.name[:1].upper() + block.name[1:],
                    "owner": block.owner,
                    "columns": [block.columns.start, block.columns.stop - 1],
                }
                for block in self.geometry.blocks
            ],
        }

    def position_key(self, state: DiffusionState) -> bytes:
        """The position as far as the rules care, as bytes: equal for the same pits, stores
        and player to move however the game reached them (the opening explorer's key)."""
        return repr((state.pits, state.stores, state.to_move, state.winner)).encode()

    def render_text(self, state: DiffusionState) -> str:
        """The board drawn as pbmserv drew it (seed 000, figures 1-5); whose turn is not shown.

        The stores sit at the ends of the middle line; an empty store is blank, as in the
        seed's figures.
        """
        g = self.geometry
        columns = g.columns
        edge = "---".join("." * (columns + 3))
        divider = "+".join(["---"] * columns)
        middle = g.rows // 2 - 1  # the line after this row carries the stores
        # Figure 4: "|20 |---+ ... +---| 20|"; up to 144 stones fit the three characters.
        left, right = state.stores
        left_cell = "   " if not left else f"{left:>2} " if left < 100 else str(left)
        right_cell = "   " if not right else f" {right:<2}" if right < 100 else str(right)
        lines = ["      " + "   ".join(g.labels_above), edge]
        for row in range(g.rows):
            counts = state.pits[row * columns : (row + 1) * columns]
            line = "|   | " + " | ".join(map(str, counts)) + " |   |"
            if g.row_labels:
                line += f" {g.row_labels[row]}"
            lines.append(line)
            if row == middle:
                lines.append(f"|{left_cell}|{divider}|{right_cell}|")
            elif row < g.rows - 1:
                lines.append(f"|   |{divider}|   |")
        lines += ["'" + "---'" * (columns + 2), "      " + "   ".join(g.labels_below)]
        return "\n".join(lines) + "\n"


def _is_list(value: object) -> TypeGuard[Sequence[Any]]:
    # JSON arrays arrive as lists; tuples are accepted, text (also a Sequence) is not.
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0  # bool is an int subclass: refused


# The two outer rows of both boards: RULES.md, "bottom-row pit: E, NE, N, NW, W" and
# "top-row pit: W, SW, S, SE, E".
TOP_ROW_ORDER = ("W", "SW", "S", "SE", "E")
BOTTOM_ROW_ORDER = ("E", "NE", "N", "NW", "W")

# RULES.md section 1: the pbmserv pit letters, top row F..A and bottom row G..L; South
# (player 1) owns block A, the left half.
DIFFUSION = Geometry(
    columns=6,
    maxima=(5, 5),
    start=(4, 4),
    orders=(TOP_ROW_ORDER, BOTTOM_ROW_ORDER),
    names=(tuple("FEDCBA"), tuple("GHIJKL")),
    blocks=(Block("block A", 1, range(0, 3)), Block("block B", 2, range(3, 6))),
    labels_above=tuple("FEDCBA"),
    labels_below=tuple("GHIJKL"),
)

# RULES.md section 2: files a-h; rows are ranks 4 (North's outer row) down to 1 (South's).
FOUR_RANK = Geometry(
    columns=8,
    maxima=(5, 6, 6, 5),
    start=(4, 5, 5, 4),
    orders=(
        TOP_ROW_ORDER,  # rank 4
        ("NE", "N", "NW", "SW", "S", "SE"),  # rank 3, above the centre: own row skipped
        ("SW", "S", "SE", "NE", "N", "NW"),  # rank 2, below the centre: own row skipped
        BOTTOM_ROW_ORDER,  # rank 1
    ),
    names=tuple(tuple(f"{file}{rank}" for file in "abcdefgh") for rank in "4321"),
    blocks=(
        Block("block a-d", 1, range(0, 4)),
        Block("block e-h", 2, range(4, 8)),
    ),
    labels_above=tuple("abcdefgh"),
    labels_below=tuple("abcdefgh"),
    row_labels=tuple("4321"),
)

# Only the block of the scooped pit can empty, so both never empty together (Steere).
NO_DRAWS = gettext_noop(
    "Diffusion cannot end in a draw: every game has a winner, as its author states."
)

register(
    GameInfo(
        slug="diffusion",
        name="Diffusion",
        factory=lambda: DiffusionRules("diffusion", DIFFUSION),
        summary=gettext_noop(
            "Mark Steere, 2006: two rows of six pits; the owner of an emptied block wins."
        ),
        draws=False,
        no_draws=NO_DRAWS,
    )
)
register(
    GameInfo(
        slug="four-rank-diffusion",
        name="Four-rank Diffusion",
        factory=lambda: DiffusionRules("four-rank-diffusion", FOUR_RANK),
        summary=gettext_noop("Mark Steere, 2006: four ranks of eight pits; inner pits hold six."),
        draws=False,
        no_draws=NO_DRAWS,
    )
)
