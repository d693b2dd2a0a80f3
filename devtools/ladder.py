"""The strength ladder and thinking times, measured by playing games through the rules API.

    python -m devtools.ladder [--games 200] [--first 0] [--jobs 2] [--seed 1]
        [--levels 1,2,3,4,5] [slug ...]

For every game: level 1 against a player choosing uniformly at random, then level k against
level k-1 for k = 2..5, sides alternated, each game from its own seed (the figures repeat).
Prints the running score every ten games, each pairing's score for the stronger side (a
draw counts half) and the thinking time per move of each level (median and max). A long
pairing can be played in parts: `--games 100 --first 100` plays games 100 to 199, the
second half of a 200-game run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from bots.search.mcts import think
from devtools import anchors, chess_waste
from games.rules import available_games, get_rules

RANDOM = 0  # a "level" that plays uniformly at random among the legal moves
# A player: a level (1-5), RANDOM, a benchmark opponent's name (devtools/anchors.py), or a
# level with a bigger budget ("5x10": level 5 with ten times its playouts and time).
Player = int | str


@dataclass
class Game:
    winner: int | None  # 1 or 2, None for a draw
    plies: int = 0
    ms: dict[int, list[float]] = field(default_factory=dict)  # per level: each move's time
    # Diffusion Chess, per player: [turns played, turns that added more than one group, of
    # those the ones where a clean turn was there to be played] (devtools/chess_waste.py).
    wasted: dict[str, list[int]] = field(default_factory=dict)


def random_move(rules: object, state: object, rng: random.Random) -> str:
    drawn = getattr(rules, "random_move", None)
    if drawn is not None:
        return str(drawn(state, rng))
    return rng.choice(list(rules.legal_moves(state)))  # type: ignore[attr-defined]


def play(
    slug: str,
    south: Player,
    north: Player,
    seed: int,
    max_plies: int = 2000,
    options: dict[str, Any] | None = None,
) -> Game:
    """One game between two players: levels, RANDOM, or benchmark opponents by name."""
    rules = get_rules(slug, **(options or {}))
    state = rules.initial_state()
    rng = random.Random(seed)
    game = Game(winner=None)
    turn_start = state
    for ply in range(max_plies):
        if slug == "diffusion-chess" and state.to_move != turn_start.to_move:
            chess_waste.count(rules, turn_start, state, game.wasted, south, north)
            turn_start = state
        outcome = rules.outcome(state)
        if outcome is not None:
            game.winner = outcome.winner
            game.plies = ply
            return game
        player = south if rules.to_move(state) == 1 else north
        if player == RANDOM:
            move = random_move(rules, state, rng)
        elif isinstance(player, str) and (player in anchors.NAMES or player in anchors.CHESS_ONLY):
            move = anchors.move(player, rules, state, rng)
        elif isinstance(player, str):
            number, scale = scaled(player)
            move = think(rules, state, number, seed=seed * 100_003 + ply, scale=scale).move
        else:
            choice = think(rules, state, player, seed=seed * 100_003 + ply)
            game.ms.setdefault(player, []).append(choice.ms)
            move = choice.move
        state = rules.play(state, move)
    game.plies = max_plies
    return game  # unfinished after max_plies: scored as a draw


@dataclass
class Pairing:
    """What `games` games between two levels came to."""

    strong: int
    weak: Player
    games: int = 0
    points: float = 0.0  # of the stronger level: a win 1, a draw 1/2
    first_player_wins: int = 0
    plies: list[int] = field(default_factory=list)
    ms: dict[int, list[float]] = field(default_factory=dict)
    wasted: dict[str, list[int]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0

    def line(self) -> str:
        against = (
            "random"
            if self.weak == RANDOM
            else self.weak
            if isinstance(self.weak, str)
            else f"level {self.weak}"
        )
        waste = "".join(
            f"; {'level ' * name.isdigit()}{name} wasted {turns_wasted} of {turns} turns"
            f" ({avoidable} with a clean turn there)"
            for name, (turns, turns_wasted, avoidable) in sorted(self.wasted.items())
        )
        return (
            f"  level {self.strong} v {against:8} {self.score:6.1%} of {self.games}"
            f" (first player won {self.first_player_wins}, median {statistics.median(self.plies)}"
            f" plies, {self.seconds:.0f} s{waste})"
        )


def _one(task: tuple[str, int, Player, int, dict[str, Any], int | None]) -> tuple[float, Game]:
    slug, strong, weak, seed, options, side = task
    strong_south = seed % 2 == 0 if side is None else side == 1
    south, north = (strong, weak) if strong_south else (weak, strong)
    game = play(slug, south, north, seed, options=options)
    strong_side = 1 if strong_south else 2
    score = 0.5 if game.winner is None else float(game.winner == strong_side)
    return score, game


def pairing(
    slug: str,
    strong: int,
    weak: Player,
    games: int,
    seed: int,
    jobs: int,
    first: int = 0,
    progress: Callable[[str], None] | None = None,
    options: dict[str, Any] | None = None,
    side: int | None = None,
    every: int = 10,
) -> Pairing:
    """`games` games of level `strong` against `weak` (RANDOM: a random player), sides
    alternated (or `strong` always on `side`, 1 first, 2 second), each from its own seed:
    games `first` to `first + games - 1`, so a long pairing can be played in parts that add
    up to the same games. `progress` hears the running score (and, in Diffusion Chess, the
    wasted turns) every `every` games."""
    started = time.perf_counter()
    tasks = [
        (slug, strong, weak, seed * 10_000 + index, options or {}, side)
        for index in range(first, first + games)
    ]
    result = Pairing(strong, weak)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for score, game in pool.map(_one, tasks):
            result.games += 1
            result.points += score
            result.first_player_wins += game.winner == 1
            result.plies.append(game.plies)
            for number, values in game.ms.items():
                result.ms.setdefault(number, []).extend(values)
            for name, tally in game.wasted.items():
                total = result.wasted.setdefault(name, [0, 0, 0])
                total[:] = [a + b for a, b in zip(total, tally, strict=True)]
            if progress is not None and result.games % every == 0 and result.games < games:
                wasted = "".join(
                    f", {name} wasted {tally[1]} of {tally[0]} turns ({tally[2]} avoidable)"
                    for name, tally in sorted(result.wasted.items())
                )
                progress(
                    f"    games {first}-{first + result.games - 1}: level {strong}"
                    f" {result.points:g} of {result.games}"
                    f" ({time.perf_counter() - started:.0f} s{wasted})"
                )
    result.seconds = time.perf_counter() - started
    return result


def ladder(
    slug: str,
    games: int,
    seed: int,
    jobs: int,
    levels: list[int],
    write: Callable[[str], None],
    first: int = 0,
) -> list[Pairing]:
    """Level k against level k-1 (level 1 against random) for each k in `levels`, writing
    the running score, each pairing's line as it ends and then the thinking times per move."""
    part = f" (games {first}-{first + games - 1})" if first else ""
    write(f"{slug}: {games} games per pairing{part}, sides alternated")
    results = []
    times: dict[int, list[float]] = {}
    for strong in levels:
        result = pairing(slug, strong, strong - 1, games, seed, jobs, first, write)
        results.append(result)
        write(result.line())
        for number, values in result.ms.items():
            times.setdefault(number, []).extend(values)
    for number in sorted(times):
        values = times[number]
        write(
            f"  level {number} thinks {statistics.median(values):7.1f} ms median,"
            f" {max(values):7.1f} ms max over {len(values)} moves"
        )
    return results


def scaled(name: str) -> tuple[int, float]:
    """ "5x10": level 5 with ten times its playouts and time (ValueError if not that form)."""
    number, times, scale = name.partition("x")
    if not times or not number.isdigit() or not 1 <= int(number) <= 5 or float(scale) <= 0:
        raise ValueError(name)
    return int(number), float(scale)


def levels(text: str) -> list[int]:
    """`--levels 4,5`: the stronger level of each pairing to play."""
    chosen = [int(part) for part in text.split(",") if part.strip()]
    if not chosen or not all(1 <= number <= 5 for number in chosen):
        raise ValueError(text)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=200, help="per pairing (default 200)")
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first", type=int, default=0, help="first game's number (default 0)")
    parser.add_argument(
        "--levels", type=levels, default=[1, 2, 3, 4, 5], help="the stronger levels: 4,5"
    )
    parser.add_argument("games_", nargs="*", metavar="slug", help="default: every game")
    args = parser.parse_args()
    slugs = args.games_ or [game["slug"] for game in available_games()]
    for slug in slugs:
        ladder(
            slug,
            args.games,
            args.seed,
            args.jobs,
            args.levels,
            lambda line: print(line, flush=True),
            args.first,
        )


if __name__ == "__main__":
    main()
