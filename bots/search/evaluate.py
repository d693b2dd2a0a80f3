"""The computer's view of a position (for the analysis board and game reviews): the search the
computer opponents play with, at the top level's settings, run for a given time, read as a
win chance for the side to move and a best line.

The win chance is the share of the search's playouts won (a draw half) through the move it
would play: an estimate that firms up with time, not a proof. The best line follows the most
visited move from each node while the search has looked at it enough to mean something.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from bots.search.courtesy import Courtesy
from bots.search.levels import level as level_of
from bots.search.mcts import Node, Search
from bots.search.policies import policy as policy_of

TOP = 5  # the settings of the strongest level
LINE_VISITS = 8  # a move of the best line has been searched at least this often
LONGEST_LINE = 12


@dataclass(frozen=True)
class Evaluation:
    """`win`: the chance the side to move wins, 0 to 1; `best`: the move the search prefers
    (None once the game is over); `line`: the best line, `best` first."""

    win: float
    best: str | None
    line: tuple[str, ...]
    playouts: int
    ms: float

    def to_json(self) -> dict[str, Any]:
        return {
            "win": round(self.win, 4),
            "best": self.best,
            "line": list(self.line),
            "playouts": self.playouts,
            "ms": round(self.ms, 1),
        }


def evaluate(
    rules: Any,
    state: Any,
    ms: float,
    seed: int = 0,
    forced: int = 0,
    courtesy: Courtesy | None = None,
) -> Evaluation:
    """Search `state` for `ms` milliseconds (or until the top level's playouts are spent ten
    times over) and read the result. `forced`: single-move positions passed through already
    (a forced move is played and the position after it searched, up to a limit). With a
    `courtesy`, the search pauses while the machine is busy, and its time is counted without
    the pauses, up to three times `ms` in all."""
    started = time.perf_counter()
    outcome = rules.outcome(state)
    if outcome is not None:
        # Over: a certainty, for whoever "the side to move" was when it ended.
        mover = rules.to_move(state)
        win = 0.5 if outcome.winner is None else float(outcome.winner == mover)
        return Evaluation(win, None, (), 0, 0.0)
    top = level_of(TOP)
    game = policy_of(rules.slug)
    search = Search(
        rules,
        game,
        random.Random(seed),
        top.exploration,
        game.width[TOP - 1],
        game.playout_depth(TOP),
    )
    root = search.node(state, None, "")
    budget = game.budget(TOP, top.playouts) * 10
    deadline = started + ms / 1000
    latest = started + 3 * ms / 1000
    playouts = 0
    while playouts < budget and (len(root.untried) + len(root.children)) > 1:
        search.iterate(root)
        playouts += 1
        if courtesy is not None:
            courtesy.tick()
            now = time.perf_counter()
            if now - courtesy.slept > deadline or now > latest:
                break
        elif time.perf_counter() > deadline:
            break
    if not root.children and forced >= LONGEST_LINE:
        return Evaluation(0.5, root.untried[0], (root.untried[0],), 0, _since(started))
    if not root.children:  # a single legal move: nothing to compare it with
        move = root.untried[0]
        after = rules.play(state, move)
        left = max(0.0, ms - _since(started))
        deeper = evaluate(rules, after, left, seed, forced + 1, courtesy)
        same = rules.outcome(after) is None and rules.to_move(after) == rules.to_move(state)
        win = deeper.win if same else 1.0 - deeper.win
        return Evaluation(win, move, (move, *deeper.line), deeper.playouts, _since(started))
    best = _most_visited(root)
    return Evaluation(best.wins / best.visits, best.move, _line(best), playouts, _since(started))


def _most_visited(node: Node) -> Node:
    return max(node.children, key=lambda child: (child.visits, child.wins))


def _line(node: Node) -> tuple[str, ...]:
    line = [node.move]
    while node.children and len(line) < LONGEST_LINE:
        node = _most_visited(node)
        if node.visits < LINE_VISITS:
            break
        line.append(node.move)
    return tuple(line)


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def evaluate_json(
    slug: str, options: dict[str, Any], state: dict[str, Any], ms: float, seed: int
) -> dict[str, Any]:
    """`evaluate` on a position as stored (the engine's JSON), giving way to the machine's
    other work (bots/search/courtesy.py): what the worker's search processes run."""
    from games.rules import get_rules

    rules = get_rules(slug, **options)
    return evaluate(rules, rules.from_json(state), ms, seed, courtesy=Courtesy()).to_json()
