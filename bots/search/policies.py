"""What the search needs to know about each game, as data: how many candidate moves a node
considers and how they are drawn, how a playout moves, and how a position is scored when a
playout is cut short (the chance that player 1 wins, from 0 to 1).

Random playouts are strong enough in the small Diffusion and in ZigZag's endgames; the long
games cut them short and score the position: Four-rank Diffusion by the stones left in each
player's own block (a player wins when their own block is empty), ZigZag by the seeds each
has captured, Diffusion Chess by group counts (every turn must add a group, so a player with
fewer groups has more turns left) and king safety (a king alone loses), with no random
moves at all: a random move there is nearly always a blunder, and its score says more.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bots.search.chess_turns import turn_move
from games.rules.chess import BLACK, INDEX, WHITE, group_sizes

Candidates = Callable[[Any, Any, random.Random, int, bool], list[str]]
# A game played a whole turn at a time: (rules, state, level, seed, ms) -> the move now and
# the positions played to find it.
Turns = Callable[[Any, Any, int, int, float], tuple[str, int]]
Mover = Callable[[Any, Any, random.Random], str]
Evaluate = Callable[[Any, Any], float]


def all_moves(rules: Any, state: Any, rng: random.Random, width: int, root: bool) -> list[str]:
    moves = list(rules.legal_moves(state))
    rng.shuffle(moves)
    return moves


def random_listed_move(rules: Any, state: Any, rng: random.Random) -> str:
    return rng.choice(rules.legal_moves(state))


def winner_value(outcome: Any) -> float:
    """Player 1's reward for a finished game: 1 for a win, 1/2 for a draw."""
    if outcome.winner is None:
        return 0.5
    return 1.0 if outcome.winner == 1 else 0.0


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


def chess_groups(board: Sequence[int], kings: tuple[int, int]) -> tuple[int, int, int, int]:
    """White's and Black's group counts and the sizes of White's and Black's king groups."""
    sizes = group_sizes(board)
    counts = [0.0, 0.0, 0.0]
    for colour, size in zip(board, sizes, strict=True):
        if colour:
            counts[colour] += 1.0 / size  # each of a group's stones holds its share of it
    return round(counts[WHITE]), round(counts[BLACK]), sizes[kings[0]], sizes[kings[1]]


# How near a king is to being stranded, by the size of its group (1 has lost already).
KING_DANGER = {2: 1.0, 3: 0.5, 4: 0.25}


def chess_score(rules: Any, state: Any) -> float:
    """Each turn must add a group, so a side's groups are the turns it has used up (41
    stones, 9 groups: 32 turns): fewer groups is better. The side in the middle of its turn
    is counted as having added the group it must add (merging groups mid-turn gains
    nothing), and one still short of it is in danger, the more so the fewer moves it has
    left. A king in a small group is near to being stranded."""
    white, black, white_king, black_king = chess_groups(state.board, state.kings)
    score = 0.0
    if state.moves_left and not state.result:
        needed = state.start_groups + 1
        mover_white = state.to_move == WHITE
        short = needed - (white if mover_white else black)
        if short > 0:
            danger = 0.4 * short + (3.0 if short > state.moves_left else 0.0)
            score += -danger if mover_white else danger
            if mover_white:
                white = needed
            else:
                black = needed
    score += 0.3 * (black - white)
    score += 1.2 * (KING_DANGER.get(black_king, 0.0) - KING_DANGER.get(white_king, 0.0))
    return logistic(score)


def chess_candidates(
    rules: Any, state: Any, rng: random.Random, width: int, root: bool
) -> list[str]:
    """Up to millions of paths: the root considers the best-scored `width` of every capture
    (by a shortest path) and three times as many distinct random moves, each scored by the
    position it leaves, for the mover. Nodes below it draw theirs one at a time
    (`Policy.drawn`)."""
    wanted = width * 3
    board, opponent = state.board, 3 - state.to_move
    drawn: dict[str, None] = {}
    # Every capture, by one shortest path each (listing every path can take seconds).
    for destinations in rules.client_moves(state)["destinations"].values():
        for cell, path in destinations.items():
            if board[INDEX[cell]] == opponent:
                drawn[path] = None
    wanted += len(drawn)
    for _ in range(wanted * 2):
        drawn.setdefault(rules.random_move(state, rng))
        if len(drawn) >= wanted:
            break
    mover = state.to_move
    scored = []
    for move in drawn:
        after = rules.play(state, move)
        outcome = rules.outcome(after)
        chance = chess_score(rules, after) if outcome is None else winner_value(outcome)
        scored.append((chance if mover == WHITE else 1.0 - chance, move))
    scored.sort(key=lambda pair: pair[0], reverse=True)
    # Best first: the search takes them from the end of the list.
    return [move for _, move in reversed(scored[:width])]


def chess_turn(rules: Any, state: Any, number: int, seed: int, ms: float) -> tuple[str, int]:
    """Diffusion Chess played by whole turns (bots/search/chess_turns.py)."""
    return turn_move(rules, state, number, chess_score, seed, ms)


def chess_random_move(rules: Any, state: Any, rng: random.Random) -> str:
    return rules.random_move(state, rng)


@dataclass(frozen=True)
class Policy:
    """One game's part of the search. `depth`: plies a playout runs before the position
    is scored, where a turn ends (None: to the end; 0: the position reached is scored as it
    is, mid-turn too). `playouts`, when given, the budget of each level in this
    game instead of the level's own (where playouts are cheap the top levels get many more;
    Diffusion Chess moves five times a turn and scores every node it makes, so its levels
    span a smaller range). `drawn`: below the root a node draws its `width` moves at random one at a
    time, as the search first needs each (Diffusion Chess: drawing them all when a node is
    made cost most of the search's time). `prior`: a new node counts its first value as that
    many visits, so the score steers a small search (Diffusion Chess: with few playouts,
    a tree without it was weaker than choosing by the score alone). `depths`, when given,
    each level's playout depth instead of `depth` (Four-rank: the top level's budget buys
    more from deeper playouts than from more of them). `turns`, where a game has it, plays
    instead of the search: the move now of a whole turn planned (Diffusion Chess, whose
    every level must keep the race clean: a move's worth depends on the turn around it)."""

    candidates: Candidates = all_moves
    rollout_move: Mover = random_listed_move
    evaluate: Evaluate | None = None
    depth: int | None = None
    playouts: tuple[int, ...] | None = None
    width: tuple[int, ...] = (0, 0, 0, 0, 0)  # candidate moves per node, by level
    drawn: bool = False
    prior: int = 0
    depths: tuple[int | None, ...] | None = None
    turns: Turns | None = None

    def budget(self, level: int, playouts: int) -> int:
        """Playouts a move of this level gets in this game."""
        if self.playouts is not None:
            return self.playouts[level - 1]
        return playouts

    def playout_depth(self, level: int) -> int | None:
        """Plies a playout of this level runs before the position is scored."""
        if self.depths is not None:
            return self.depths[level - 1]
        return self.depth


POLICIES: dict[str, Policy] = {
    # The mancalas: a playout of a few random moves, then the score. Long random playouts
    # blur what a move did (measured: shallow ones separate the levels better and cost a
    # tenth), which leaves the budget for more playouts at the top.
    "diffusion": Policy(evaluate=diffusion_score, depth=4, playouts=(25, 100, 400, 1600, 8000)),
    # Four-rank's top level plays out four plies, not two: at an equal budget that won
    # 66.7% of 60 games (no playout at all, only the score, won 33.3%), where eight times
    # the playouts alone won about two games in three against level 4.
    "four-rank-diffusion": Policy(
        evaluate=diffusion_score,
        depths=(2, 2, 2, 2, 4),
        playouts=(25, 100, 400, 2000, 16000),
    ),
    "zigzag": Policy(evaluate=zigzag_score, depth=4),
    # Diffusion Chess: the armies rarely meet, so a game is a race to keep adding one group
    # a turn, lost by the first group wasted. Play is by whole turns, each kept clean
    # (`turns`: bots/search/chess_turns.py); the search is the analysis board's and the
    # reviews' win chance, at the top level's settings.
    "diffusion-chess": Policy(
        candidates=chess_candidates,
        rollout_move=chess_random_move,
        evaluate=chess_score,
        depth=0,
        prior=10,
        width=(3, 6, 12, 24, 48),
        playouts=(5, 20, 60, 180, 500),
        drawn=True,
        turns=chess_turn,
    ),
}


def policy(slug: str) -> Policy:
    """The search policy of a registered game (the plain one for a game without its own)."""
    return POLICIES.get(slug, Policy())
