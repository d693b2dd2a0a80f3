"""Diffusion Chess captures made by an echo: a stone's normal move, then the same steps again
from where it stopped, the second walk ending on an opposing stone it may take.

The client's move list (a shortest path to each cell) cannot show these: the echo repeats the
path's steps, so which stone it reaches depends on the route, not only on where the first
move ends. White's first turn has one (docs/DIFFUSION-CHESS-STRATEGY.md, section 6: k3 walks
up the k file and its echo takes k17). Here every route of every stone that could make one
is walked, each route's echo followed at once: the turn planner (chess_turns.py) plays these
as a pair of moves, and counts them among the captures open to the opponent.
"""

from __future__ import annotations

from typing import Any

from games.rules.chess import NAMES, SIDE, STEP

ECHO_ROUTES = 20_000  # routes walked in one search, at most (a large group's are many)


def _distance(a: int, b: int) -> int:
    return abs(a // SIDE - b // SIDE) + abs(a % SIDE - b % SIDE)


def echo_captures(rules: Any, state: Any, routes: int = ECHO_ROUTES) -> dict[str, int]:
    """The mover's normal moves in `state` after which an echo captures: each route (a path
    "k3-k4-...-k11") and the cell its echo takes. Only moves that may be echoed: a stone not
    yet moved this turn, not the king, not a capture, and a move left for the echo after it;
    and not a route whose first move loses (it leaves the mover's own king alone: checked by
    playing the few routes found). A stone too far from every stone it could take is not
    walked at all."""
    if state.moves_left < 2 or state.result:
        return {}
    board, sizes = state.board, state.sizes
    mover = state.to_move
    king = state.kings[mover - 1]
    found: dict[str, int] = {}
    left = [routes]
    for stone, colour in enumerate(board):
        if colour != mover or stone == king or stone in state.moved or sizes[stone] < 2:
            continue
        size = sizes[stone]
        reach = 2 * (size - 1)  # the move and its echo, each at most size - 1 steps
        if not any(
            colour == 3 - mover and sizes[cell] >= size and _distance(stone, cell) <= reach
            for cell, colour in enumerate(board)
        ):
            continue
        _walk(board, sizes, stone, size, found, left)
        if left[0] <= 0:
            break
    return {
        route: target
        for route, target in found.items()
        if rules.outcome(rules.play(state, route)) is None
    }


def _walk(
    board: tuple[int, ...],
    sizes: tuple[int, ...],
    stone: int,
    size: int,
    found: dict[str, int],
    left: list[int],
) -> None:
    """Every route of `stone` over empty cells (at most size - 1 steps), depth first, with
    the echo of each followed."""
    mover = board[stone]
    cells = [stone]
    directions: list[int] = []
    visited = {stone}

    def echo_target(end: int) -> int:
        cell = end
        for direction in directions:
            step = STEP[cell][direction]
            if step < 0:
                return -1
            colour = 0 if step == stone else board[step]  # the stone has left its cell
            if colour == mover:
                return -1
            if colour:
                return step if sizes[step] >= size else -1
            cell = step
        return -1

    def walk() -> None:
        here = cells[-1]
        for direction, step in enumerate(STEP[here]):
            if left[0] <= 0:
                return
            if step < 0 or step in visited or board[step]:
                continue  # the first move's own capture cannot be echoed
            left[0] -= 1
            cells.append(step)
            directions.append(direction)
            visited.add(step)
            target = echo_target(step)
            if target >= 0:
                found.setdefault("-".join(NAMES[cell] for cell in cells), target)
            if len(directions) < size - 1:
                walk()
            visited.remove(step)
            directions.pop()
            cells.pop()

    walk()
