"""Benchmarks of the computer opponents; each prints its figures.

    python -m devtools botbench ladder [slug ...] [--games 200] [--jobs 2] [--levels 1,2,3,4,5]
    python -m devtools botbench times [slug ...] [--positions 20]
    python -m devtools botbench load [--games 100] [--level 3] [--control 3+2] [--seconds 300]
    python -m devtools botbench answer [slug] [--games 4] [--moves 20] [--level 5]
    python -m devtools botbench anchors [slug ...] [--games 100] [--jobs 2]
        [--cells 1:random,3:greedy-1,5:greedy-2] [--options pits=8,seeds=7] [--side second]
        (default cells: level 1 against all three, level 3 against both greedy players,
        level 5 against greedy-2: the goals' cells and the steps between)

`ladder`: level 1 against a random player, then level k against level k-1, sides alternated
(devtools.ladder). `times`: thinking time per move at every level on one core, over
positions of random games (Diffusion Chess: per whole turn). `load`: `--games` games at once
against the computer at `--level` with real-time clocks, on the configured database, the
worker (`manage.py bots`) started as its own process and the people played by this command
(a random legal move after a human-like pause); it keeps that many games going, and reports
the bots' losses on time, their answer times and their lowest clock. `answer`: how long the
computer's move takes from the worker's commit to a person's game socket, on this
environment's stack (devtools/answerbench.py). `anchors`: each level against the benchmark
opponents of devtools/anchors.py (random, a one-ply greedy, a two-ply search), sides
alternated (`--side first|second`: the level always on that side), with the goal of each cell
(level 1 >= 90% against random, level 3 >= 75% against greedy-1, level 5 >= 90% against
greedy-2; Diffusion Chess: level 5 as Black >= 95% against greedy-2). Diffusion Chess's lines
also count each player's wasted turns (two new groups or more), and of those the ones where a
clean turn was there to be played (devtools/chess_waste.py).
"""

from __future__ import annotations

import os
import random
import signal
import statistics
import subprocess
import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots.search import LEVELS, think
from devtools import ladder as ladder_bench
from games.rules import available_games, get_rules

SIDES = {"alternate": None, "first": 1, "second": 2}


def _random_move(rules: Any, state: Any, rng: random.Random) -> str:
    drawn = getattr(rules, "random_move", None)
    if drawn is not None:
        return str(drawn(state, rng))
    return rng.choice(list(rules.legal_moves(state)))


def _positions(slug: str, count: int, seed: int) -> list[Any]:
    """Positions at the start of a turn, each from anywhere in a random game: the opening,
    the middle and the end alike (answers take longest in the middle)."""
    rules = get_rules(slug)
    rng = random.Random(seed)
    found: list[Any] = [rules.initial_state()]
    while len(found) < count:
        state = rules.initial_state()
        starts = []
        while rules.outcome(state) is None:
            if getattr(state, "moves_left", 5) in (4, 5):  # a turn starts here
                starts.append(state)
            state = rules.play(state, _random_move(rules, state, rng))
        found.append(rng.choice(starts))
    return found


def _answer_ms(rules: Any, state: Any, number: int, seed: int) -> float:
    """Time to answer: one move, or a whole turn where a player moves several times."""
    player = rules.to_move(state)
    started = time.perf_counter()
    while rules.outcome(state) is None and rules.to_move(state) == player:
        state = rules.play(state, think(rules, state, number, seed=seed).move)
        seed += 1
    return (time.perf_counter() - started) * 1000


class Command(BaseCommand):
    help = "Benchmarks of the computer opponents (strength ladder, thinking time, load)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("bench", choices=["ladder", "times", "load", "answer", "anchors"])
        parser.add_argument("slugs", nargs="*", help="games (default: all)")
        parser.add_argument("--games", type=int, default=None)
        parser.add_argument("--jobs", type=int, default=2)
        parser.add_argument("--top", type=int, default=5)
        parser.add_argument(
            "--levels", type=ladder_bench.levels, help="ladder: the stronger levels (4,5)"
        )
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--first", type=int, default=0, help="ladder: first game's number")
        parser.add_argument("--positions", type=int, default=20)
        parser.add_argument("--level", type=int, default=None, help="load: 3, answer: 5")
        parser.add_argument("--control", default="3+2")
        parser.add_argument("--seconds", type=float, default=300.0)
        parser.add_argument("--human-ms", type=float, default=1500.0, help="mean pause")
        parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
        parser.add_argument("--moves", type=int, default=20, help="answer: the computer's, a game")
        parser.add_argument(
            "--cells",
            default="1:random,1:greedy-1,1:greedy-2,3:greedy-1,3:greedy-2,5:greedy-2",
            help="anchors: level:opponent,...",
        )
        parser.add_argument("--options", default="", help="anchors: the game's options, pits=8,...")
        parser.add_argument(
            "--every", type=int, default=10, help="anchors: games between progress lines"
        )
        parser.add_argument(
            "--side",
            choices=["alternate", "first", "second"],
            default="alternate",
            help="anchors: the level's side",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        slugs = options["slugs"] or [game["slug"] for game in available_games()]
        if options["bench"] == "ladder":
            self.ladder(slugs, options)
        elif options["bench"] == "times":
            self.times(slugs, options)
        elif options["bench"] == "anchors":
            self.anchors(slugs, options)
        elif options["bench"] == "answer":
            from devtools import answerbench

            for line in answerbench.bench(
                games=options["games"] or 4,
                moves=options["moves"],
                slug=(options["slugs"] or ["diffusion"])[0],
                level=options["level"] or 5,
                seed=options["seed"],
                say=self._line,
            ):
                self._line(line)
        else:
            from devtools.loadbench import LoadBench

            bench = LoadBench(
                games=options["games"] or 100,
                level=options["level"] or 3,
                control=options["control"],
                slugs=slugs,
                human_ms=options["human_ms"],
                seed=options["seed"],
            )
            worker = subprocess.Popen(
                [sys.executable, "manage.py", "bots", "--processes", str(options["processes"])],
                env=os.environ.copy(),
            )
            try:
                report = bench.run(options["seconds"], lambda line: self.stdout.write(line))
            finally:
                worker.send_signal(signal.SIGTERM)
                worker.wait(timeout=30)
            for line in report:
                self.stdout.write(line)

    def ladder(self, slugs: list[str], options: dict[str, Any]) -> None:
        levels = options["levels"] or list(range(1, options["top"] + 1))
        for slug in slugs:
            ladder_bench.ladder(
                slug,
                options["games"] or 200,
                options["seed"],
                options["jobs"],
                levels,
                self._line,
                options["first"],
            )

    def anchors(self, slugs: list[str], options: dict[str, Any]) -> None:
        from devtools import anchors

        cells = []
        for part in options["cells"].split(","):
            number, _, opponent = part.strip().partition(":")
            try:
                known = opponent in (*anchors.NAMES, *anchors.CHESS_ONLY) or bool(
                    ladder_bench.scaled(opponent)
                )
            except ValueError:
                known = False
            if not number.isdigit() or not 1 <= int(number) <= 5 or not known:
                raise CommandError(
                    f"--cells: {part!r} is not level:opponent, the opponent one of"
                    f" {', '.join(anchors.NAMES)}, {' or '.join(anchors.CHESS_ONLY)}"
                    " (Diffusion Chess) or a level with a budget scale (5x10)"
                )
            cells.append((int(number), opponent))
        game_options: dict[str, Any] = {}
        for part in filter(None, options["options"].split(",")):
            name, _, value = part.partition("=")
            game_options[name.strip()] = int(value)
        games = options["games"] or 100
        label = ",".join(f"{k}={v}" for k, v in game_options.items())
        for slug in slugs:
            part = f" (games {options['first']}-{options['first'] + games - 1})" * bool(
                options["first"]
            )
            sides = "sides alternated" if options["side"] == "alternate" else "level on side"
            sides += f" {options['side']}" * (options["side"] != "alternate")
            self._line(f"{slug} {label}".strip() + f": {games} games a cell{part}, {sides}")
            for number, opponent in cells:
                result = ladder_bench.pairing(
                    slug,
                    number,
                    opponent,
                    games,
                    options["seed"],
                    options["jobs"],
                    options["first"],
                    self._line,
                    game_options,
                    SIDES[options["side"]],
                    options["every"],
                )
                goal = anchors.GOALS.get((slug, number, opponent, options["side"]))
                goal = goal or anchors.GOALS.get((number, opponent))
                verdict = (
                    ""
                    if goal is None
                    else (f"  goal {goal:.0%}: " + ("met" if result.score >= goal else "NOT met"))
                )
                times = result.ms.get(number, [0.0])
                self._line(
                    f"{result.line()}: {result.points:g}/{result.games}{verdict};"
                    f" level {number} thinks {statistics.median(times):.0f} ms median,"
                    f" {max(times):.0f} ms max"
                )

    def _line(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()

    def times(self, slugs: list[str], options: dict[str, Any]) -> None:
        if options["positions"] < 1:
            raise CommandError("--positions must be at least 1")
        self.stdout.write("thinking time per answer on one core (ms): median / max")
        self.stdout.write(
            f"{'game':22}" + "".join(f"{'level ' + str(n.number):>16}" for n in LEVELS)
        )
        for slug in slugs:
            rules = get_rules(slug)
            positions = _positions(slug, options["positions"], options["seed"])
            cells = []
            for entry in LEVELS:
                values = [
                    _answer_ms(rules, state, entry.number, seed)
                    for seed, state in enumerate(positions)
                ]
                cells.append(f"{statistics.median(values):7.0f} /{max(values):6.0f}")
            self.stdout.write(f"{slug:22}" + "".join(f"{cell:>16}" for cell in cells))
            self.stdout.flush()
