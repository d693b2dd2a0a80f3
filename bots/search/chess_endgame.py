"""Diffusion Chess's endgame, read out: which of this turn's completions leaves the most of
one's own turns still possible (docs/DIFFUSION-CHESS-STRATEGY.md, section 3).

Late in the game the armies cannot reach each other any more, and what decides it is
whether a side can go on adding exactly one group a turn with the few stones it can still
move, all of which must move (there is no passing). That is a puzzle of one side's turns
alone: this module completes a turn every way it can (moves: a shortest path to each cell a
stone reaches, and the echo; positions met twice are searched once), and for each completion
that adds exactly one group searches the side's own following turns, as if the opponent
passed (`rules.own_next_turn`), up to the most groups a side can reach (one fewer
than its stones: a king is never alone). The turn planner (bots/search/chess_turns.py) reads
this way once at most ENDGAME_STONES of the mover's stones can still move.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from bots.search.chess_groups import clean_moves
from games.rules.chess import count_groups, group_sizes

ENDGAME_STONES = 10  # the mover's stones that can still move, at most
TURN_NODES = 4_000  # moves tried to complete one turn of the reading, at most


class OutOfTime(Exception):
    pass


def turn_moves(rules: Any, state: Any) -> list[str]:
    """A shortest path to each cell each stone reaches, and the echo when it is legal."""
    legal = rules.client_moves(state)
    moves = [path for targets in legal["destinations"].values() for path in targets.values()]
    return moves + (["echo"] if legal["echo"] else [])


def most_groups(board: tuple[int, ...], colour: int) -> int:
    """The most groups `colour` can ever have: every stone alone but the king and one more."""
    return sum(1 for stone in board if stone == colour) - 1


def movable_stones(board: tuple[int, ...], colour: int) -> int:
    sizes = group_sizes(board)
    return sum(1 for cell, stone in enumerate(board) if stone == colour and sizes[cell] > 1)


class Reader:
    """Reads one side's own turns: what it can still complete, within a deadline."""

    def __init__(self, rules: Any, me: int, deadline: float) -> None:
        self.rules = rules
        self.me = me
        self.deadline = deadline
        self.known: dict[tuple[Any, int], int] = {}

    def completions(self, state: Any) -> Iterator[Any]:
        """Ends of the turn begun in `state` that do not lose at once, one per board, as
        they are found within TURN_NODES moves (depth first), among the moves that keep the
        turn clean (chess_groups.py): the turns a reading counts. Found one by one, so that
        a reading that needs only one stops at the first."""
        rules, me = self.rules, self.me
        need = state.start_groups + 1
        ends: set[Any] = set()
        seen: set[Any] = set()
        stack = [state]
        nodes = TURN_NODES
        while stack and nodes > 0:
            if time.perf_counter() > self.deadline:
                raise OutOfTime
            position = stack.pop()
            for move in clean_moves(position.board, me, turn_moves(rules, position), need):
                nodes -= 1
                after = rules.play(position, move)
                if after.result:
                    continue
                if after.to_move != me:
                    if after.board not in ends:
                        ends.add(after.board)
                        yield after
                    continue
                key = (after.board, after.moved, after.last, after.last_path)
                if key not in seen:
                    seen.add(key)
                    stack.append(after)

    def turns(self, state: Any, wanted: int) -> int:
        """How many turns in a row (at most `wanted`) the side can complete from the start of
        its turn `state`, each adding exactly one group (as far as the reading finds)."""
        if wanted <= 0 or self.rules.outcome(state) is not None:
            return 0
        key = (state.board, wanted)
        if key in self.known:
            return self.known[key]
        best = 0
        for end in self.completions(state):
            if count_groups(end.board, self.me) != state.start_groups + 1:
                best = max(best, 1)  # completed, with a turn's worth of groups wasted
                continue
            best = max(best, 1 + self.turns(self.rules.own_next_turn(end), wanted - 1))
            if best >= wanted:
                break
        self.known[key] = best
        return best
