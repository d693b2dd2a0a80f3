"""Wasted groups in Diffusion Chess, counted for the benchmarks (issue 58, part 5).

A turn wastes when it ends with two or more new groups (docs/DIFFUSION-CHESS-STRATEGY.md,
section 2). Whether the player could have done better is a question about the turn, asked
here apart from the product's planner: a depth-first search of the turn's moves from its
start (a shortest path to each cell each stone reaches, and the echo; positions met twice
searched once), looking for any completion that adds exactly one group and does not lose.
Finding one proves that a clean turn was there; not finding one within NODES moves leaves
the waste counted as unavoidable (so "avoidable" is a lower bound).
"""

from __future__ import annotations

from typing import Any

from bots.search.chess_endgame import turn_moves
from games.rules.chess import count_groups

NODES = 20_000  # moves tried in looking for a clean turn, at most


def clean_turn_exists(rules: Any, start: Any, nodes: int = NODES) -> bool:
    """Whether some way of playing the turn begun at `start` ends it, not lost, with
    exactly one more group than it began with (found within `nodes` moves)."""
    me, need = start.to_move, start.start_groups + 1
    seen: set[Any] = set()
    stack = [start]
    while stack and nodes > 0:
        position = stack.pop()
        for move in turn_moves(rules, position):
            nodes -= 1
            after = rules.play(position, move)
            if after.result:
                outcome = rules.outcome(after)
                if outcome is not None and outcome.winner == me:
                    return True
                continue
            if after.to_move != me:
                if count_groups(after.board, me) == need:
                    return True
                continue
            key = (after.board, after.moved, after.last, after.last_path)
            if key not in seen:
                seen.add(key)
                stack.append(after)
    return False


def count(
    rules: Any, start: Any, end: Any, wasted: dict[str, list[int]], south: Any, north: Any
) -> None:
    """Count the turn from `start` to `end` (the next turn's start) against its player."""
    me = start.to_move
    added = count_groups(end.board, me) - start.start_groups
    name = str(south if me == 1 else north)
    tally = wasted.setdefault(name, [0, 0, 0])
    tally[0] += 1  # turns played
    if added > 1:
        tally[1] += 1
        tally[2] += clean_turn_exists(rules, start)
