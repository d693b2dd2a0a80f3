"""Diffusion Chess: what a side behind in the race plays for (docs/DIFFUSION-CHESS-STRATEGY.md,
sections 1 and 6).

A side whose own turns would run out first if nobody captured again has lost the clean race
(`behind`): waiting loses it, unless the opponent fails a turn of its own. What can still
give the race back is a capture that leaves one of the opponent's stones alone, a group the
opponent did not want. So, while it is behind, the turn planner (chess_turns.py) prefers,
among its clean turns, those that leave such captures open for its next turn (`threats`:
a capture the opponent does not see coming, or two it cannot both parry) and that bring its
small groups near the stones they could take (`approach`). Losing stones costs a side that
is behind little: it loses the race as it is.
"""

from __future__ import annotations

from typing import Any

from bots.search.chess_echoes import echo_captures
from games.rules.chess import INDEX, SIDE, count_groups, group_sizes, groups_of

THREATS = 2.0  # each opposing stone whose capture next turn would leave the opponent a group more
APPROACH = 0.05  # each step nearer, for each stone of a group of three to six
FAR = 12  # steps beyond a stone's reach at which approaching starts to count


def behind(state: Any) -> bool:
    """Whether the mover of `state` (at its turn's start or within it) runs out of turns
    first, were neither side to capture again: each side completes as many turns as groups
    it can still add, and the mover, playing first from here, fails first on a tie."""
    me = state.to_move
    return state.start_groups >= count_groups(state.board, 3 - me)


def captures(rules: Any, state: Any) -> list[str]:
    """The paths by which the side to move in `state` takes an opposing stone now."""
    board, target = state.board, 3 - state.to_move
    return [
        path
        for targets in rules.client_moves(state)["destinations"].values()
        for cell, path in targets.items()
        if board[INDEX[cell]] == target
    ]


def threats(rules: Any, end: Any) -> int:
    """The opposing stones the side whose turn just ended in `end` could take at the start of
    its next turn (were the opponent to pass), by a move or by a move and its echo, so that
    the opponent is left a group more."""
    start = rules.own_next_turn(end)
    them = 3 - start.to_move
    before = count_groups(start.board, them)
    hurt: set[int] = set()
    lines = [([path], INDEX[path.rsplit("-", 1)[-1]]) for path in captures(rules, start)]
    lines += [([route, "echo"], cell) for route, cell in echo_captures(rules, start).items()]
    for moves, taken in lines:
        if taken in hurt:
            continue
        after = start
        for move in moves:
            after = rules.play(after, move)
        if count_groups(after.board, them) > before:
            hurt.add(taken)
    return len(hurt)


def approach(board: tuple[int, ...], me: int, king: int | None = None) -> float:
    """How near `me`'s movable groups are to stones they could take: for each stone of a
    group of three to six (a pair cannot move without splitting), FAR less the steps it
    would still need beyond its reach (a group of s stones walks s - 1 steps and takes
    stones of groups of at least s). The group of the `king`, if given, is left at home: a
    king stranded loses at once."""
    sizes = group_sizes(board)
    them = 3 - me
    targets = [(divmod(c, SIDE), sizes[c]) for c, colour in enumerate(board) if colour == them]
    home: set[int] = set()
    if king is not None:
        home = next((set(group) for group in groups_of(board, me) if king in group), set())
    total = 0.0
    for cell, colour in enumerate(board):
        size = sizes[cell]
        if colour != me or not 3 <= size <= 6 or cell in home:
            continue
        row, file = divmod(cell, SIDE)
        gaps = [
            abs(row - r) + abs(file - f) - (size - 1)
            for (r, f), their_size in targets
            if their_size >= size
        ]
        if gaps:
            total += max(0, FAR - max(0, min(gaps)))
    return total


def attack(rules: Any, end: Any) -> float:
    """What a turn ending in `end` is worth to a side that is behind, beyond its score."""
    me = 3 - end.to_move
    king = end.kings[me - 1]
    return THREATS * threats(rules, end) + APPROACH * approach(end.board, me, king)
