"""Benchmark opponents built apart from the computer's search (bots/search): what its levels
are measured against, so that a level's strength means something outside its own ladder.

Three players, each on its game's obvious measure, seen from the player who chooses:

- `random`: a legal move drawn uniformly (Diffusion Chess: the engine's random move, a
  random stone and a random path, since listing every path can take seconds);
- `greedy-1`: the move whose position scores best on the measure (ties drawn at random);
- `greedy-2`: the move whose worst reply (or, when the mover moves again, best next move of
  its own) scores best: a two-ply search on the same measure.

The measures, for the player `me` who chooses (a won game is worth +WIN, a lost one -WIN):

- Diffusion and Four-rank Diffusion: the stones in the opponent's own block minus the stones
  in mine (a player wins when their own block is empty);
- ZigZag: seeds captured by me minus seeds captured by the opponent;
- Diffusion Chess: the opponent's groups minus mine (each turn must add a group, so fewer
  groups is more turns left), minus 2 for each group I still owe this turn while my turn
  goes on, minus 1.5 for my king's danger plus 1.5 for the opponent's (a king in a group of
  2 is in danger 1, of 3 0.5, of 4 0.25). Its moves are the shortest path to every cell each
  stone may reach (the moves the client offers) and the echo; `greedy-2` looks at its 12
  best first moves by the one-ply measure and at every second move after each.

Nothing here is imported by the product.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from bots.search.chess_endgame import turn_moves
from games.engine import pick_client_move
from games.rules.chess import BLACK, WHITE, group_sizes

WIN = 1_000_000.0
CHESS_BEAM = 12
NAMES = ("random", "greedy-1", "greedy-2")
# Diffusion Chess only: the turn planner of devtools/chess_planner.py, and the attacker of
# devtools/chess_attack.py.
PLANNER = "planner"
ATTACKER = "attacker"
CHESS_ONLY = (PLANNER, ATTACKER)
# The score each level should reach against each opponent (issue 36's goals), and issue 58's
# for Diffusion Chess's level 5 as Black (a clean race is the second player's: section 1 of
# docs/DIFFUSION-CHESS-STRATEGY.md).
GOALS: dict[tuple[Any, ...], float] = {
    (1, "random"): 0.9,
    (3, "greedy-1"): 0.75,
    (5, "greedy-2"): 0.9,
    ("diffusion-chess", 5, "greedy-2", "second"): 0.95,
}

Measure = Callable[[Any, Any, int], float]


def _outcome_value(rules: Any, state: Any, me: int) -> float | None:
    outcome = rules.outcome(state)
    if outcome is None:
        return None
    if outcome.winner is None:
        return 0.0
    return WIN if outcome.winner == me else -WIN


def sowing_blocks(rules: Any, state: Any, me: int) -> float:
    counts = [0, 0, 0]
    for pit, stones in enumerate(state.pits):
        counts[rules.owners[rules.block_of[pit]]] += stones
    return float(counts[3 - me] - counts[me])


def zigzag_captures(rules: Any, state: Any, me: int) -> float:
    south, north = state.captured
    return float(south - north if me == 1 else north - south)


KING_DANGER = {2: 1.0, 3: 0.5, 4: 0.25}


def chess_groups(rules: Any, state: Any, me: int) -> float:
    sizes = group_sizes(state.board)
    shares = [0.0, 0.0, 0.0]
    for colour, size in zip(state.board, sizes, strict=True):
        if colour:
            shares[colour] += 1.0 / size
    groups = {WHITE: round(shares[WHITE]), BLACK: round(shares[BLACK])}
    them = 3 - me
    value = float(groups[them] - groups[me])
    if state.to_move == me and state.moves_left:
        value -= 2.0 * max(0, state.start_groups + 1 - groups[me])
    king = {WHITE: state.kings[0], BLACK: state.kings[1]}
    value -= 1.5 * KING_DANGER.get(sizes[king[me]], 0.0)
    value += 1.5 * KING_DANGER.get(sizes[king[them]], 0.0)
    return value


MEASURES: dict[str, Measure] = {
    "diffusion": sowing_blocks,
    "four-rank-diffusion": sowing_blocks,
    "zigzag": zigzag_captures,
    "diffusion-chess": chess_groups,
}


def score(rules: Any, state: Any, me: int) -> float:
    """`me`'s measure of the position (±WIN once the game is over)."""
    over = _outcome_value(rules, state, me)
    return over if over is not None else MEASURES[rules.slug](rules, state, me)


def candidates(rules: Any, state: Any) -> list[str]:
    """The moves these players choose among (Diffusion Chess: the client's moves)."""
    if rules.slug == "diffusion-chess":
        return turn_moves(rules, state)
    return list(rules.legal_moves(state))


def _best(scored: list[tuple[float, str]], rng: random.Random) -> str:
    top = max(value for value, _ in scored)
    return rng.choice([move for value, move in scored if value == top])


def random_player(rules: Any, state: Any, rng: random.Random) -> str:
    drawn = getattr(rules, "random_move", None)
    if drawn is not None:
        return str(drawn(state, rng))
    return pick_client_move(list(rules.legal_moves(state)), rng)


def greedy_one(rules: Any, state: Any, rng: random.Random) -> str:
    me = rules.to_move(state)
    scored = [
        (score(rules, rules.play(state, move), me), move) for move in candidates(rules, state)
    ]
    return _best(scored, rng)


def _after_next(rules: Any, state: Any, me: int) -> float:
    """`me`'s measure after the next ply played as well as its player can."""
    if rules.outcome(state) is not None:
        return score(rules, state, me)
    mine = rules.to_move(state) == me
    values = [score(rules, rules.play(state, move), me) for move in candidates(rules, state)]
    return max(values) if mine else min(values)


def greedy_two(rules: Any, state: Any, rng: random.Random) -> str:
    me = rules.to_move(state)
    moves = candidates(rules, state)
    if rules.slug == "diffusion-chess" and len(moves) > CHESS_BEAM:
        first = [(score(rules, rules.play(state, move), me), rng.random(), move) for move in moves]
        first.sort(reverse=True)
        moves = [move for _, _, move in first[:CHESS_BEAM]]
    # Ties go to the better position after the first ply: a win now before a win next.
    scored = []
    for move in moves:
        after = rules.play(state, move)
        scored.append(((_after_next(rules, after, me), score(rules, after, me)), move))
    top = max(value for value, _ in scored)
    return rng.choice([move for value, move in scored if value == top])


PLAYERS: dict[str, Callable[[Any, Any, random.Random], str]] = {
    "random": random_player,
    "greedy-1": greedy_one,
    "greedy-2": greedy_two,
}


def move(name: str, rules: Any, state: Any, rng: random.Random) -> str:
    """The move of the benchmark opponent `name` (one of NAMES, or CHESS_ONLY)."""
    if name in CHESS_ONLY:
        if rules.slug != "diffusion-chess":
            raise ValueError(f"the {name} plays Diffusion Chess only")
        if name == ATTACKER:
            from devtools.chess_attack import attacker

            return attacker(rules, state, rng)
        from devtools.chess_planner import planner

        return planner(rules, state, rng)
    return PLAYERS[name](rules, state, rng)
