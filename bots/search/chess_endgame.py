"""Diffusion Chess's endgame, read out: which of this turn's completions leaves the most of
one's own turns still possible (docs/DIFFUSION-CHESS-STRATEGY.md, section 3).

Late in the game the armies cannot reach each other any more, and what decides it is
whether a side can go on adding exactly one group a turn with the few stones it can still
move, all of which must move (there is no passing). That is a puzzle of one side's turns
alone: this module completes the current turn every way it can (moves: a shortest path to
each cell a stone reaches, and the echo; positions met twice are searched once), and for each
completion that adds exactly one group searches the side's own following turns, as if the
opponent passed (`rules.own_next_turn`), up to the most groups a side can reach (one fewer
than its stones: a king is never alone). It returns the
first move of the completion with the most turns still possible, or None when the position is
not an endgame (more than ENDGAME_STONES stones can still move) or time ran out first.
"""

from __future__ import annotations

import time
from typing import Any

from games.rules.chess import INDEX, count_groups, group_sizes

ENDGAME_STONES = 10  # the mover's stones that can still move, at most


TURN_NODES = 4_000  # moves tried to complete one turn of the reading, at most
BEAM = 4  # partial turns kept a move, at the root


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

    def completions(self, state: Any) -> list[Any]:
        """Ends of the turn begun in `state` that do not lose at once, one per board, found
        within TURN_NODES moves (depth first)."""
        rules, me = self.rules, self.me
        ends: dict[Any, Any] = {}
        seen: set[Any] = set()
        stack = [state]
        nodes = TURN_NODES
        while stack and nodes > 0:
            if time.perf_counter() > self.deadline:
                raise OutOfTime
            position = stack.pop()
            for move in turn_moves(rules, position):
                nodes -= 1
                after = rules.play(position, move)
                if after.result:
                    continue
                if after.to_move != me:
                    ends.setdefault(after.board, after)
                    continue
                key = (after.board, after.moved, after.last, after.last_path)
                if key not in seen:
                    seen.add(key)
                    stack.append(after)
        return list(ends.values())

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


def _root_completions(rules: Any, state: Any, score: Any, deadline: float) -> list[tuple[str, Any]]:
    """The turn's completions a beam search finds (BEAM partial turns kept a move, by
    `score(rules, position)`, the mover's chance), best first: (first move, end)."""
    me = state.to_move
    frontier: list[tuple[str | None, Any]] = [(None, state)]
    ends: dict[Any, tuple[float, str, Any]] = {}
    while frontier:
        following: dict[Any, tuple[float, str, Any]] = {}
        for first, position in frontier:
            if time.perf_counter() > deadline:
                raise OutOfTime
            for move in turn_moves(rules, position):
                after = rules.play(position, move)
                if after.result:
                    continue
                value = score(rules, after)
                entry = (value if me == 1 else 1.0 - value, first or move, after)
                table = ends if after.to_move != me else following
                if after.board not in table or table[after.board][0] < entry[0]:
                    table[after.board] = entry
        ranked = sorted(following.values(), key=lambda entry: -entry[0])[:BEAM]
        frontier = [(first, after) for _, first, after in ranked]
    return [(first, end) for _, first, end in sorted(ends.values(), key=lambda e: -e[0])]


def endgame_move(rules: Any, state: Any, score: Any, deadline: float) -> str | None:
    """The first move of the turn's completion after which the most of the mover's own turns
    can still be completed (then: the fewest captures open to the opponent), in the endgame;
    None outside it, or when the deadline (time.perf_counter()) comes before any answer."""
    me = state.to_move
    if state.result or movable_stones(state.board, me) > ENDGAME_STONES:
        return None
    for move in turn_moves(rules, state):  # a win now comes before any reading
        outcome = rules.outcome(rules.play(state, move))
        if outcome is not None and outcome.winner == me:
            return move
    reader = Reader(rules, me, deadline)
    most = most_groups(state.board, me)
    best: tuple[int, int, str] | None = None
    try:
        ends = _root_completions(rules, state, score, deadline)
        # Completions adding exactly one group first: they are the ones worth reading.
        ends.sort(key=lambda pair: count_groups(pair[1].board, me) != state.start_groups + 1)
        for first, end in ends:
            groups = count_groups(end.board, me)
            later = 0
            if groups == state.start_groups + 1:
                later = reader.turns(rules.own_next_turn(end), most - groups)
            candidate = (1 + later, -_captures_against(rules, end), first)
            if best is None or candidate[:2] > best[:2]:
                best = candidate
            if later >= most - groups and candidate[1] == 0:
                break  # every turn left can be completed, and nothing can be taken
    except OutOfTime:
        pass  # the best completion read to the end so far, if any
    return None if best is None else best[2]


def _captures_against(rules: Any, end: Any) -> int:
    """The opponent's captures at the start of its turn (`end`)."""
    board, target = end.board, 3 - end.to_move
    return sum(
        1
        for targets in rules.client_moves(end)["destinations"].values()
        for cell in targets
        if board[INDEX[cell]] == target
    )
