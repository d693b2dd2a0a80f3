"""Random-playout speed of every registered game through the public engine API.

    python -m games.rules.bench [--seconds 3] [--seed 1] [--profile] [slug ...]

Each ply calls legal_moves, play and outcome, as a bot's search would; the random choice
of the move is timed too. Games use their default options.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time

from games.rules import available_games, get_rules


def playouts(slug: str, seconds: float, seed: int) -> tuple[int, int, float]:
    """Random games for about `seconds`: (plies, games, elapsed seconds)."""
    rules = get_rules(slug)
    legal_moves, play, outcome = rules.legal_moves, rules.play, rules.outcome
    choice = random.Random(seed).choice
    plies = games = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        state = rules.initial_state()
        while outcome(state) is None:
            state = play(state, choice(list(legal_moves(state))))
            plies += 1
        games += 1
    return plies, games, time.perf_counter() - started


def main() -> None:
    """Print plies/s, playouts/s and plies per game for each game."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="per game (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary too")
    parser.add_argument("games", nargs="*", help="slugs (default: every game)")
    args = parser.parse_args()
    slugs = args.games or [game["slug"] for game in available_games()]
    print(f"{'game':24} {'plies/s':>10} {'playouts/s':>11} {'plies/game':>11}")
    for slug in slugs:
        plies, games, elapsed = playouts(slug, args.seconds, args.seed)
        print(
            f"{slug:24} {plies / elapsed:>10,.0f} {games / elapsed:>11,.1f} {plies / games:>11.1f}"
        )
    if args.profile:
        for slug in slugs:
            profiler = cProfile.Profile()
            profiler.runcall(playouts, slug, min(args.seconds, 1.0), args.seed)
            print(f"\n--- {slug}")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()
