"""Monte Carlo tree search with UCT over any game of games.rules.

Each node keeps the player who chooses among its children, so games where a player moves
several times in a row (Diffusion Chess: five moves a turn) need nothing special. Rewards
are stored from the point of view of the player who made the move into a node; a draw is
worth half a win. Budgets are playouts (deterministic for a seed) and, optionally, a time
limit (what a clock allows). Whatever the level, a move that wins at once is played and one
that loses at once is not, unless nothing else is left.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Any

from bots.search.levels import Level
from bots.search.levels import level as level_of
from bots.search.policies import Policy, winner_value
from bots.search.policies import policy as policy_of
from games import endgames


@dataclass(frozen=True)
class Choice:
    """The move chosen, the playouts it was chosen from and the time it took."""

    move: str
    playouts: int
    ms: float


class Node:
    __slots__ = (
        "children",
        "draws",
        "move",
        "parent",
        "player",
        "state",
        "untried",
        "visits",
        "wins",
    )

    def __init__(
        self,
        state: Any,
        parent: Node | None,
        move: str,
        player: int,
        untried: list[str],
        draws: int = 0,
    ) -> None:
        self.state = state
        self.parent = parent
        self.move = move
        self.player = player  # who chooses among the children (0 once the game is over)
        self.untried = untried
        self.draws = draws  # moves still to draw at random, one when the search needs one
        self.children: list[Node] = []
        self.visits = 0
        self.wins = 0.0  # for the player who moved into this node


class Search:
    def __init__(
        self,
        rules: Any,
        policy: Policy,
        rng: random.Random,
        exploration: float,
        width: int,
        depth: int | None,
    ) -> None:
        self.width = width
        self.depth = depth
        self.rules = rules
        self.policy = policy
        self.rng = rng
        self.exploration = exploration

    def node(self, state: Any, parent: Node | None, move: str) -> Node:
        if self.rules.outcome(state) is not None:
            return Node(state, parent, move, 0, [])
        player = self.rules.to_move(state)
        if parent is not None and self.policy.drawn:
            return Node(state, parent, move, player, [], self.width)
        moves = self.policy.candidates(self.rules, state, self.rng, self.width, parent is None)
        return Node(state, parent, move, player, moves)

    def playout(self, state: Any) -> float:
        """Player 1's reward from this position: the end of a random game, or the policy's
        score where the game is cut short (after `depth` plies, where a turn ends: a turn
        half played says little)."""
        rules, rng, move_of = self.rules, self.rng, self.policy.rollout_move
        outcome, play, to_move = rules.outcome, rules.play, rules.to_move
        depth, evaluate = self.depth, self.policy.evaluate
        plies = 0
        turn_over = False
        while True:
            result = outcome(state)
            if result is not None:
                return winner_value(result)
            if depth == 0 and evaluate is not None:
                return evaluate(rules, state)
            if depth is not None and evaluate is not None and plies >= depth and turn_over:
                return evaluate(rules, state)
            mover = to_move(state)
            state = play(state, move_of(rules, state, rng))
            plies += 1
            turn_over = to_move(state) != mover

    def _new_move(self, node: Node) -> str | None:
        """A move of `node` not tried yet, if it has one left to try."""
        if node.untried:
            return node.untried.pop()
        while node.draws:
            node.draws -= 1
            move = self.policy.rollout_move(self.rules, node.state, self.rng)
            if all(child.move != move for child in node.children):
                return move
        return None

    def iterate(self, root: Node) -> None:
        node = root
        log, sqrt, c = math.log, math.sqrt, self.exploration
        while True:
            move = self._new_move(node)
            if move is not None:
                child = self.node(self.rules.play(node.state, move), node, move)
                node.children.append(child)
                node = child
                break
            if not node.children:
                break  # the game is over here
            scale = log(node.visits)
            node = max(
                node.children,
                key=lambda child: child.wins / child.visits + c * sqrt(scale / child.visits),
            )
        value = self.playout(node.state)
        if node.visits == 0 and node.parent is not None and self.policy.prior:
            # A new node starts as if its first value had been seen `prior` times: a cheap
            # score then steers the search until real visits outweigh it.
            extra = self.policy.prior - 1
            node.visits += extra
            node.wins += extra * (value if node.parent.player == 1 else 1.0 - value)
        while node.parent is not None:
            node.visits += 1
            node.wins += value if node.parent.player == 1 else 1.0 - value
            node = node.parent
        node.visits += 1


def think(
    rules: Any,
    state: Any,
    level: int | Level,
    seed: int = 0,
    max_ms: float | None = None,
    scale: float = 1.0,
    endgames_dir: str | None = None,
) -> Choice:
    """The move a computer of this level plays. Deterministic for a seed unless `max_ms`
    (or the level's own time limit) cuts the search short. ValueError when the game is
    over. `scale` multiplies the level's playouts and time limit (the benchmarks' stronger
    opponent: level 5 with ten times its budget); the site always plays at 1. With
    `endgames_dir`, level 5 plays perfectly where an endgame database there covers the
    position (Diffusion, Four-rank, ZigZag: games/endgames.py, docs/ENDGAMES.md)."""
    started = time.perf_counter()
    chosen = level if isinstance(level, Level) else level_of(level)
    if chosen.number == 5 and endgames_dir is not None:
        found = endgames.table_for(endgames_dir, rules)
        known = None if found is None else endgames.best_move(found, rules, state)
        if known is not None:
            return Choice(known, 0, (time.perf_counter() - started) * 1000)
    game = policy_of(rules.slug)
    rng = random.Random(seed)
    number = chosen.number
    own_ms = chosen.max_ms * scale
    if game.turns is not None:
        if rules.outcome(state) is not None:
            raise ValueError("the game is over")
        # The whole turn is planned at its first move: the clock's share is for all of it.
        turn_ms = own_ms if max_ms is None else min(own_ms, max_ms)
        move, played = game.turns(rules, state, number, seed, turn_ms)
        return Choice(move, played, (time.perf_counter() - started) * 1000)
    search = Search(
        rules, game, rng, chosen.exploration, game.width[number - 1], game.playout_depth(number)
    )
    root = search.node(state, None, "")
    if not root.player:
        raise ValueError("the game is over")
    limit = own_ms if max_ms is None else min(own_ms, max_ms)
    deadline = started + limit / 1000
    budget = round(game.budget(number, chosen.playouts) * scale)
    playouts = 0
    only_move = len(root.untried) == 1
    while playouts < budget and not only_move:
        search.iterate(root)
        playouts += 1
        if time.perf_counter() > deadline:
            break
    temperature = chosen.temperature
    move = root.untried[0] if only_move else _pick(root, temperature, rng)
    return Choice(move, playouts, (time.perf_counter() - started) * 1000)


def _pick(root: Node, temperature: float, rng: random.Random) -> str:
    children = root.children
    # Whatever the level, a move that wins at once is played and one that loses at once is
    # not (unless every move does): a temperature is for misjudging, not for throwing a game.
    for child in children:
        if not child.player and child.wins >= child.visits:
            return child.move
    children = [child for child in children if child.player or child.wins > 0] or children
    if temperature <= 0:
        best = max(children, key=lambda child: (child.visits, child.wins))
        return best.move
    weights = [child.visits ** (1.0 / temperature) for child in children]
    return rng.choices(children, weights=weights)[0].move


def think_json(
    slug: str,
    options: dict[str, Any],
    state: dict[str, Any],
    level: int,
    seed: int,
    max_ms: float | None,
    endgames_dir: str | None = None,
) -> Choice:
    """`think` on a position as stored (the engine's JSON): what a worker process runs."""
    from games.rules import get_rules

    rules = get_rules(slug, **options)
    return think(
        rules, rules.from_json(state), level, seed=seed, max_ms=max_ms, endgames_dir=endgames_dir
    )
