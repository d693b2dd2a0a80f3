"""Diffusion Chess: what a side behind in the race plays for (docs/DIFFUSION-CHESS-STRATEGY.md,
sections 1 and 6).

A side whose own turns would run out first if nobody captured again has lost the clean race
(`behind`): waiting loses it, unless the opponent fails a turn of its own. What can still
give the race back is a capture that leaves one of the opponent's stones alone, a group the
opponent did not want. So, while it is behind, the turn planner (chess_turns.py):

- marches: every partial turn of its beam is scored with its small groups' `nearness` to
  the stones they could take (`MARCH` a step), so that the moves it keeps walk them
  forward, where a preference among finished turns only picks among turns that did not;
- and among its finished clean turns prefers those that leave such captures open for its
  next turn (`threats`) and bring its groups of three to six near (`attack`).

Its judgement of the captures a turn leaves open to the opponent still counts against a
turn, so its stones stop at the edge of what the opponent can take; a capture of its own
is kept by the beam wherever one is found. Losing a stone costs a side that is behind
little: it loses the race as it is.
"""

from __future__ import annotations

from typing import Any

from bots.search.chess_echoes import echo_captures
from games.rules.chess import INDEX, SIDE, count_groups, group_sizes, groups_of

THREATS = 2.0  # each opposing stone whose capture next turn would leave the opponent a group more
APPROACH = 0.05  # at the end of a turn: each step nearer, for each stone of a group of three to six
MARCH = 0.002  # in the beam: each step nearer, for each stone of a group of two to five
FAR = 16  # steps beyond a stone's reach at which coming nearer starts to count


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


def nearness(
    board: tuple[int, ...],
    me: int,
    smallest: int,
    largest: int,
    king: int | None = None,
    far: int = FAR,
) -> float:
    """How near `me`'s groups of `smallest` to `largest` stones are to stones they could
    take: for each of their stones, `far` less the steps it would still need beyond its reach
    (a group of s stones walks s - 1 steps and takes stones of groups of at least s, so a
    stone alone is nobody's target). The group of the `king`, if given, is left at home: a
    king stranded loses at once."""
    sizes = group_sizes(board)
    them = 3 - me
    targets = [
        (cell // SIDE, cell % SIDE, sizes[cell])
        for cell, colour in enumerate(board)
        if colour == them and sizes[cell] >= smallest
    ]
    if not targets:
        return 0.0
    home: set[int] = set()
    if king is not None:
        home = next((set(group) for group in groups_of(board, me) if king in group), set())
    total = 0.0
    for cell, colour in enumerate(board):
        size = sizes[cell]
        if colour != me or not smallest <= size <= largest or cell in home:
            continue
        row, file = divmod(cell, SIDE)
        short = far
        for r, f, their_size in targets:
            if their_size >= size:
                short = min(short, abs(row - r) + abs(file - f) - (size - 1))
        total += far - max(0, short)
    return total


def march(board: tuple[int, ...], me: int, king: int) -> float:
    """The beam's reward for a partial turn of a side behind: its groups of two to five near
    what they could take (a pair cannot walk without splitting, but it is made where a
    bigger group's stone stops, and it takes by a single step)."""
    return MARCH * nearness(board, me, 2, 5, king)


def attack(rules: Any, end: Any) -> float:
    """What a turn ending in `end` is worth to a side that is behind, beyond its score."""
    me = 3 - end.to_move
    king = end.kings[me - 1]
    return THREATS * threats(rules, end) + APPROACH * nearness(end.board, me, 3, 6, king)
