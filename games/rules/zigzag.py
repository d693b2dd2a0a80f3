"""The Rodeffers' ZigZag (2007): RULES.md section 3.

Two rows of `pits` pits; every seed goes to the other row, one column further on, so the
sowing path is one cycle through all pits. We number that cycle once (`_order`): a lap is
then "the next k positions of the cycle, forwards or backwards", and a relay lap keeps the
direction (forwards/backwards along the cycle) of the move's first lap.

The board is one integer of bit fields, so a lap of any length is a few integer
operations. No move can be endless (proof at `_sow`), so the legal moves are simply the
mover's non-empty pits, less the no-return pit. The end of the game is proved by searching
the positions reachable from the current one when few enough seeds remain; those answers
are memoised per position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb
from typing import Any, NamedTuple, TypeGuard

from games.rules.base import (
    GameInfo,
    IllegalMove,
    OptionSpec,
    Outcome,
    as_typed,
    gettext_noop,
    register,
)

LETTERS = "abcdefghijklmnopqrstuvwxyz"
SOUTH, NORTH = 1, 2
NAMES = {SOUTH: "South", NORTH: "North"}
# RULES.md: the end-of-game proof runs when the seeds on the board can form at most this
# many arrangements over the pits.
MAX_ARRANGEMENTS = 20_000
# Memo sizes: cleared wholesale when full (playouts mostly visit fresh positions).
_MEMO_LIMIT = 200_000

# End reasons, as written in the state JSON.
NO_CAPTURE, NO_MOVE, REPETITION = "no-capture", "no-move", "repetition"
# The reasons, with the seeds each side captured (whole sentences, for translators).
_WHY = {
    NO_CAPTURE: gettext_noop("no capture is possible any more; South %(south)s, North %(north)s"),
    REPETITION: gettext_noop(
        "the position occurred for the third time; South %(south)s, North %(north)s"
    ),
}
_NO_MOVE = {
    SOUTH: gettext_noop("South has no legal move; South %(south)s, North %(north)s"),
    NORTH: gettext_noop("North has no legal move; South %(south)s, North %(north)s"),
}

# A position as far as the rules care: board, player to move, the pit they may not lift.
Key = tuple[int, int, int]


class ZigZagState(NamedTuple):
    """Immutable: the board, seeds captured by (South, North), whose turn, the pit that
    player may not lift (-1: none), the last capturer (0: nobody yet), the earlier
    positions since the last capture (for threefold repetition) and, once the game is
    over, why ("" while it goes on).

    The board is one integer with a bit field per pit (pit p, counted top row first, left
    to right, in bits p*w .. p*w+w-1): a lap of any length is then a few integer
    operations, and positions hash and compare fast in the memos.
    """

    board: int
    captured: tuple[int, int]
    to_move: int
    no_return: int = -1
    last_capturer: int = 0
    history: tuple[int, ...] = ()  # positions as _position() numbers
    end: str = ""


class _Child(NamedTuple):
    """One legal move of a position and where it leads."""

    pit: int
    board: int
    taken: int  # seeds captured (0: none, even after a rule-3 landing)
    no_return: int  # the pit the opponent may not lift next, or -1


class ZigZagRules:
    """The rules for one board size and seed count; build it through get_rules()."""

    slug = "zigzag"

    def __init__(self, pits: int, seeds: int) -> None:
        self.columns = n = pits
        self.seeds = seeds
        self.size = size = 2 * n
        self.total = size * seeds
        # Pit p: row p // n (0 = top, North's; 1 = bottom, South's), column p % n.
        self.names: tuple[str, ...] = tuple(LETTERS[:n].upper() + LETTERS[:n])
        self.rows: dict[int, range] = {NORTH: range(0, n), SOUTH: range(n, size)}
        self.across: tuple[int, ...] = tuple((p + n) % size for p in range(size))
        # Bit fields wide enough for every seed in one pit.
        self.width = width = self.total.bit_length()
        self.mask = (1 << width) - 1
        self.shift: tuple[int, ...] = tuple(width * p for p in range(size))
        self._ones = sum(1 << shift for shift in self.shift)
        # The cycle, starting at the bottom-left pit going right: from (row r, column c,
        # direction d) the next pit is (1-r, c+d, d), or (1-r, c, -d) off the edge.
        order: list[int] = []
        direction: list[int] = []
        row, column, d = 1, 0, 1
        for _ in range(size):
            order.append(row * n + column)
            direction.append(d)
            row, column, d = (
                (1 - row, column + d, d) if 0 <= column + d < n else (1 - row, column, -d)
            )
        if sorted(order) != list(range(size)) or (row, column, d) != (1, 0, 1):
            raise ValueError(f"zigzag {pits}: the sowing path is not one cycle")  # pragma: no cover
        self._order = tuple(order)
        self._where = tuple(order.index(p) for p in range(size))
        # First lap toward the centre line: step +1 along the cycle when the pit's direction
        # there agrees, else -1 (the cycle walked backwards reverses every direction).
        self._step = tuple(
            1 if direction[self._where[p]] == (1 if p % n < n // 2 else -1) else -1
            for p in range(size)
        )
        # _sown[step][i][k]: one seed in each of the pits that k < size seeds lifted at
        # cycle position i reach, as a board to add.
        self._sown: dict[int, tuple[tuple[int, ...], ...]] = {
            step: tuple(
                tuple(
                    sum(1 << self.shift[order[(i + step * j) % size]] for j in range(1, k + 1))
                    for k in range(size)
                )
                for i in range(size)
            )
            for step in (1, -1)
        }
        # The pit a single seed lifted from p reaches (for the no-return restriction).
        self._first = tuple(order[(self._where[p] + self._step[p]) % size] for p in range(size))
        # The proof of the game's end runs with at most this many seeds on the board.
        self.search_seeds = max(
            (s for s in range(self.total + 1) if comb(s + size - 1, s) <= MAX_ARRANGEMENTS),
            default=0,
        )
        self._capturable: dict[Key, bool] = {}
        # Fast paths: a row's fields, a pit's field (index -1: none), moves by spelling.
        self._field = (*((self.mask << shift) for shift in self.shift), 0)
        self._row_fields = {
            player: sum(self._field[pit] for pit in row) for player, row in self.rows.items()
        }
        self._own = {
            player: tuple((pit, self._field[pit], self.names[pit]) for pit in row)
            for player, row in self.rows.items()
        }
        self._pit_of = {
            player: {
                spelling: pit
                for pit in row
                for spelling in (self.names[pit], self.names[pit].swapcase())
            }
            for player, row in self.rows.items()
        }

    def pack(self, counts: Sequence[int]) -> int:
        """The board integer of these pit counts (top row first)."""
        return sum(count << shift for count, shift in zip(counts, self.shift, strict=True))

    def unpack(self, board: int) -> list[int]:
        """The pit counts of a board integer (top row first)."""
        mask = self.mask
        return [(board >> shift) & mask for shift in self.shift]

    # --- simulation ------------------------------------------------------------------------

    def _sow(self, board: int, pit: int, mover: int) -> _Child:
        """Play pit `pit` (non-empty, the mover's) on `board`.

        Every move ends, within as many laps as there are seeds on the board: the first
        seed of every lap lands on the opponent's row (the path alternates rows), and the
        opponent's pits are never emptied during the move, so each lap leaves at least one
        more seed there. RULES.md's rule against endless moves can therefore never apply
        (docs/RULES-NOTES.md).
        """
        size, mask, shift, order = self.size, self.mask, self.shift, self._order
        own = self.rows[mover]
        step = self._step[pit]
        sown = self._sown[step]
        origin, i = pit, self._where[pit]
        laps = 0
        while True:
            at = shift[pit]
            seeds = (board >> at) & mask
            if seeds < size:
                board += sown[i][seeds] - (seeds << at)
            else:  # whole rounds: a seed for every pit, the emptied one included
                full, rest = divmod(seeds, size)
                board += sown[i][rest] + full * self._ones - (seeds << at)
            i = (i + step * seeds) % size
            last = order[i]
            # "Non-empty" is judged before the last seed drops.
            filled = (board >> shift[last]) & mask > 1
            if last in own:
                if not filled:
                    return _Child(origin, board, 0, -1)
                pit = last  # relay: lift it all and sow on in the same direction
                laps += 1
                continue
            if filled:
                return _Child(origin, board, 0, -1)
            across = self.across[last]
            taken = (board >> shift[across]) & mask
            board -= taken << shift[across]
            no_return = -1
            if laps == 0 and seeds == 1 and not taken and self._first[last] == origin:
                # A lone seed sown into the opponent's empty pit, capturing nothing: it
                # may not be sown straight back unless that captures (RULES.md). We only
                # record the pit when sowing it back would indeed capture nothing.
                back = self.across[origin]
                if back == last or not (board >> shift[back]) & mask:
                    no_return = last
            return _Child(origin, board, taken, no_return)

    def _legal(self, key: Key) -> list[int]:
        """The pits the player to move may lift: every non-empty own pit but the no-return
        pit (which is only ever set when sowing its seed back would capture nothing).
        No move is endless (see `_sow`), so nothing needs simulating here.
        """
        board, mover, no_return = key
        return [pit for pit, field, _ in self._own[mover] if board & field and pit != no_return]

    def _moves(self, key: Key) -> list[_Child]:
        """Every legal move of a position, simulated."""
        board, mover, _ = key
        return [self._sow(board, pit, mover) for pit in self._legal(key)]

    def _capture_reachable(self, key: Key, on_board: int) -> bool:
        """Whether some capture can still happen from this position (RULES.md's proof).

        With more seeds on the board than the proof may handle, the answer is yes.
        """
        if on_board > self.search_seeds:
            return True
        capturable = self._capturable
        known = capturable.get(key)
        if known is not None:
            return known
        # Depth-first over every position reachable by legal moves, stopping at the first
        # capture; if none is found, nothing reachable from here can capture either.
        seen = {key}
        stack = [key]
        while stack:
            node = stack.pop()
            mover = 3 - node[1]
            for child in self._moves(node):
                if child.taken:
                    capturable[key] = True
                    return True
                nxt = (child.board, mover, child.no_return)
                if nxt not in seen:
                    if capturable.get(nxt):
                        capturable[key] = True
                        return True
                    seen.add(nxt)
                    stack.append(nxt)
        if len(capturable) + len(seen) >= _MEMO_LIMIT:
            capturable.clear()
        for node in seen:
            capturable[node] = False
        return False

    def capture_possible(self, state: ZigZagState) -> bool:
        """Whether a capture can still happen from this position (yes with too many seeds
        on the board for the proof), as the end-of-game check decides it."""
        on_board = self.total - state.captured[0] - state.captured[1]
        return self._capture_reachable(_key(state), on_board)

    def memo_size(self) -> int:
        """Positions whose end-of-game answer is memoised."""
        return len(self._capturable)

    def forget(self) -> None:
        """Drop the memoised proofs (benchmarks time the proof from cold)."""
        self._capturable.clear()

    def _end_of(self, state: ZigZagState) -> str:
        """Why the game is over in this position (checked after every move), or ""."""
        board, mover, no_return = key = (state.board, state.to_move, state.no_return)
        if not board & self._row_fields[mover] & ~self._field[no_return]:
            return NO_MOVE
        on_board = self.total - state.captured[0] - state.captured[1]
        if not self._capture_reachable(key, on_board):
            return NO_CAPTURE
        if state.history.count(_position(key)) >= 2:  # with this one, the third occurrence
            return REPETITION
        return ""

    def _settled(self, state: ZigZagState) -> ZigZagState:
        """The state with its end decided; at the end the board goes to the last capturer."""
        end = self._end_of(state)
        if not end:
            return state
        south, north = state.captured
        board = state.board
        if state.last_capturer:
            rest = self.total - south - north
            board = 0
            if state.last_capturer == SOUTH:
                south += rest
            else:
                north += rest
        no_return = state.no_return if board else -1  # its seed has gone to a store
        return state._replace(board=board, captured=(south, north), no_return=no_return, end=end)

    # --- the engine API --------------------------------------------------------------------

    def initial_state(self) -> ZigZagState:
        """Every pit holds `seeds`, nothing captured, South to move."""
        return self._settled(ZigZagState(self.pack([self.seeds] * self.size), (0, 0), SOUTH))

    def to_move(self, state: ZigZagState) -> int:
        """The player to move: 1 (South, bottom row) or 2 (North); at the end, the next in turn."""
        return state.to_move

    def legal_moves(self, state: ZigZagState) -> list[str]:
        """The mover's pits that may be lifted: lowercase for South, uppercase for North."""
        if state.end:
            return []
        board, no_return = state.board, state.no_return
        return [
            name
            for pit, field, name in self._own[state.to_move]
            if board & field and pit != no_return
        ]

    def canonical_move(self, state: ZigZagState, move: str) -> str:
        """The mover's pit in the column `move` names ("c" or "C" -> "c" for South)."""
        return self.names[self._parse(state, move)]

    def _parse(self, state: ZigZagState, move: object) -> int:
        try:
            return self._pit_of[state.to_move][move]  # type: ignore[index]
        except (KeyError, TypeError):  # TypeError: an unhashable non-move such as a list
            pass
        if not isinstance(move, str):
            raise IllegalMove(
                gettext_noop("a move is a column letter, not %(kind)s"), kind=type(move).__name__
            )
        text = move.strip().lower()
        column = LETTERS.find(text) if len(text) == 1 else -1
        if not 0 <= column < self.columns:
            last = LETTERS[self.columns - 1]
            raise IllegalMove(
                gettext_noop("no such pit: %(pit)s (columns a-%(last)s)"),
                pit=as_typed(move),
                last=last,
            )
        return self.rows[state.to_move][column]

    def play(self, state: ZigZagState, move: str) -> ZigZagState:
        """The state after the mover lifts the pit `move` names; IllegalMove if they may not."""
        if state.end:
            raise IllegalMove(gettext_noop("the game is over"))
        pit = self._parse(state, move)
        board, mover = state.board, state.to_move
        if pit == state.no_return or not (board >> self.shift[pit]) & self.mask:
            raise self._why_not(state, pit)
        child = self._sow(board, pit, mover)
        if child.taken:
            south, north = state.captured
            captured = (
                (south + child.taken, north) if mover == SOUTH else (south, north + child.taken)
            )
            # A capture lowers the seeds on the board: no earlier position can come back.
            after = ZigZagState(child.board, captured, 3 - mover, child.no_return, mover)
        else:
            after = ZigZagState(
                child.board,
                state.captured,
                3 - mover,
                child.no_return,
                state.last_capturer,
                (*state.history, _position((board, mover, state.no_return))),
            )
        return self._settled(after)

    def sowing(self, state: ZigZagState, move: str) -> list[list[str | int]]:
        """The legal move `move`, seed by seed, for a client to show: ["lift", pit], then
        ["sow", pit] for every seed, again for each relay, a capture as ["capture", pit, i]
        (its seeds go to store i, indexing the JSON's `stores`), and at the end of the game
        ["sweep", i] when the seeds left go to that store. `play` is the authority; this
        walks the same path one seed at a time (IllegalMove as `play` for a move it refuses).
        """
        after = self.play(state, move)  # the same refusals
        pit = self._parse(state, move)
        counts = self.unpack(state.board)
        own, step, order, size = self.rows[state.to_move], self._step[pit], self._order, self.size
        i = self._where[pit]
        steps: list[list[str | int]] = []
        while True:
            seeds, counts[pit] = counts[pit], 0
            steps.append(["lift", self.names[pit]])
            for j in range(1, seeds + 1):
                target = order[(i + step * j) % size]
                counts[target] += 1
                steps.append(["sow", self.names[target]])
            i = (i + step * seeds) % size
            last = order[i]
            filled = counts[last] > 1  # it held seeds before the last one dropped
            if last in own and filled:
                pit = last  # relay
                continue
            if last not in own and not filled and counts[self.across[last]]:
                across = self.across[last]
                counts[across] = 0
                steps.append(["capture", self.names[across], 0 if state.to_move == NORTH else 1])
            if after.end and not after.board and any(counts):
                # The game ended: what is left goes to the last capturer's store.
                steps.append(["sweep", 0 if after.last_capturer == NORTH else 1])
            return steps

    def _why_not(self, state: ZigZagState, pit: int) -> IllegalMove:
        name = self.names[pit]
        if pit == state.no_return:
            return IllegalMove(
                gettext_noop(
                    "pit %(pit)s may not be lifted: its seed would go straight back to "
                    "%(back)s and capture nothing"
                ),
                pit=name,
                back=self.names[self._first[pit]],
            )
        return IllegalMove(gettext_noop("pit %(pit)s is empty"), pit=name)

    def outcome(self, state: ZigZagState) -> Outcome | None:
        """None while the game goes on; else more captured seeds wins, equal is a draw."""
        if not state.end:
            return None
        south, north = state.captured
        winner = SOUTH if south > north else NORTH if north > south else None
        why = _WHY.get(state.end) or _NO_MOVE[state.to_move]
        return Outcome.of(winner, why, south=south, north=north)

    # --- JSON and text ---------------------------------------------------------------------

    def to_json(self, state: ZigZagState) -> dict[str, Any]:
        """Rows (top first), stores [North's, South's], captured [South, North], to_move,
        no_return (the pit the mover may not lift, or null), last_capturer (0: nobody),
        repetition (earlier positions since the last capture) and end (null while playing).
        """
        n = self.columns
        pits = self.unpack(state.board)
        south, north = state.captured
        return {
            "rows": [list(pits[:n]), list(pits[n:])],
            "stores": [north, south],
            "captured": [south, north],
            "to_move": state.to_move,
            "no_return": self.names[state.no_return] if state.no_return >= 0 else None,
            "last_capturer": state.last_capturer,
            "repetition": [self._key_text(_key_of(number)) for number in state.history],
            "end": state.end or None,
        }

    def _key_text(self, key: Key) -> str:
        board, to_move, no_return = key
        pits = self.unpack(board)
        n = self.columns
        top, bottom = " ".join(map(str, pits[:n])), " ".join(map(str, pits[n:]))
        return f"{to_move}:{top}/{bottom}:{self.names[no_return] if no_return >= 0 else '-'}"

    def _key_from_text(self, text: object) -> Key:
        if not isinstance(text, str) or text.count(":") != 2 or text.count("/") != 1:
            raise ValueError("a repetition entry reads 'to_move:top row/bottom row:pit or -'")
        to_move, rows, no_return = text.split(":")
        try:
            pits = tuple(int(n) for half in rows.split("/") for n in half.split(" "))
        except ValueError:
            raise ValueError(f"bad seed counts in repetition entry {text[:60]!r}") from None
        if to_move not in ("1", "2") or len(pits) != self.size or min(pits) < 0:
            raise ValueError(f"bad repetition entry {text[:60]!r}")
        pit = self._pit_from(no_return if no_return != "-" else None, int(to_move))
        return (self.pack(pits), int(to_move), pit)

    def _pit_from(self, name: object, to_move: int) -> int:
        if name is None:
            return -1
        if not isinstance(name, str) or name not in self.names:
            raise ValueError(f"no_return must be a pit name or null, not {name!r:.20}")
        pit = self.names.index(name)
        if pit not in self.rows[to_move]:
            raise ValueError(f"no_return {name} is not a pit of the player to move")
        return pit

    def from_json(self, data: Mapping[str, Any]) -> ZigZagState:
        """A state from its JSON; ValueError when it does not describe a possible position."""
        if not isinstance(data, Mapping):
            raise ValueError("a state is a JSON object")
        keys = {"rows", "stores", "captured", "to_move", "no_return", "last_capturer"}
        keys |= {"repetition", "end"}
        extra = sorted(map(str, set(data) - keys))
        missing = sorted(keys - set(data))
        if extra or missing:
            raise ValueError(
                f"a zigzag state has the keys {', '.join(sorted(keys))}"
                f" ({'unexpected' if extra else 'missing'}: {', '.join(extra or missing)})"
            )
        n = self.columns
        rows, to_move = data["rows"], data["to_move"]
        if (
            not _is_list(rows)
            or len(rows) != 2
            or not all(_is_list(r) and len(r) == n for r in rows)
        ):
            raise ValueError(f"rows must be 2 lists of {n} pits")
        captured, stores = data["captured"], data["stores"]
        if not (
            _is_list(captured) and len(captured) == 2 and _is_list(stores) and len(stores) == 2
        ):
            raise ValueError("captured must be [South, North] and stores [North, South]")
        pits = tuple(c for row in rows for c in row)
        if not all(_is_count(c) for c in (*pits, *captured, *stores)):
            raise ValueError("seed counts must be whole numbers, at least 0")
        if list(stores) != [captured[1], captured[0]]:
            raise ValueError("stores must be [North's captured, South's captured]")
        if type(to_move) is not int or to_move not in (1, 2):
            raise ValueError("to_move must be 1 or 2")
        total = sum(pits) + captured[0] + captured[1]
        if total != self.total:
            raise ValueError(f"the board and stores hold {total} seeds, not {self.total}")
        last = data["last_capturer"]
        if type(last) is not int or last not in (0, 1, 2) or (last == 0) != (sum(captured) == 0):
            raise ValueError("last_capturer must be 1 or 2 once someone has captured, else 0")
        no_return = self._pit_from(data["no_return"], to_move)
        if no_return >= 0 and pits[no_return] != 1:
            raise ValueError("the no-return pit holds the single seed just sown into it")
        history = data["repetition"]
        if not _is_list(history):
            raise ValueError("repetition must be a list")
        keys_seen = tuple(self._key_from_text(text) for text in history)
        numbers = tuple(map(_position, keys_seen))
        if any(sum(self.unpack(key[0])) != sum(pits) for key in keys_seen) and not data["end"]:
            raise ValueError("repetition holds positions with a different number of seeds")
        end = data["end"]
        if end not in (None, NO_CAPTURE, NO_MOVE, REPETITION):
            raise ValueError("end must be null, 'no-capture', 'no-move' or 'repetition'")
        state = ZigZagState(
            self.pack(pits),
            (captured[0], captured[1]),
            to_move,
            no_return,
            last,
            numbers,
            end or "",
        )
        if not end and self._end_of(state):
            raise ValueError("this position ends the game, but end is null")
        return state

    def board(self) -> dict[str, Any]:
        """What a client needs to draw this board: a pit board of two rows, North's
        (uppercase) on top, and no blocks."""
        n = self.columns
        return {
            "renderer": "pits",
            "names": [list(self.names[:n]), list(self.names[n:])],
            "blocks": [],
        }

    def position_key(self, state: ZigZagState) -> bytes:
        """The position as far as the rules care, as bytes (the opening explorer's key):
        board, captures, player to move, the pit they may not lift, the last capturer and
        the end. The earlier positions kept for threefold repetition are left out: they
        depend on the way the game came, and a transposition is the same position."""
        return repr(
            (
                state.board,
                state.captured,
                state.to_move,
                state.no_return,
                state.last_capturer,
                state.end,
            )
        ).encode()

    def render_text(self, state: ZigZagState, names: tuple[str, str] | None = None) -> str:
        """The board as the seed draws it: North's name and captures above, South's below."""
        north_name, south_name = (names[1], names[0]) if names else ("North", "South")
        counts = self.unpack(state.board)
        width = max(4, len(str(max(counts))) + 2)
        south, north = state.captured
        rule = "   +" + ("-" * width + "+") * self.columns
        letters = "".join(f"{letter:>{width}} " for letter in self.names[: self.columns])

        def heading(name: str, count: int) -> str:
            return f"      {name}".ljust(len(rule) - len(f"[{count}]") - 1) + f"[{count}]"

        def pits(row: Sequence[int]) -> str:
            return "   |" + "".join(f"{c:>{width - 1}} |" for c in row)

        n = self.columns
        lines = [
            heading(north_name, north),
            "   " + letters.upper(),
            rule,
            pits(counts[:n]),
            rule,
            pits(counts[n:]),
            rule,
            "   " + letters.lower(),
            heading(south_name, south),
        ]
        return "\n".join(line.rstrip() for line in lines) + "\n"


def _position(key: Key) -> int:
    """A position as one number (history entries: cheap to copy, count and compare)."""
    board, to_move, no_return = key
    return board << 8 | to_move << 6 | (no_return + 1)  # no_return + 1 <= 52 < 64


def _key_of(number: int) -> Key:
    return (number >> 8, number >> 6 & 3, (number & 63) - 1)


def _key(state: ZigZagState) -> Key:
    return (state.board, state.to_move, state.no_return)


def _is_list(value: object) -> TypeGuard[Sequence[Any]]:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0


register(
    GameInfo(
        slug="zigzag",
        name="ZigZag",
        factory=ZigZagRules,
        options=(
            OptionSpec(
                name="pits",
                default=6,
                minimum=2,
                maximum=26,
                constraint="even",
                help=gettext_noop("pits per row: an even number from 2 to 26 (default 6)"),
            ),
            OptionSpec(
                name="seeds",
                default=5,
                minimum=1,
                maximum=49,
                constraint="odd",
                help=gettext_noop(
                    "seeds per pit at the start: an odd number from 1 to 49 (default 5)"
                ),
            ),
        ),
        summary=gettext_noop(
            "Clark D. & Amanda J. L. Rodeffer, 2007: zig-zag sowing with relays and captures."
        ),
    )
)
