"""Random-playout speed of every registered game through the public engine API.

    python -m devtools.rules_bench [--seconds 3] [--seed 1] [--profile] [--proofs 200] [slug ...]

Each ply calls legal_moves, play and outcome, as a bot's search would; the random choice
of the move is timed too. Games use their default options. For ZigZag it also times the
end-of-game proof from a cold memo on random positions holding the most seeds the proof
is run on (the slowest case: every reachable position is explored when no capture is).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import time
from typing import Any

from games.rules import available_games, get_rules
from games.rules.chess import DiffusionChessRules


def chess_bench(seconds: float = 3.0, seed: int = 1) -> dict[str, float]:
    """Speed: client_moves of the opening (median ms) and random playouts for `seconds`."""
    rules = DiffusionChessRules()
    opening = rules.initial_state()
    timings = []
    for _ in range(21):
        started = time.perf_counter()
        rules.client_moves(opening)
        timings.append((time.perf_counter() - started) * 1000)
    rng = random.Random(seed)
    moves = turns = games = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        state = opening
        while not state.result:
            after = rules.play(state, rules.random_move(state, rng))
            turns += after.turn != state.turn
            moves += 1
            state = after
        turns += 1  # the turn the game ended in
        games += 1
    elapsed = time.perf_counter() - started
    return {
        "client_moves_ms": statistics.median(timings),
        "turns_per_s": turns / elapsed,
        "moves_per_s": moves / elapsed,
        "games_per_s": games / elapsed,
        "moves_per_game": moves / max(games, 1),
    }


def playouts(slug: str, seconds: float, seed: int) -> tuple[int, int, float]:
    """Random games for about `seconds`: (plies, games, elapsed seconds)."""
    rules: Any = get_rules(slug)
    legal_moves, play, outcome = rules.legal_moves, rules.play, rules.outcome
    rng = random.Random(seed)
    choice = rng.choice
    # Diffusion Chess may have millions of paths: it draws a random move without listing.
    random_move = getattr(rules, "random_move", None)
    plies = games = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        state = rules.initial_state()
        while outcome(state) is None:
            if random_move is not None:
                state = play(state, random_move(state, rng))
            else:
                state = play(state, choice(list(legal_moves(state))))
            plies += 1
        games += 1
    return plies, games, time.perf_counter() - started


def zigzag_proofs(samples: int, seed: int) -> list[tuple[str, float, float, int, float, int]]:
    """Cold end-of-game proofs on random positions holding as many seeds as the proof is
    run on. Per board: (label, median ms, max ms, proofs that the game is over (every
    reachable position explored), the slowest of those in ms, and its positions)."""
    rng = random.Random(seed)
    figures = []
    for pits, seeds in ((6, 5), (2, 5), (4, 3), (8, 5), (26, 1)):
        rules: Any = get_rules("zigzag", pits=pits, seeds=seeds)
        on_board = rules.search_seeds
        off = rules.total - on_board
        times = []
        over = 0
        slowest = (0.0, 0)
        for _ in range(samples):
            counts = [0] * rules.size
            for _ in range(on_board):
                counts[rng.randrange(rules.size)] += 1
            state = rules.initial_state()._replace(
                board=rules.pack(counts),
                captured=(off, 0),
                last_capturer=1,
                to_move=rng.choice((1, 2)),
            )
            rules.forget()
            started = time.perf_counter()
            possible = rules.capture_possible(state)
            elapsed = time.perf_counter() - started
            times.append(elapsed)
            if not possible:
                over += 1
                slowest = max(slowest, (elapsed, rules.memo_size()))
        times.sort()
        label = f"pits={pits} seeds={seeds} ({on_board} on board)"
        median, worst = times[len(times) // 2] * 1e3, times[-1] * 1e3
        figures.append((label, median, worst, over, slowest[0] * 1e3, slowest[1]))
    return figures


def main() -> None:
    """Print plies/s, playouts/s and plies per game for each game."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="per game (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary too")
    parser.add_argument("--proofs", type=int, default=200, help="zigzag proof samples per board")
    parser.add_argument("games", nargs="*", help="slugs (default: every game)")
    args = parser.parse_args()
    slugs = args.games or [game["slug"] for game in available_games()]
    print(f"{'game':24} {'plies/s':>10} {'playouts/s':>11} {'plies/game':>11}")
    for slug in slugs:
        plies, games, elapsed = playouts(slug, args.seconds, args.seed)
        print(
            f"{slug:24} {plies / elapsed:>10,.0f} {games / elapsed:>11,.1f} {plies / games:>11.1f}"
        )
    if "diffusion-chess" in slugs:
        figures = chess_bench(args.seconds, args.seed)
        print(
            f"\ndiffusion-chess: all destinations of the side to move in the opening "
            f"{figures['client_moves_ms']:.2f} ms (median); random playouts "
            f"{figures['turns_per_s']:,.0f} turns/s, {figures['moves_per_s']:,.0f} moves/s, "
            f"{figures['moves_per_game']:.1f} moves/game"
        )
    if "zigzag" in slugs:
        print(f"\nzigzag end-of-game proof, cold, {args.proofs} random positions per board:")
        print(
            f"{'board':34} {'median ms':>10} {'max ms':>8} {'over':>5}"
            f" {'slowest over ms':>16} {'positions':>10}"
        )
        for label, median, worst, over, slow, explored in zigzag_proofs(args.proofs, args.seed):
            print(
                f"{label:34} {median:>10.2f} {worst:>8.1f} {over:>5} {slow:>16.1f} {explored:>10,}"
            )
    if args.profile:
        for slug in slugs:
            profiler = cProfile.Profile()
            profiler.runcall(playouts, slug, min(args.seconds, 1.0), args.seed)
            print(f"\n--- {slug}")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()
