"""A Diffusion Chess move's change to the mover's group count, read off one labelling of the
board: a few microseconds, where playing the move and counting the groups costs a hundred
times more. The turn planner (chess_turns.py) and the endgame reading (chess_endgame.py) keep
only the moves after which a turn can still end with exactly one new group.
"""

from __future__ import annotations

from collections.abc import Iterable

from games.rules.chess import CELLS, INDEX, NEIGHBOURS


def labels(board: tuple[int, ...], colour: int) -> tuple[list[int], list[list[int]]]:
    """Each cell's group number among `colour`'s stones (-1 elsewhere), and the groups."""
    label = [-1] * CELLS
    groups: list[list[int]] = []
    for cell in [i for i, c in enumerate(board) if c == colour]:
        if label[cell] >= 0:
            continue
        number = len(groups)
        group = [cell]
        label[cell] = number
        for member in group:
            for n in NEIGHBOURS[member]:
                if label[n] < 0 and board[n] == colour:
                    label[n] = number
                    group.append(n)
        groups.append(group)
    return label, groups


def group_change(label: list[int], groups: list[list[int]], start: int, end: int) -> int:
    """How many groups the mover gains when its stone on `start` ends on `end` (empty, or an
    opposing stone captured there: a captured stone never touches the mover's groups)."""
    group = groups[label[start]]
    rest = set(group)
    rest.discard(start)
    # The pieces the group falls into without the stone, each named by its first cell.
    piece: dict[int, int] = {}
    for cell in group:
        if cell == start or cell in piece:
            continue
        piece[cell] = cell
        stack = [cell]
        while stack:
            for n in NEIGHBOURS[stack.pop()]:
                if n in rest and n not in piece:
                    piece[n] = cell
                    stack.append(n)
    pieces = len(set(piece.values()))
    joined = set()
    for n in NEIGHBOURS[end]:
        if n == start or label[n] < 0:
            continue
        joined.add(piece[n] if n in piece else -1 - label[n])
    return pieces - len(joined)


def move_ends(move: str) -> tuple[int, int]:
    first, _, rest = move.partition("-")
    return INDEX[first], INDEX[rest.rsplit("-", 1)[-1]]


def clean_moves(board: tuple[int, ...], colour: int, moves: Iterable[str], need: int) -> list[str]:
    """The moves of `moves` (paths, and "echo") after which `colour`'s turn may still end
    with `need` groups: those that do not take the count above it. The echo is always kept:
    where it goes is only known once it is played, and it is one move."""
    label, groups = labels(board, colour)
    have = len(groups)
    return [
        move
        for move in moves
        if move == "echo" or have + group_change(label, groups, *move_ends(move)) <= need
    ]
