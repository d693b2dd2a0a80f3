"""A Diffusion Chess player that plans whole turns (dev-only: an opponent for the benchmarks
and the experiments of docs/DIFFUSION-CHESS-STRATEGY.md, not one of the site's levels).

Each move it plans the rest of the turn: a beam search over the turn's remaining moves (the
moves of devtools.anchors.candidates), each partial turn scored by the benchmark measure
(devtools.anchors.score), keeping the `beam` best distinct boards a move. Of the turn's
completions it keeps the best `4 * beam` and scores each again:

- less the damage of the opponent's two most harmful captures next turn (by distinct
  stones: the measure's drop after each);
- in the endgame (at most `endgame` of its stones can still move), plus three times the
  number of its own turns it can still complete in a row, found by a search of its own
  turns alone, as if the opponent passed (it cannot reach us by then): the level-5
  endgame's reading (bots/search/chess_endgame.py), within `reading_ms` for all of them.

It plays the first move of the best completion. Then the same again at the next move.
"""

from __future__ import annotations

import contextlib
import random
import time
from typing import Any

from bots.search.chess_endgame import OutOfTime, Reader, most_groups
from devtools.anchors import WIN, candidates, chess_groups, score
from games.rules.chess import INDEX, count_groups, group_sizes


def capture_moves(rules: Any, state: Any) -> list[str]:
    """The side to move's captures, by one shortest path each."""
    board, opponent = state.board, 3 - state.to_move
    found = []
    for targets in rules.client_moves(state)["destinations"].values():
        for cell, path in targets.items():
            if board[INDEX[cell]] == opponent:
                found.append(path)
    return found


def threat(rules: Any, state: Any, me: int, worst: int = 2) -> float:
    """What the opponent (to move in `state`, its turn starting) can take from `me` by its
    `worst` most harmful captures, each by another stone."""
    if rules.outcome(state) is not None:
        return 0.0
    base = chess_groups(rules, state, me)
    damage: dict[str, float] = {}
    for path in capture_moves(rules, state):
        after = rules.play(state, path)
        outcome = rules.outcome(after)
        if outcome is not None:
            hurt = WIN if outcome.winner != me else 0.0
        else:
            hurt = base - chess_groups(rules, after, me)
        stone = path.split("-", 1)[0]
        damage[stone] = max(damage.get(stone, hurt), hurt)
    return sum(max(0.0, hurt) for hurt in sorted(damage.values(), reverse=True)[:worst])


def completions(
    rules: Any, state: Any, rng: random.Random, beam: int
) -> list[tuple[float, str, Any]]:
    """The turn's completions the beam found, best first: (measure, first move, position)."""
    me = rules.to_move(state)
    frontier: list[tuple[str | None, Any]] = [(None, state)]
    done: list[tuple[float, float, str, Any]] = []
    while frontier:
        following: dict[Any, tuple[float, float, str, Any]] = {}
        for first, position in frontier:
            for move in candidates(rules, position):
                after = rules.play(position, move)
                value = score(rules, after, me)
                if after.result or rules.to_move(after) != me:
                    done.append((value, rng.random(), first or move, after))
                elif after.board not in following or following[after.board][0] < value:
                    following[after.board] = (value, rng.random(), first or move, after)
        ranked = sorted(following.values(), key=lambda entry: entry[:2], reverse=True)
        frontier = [(first, after) for _, _, first, after in ranked[:beam]]
    done.sort(key=lambda entry: entry[:2], reverse=True)
    return [(value, first, after) for value, _, first, after in done]


def plan(
    rules: Any,
    state: Any,
    rng: random.Random,
    beam: int = 4,
    endgame: int = 10,
    reading_ms: float = 2_000.0,
) -> str:
    me = rules.to_move(state)
    for move in candidates(rules, state):  # a win now, before any plan
        outcome = rules.outcome(rules.play(state, move))
        if outcome is not None and outcome.winner == me:
            return move
    kept = completions(rules, state, rng, beam)[: beam * 4]
    best: tuple[float, str] | None = None
    for value, first, after in kept:
        if rules.outcome(after) is None:
            value -= threat(rules, after, me)
            sizes = group_sizes(after.board)
            movable = sum(
                1 for c, colour in enumerate(after.board) if colour == me and sizes[c] > 1
            )
            if movable <= endgame:
                wanted = most_groups(after.board, me) - count_groups(after.board, me)
                reader = Reader(rules, me, time.perf_counter() + reading_ms / len(kept) / 1000)
                with contextlib.suppress(OutOfTime):  # then it counts as no turn found
                    value += 3.0 * reader.turns(rules.own_next_turn(after), wanted)
        if best is None or value > best[0]:
            best = (value, first)
    assert best is not None, "a turn with a legal move has a completion"
    return best[1]


def planner(rules: Any, state: Any, rng: random.Random) -> str:
    """The planner with its defaults, as devtools.anchors' players are called."""
    return plan(rules, state, rng)
