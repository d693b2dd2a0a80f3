"""python -m devtools picturebench: pictures of positions drawn on the server (games/pictures.py).

    python -m devtools picturebench --samples 300 --gif-plies 400

For each game, --samples positions, each reached by random legal moves from the start (0 to
--max-plies of them, a seed each), are drawn cold: the PNG of the position as the view draws
it on a cache miss (replay of the moves, drawing, PNG encoding), timed alone and with the
replay. Then each PNG is read back from a local-memory cache (the view's hit: one get), and a
--gif-plies Four-rank Diffusion game (random moves that do not end the game) is written as
an animated GIF, with its time and the process's peak memory growth (ru_maxrss, which counts
Pillow's C memory too, and tracemalloc's peak of Python's allocations).
The issue's figures: PNG p99 <= 50 ms cold; the 400-ply GIF <= 5 s with bounded memory.
"""

from __future__ import annotations

import gc
import random
import resource
import time
import tracemalloc
from typing import Any

from django.core.cache.backends.locmem import LocMemCache
from django.core.management.base import BaseCommand

from devtools.servers import percentile
from games import pictures
from games.engine import rules_for
from games.picture_cache import picture_key

GAMES: list[tuple[str, dict[str, Any]]] = [
    ("diffusion", {}),
    ("four-rank-diffusion", {}),
    ("zigzag", {}),
    ("diffusion-chess", {}),
]
PNG_GOAL_MS = 50.0
GIF_GOAL_S = 5.0


def random_line(rules: Any, plies: int, rng: random.Random, *, keep_going: bool) -> list[str]:
    """Up to `plies` random legal moves from the start (fewer if the game ends); with
    `keep_going`, a move that ends the game is taken only when every move does."""
    state = rules.initial_state()
    moves: list[str] = []
    pick = getattr(rules, "random_move", None)  # Diffusion Chess: its moves are too many to list
    while len(moves) < plies and rules.outcome(state) is None:
        if pick is not None:
            move = pick(state, rng)
            after = rules.play(state, move)
        else:
            legal = list(rules.legal_moves(state))
            rng.shuffle(legal)
            for move in legal:
                after = rules.play(state, move)
                if not keep_going or rules.outcome(after) is None:
                    break
        moves.append(move)
        state = after
    return moves


def ms(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 0.5) * 1000:6.2f} ms  p99 {percentile(values, 0.99) * 1000:6.2f}"
        f" ms  max {max(values) * 1000:6.2f} ms"
    )


class Command(BaseCommand):
    help = "Time the pictures of positions (PNG, cold and cached) and a whole game's GIF."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--samples", type=int, default=300, help="positions per game")
        parser.add_argument("--max-plies", type=int, default=150)
        parser.add_argument("--width", type=int, default=600)
        parser.add_argument("--gif-plies", type=int, default=400)
        parser.add_argument("--gif-width", type=int, default=480)
        parser.add_argument("--seed", type=int, default=1)

    def line(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def handle(self, *args: Any, **options: Any) -> None:
        worst = 0.0
        for slug, game_options in GAMES:
            worst = max(worst, self._pngs(slug, game_options, options))
        gif_seconds = self._gif(options["gif_plies"], options["gif_width"], options["seed"])
        self.line(
            f"goals: PNG p99 {worst * 1000:.1f} ms (<= {PNG_GOAL_MS:.0f}): "
            f"{'met' if worst * 1000 <= PNG_GOAL_MS else 'MISSED'}; "
            f"GIF {gif_seconds:.2f} s (<= {GIF_GOAL_S:.0f}): "
            f"{'met' if gif_seconds <= GIF_GOAL_S else 'MISSED'}"
        )

    def _pngs(self, slug: str, game_options: dict[str, Any], options: dict[str, Any]) -> float:
        """Draws --samples positions of one game; returns the p99 of the cold view path."""
        rules = rules_for(slug, game_options)
        rng = random.Random(f"{options['seed']}:{slug}")
        width = options["width"]
        lines = [
            random_line(rules, rng.randrange(options["max_plies"] + 1), rng, keep_going=False)
            for _ in range(options["samples"])
        ]
        # A throwaway cache of the view's kind (locmem), big enough for every sample.
        cache = LocMemCache("picturebench", {"OPTIONS": {"MAX_ENTRIES": len(lines) + 1}})
        draw: list[float] = []
        cold: list[float] = []
        sizes: list[int] = []
        for index, moves in enumerate(lines):
            began = time.perf_counter()
            # What the view does on a miss, but the database read.
            state = pictures.replay(rules, moves, len(moves))
            replayed = time.perf_counter()
            body = pictures.position_png(
                rules, state, last_move=moves[-1] if moves else None, width=width
            )
            done = time.perf_counter()
            draw.append(done - replayed)
            cold.append(done - began)
            sizes.append(len(body))
            cache.set(picture_key(index, "png", len(moves), 1, width), body)
        hits: list[float] = []
        for index, moves in enumerate(lines):
            began = time.perf_counter()
            body = cache.get(picture_key(index, "png", len(moves), 1, width))
            hits.append(time.perf_counter() - began)
            assert body is not None
        plies = sorted(len(moves) for moves in lines)
        self.line(
            f"{slug:20} {len(lines)} positions (0-{plies[-1]} plies), {width} px, "
            f"PNG {sum(sizes) // len(sizes):,} bytes on average"
        )
        self.line(f"  draw + encode:        {ms(draw)}")
        self.line(f"  replay + draw (cold): {ms(cold)}")
        self.line(f"  from the cache:       {ms(hits)}")
        return percentile(cold, 0.99)

    def _gif(self, plies: int, width: int, seed: int) -> float:
        rules = rules_for("four-rank-diffusion", {})
        # Random lines that avoid ending the game: the first seed whose line lasts `plies`.
        for attempt in range(seed, seed + 200):
            moves = random_line(rules, plies, random.Random(attempt), keep_going=True)
            if len(moves) >= plies:
                break
        gc.collect()
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        began = time.perf_counter()
        body = pictures.game_gif(rules, moves, width=width)
        seconds = time.perf_counter() - began
        _, python_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
        # The same drawing with tracemalloc off: its bookkeeping slows Python's allocations.
        began = time.perf_counter()
        pictures.game_gif(rules, moves, width=width)
        plain = time.perf_counter() - began
        self.line(
            f"four-rank-diffusion GIF: {len(moves)} plies ({len(moves) + 1} frames), {width} px,"
            f" {len(body) / 1e6:.2f} MB, {plain:.2f} s ({seconds:.2f} s under tracemalloc);"
            f" peak memory growth {grown / 1024:.1f} MB (ru_maxrss),"
            f" Python allocations' peak {python_peak / 1e6:.1f} MB (tracemalloc)"
        )
        return plain
