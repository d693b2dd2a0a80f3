"""Alexandre Muñiz's Diffusion Chess (2000): stones walk as far as their group is big.

RULES.md section 4. The board is 19x19, files a-s left to right and rows 1-19 bottom to
top; White (player 1) sits at the bottom. Cells are numbered `row * 19 + file`, so a1 is 0
and s19 is 360. A state keeps, per cell, the colour of the stone on it and the size its
group had at the start of the turn: sizes belong to stones, so they travel with a stone
when it walks or is swapped by a capture.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise
from typing import Any, NamedTuple, TypeGuard

from games.rules.base import (
    GameInfo,
    IllegalMove,
    Message,
    Outcome,
    as_typed,
    gettext_noop,
    register,
)

FILES = "abcdefghijklmnopqrs"
SIDE = len(FILES)
CELLS = SIDE * SIDE
EMPTY, WHITE, BLACK = 0, 1, 2
COLOUR_NAMES = {WHITE: "White", BLACK: "Black"}
JSON_COLOURS = {WHITE: "white", BLACK: "black"}

# The project's setup (RULES.md section 4, Decision): the inventor's diagram is lost, so
# this one stands in. Data only: replace the drawing and nothing else changes.
# O = White's stone, K = White's king, X = Black's stone, k = Black's king.
SETUP = """
19  X X . . X X . . X X X . . X X . . X X
18  X X . . X X . . X k X . . X X . . X X
17  . . . . . . . . X X X . . . . . . . .
16  . . . . . . . . . . . . . . . . . . .
15  . . X X . . X X . . . X X . . X X . .
14  . . X X . . X X . . . X X . . X X . .
13  . . . . . . . . . . . . . . . . . . .
12  . . . . . . . . . . . . . . . . . . .
11  . . . . . . . . . . . . . . . . . . .
10  . . . . . . . . . . . . . . . . . . .
 9  . . . . . . . . . . . . . . . . . . .
 8  . . . . . . . . . . . . . . . . . . .
 7  . . . . . . . . . . . . . . . . . . .
 6  . . O O . . O O . . . O O . . O O . .
 5  . . O O . . O O . . . O O . . O O . .
 4  . . . . . . . . . . . . . . . . . . .
 3  . . . . . . . . O O O . . . . . . . .
 2  O O . . O O . . O K O . . O O . . O O
 1  O O . . O O . . O O O . . O O . . O O
"""
SYMBOLS = {".": (EMPTY, False), "O": (WHITE, False), "K": (WHITE, True)}
SYMBOLS |= {"X": (BLACK, False), "k": (BLACK, True)}

NAMES: tuple[str, ...] = tuple(f"{FILES[c]}{r + 1}" for r in range(SIDE) for c in range(SIDE))
INDEX: dict[str, int] = {name: cell for cell, name in enumerate(NAMES)}
# Directions N, E, S, W as (row, file) offsets; echoes replay them by number.
DELTAS = ((1, 0), (0, 1), (-1, 0), (0, -1))
# STEP[cell][direction]: the cell one step away, or -1 off the board.
STEP: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        (r + dr) * SIDE + c + dc if 0 <= r + dr < SIDE and 0 <= c + dc < SIDE else -1
        for dr, dc in DELTAS
    )
    for r, c in (divmod(cell, SIDE) for cell in range(CELLS))
)
NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(tuple(n for n in steps if n >= 0) for steps in STEP)
# DIRECTION[(a, b)]: the direction of the step from cell a to its neighbour b.
DIRECTION: dict[tuple[int, int], int] = {
    (cell, n): d for cell in range(CELLS) for d, n in enumerate(STEP[cell]) if n >= 0
}

# What the last move of the turn was: it decides whether an echo may follow.
NONE, NORMAL, CAPTURE, KING, ECHO = range(5)

# Results, kept in the state because the group rule cannot be read off the board.
ONGOING, WHITE_KING, BLACK_KING, BOTH_KINGS, NO_NEW_GROUP, NO_MOVE = range(6)
RESULT_NAMES = {
    WHITE_KING: "white-king-stranded",
    BLACK_KING: "black-king-stranded",
    BOTH_KINGS: "both-kings-stranded",
    NO_NEW_GROUP: "no-new-group",
    NO_MOVE: "no-legal-move",
}
RESULT_CODES = {name: code for code, name in RESULT_NAMES.items()}
# (White's king stranded, Black's king stranded) -> the result.
STRANDED = {(True, True): BOTH_KINGS, (True, False): WHITE_KING, (False, True): BLACK_KING}
# Why a game ended, by the side to move then (whole sentences, for translators).
WHITE_STRANDED = gettext_noop("White's king is stranded")
BLACK_STRANDED = gettext_noop("Black's king is stranded")
BOTH_STRANDED = gettext_noop("both kings are stranded")
NO_NEW_GROUP_REASONS = {
    WHITE: gettext_noop("White made no new group this turn"),
    BLACK: gettext_noop("Black made no new group this turn"),
}
NO_MOVE_REASONS = {
    WHITE: gettext_noop("White has no legal move at the start of the turn"),
    BLACK: gettext_noop("Black has no legal move at the start of the turn"),
}
# Why no echo is legal now (see _echo_error).
_ECHO_FIRST = Message(gettext_noop("an echo may only follow a normal move of this turn"))
_ECHO_AFTER_CAPTURE = Message(
    gettext_noop("an echo may only follow a normal move without a capture")
)
_ECHO_AFTER_KING = Message(gettext_noop("an echo may not follow a move of the king"))
_ECHO_AFTER_ECHO = Message(gettext_noop("an echo cannot follow an echo"))
_OFF_THE_BOARD = Message(gettext_noop("the next step would leave the board"))
STATE_KEYS = frozenset(
    {
        "white",
        "black",
        "kings",
        "to_move",
        "turn",
        "moves_left",
        "moved",
        "sizes",
        "start_groups",
        "last_move",
        "result",
    }
)
MOVES_PER_TURN = 5
FIRST_TURN_MOVES = 4  # White's first turn only
MAX_PATH = CELLS  # no path can be longer; longer text is refused before it is looked at


def _parse_setup(text: str) -> tuple[tuple[int, ...], tuple[int, int]]:
    """The board and the kings (white, black) drawn in `text`, rows 19 to 1."""
    lines = [line.split() for line in text.strip().splitlines()]
    if [line[0] for line in lines] != [str(row) for row in range(SIDE, 0, -1)]:
        raise ValueError("the setup must draw rows 19 down to 1, labelled")
    board = [EMPTY] * CELLS
    kings: dict[int, list[int]] = {WHITE: [], BLACK: []}
    for line in lines:
        row = int(line[0]) - 1
        if len(line) != SIDE + 1 or any(symbol not in SYMBOLS for symbol in line[1:]):
            raise ValueError(f"setup row {row + 1} needs {SIDE} cells drawn with . O K X k")
        for file, symbol in enumerate(line[1:]):
            colour, king = SYMBOLS[symbol]
            board[row * SIDE + file] = colour
            if king:
                kings[colour].append(row * SIDE + file)
    if len(kings[WHITE]) != 1 or len(kings[BLACK]) != 1:
        raise ValueError("the setup needs one king of each colour")
    return tuple(board), (kings[WHITE][0], kings[BLACK][0])


def group_sizes(board: Sequence[int]) -> list[int]:
    """For every cell, the size of the group its stone is in (0 for an empty cell)."""
    sizes = [0] * CELLS
    for cell, colour in enumerate(board):
        if not colour or sizes[cell]:
            continue
        group = [cell]
        sizes[cell] = -1  # seen; the size is filled in when the group is complete
        for member in group:  # the list grows while it is walked: a breadth-first fill
            for n in NEIGHBOURS[member]:
                if board[n] == colour and not sizes[n]:
                    sizes[n] = -1
                    group.append(n)
        size = len(group)
        for member in group:
            sizes[member] = size
    return sizes


def groups_of(board: Sequence[int], colour: int) -> list[list[int]]:
    """The groups the stones of `colour` form, each its cells in ascending order."""
    seen: set[int] = set()
    groups = []
    for cell, value in enumerate(board):
        if value != colour or cell in seen:
            continue
        seen.add(cell)
        members = [cell]
        stack = [cell]
        while stack:
            for n in NEIGHBOURS[stack.pop()]:
                if board[n] == colour and n not in seen:
                    seen.add(n)
                    stack.append(n)
                    members.append(n)
        groups.append(sorted(members))
    return groups


def count_groups(board: Sequence[int], colour: int) -> int:
    """How many groups the stones of `colour` form."""
    return len(groups_of(board, colour))


def _stranded(board: Sequence[int], king: int) -> bool:
    """A king is stranded when no stone of its colour touches it: its group is itself."""
    colour = board[king]
    return all(board[n] != colour for n in NEIGHBOURS[king])


class ChessState(NamedTuple):
    """Immutable and hashable. Indexed by cell: `board` colours, `sizes` turn-start sizes.

    `moved`: the mover's stones (by cell) that have moved this turn. `last`/`last_path`:
    the kind of the turn's previous move and, when it was a normal move, its cells (the
    echo repeats its directions). `result` is ONGOING until the game ends.
    """

    board: tuple[int, ...]
    sizes: tuple[int, ...]
    kings: tuple[int, int]  # (White's king, Black's king)
    to_move: int
    turn: int
    moves_left: int
    moved: frozenset[int]
    start_groups: int
    last: int = NONE
    last_path: tuple[int, ...] = ()
    result: int = ONGOING


def _turn_moves(turn: int) -> int:
    return FIRST_TURN_MOVES if turn == 1 else MOVES_PER_TURN


def _is_list(value: object) -> TypeGuard[Sequence[Any]]:
    # JSON arrays arrive as lists; tuples are accepted, text (also a Sequence) is not.
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _is_int(value: object) -> TypeGuard[int]:
    return type(value) is int  # bool is an int subclass: refused


def _too_small(target: int, size: int) -> Message:
    return Message(
        gettext_noop("cannot capture: target group (%(target)s) is smaller than yours (%(size)s)"),
        target=target,
        size=size,
    )


def _own_stone(cell: int) -> Message:
    return Message(gettext_noop("%(cell)s is occupied by your own stone"), cell=NAMES[cell])


def _refused(why: Message) -> IllegalMove:
    return IllegalMove(why.template, **why.params)


class DiffusionChessRules:
    """The rules of Diffusion Chess; build it through get_rules("diffusion-chess")."""

    slug = "diffusion-chess"

    def __init__(self, setup: str = SETUP) -> None:
        board, kings = _parse_setup(setup)
        self._initial = self._start_turn(board, group_sizes(board), kings, WHITE, 1)
        if self._initial.result:
            raise ValueError("the setup leaves White without a move")
        if any(_stranded(board, king) for king in kings):
            raise ValueError("a king of the setup is stranded")

    # --- the engine API -----------------------------------------------------------------------

    def initial_state(self) -> ChessState:
        """The setup, White to move with the four moves of the first turn."""
        return self._initial

    def to_move(self, state: ChessState) -> int:
        """1 (White) or 2 (Black); once the game is over, the player whose turn it was."""
        return state.to_move

    def outcome(self, state: ChessState) -> Outcome | None:
        """None while the game goes on; else the winner (None for a draw) and why."""
        result = state.result
        if not result:
            return None
        if result == WHITE_KING:
            return Outcome(BLACK, WHITE_STRANDED)
        if result == BLACK_KING:
            return Outcome(WHITE, BLACK_STRANDED)
        if result == BOTH_KINGS:
            return Outcome(None, BOTH_STRANDED)
        if result == NO_NEW_GROUP:
            return Outcome(3 - state.to_move, NO_NEW_GROUP_REASONS[state.to_move])
        return Outcome(3 - state.to_move, NO_MOVE_REASONS[state.to_move])

    def legal_moves(self, state: ChessState) -> Iterator[str]:
        """Every legal move: all paths of every stone that may move, then "echo" if legal.

        A generator: a big group's stone has many thousands of paths, so callers that
        need one move use random_move() and the client uses client_moves().
        """
        if state.result:
            return
        for stone in self._movable(state):
            yield from self._paths(state, stone)
        if self._echo_error(state) is None:
            yield "echo"

    def play(self, state: ChessState, move: str) -> ChessState:
        """The state after `move` (a path "j3-j4-k4" or "echo"); IllegalMove says why not."""
        if state.result:
            raise IllegalMove(gettext_noop("the game is over"))
        parsed = self._parse(move)
        if parsed is None:
            return self._play_echo(state)
        return self._play_path(state, parsed)

    def is_legal(self, state: ChessState, move: str) -> bool:
        """Whether play() would accept `move` here."""
        try:
            if state.result:
                return False
            parsed = self._parse(move)
            if parsed is None:
                return self._echo_error(state) is None
            self._check_path(state, parsed)
        except IllegalMove:
            return False
        return True

    def canonical_move(self, state: ChessState, move: str) -> str:
        """How `move` is written down: "j3-j4" for " J3-j4 ", "echo"; IllegalMove if malformed."""
        parsed = self._parse(move)
        return "echo" if parsed is None else "-".join(NAMES[cell] for cell in parsed)

    # --- what the client and the bots need ---------------------------------------------------

    def client_moves(self, state: ChessState) -> dict[str, Any]:
        """Where each stone of the mover may go, with one shortest path there, and the echo.

        {"destinations": {"j3": {"j4": "j3-j4", "k4": "j3-j4-k4", ...}, ...}, "echo": bool,
         "groups": {"at_turn_start": n, "now": m, "needed": n + 1, "members": [[cells]]} |
         None}: the mover's groups (and the stones of each now), so a client can show the
        rule that a turn must make a new group.
        Stones without a destination are left out; a capture's path is one of the shortest.
        """
        if state.result:
            return {"destinations": {}, "echo": False, "groups": None}
        destinations = {}
        for stone in self._movable(state):
            paths = self._shortest_paths(state, stone)
            if paths:
                destinations[NAMES[stone]] = {NAMES[cell]: path for cell, path in paths.items()}
        members = groups_of(state.board, state.to_move)
        groups = {
            "at_turn_start": state.start_groups,
            "now": len(members),
            "needed": state.start_groups + 1,
            "members": [sorted(NAMES[cell] for cell in group) for group in members],
        }
        return {
            "destinations": destinations,
            "echo": self._echo_error(state) is None,
            "groups": groups,
        }

    def own_next_turn(self, state: ChessState) -> ChessState:
        """For a search of one side's turns alone (the computer's endgame): the start of the
        next turn of the side whose turn just ended in `state` (the opponent to move, its
        turn not begun), as if the opponent's turn were skipped. Not a move of the game: the
        rules have no passing."""
        if state.result or state.moved:
            raise IllegalMove(gettext_noop("only the start of a turn can be skipped"))
        return self._start_turn(
            state.board, group_sizes(state.board), state.kings, 3 - state.to_move, state.turn + 1
        )

    def random_move(self, state: ChessState, rng: random.Random) -> str:
        """A random legal move, found without listing every path.

        A stone that can move is picked uniformly (the echo, when legal, is one more
        choice); then, half of the time, a random destination reached by a shortest path,
        otherwise a random self-avoiding walk, so long and winding paths are played too.
        """
        if state.result:
            raise IllegalMove(gettext_noop("the game is over"))
        stones = [stone for stone in self._movable(state) if self._first_step_ok(state, stone)]
        echo = self._echo_error(state) is None
        pick = rng.randrange(len(stones) + echo)
        if pick == len(stones):
            return "echo"
        stone = stones[pick]
        if rng.random() < 0.5:
            paths = self._shortest_paths(state, stone)
            return paths[rng.choice(sorted(paths))]
        board, sizes = state.board, state.sizes
        size = sizes[stone]
        opponent = 3 - state.to_move
        path = [stone]
        visited = {stone}
        cell = stone
        for _ in range(rng.randint(1, size - 1)):
            choices = [
                n
                for n in NEIGHBOURS[cell]
                if n not in visited
                and (not board[n] or (board[n] == opponent and sizes[n] >= size))
            ]
            if not choices:
                break
            cell = rng.choice(choices)
            path.append(cell)
            if board[cell]:
                break  # a capture ends the move
            visited.add(cell)
        return "-".join(NAMES[c] for c in path)

    # --- moves ---------------------------------------------------------------------------------

    def _parse(self, move: object) -> tuple[int, ...] | None:
        """The cells of a path, or None for the echo; IllegalMove if it is not well formed."""
        if not isinstance(move, str):
            raise IllegalMove(
                gettext_noop("a move is a path such as j3-j4 or the word echo, not %(kind)s"),
                kind=type(move).__name__,
            )
        text = move.strip().lower()
        if text == "echo":
            return None
        if not text:
            raise IllegalMove(gettext_noop("no move given: write a path such as j3-j4, or echo"))
        parts = text.split("-", MAX_PATH)
        if len(parts) > MAX_PATH:
            raise IllegalMove(gettext_noop("a path visits at most %(cells)s cells"), cells=CELLS)
        cells = []
        for part in parts:
            cell = INDEX.get(part.strip())
            if cell is None:
                raise IllegalMove(gettext_noop("no such cell: %(cell)s"), cell=as_typed(part))
            cells.append(cell)
        if len(cells) < 2:
            raise IllegalMove(gettext_noop("a path must have at least one step"))
        seen = {cells[0]}
        for a, b in pairwise(cells):
            if (a, b) not in DIRECTION:
                raise IllegalMove(
                    gettext_noop("steps must be orthogonal and one cell long: %(a)s to %(b)s"),
                    a=NAMES[a],
                    b=NAMES[b],
                )
            if b in seen:
                raise IllegalMove(gettext_noop("the path visits %(cell)s twice"), cell=NAMES[b])
            seen.add(b)
        return tuple(cells)

    def _check_path(self, state: ChessState, cells: tuple[int, ...]) -> bool:
        """Raise IllegalMove unless the normal move along `cells` is legal; True if it captures."""
        board, sizes = state.board, state.sizes
        mover = state.to_move
        start = cells[0]
        if board[start] != mover:
            if board[start]:
                raise IllegalMove(
                    gettext_noop("%(cell)s holds your opponent's stone"), cell=NAMES[start]
                )
            raise IllegalMove(gettext_noop("there is no stone on %(cell)s"), cell=NAMES[start])
        if start in state.moved:
            raise IllegalMove(gettext_noop("that stone has already moved this turn"))
        size = sizes[start]
        if size < 2:
            raise IllegalMove(
                gettext_noop(
                    "that stone is stranded: its group had one stone at the start of the turn"
                )
            )
        if len(cells) > size:
            limit = size - 1
            if limit > 1:
                raise IllegalMove(
                    gettext_noop("that stone may move at most %(limit)s steps"), limit=limit
                )
            raise IllegalMove(gettext_noop("that stone may move at most %(limit)s step"), limit=1)
        for cell in cells[1:-1]:
            if board[cell] == mover:
                raise _refused(_own_stone(cell))
            if board[cell]:
                raise IllegalMove(
                    gettext_noop(
                        "%(cell)s is occupied by an opponent's stone: only the last step may "
                        "capture"
                    ),
                    cell=NAMES[cell],
                )
        target = cells[-1]
        if board[target] == mover:
            raise _refused(_own_stone(target))
        if board[target]:
            if sizes[target] < size:
                raise _refused(_too_small(sizes[target], size))
            return True
        return False

    def _play_path(self, state: ChessState, cells: tuple[int, ...]) -> ChessState:
        capture = self._check_path(state, cells)
        start, end = cells[0], cells[-1]
        if capture:
            last = CAPTURE
        elif start == state.kings[state.to_move - 1]:
            last = KING
        else:
            last = NORMAL
        return self._move(state, start, end, cells[-2], capture, last, cells)

    def _echo_walk(self, state: ChessState) -> tuple[int, int, bool, Message | None]:
        """Where the echo goes: (end, the cell before it, captures?, why it stopped early).

        `end` is the stone's own cell when the echo cannot make a single step.
        """
        board, sizes = state.board, state.sizes
        path = state.last_path
        stone = path[-1]
        size = sizes[stone]
        mover = state.to_move
        cell = stone
        for a, b in pairwise(path):
            n = STEP[cell][DIRECTION[a, b]]
            if n < 0:
                return cell, cell, False, _OFF_THE_BOARD
            if board[n] == mover:
                return cell, cell, False, _own_stone(n)
            if board[n]:
                if sizes[n] < size:
                    return cell, cell, False, _too_small(sizes[n], size)
                return n, cell, True, None
            cell = n
        return cell, cell, False, None

    def _echo_error(self, state: ChessState) -> Message | None:
        """Why no echo is legal now, or None when it is."""
        last = state.last
        if last == NONE:
            return _ECHO_FIRST
        if last == CAPTURE:
            return _ECHO_AFTER_CAPTURE
        if last == KING:
            return _ECHO_AFTER_KING
        if last == ECHO:
            return _ECHO_AFTER_ECHO
        end, _, _, why = self._echo_walk(state)
        if end == state.last_path[-1]:
            return Message(
                gettext_noop("the echo cannot make a single step: %(why)s"), why=why or ""
            )
        return None

    def _play_echo(self, state: ChessState) -> ChessState:
        error = self._echo_error(state)
        if error is not None:
            raise _refused(error)
        end, before, capture, _ = self._echo_walk(state)
        return self._move(state, state.last_path[-1], end, before, capture, ECHO, ())

    def _move(
        self,
        state: ChessState,
        start: int,
        end: int,
        before: int,
        capture: bool,
        last: int,
        path: tuple[int, ...],
    ) -> ChessState:
        """Move the stone on `start` to `end`; a captured stone there goes to `before`."""
        mover = state.to_move
        opponent = 3 - mover
        board = list(state.board)
        sizes = list(state.sizes)
        kings = list(state.kings)
        size = sizes[start]
        board[start] = EMPTY
        sizes[start] = 0
        if capture:
            # The captured stone, its turn-start size and maybe its crown go to `before`.
            board[before] = opponent
            sizes[before] = state.sizes[end]
            if kings[opponent - 1] == end:
                kings[opponent - 1] = before
        board[end] = mover
        sizes[end] = size
        if kings[mover - 1] == start:
            kings[mover - 1] = end
        moved = (state.moved - {start}) | {end}
        after = ChessState(
            tuple(board),
            tuple(sizes),
            (kings[0], kings[1]),
            mover,
            state.turn,
            state.moves_left - 1,
            moved,
            state.start_groups,
            last,
            path,
        )
        # After every move: a stranded king loses, both stranded is a draw.
        alone = (_stranded(board, kings[0]), _stranded(board, kings[1]))
        if alone in STRANDED:
            return after._replace(result=STRANDED[alone])
        if after.moves_left and self._can_move(after):
            return after
        # The end of the turn (Decision: early when no legal move remains).
        if count_groups(board, mover) < state.start_groups + 1:
            return after._replace(result=NO_NEW_GROUP)
        return self._start_turn(
            after.board, group_sizes(board), after.kings, opponent, state.turn + 1
        )

    def _start_turn(
        self,
        board: tuple[int, ...],
        sizes: Sequence[int],
        kings: tuple[int, int],
        mover: int,
        turn: int,
    ) -> ChessState:
        state = ChessState(
            board,
            tuple(sizes),
            kings,
            mover,
            turn,
            _turn_moves(turn),
            frozenset(),
            count_groups(board, mover),
        )
        if not self._can_move(state):
            # Decision (RULES.md): no legal move at the start of a turn loses at once.
            return state._replace(result=NO_MOVE)
        return state

    def _movable(self, state: ChessState) -> list[int]:
        """The mover's stones that may still make a normal move: unmoved, not stranded."""
        mover, sizes, moved = state.to_move, state.sizes, state.moved
        return [
            cell
            for cell, colour in enumerate(state.board)
            if colour == mover and sizes[cell] > 1 and cell not in moved
        ]

    def _first_step_ok(self, state: ChessState, stone: int) -> bool:
        board, sizes = state.board, state.sizes
        size = sizes[stone]
        opponent = 3 - state.to_move
        return any(
            not board[n] or (board[n] == opponent and sizes[n] >= size) for n in NEIGHBOURS[stone]
        )

    def _can_move(self, state: ChessState) -> bool:
        """Whether the mover has any legal move: one legal step of a stone, or the echo."""
        if any(self._first_step_ok(state, stone) for stone in self._movable(state)):
            return True
        return self._echo_error(state) is None

    def _paths(self, state: ChessState, stone: int) -> Iterator[str]:
        """Every legal path of `stone`, depth first."""
        board, sizes = state.board, state.sizes
        size = sizes[stone]
        limit = size - 1
        opponent = 3 - state.to_move
        visited = {stone}

        def walk(cell: int, prefix: str, steps: int) -> Iterator[str]:
            for n in NEIGHBOURS[cell]:
                if n in visited:
                    continue
                colour = board[n]
                if not colour:
                    text = f"{prefix}-{NAMES[n]}"
                    yield text
                    if steps + 1 < limit:
                        visited.add(n)
                        yield from walk(n, text, steps + 1)
                        visited.remove(n)
                elif colour == opponent and sizes[n] >= size:
                    yield f"{prefix}-{NAMES[n]}"

        yield from walk(stone, NAMES[stone], 0)

    def _shortest_paths(self, state: ChessState, stone: int) -> dict[int, str]:
        """Every cell `stone` can reach, with one shortest path to it (breadth first).

        A shortest path never visits a cell twice, so it is legal whenever it is short
        enough; a capture target is entered from the first cell found next to it.
        """
        board, sizes = state.board, state.sizes
        size = sizes[stone]
        opponent = 3 - state.to_move
        paths = {stone: NAMES[stone]}
        found: dict[int, str] = {}
        frontier = [stone]
        for _ in range(size - 1):
            following = []
            for cell in frontier:
                prefix = paths[cell]
                for n in NEIGHBOURS[cell]:
                    if n in paths or n in found:
                        continue
                    colour = board[n]
                    if not colour:
                        paths[n] = found[n] = f"{prefix}-{NAMES[n]}"
                        following.append(n)
                    elif colour == opponent and sizes[n] >= size:
                        found[n] = f"{prefix}-{NAMES[n]}"
            if not following:
                break
            frontier = following
        return found

    # --- JSON and text --------------------------------------------------------------------------

    def to_json(self, state: ChessState) -> dict[str, Any]:
        """Plain JSON; cell lists are sorted as strings, `sizes` maps every stone's cell."""
        board = state.board
        white = sorted(NAMES[c] for c, colour in enumerate(board) if colour == WHITE)
        black = sorted(NAMES[c] for c, colour in enumerate(board) if colour == BLACK)
        last: str | None = None
        if state.last == ECHO:
            last = "echo"
        elif state.last != NONE:
            last = "-".join(NAMES[c] for c in state.last_path)
        return {
            "white": white,
            "black": black,
            "kings": {"white": NAMES[state.kings[0]], "black": NAMES[state.kings[1]]},
            "to_move": state.to_move,
            "turn": state.turn,
            "moves_left": state.moves_left,
            "moved": sorted(NAMES[c] for c in state.moved),
            "sizes": {name: state.sizes[INDEX[name]] for name in sorted(white + black)},
            "start_groups": state.start_groups,
            "last_move": last,
            "result": RESULT_NAMES.get(state.result),
        }

    def from_json(self, data: Mapping[str, Any]) -> ChessState:
        """A state from its JSON; ValueError when it does not describe a reachable position.

        Decision: the number of stones is not checked (play never changes it), so composed
        positions with fewer stones load; everything else that play keeps true is.
        """
        if not isinstance(data, Mapping):
            raise ValueError("a state is a JSON object")
        keys = set(data)
        if keys != STATE_KEYS:
            missing = sorted(STATE_KEYS - keys)
            if missing:
                raise ValueError(f"a {self.slug} state needs {', '.join(missing)}")
            extra = sorted(map(str, keys - STATE_KEYS))
            raise ValueError(f"unexpected keys in a {self.slug} state: {', '.join(extra)}")
        board = [EMPTY] * CELLS
        for colour in (WHITE, BLACK):
            what = JSON_COLOURS[colour]
            cells = _cell_list(data[what], what)
            if not cells:
                raise ValueError(f"{what} has no stones")
            for cell in cells:
                if board[cell]:
                    raise ValueError(f"{NAMES[cell]} is both white and black")
                board[cell] = colour
        kings_data = data["kings"]
        if not isinstance(kings_data, Mapping) or set(kings_data) != {"white", "black"}:
            raise ValueError('kings must be {"white": cell, "black": cell}')
        kings = (
            _cell(kings_data["white"], "white's king"),
            _cell(kings_data["black"], "black's king"),
        )
        for colour, king in zip((WHITE, BLACK), kings, strict=True):
            if board[king] != colour:
                raise ValueError(
                    f"{JSON_COLOURS[colour]}'s king on {NAMES[king]} is not one of its stones"
                )
        turn, to_move, moves_left = data["turn"], data["to_move"], data["moves_left"]
        if not _is_int(turn) or turn < 1:
            raise ValueError("turn must be a whole number, at least 1")
        if not _is_int(to_move) or to_move != 2 - turn % 2:
            raise ValueError("to_move must be 1 on odd turns (White's) and 2 on even turns")
        full = _turn_moves(turn)
        if not _is_int(moves_left) or not 0 <= moves_left <= full:
            raise ValueError(f"moves_left must be a whole number from 0 to {full} on turn {turn}")
        moved = _cell_list(data["moved"], "moved")
        sizes_data = data["sizes"]
        stones = {NAMES[c] for c in range(CELLS) if board[c]}
        if not isinstance(sizes_data, Mapping) or set(sizes_data) != stones:
            raise ValueError("sizes must map the cell of every stone to its turn-start group size")
        counts = {colour: board.count(colour) for colour in (WHITE, BLACK)}
        sizes = [0] * CELLS
        for name, size in sizes_data.items():
            cell = INDEX[name]
            if not _is_int(size) or not 1 <= size <= counts[board[cell]]:
                raise ValueError(
                    f"the size of {name}'s group must be from 1 to {counts[board[cell]]}"
                )
            sizes[cell] = size
        start_groups = data["start_groups"]
        if not _is_int(start_groups) or not 1 <= start_groups <= counts[to_move]:
            raise ValueError(f"start_groups must be from 1 to {counts[to_move]}")
        result_name = data["result"]
        if result_name is not None and (
            not isinstance(result_name, str) or result_name not in RESULT_CODES
        ):
            raise ValueError(f"result must be null or one of {', '.join(RESULT_CODES)}")
        result = RESULT_CODES[result_name] if result_name is not None else ONGOING
        made = full - moves_left
        for cell in moved:
            if board[cell] != to_move or sizes[cell] < 2:
                raise ValueError(f"{NAMES[cell]} cannot have moved this turn")
        # Each stone moved makes one normal move, and maybe its echo: made/2 <= moved <= made.
        if not made / 2 <= len(moved) <= made:
            raise ValueError(f"{len(moved)} stones cannot have made {made} moves this turn")
        last, path = self._last_from_json(
            data["last_move"], board, sizes, kings, to_move, set(moved)
        )
        if made == 0:
            if moved or last != NONE:
                raise ValueError("no move has been made this turn")
            if sizes != group_sizes(board):
                raise ValueError("at the start of a turn, sizes must be the groups' sizes")
            if start_groups != count_groups(board, to_move):
                raise ValueError(
                    "at the start of a turn, start_groups must count the mover's groups"
                )
        elif not moved or last == NONE or (last == ECHO and made < 2):
            raise ValueError(f"{made} moves made this turn do not fit moved and last_move")
        state = ChessState(
            tuple(board),
            tuple(sizes),
            kings,
            to_move,
            turn,
            moves_left,
            frozenset(moved),
            start_groups,
            last,
            path,
            result,
        )
        self._check_result(state, made)
        return state

    def _last_from_json(
        self,
        value: object,
        board: list[int],
        sizes: list[int],
        kings: tuple[int, int],
        mover: int,
        moved: set[int],
    ) -> tuple[int, tuple[int, ...]]:
        if value is None:
            return NONE, ()
        if value == "echo":
            return ECHO, ()
        if not isinstance(value, str):
            raise ValueError('last_move must be null, "echo" or a path')
        try:
            path = self._parse(value)
        except IllegalMove as error:
            raise ValueError(f"last_move: {error}") from None
        if path is None or "-".join(NAMES[c] for c in path) != value:
            raise ValueError("last_move must be written canonically")
        end = path[-1]
        if end not in moved or len(path) > sizes[end]:
            raise ValueError(f"last_move {value} does not end on a stone that made it")
        capture = board[path[-2]] == 3 - mover
        if any(board[c] for c in path[: -2 if capture else -1]):
            raise ValueError(f"the path of last_move {value} is not empty")
        if capture:
            return CAPTURE, path
        return (KING if end == kings[mover - 1] else NORMAL), path

    def _check_result(self, state: ChessState, made: int) -> None:
        board = state.board
        alone = (_stranded(board, state.kings[0]), _stranded(board, state.kings[1]))
        result = state.result
        if alone in STRANDED or result in STRANDED.values():
            # The king rule is applied after every move, so it was applied to this one.
            if made == 0 or STRANDED.get(alone) != result:
                raise ValueError("result does not match the stranded kings")
            return
        can_move = self._can_move(state)
        if result == ONGOING:
            if not state.moves_left or not can_move:
                raise ValueError("the turn is over, so this state cannot be the mover's to play")
        elif result == NO_MOVE:
            if made or can_move:
                raise ValueError(
                    "no-legal-move: the mover must be at the start of a turn without a move"
                )
        elif (
            made == 0
            or (state.moves_left and can_move)
            or count_groups(board, state.to_move) > state.start_groups
        ):
            raise ValueError("no-new-group: the turn must be over without a new group")

    def board(self) -> dict[str, Any]:
        """What a client needs to draw this board: a square grid, its files (a, b, ...),
        ranks counted from 1 at White's side, and the steps a path is made of (file, rank)."""
        steps = [[0, 1], [1, 0], [0, -1], [-1, 0]]
        return {"renderer": "grid", "files": FILES[:SIDE], "size": SIDE, "steps": steps}

    def position_key(self, state: ChessState) -> bytes:
        """The position as far as the rules care, as bytes (the opening explorer's key).
        The turn's number matters only as "the first turn or a later one" (the first has
        FIRST_TURN_MOVES moves): two positions alike but for it are the same position."""
        return repr(
            (
                state.board,
                state.sizes,
                state.kings,
                state.to_move,
                min(state.turn, 2),
                state.moves_left,
                tuple(sorted(state.moved)),
                state.start_groups,
                state.last,
                state.last_path,
                state.result,
            )
        ).encode()

    def render_text(self, state: ChessState) -> str:
        """The board (O White, X Black, K and k their kings), then the turn and who moves."""
        letters = "    " + " ".join(FILES)
        kings = dict(zip(state.kings, "Kk", strict=True))
        lines = [letters]
        for row in range(SIDE - 1, -1, -1):
            cells = []
            for cell in range(row * SIDE, row * SIDE + SIDE):
                colour = state.board[cell]
                cells.append(kings.get(cell) or ".OX"[colour])
            lines.append(f"{row + 1:>2}  {' '.join(cells)}  {row + 1}")
        lines.append(letters)
        mover = COLOUR_NAMES[state.to_move]
        outcome = self.outcome(state)
        if outcome is None:
            left = state.moves_left
            lines.append(f"Turn {state.turn}: {mover} to move, {left} move{'s' * (left != 1)} left")
        elif outcome.winner is None:
            lines.append(f"Turn {state.turn}: a draw: {outcome.reason}")
        else:
            lines.append(
                f"Turn {state.turn}: {COLOUR_NAMES[outcome.winner]} wins: {outcome.reason}"
            )
        return "\n".join(lines) + "\n"


def _cell(value: object, what: str) -> int:
    cell = INDEX.get(value) if isinstance(value, str) else None
    if cell is None:
        raise ValueError(f"{what} must be a cell such as j2, not {value!r:.20}")
    return cell


def _cell_list(value: object, what: str) -> list[int]:
    if not _is_list(value) or not all(isinstance(name, str) for name in value):
        raise ValueError(f"{what} must be a list of cells")
    if list(value) != sorted(set(value)):
        raise ValueError(f"{what} must be sorted as strings, each cell once")
    return [_cell(name, what) for name in value]


register(
    GameInfo(
        slug="diffusion-chess",
        name="Diffusion Chess",
        factory=DiffusionChessRules,
        summary=gettext_noop(
            "Alexandre Muñiz, 2000: 19x19, stones walk one step less than their group's size; "
            "split into more groups every turn and keep your king company."
        ),
    )
)
