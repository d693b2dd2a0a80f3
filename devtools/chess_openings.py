"""Which games of the level-5 benchmark open with a capture: White's first turn played by an
opponent of the benchmarks (greedy-2 by default) from each game's seed, as `botbench anchors`
plays it (game i from seed 10,000 + i), and whether it took a Black stone (Black then has a
tenth group before it has moved: docs/DIFFUSION-CHESS-STRATEGY.md, section 6).

    python -m devtools.chess_openings [--opponent greedy-2] [--games 100] [--first 0]
"""

from __future__ import annotations

import argparse
import random
from typing import Any

from devtools import anchors
from games.rules import get_rules
from games.rules.chess import BLACK, count_groups


def first_turn(rules: Any, opponent: str, seed: int) -> Any:
    """The position after White's first turn, White played by `opponent` with the game's
    own random numbers (devtools/ladder.py's `play`)."""
    state = rules.initial_state()
    rng = random.Random(seed)
    while rules.to_move(state) == 1 and rules.outcome(state) is None:
        state = rules.play(state, anchors.move(opponent, rules, state, rng))
    return state


def opens_with_capture(rules: Any, state: Any) -> bool:
    """Whether Black has more groups than at the start: only a capture splits them."""
    return count_groups(state.board, BLACK) > count_groups(rules.initial_state().board, BLACK)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opponent", default="greedy-2")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1, help="the benchmark's --seed")
    args = parser.parse_args()
    rules = get_rules("diffusion-chess")
    captured = []
    for index in range(args.first, args.first + args.games):
        state = first_turn(rules, args.opponent, args.seed * 10_000 + index)
        if opens_with_capture(rules, state):
            captured.append(index)
            print(f"game {index}: a capture", flush=True)
    print(
        f"{args.opponent} opened with a capture in {len(captured)} of {args.games} games: "
        f"{', '.join(map(str, captured))}"
    )


if __name__ == "__main__":
    main()
