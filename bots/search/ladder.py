"""The strength ladder and thinking times, measured by playing games through the rules API.

    python -m bots.search.ladder [--games 200] [--jobs 2] [--seed 1] [slug ...]

For every game: level 1 against a player choosing uniformly at random, then level k against
level k-1 for k = 2..5, sides alternated, each game from its own seed (the figures repeat).
Prints each pairing's score for the stronger side (a draw counts half) and the thinking
time per move of each level (median and max).
"""

from __future__ import annotations

import argparse
import random
import statistics
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from bots.search.mcts import think
from games.rules import available_games, get_rules

RANDOM = 0  # a "level" that plays uniformly at random among the legal moves


@dataclass
class Game:
    winner: int | None  # 1 or 2, None for a draw
    ms: dict[int, list[float]] = field(default_factory=dict)  # per level: each move's time


def random_move(rules: object, state: object, rng: random.Random) -> str:
    drawn = getattr(rules, "random_move", None)
    if drawn is not None:
        return str(drawn(state, rng))
    return rng.choice(list(rules.legal_moves(state)))  # type: ignore[attr-defined]


def play(slug: str, south: int, north: int, seed: int, max_plies: int = 2000) -> Game:
    """One game between two levels (RANDOM for the random player)."""
    rules = get_rules(slug)
    state = rules.initial_state()
    rng = random.Random(seed)
    game = Game(winner=None)
    for ply in range(max_plies):
        outcome = rules.outcome(state)
        if outcome is not None:
            game.winner = outcome.winner
            return game
        player = south if rules.to_move(state) == 1 else north
        if player == RANDOM:
            move = random_move(rules, state, rng)
        else:
            choice = think(rules, state, player, seed=seed * 100_003 + ply)
            game.ms.setdefault(player, []).append(choice.ms)
            move = choice.move
        state = rules.play(state, move)
    return game  # unfinished after max_plies: scored as a draw


def _one(task: tuple[str, int, int, int]) -> tuple[float, dict[int, list[float]]]:
    slug, strong, weak, seed = task
    strong_south = seed % 2 == 0
    south, north = (strong, weak) if strong_south else (weak, strong)
    game = play(slug, south, north, seed)
    strong_side = 1 if strong_south else 2
    score = 0.5 if game.winner is None else float(game.winner == strong_side)
    return score, game.ms


def pairing(slug: str, strong: int, weak: int, games: int, seed: int, jobs: int):
    """(score of the stronger level over `games`, move times by level)."""
    tasks = [(slug, strong, weak, seed * 10_000 + index) for index in range(games)]
    times: dict[int, list[float]] = {}
    total = 0.0
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for score, ms in pool.map(_one, tasks):
            total += score
            for number, values in ms.items():
                times.setdefault(number, []).extend(values)
    return total / games, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=200, help="per pairing (default 200)")
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--top", type=int, default=5, help="highest level to pit (default 5)")
    parser.add_argument("games_", nargs="*", metavar="slug", help="default: every game")
    args = parser.parse_args()
    slugs = args.games_ or [game["slug"] for game in available_games()]
    for slug in slugs:
        print(f"{slug}: {args.games} games per pairing, sides alternated", flush=True)
        times: dict[int, list[float]] = {}
        for strong in range(1, args.top + 1):
            weak = strong - 1
            score, ms = pairing(slug, strong, weak, args.games, args.seed, args.jobs)
            for number, values in ms.items():
                times.setdefault(number, []).extend(values)
            against = "random" if weak == RANDOM else f"level {weak}"
            print(f"  level {strong} v {against:8} {score:6.1%}", flush=True)
        for number in sorted(times):
            values = times[number]
            print(
                f"  level {number} thinks {statistics.median(values):7.1f} ms median,"
                f" {max(values):7.1f} ms max over {len(values)} moves",
                flush=True,
            )


if __name__ == "__main__":
    main()
