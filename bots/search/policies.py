"""What the search needs to know about each game, as data: how many candidate moves a node
considers and how they are drawn, how a playout moves, and how a position is scored when a
playout is cut short (the chance that player 1 wins, from 0 to 1).

Random playouts are strong enough in the small Diffusion and in ZigZag's endgames; the long
games cut them short and score the position: Four-rank Diffusion by the stones left in each
player's own block (a player wins when their own block is empty), ZigZag by the seeds each
has captured, Diffusion Chess by group counts (every turn must add a group, so a player with
fewer groups has more turns left) and king safety (a king alone loses).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from games.rules.chess import BLACK, WHITE, group_sizes

Candidates = Callable[[Any, Any, random.Random, int, bool], list[str]]
Mover = Callable[[Any, Any, random.Random], str]
Evaluate = Callable[[Any, Any], float]


def all_moves(rules: Any, state: Any, rng: random.Random, width: int, root: bool) -> list[str]:
    moves = list(rules.legal_moves(state))
    rng.shuffle(moves)
    return moves


def random_listed_move(rules: Any, state: Any, rng: random.Random) -> str:
    return rng.choice(rules.legal_moves(state))


def logistic(score: float) -> float:
    return 1.0 / (1.0 + math.exp(-score))


def diffusion_score(rules: Any, state: Any) -> float:
    """Player 1 wins when player 1's own block is empty: fewer stones there is better."""
    counts = [0, 0, 0]
    for pit, stones in enumerate(state.pits):
        counts[rules.owners[rules.block_of[pit]]] += stones
    return logistic(6.0 * (counts[2] - counts[1]) / rules.total)


def zigzag_score(rules: Any, state: Any) -> float:
    """Captured seeds decide: their difference, over the seeds still to be won."""
    south, north = state.captured
    left = max(rules.total - south - north, 1)
    return logistic(4.0 * (south - north) / left)


def chess_score(rules: Any, state: Any) -> float:
    """Fewer groups means more turns left (each turn must add one); a king with few
    friends beside it is one move from being stranded; a side that has not yet added a
    group this turn is in danger."""
    board = state.board
    sizes = group_sizes(board)
    groups = {WHITE: 0.0, BLACK: 0.0}
    for cell, colour in enumerate(board):
        if colour:
            groups[colour] += 1.0 / sizes[cell]
    white_king, black_king = state.kings
    score = (groups[BLACK] - groups[WHITE]) / 3.0
    score += (min(sizes[white_king], 5) - min(sizes[black_king], 5)) / 4.0
    mover = state.to_move
    if round(groups[mover]) <= state.start_groups:
        score += -0.6 if mover == WHITE else 0.6
    return logistic(score)


def chess_candidates(
    rules: Any, state: Any, rng: random.Random, width: int, root: bool
) -> list[str]:
    """Millions of paths: the root considers the best-scored `width` of three times as many
    distinct random ones (scored by the position each leaves, for the mover), which is where
    the levels' wider view pays. Nodes below it draw theirs one at a time (`Policy.drawn`)."""
    wanted = width * 3
    drawn: dict[str, None] = {}
    for _ in range(wanted * 2):
        drawn.setdefault(rules.random_move(state, rng))
        if len(drawn) >= wanted:
            break
    mover = state.to_move
    scored = []
    for move in drawn:
        chance = chess_score(rules, rules.play(state, move))
        scored.append((chance if mover == WHITE else 1.0 - chance, move))
    scored.sort(key=lambda pair: pair[0], reverse=True)
    # Best first: the search takes them from the end of the list.
    return [move for _, move in reversed(scored[:width])]


def chess_rollout_move(rules: Any, state: Any, rng: random.Random) -> str:
    return rules.random_move(state, rng)


@dataclass(frozen=True)
class Policy:
    """One game's part of the search. `depth`: plies a playout runs before the position
    is scored (None: to the end). `playouts`, when given, the budget of each level in this
    game instead of the level's own (where playouts are cheap the top levels get many more;
    Diffusion Chess: its playouts cost a hundred times more and it moves five times a turn,
    so its levels span a smaller range). `ms_share`: the share of a level's thinking time
    each move gets. `drawn`: below the root a node draws its `width` moves at random one at a
    time, as the search first needs each (Diffusion Chess: drawing them all when a node is
    made cost most of the search's time)."""

    candidates: Candidates = all_moves
    rollout_move: Mover = random_listed_move
    evaluate: Evaluate | None = None
    depth: int | None = None
    playouts: tuple[int, ...] | None = None
    width: tuple[int, ...] = (0, 0, 0, 0, 0)  # candidate moves per node, by level
    ms_share: float = 1.0
    drawn: bool = False

    def budget(self, level: int, playouts: int) -> int:
        """Playouts a move of this level gets in this game."""
        if self.playouts is not None:
            return self.playouts[level - 1]
        return playouts


POLICIES: dict[str, Policy] = {
    # The mancalas: a playout of a few random moves, then the score. Long random playouts
    # blur what a move did (measured: shallow ones separate the levels better and cost a
    # tenth), which leaves the budget for more playouts at the top.
    "diffusion": Policy(evaluate=diffusion_score, depth=4, playouts=(25, 100, 400, 1600, 8000)),
    "four-rank-diffusion": Policy(
        evaluate=diffusion_score, depth=2, playouts=(25, 100, 400, 2000, 16000)
    ),
    "zigzag": Policy(evaluate=zigzag_score, depth=4),
    "diffusion-chess": Policy(
        candidates=chess_candidates,
        width=(6, 10, 16, 24, 32),
        rollout_move=chess_rollout_move,
        evaluate=chess_score,
        depth=8,
        playouts=(10, 30, 80, 180, 400),
        ms_share=0.2,
        drawn=True,
    ),
}


def policy(slug: str) -> Policy:
    """The search policy of a registered game (the plain one for a game without its own)."""
    return POLICIES.get(slug, Policy())
