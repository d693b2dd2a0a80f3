"""Random-playout speed of every registered game through the public engine API.

    python -m games.rules.bench [--seconds 3] [--seed 1]

Each ply calls legal_moves, play and outcome, as a bot's search would.
"""

from __future__ import annotations

import argparse
import random
import time

from games.rules import available_games, get_rules


def playouts(slug: str, seconds: float, seed: int) -> tuple[int, int, float]:
    rules = get_rules(slug)
    rng = random.Random(seed)
    choice = rng.choice
    plies = games = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        state = rules.initial_state()
        while True:
            moves = rules.legal_moves(state)
            if rules.outcome(state) is not None or not moves:
                break
            state = rules.play(state, choice(list(moves)))
            plies += 1
        games += 1
    return plies, games, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("games", nargs="*", help="slugs (default: every game)")
    args = parser.parse_args()
    slugs = args.games or [game["slug"] for game in available_games()]
    print(f"{'game':24} {'plies/s':>10} {'playouts/s':>11} {'plies/game':>11}")
    for slug in slugs:
        plies, games, elapsed = playouts(slug, args.seconds, args.seed)
        print(
            f"{slug:24} {plies / elapsed:>10,.0f} {games / elapsed:>11,.1f} {plies / games:>11.1f}"
        )


if __name__ == "__main__":
    main()
