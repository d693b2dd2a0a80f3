"""One Diffusion Chess game, turn by turn: what decides the race.

    python -m devtools.chess_trace WHITE BLACK [--seed 500] [--last 30]

WHITE and BLACK are players as the benchmarks name them: a level (1-5), random, greedy-1,
greedy-2, planner, attacker, or a scaled level (5x10). For each turn it prints, at the turn's
start, both sides' groups, the size of each king's group, the mover's stones that can still
move, every capture the turn made (by a move, or by a move and its echo) and the time the
mover took for the whole turn; then the result and the longest turn of each side. Used for
docs/DIFFUSION-CHESS-STRATEGY.md.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from bots.search.mcts import think
from devtools import anchors, ladder
from games.rules import get_rules
from games.rules.chess import BLACK, INDEX, NAMES, WHITE, count_groups, group_sizes


def player(name: str) -> ladder.Player:
    return int(name) if name.isdigit() else name


def choose(rules: Any, state: Any, who: ladder.Player, rng: random.Random, seed: int) -> str:
    if isinstance(who, int):
        return think(rules, state, who, seed=seed).move
    if who in anchors.NAMES or who in anchors.CHESS_ONLY:
        return anchors.move(who, rules, state, rng)
    number, scale = ladder.scaled(who)
    return think(rules, state, number, seed=seed, scale=scale).move


def trace(white: str, black: str, seed: int, turns: int = 0) -> tuple[list[str], str]:
    """The turns' lines, and the result with each side's longest turn (after `turns` turns,
    if not 0, the game so far)."""
    rules = get_rules("diffusion-chess")
    state = rules.initial_state()
    rng = random.Random(seed)
    players = {WHITE: player(white), BLACK: player(black)}
    lines: list[str] = []
    longest = {WHITE: 0.0, BLACK: 0.0}
    ply = 0
    turn_ms = 0.0
    while rules.outcome(state) is None:
        if turns and not state.moved and state.turn > turns:
            break
        if not state.moved:
            if lines:
                lines[-1] += f", {turn_ms:.0f} ms"
            turn_ms = 0.0
            sizes = group_sizes(state.board)
            movable = sum(
                1
                for c, colour in enumerate(state.board)
                if colour == state.to_move and sizes[c] > 1
            )
            lines.append(
                f"turn {state.turn:2} {'WB'[state.to_move - 1]}: groups"
                f" {count_groups(state.board, WHITE):2}/{count_groups(state.board, BLACK):2},"
                f" kings' groups {sizes[state.kings[0]]}/{sizes[state.kings[1]]},"
                f" movable {movable}"
            )
        started = time.perf_counter()
        move = choose(rules, state, players[state.to_move], rng, seed * 100_003 + ply)
        spent = (time.perf_counter() - started) * 1000
        turn_ms += spent
        longest[state.to_move] = max(longest[state.to_move], turn_ms)
        target = move.rsplit("-", 1)[-1]
        if move != "echo" and state.board[INDEX[target]] == 3 - state.to_move:
            lines[-1] += f", captures {move}"
        before, mover = state, state.to_move
        state = rules.play(state, move)
        if move == "echo":
            taken = [
                NAMES[cell]
                for cell, colour in enumerate(state.board)
                if colour == mover and before.board[cell] == 3 - mover
            ]
            if taken:
                route = "-".join(NAMES[cell] for cell in before.last_path)
                lines[-1] += f", captures {taken[0]} by {route} and its echo"
        ply += 1
    lines[-1] += f", {turn_ms:.0f} ms"
    return lines, (
        f"{rules.outcome(state)}; longest turn: White {longest[WHITE]:.0f} ms,"
        f" Black {longest[BLACK]:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("white")
    parser.add_argument("black")
    parser.add_argument("--seed", type=int, default=500)
    parser.add_argument("--last", type=int, default=30, help="turns printed (0: all)")
    parser.add_argument("--turns", type=int, default=0, help="turns played (0: the game)")
    args = parser.parse_args()
    lines, result = trace(args.white, args.black, args.seed, args.turns)
    print("\n".join(lines[-args.last :] if args.last else lines))
    print(result)


if __name__ == "__main__":
    main()
