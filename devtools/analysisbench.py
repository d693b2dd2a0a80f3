"""`python -m devtools analysisbench`: the analysis board's figures (docs/PERFORMANCE.md).

    python -m devtools analysisbench review [SLUG ...] [--plies 100] [--level N]
    python -m devtools analysisbench throughput [SLUG ...] [--ms 1000]
    python -m devtools analysisbench load [--analyses 20] [--games 100] [--procs 2] [--runs 3]

`review`: for each game a finished game of `--plies` random moves (or, with `--level`, the
computer's against itself at that level), then a resignation; its
review asked for as a person asks (analysis.reviews.request) with the bots worker running as
`make run` starts it (`manage.py bots`, its own process, one search process); prints how long
each review took from the request to being stored, and the search time per position.

`throughput`: the computer's view (bots.search.evaluate) on positions of random games, one
process: playouts per second and positions per second at `--ms` a position.

`load`: the live games' move round trip (`loadtest`, the same options both times) with the
bots worker idle beside the servers, then with `--analyses` users each keeping the
computer's view busy on a position of their own analysis (a new position as soon as the
last is searched to its end, as people stepping through a game do) and the bots worker
searching them, `--runs` times in turn (the box is noisy); prints every p99 and the ratio
of the medians.
"""

from __future__ import annotations

import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from accounts.models import User
from analysis import reviews
from analysis import services as analysis
from analysis.models import Analysis, Review
from bots.models import SearchJob
from bots.search import think
from bots.search.evaluate import evaluate
from games import services as games
from games.engine import rules_for
from games.models import Game
from games.rules.notation import game_text

GAMES = ["diffusion", "four-rank-diffusion", "zigzag", "diffusion-chess"]


def random_moves(slug: str, plies: int, seed: int, level: int = 0) -> list[str]:
    """A legal line of `plies` random moves, or the computer's at `level` against itself
    (fewer if the game ends first)."""
    rules = rules_for(slug, {})
    rng = random.Random(seed)
    state = rules.initial_state()
    moves: list[str] = []
    while len(moves) < plies and rules.outcome(state) is None:
        if level:
            move = think(rules, state, level, seed=seed + len(moves)).move
        elif hasattr(rules, "random_move"):
            move = rules.random_move(state, rng)
        else:
            move = rng.choice(list(rules.legal_moves(state)))
        # The last move that ends the game is left out: the game ends by resignation.
        if rules.outcome(rules.play(state, move)) is not None:
            break
        moves.append(move)
        state = rules.play(state, move)
    return moves


def finished_game(slug: str, plies: int, seed: int, level: int) -> Game:
    one, _ = User.objects.get_or_create(username="abench-1")
    two, _ = User.objects.get_or_create(username="abench-2")
    game = games.create_game(slug=slug, options={}, player1=one, player2=two)
    rules = rules_for(slug, {})
    state = rules.initial_state()
    for ply, move in enumerate(random_moves(slug, plies, seed, level)):
        mover = one if rules.to_move(state) == 1 else two
        games.play_move(game_id=game.pk, user=mover, move=move, ply=ply)
        state = rules.play(state, move)
    games.resign(game_id=game.pk, user=one)
    return Game.objects.get(pk=game.pk)


def start_worker(log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "manage.py", "bots", "--processes", "1"],
            cwd=settings.BASE_DIR,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_worker(worker: subprocess.Popen[bytes]) -> None:
    worker.terminate()
    worker.wait(timeout=60)


def review(slugs: list[str], plies: int, seed: int, level: int, say: Any) -> None:
    made = [finished_game(slug, plies, seed, level) for slug in slugs]
    asker, _ = User.objects.get_or_create(username="abench-reviewer")
    Review.objects.filter(game__in=made).delete()
    log = Path(f"/tmp/analysisbench-bots-{os.getpid()}.log")
    worker = start_worker(log)
    try:
        for game in made:
            started = time.monotonic()
            asked = reviews.request(user=asker, game_id=game.pk)
            while True:
                done = reviews.of_game(game.pk)
                if done is not None and done.status != Review.Status.RUNNING:
                    break
                if worker.poll() is not None:
                    raise CommandError(f"the bots worker stopped: {log.read_text()[-2000:]}")
                time.sleep(0.1)
            seconds = time.monotonic() - started
            marks = sum(1 for ply in done.plies or [] if ply.get("mark"))
            say(
                f"{game.slug}: {game.ply} plies, {asked.positions} positions at {asked.ms} ms:"
                f" reviewed in {seconds:.1f} s ({done.status}; {marks} moves marked)"
            )
    finally:
        stop_worker(worker)
    if "Traceback" in log.read_text():
        raise CommandError(f"the worker logged a traceback: {log}")


def throughput(slugs: list[str], ms: float, positions: int, seed: int, say: Any) -> None:
    for slug in slugs:
        rules = rules_for(slug, {})
        line = random_moves(slug, 400, seed)
        rng = random.Random(seed)
        playouts = 0
        spent = 0.0
        for _ in range(positions):
            cut = rng.randrange(0, max(1, len(line)))
            state = rules.initial_state()
            for move in line[:cut]:
                state = rules.play(state, move)
            found = evaluate(rules, state, ms, seed)
            playouts += found.playouts
            spent += found.ms
        say(
            f"{slug}: {playouts / (spent / 1000):,.0f} playouts/s, {positions} positions at"
            f" {ms:.0f} ms: {positions / (spent / 1000):.2f} positions/s (one process)"
        )


class Askers:
    """`count` users, each with an analysis of a random game line, asking the computer about
    the next position of it as soon as their last request is searched to its end."""

    def __init__(self, count: int, seed: int) -> None:
        self.count = count
        self.seed = seed
        self.stopping = threading.Event()
        self.asked = 0
        self.searched = 0
        self.thread = threading.Thread(target=self.run, name="askers", daemon=True)

    def run(self) -> None:
        from django.db import connection

        try:
            users = [
                User.objects.get_or_create(username=f"abench-asker-{n}")[0]
                for n in range(self.count)
            ]
            Analysis.objects.filter(owner__in=users).delete()
            made = []
            for n, user in enumerate(users):
                line = random_moves("diffusion", 60, self.seed + n)
                made.append(analysis.start(user=user, slug="diffusion", moves=game_text(line)))
            waiting: dict[int, int] = {}  # asker -> the search it waits for
            node = [0] * self.count
            while not self.stopping.is_set():
                statuses = dict(
                    SearchJob.objects.filter(pk__in=waiting.values()).values_list("pk", "status")
                )
                for n, user in enumerate(users):
                    status = statuses.get(waiting.get(n, -1))
                    if status in (SearchJob.Status.QUEUED, SearchJob.Status.RUNNING):
                        continue
                    self.searched += status == SearchJob.Status.DONE
                    node[n] = (node[n] + 1) % len(made[n].tree["nodes"])
                    job = analysis.ask_computer(user=user, analysis=made[n], node=node[n])
                    waiting[n] = job.pk
                    self.asked += 1
                time.sleep(0.2)
        finally:
            connection.close()

    def __enter__(self) -> Askers:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.stopping.set()
        self.thread.join(timeout=30)


def loadtest_p99(options: list[str], say: Any) -> float:
    done = subprocess.run(
        [sys.executable, "-m", "devtools", "loadtest", *options],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stdout.splitlines():
        say(f"  {line}")
    found = re.search(r"round trip ms .*?p99 ([0-9.]+)", done.stdout)
    if done.returncode or found is None:
        raise CommandError(f"loadtest failed: {done.stdout[-1500:]} {done.stderr[-1500:]}")
    return float(found.group(1))


def quiet_queue() -> int:
    """Searches an earlier run left waiting are cancelled: each run measures its own."""
    active = (SearchJob.Status.QUEUED, SearchJob.Status.RUNNING)
    return SearchJob.objects.filter(status__in=active).update(status=SearchJob.Status.CANCELLED)


def load(analyses: int, options: list[str], seed: int, runs: int, say: Any) -> None:
    """`runs` pairs, without then with the analyses (in turn which first), so that the box's
    noise shows in both. The bots worker runs all along, as it does beside every site."""
    quiet_queue()
    alone: list[float] = []
    together: list[float] = []
    asked = searched = 0
    log = Path(f"/tmp/analysisbench-bots-{os.getpid()}.log")
    worker = start_worker(log)
    try:
        for run in range(1, runs + 1):
            # Each run adds games to the database: the later of a pair plays on a larger one.
            for together_now in (False, True) if run % 2 else (True, False):
                if not together_now:
                    say(f"run {run}, live games and the idle worker: loadtest {' '.join(options)}")
                    alone.append(loadtest_p99(options, say))
                    continue
                try:
                    with Askers(analyses, seed + run) as askers:
                        time.sleep(3)  # the queue filled and the search process busy
                        say(f"run {run}, with {analyses} analyses asking the computer")
                        together.append(loadtest_p99(options, say))
                finally:
                    quiet_queue()
                asked += askers.asked
                searched += askers.searched
    finally:
        stop_worker(worker)
    ratio = statistics.median(together) / statistics.median(alone)
    say(
        f"{asked} positions asked for, {searched} searched to the end meanwhile; live moves'"
        f" p99 without {', '.join(f'{p:.1f}' for p in alone)} ms (median"
        f" {statistics.median(alone):.1f}), with the analyses"
        f" {', '.join(f'{p:.1f}' for p in together)} ms (median"
        f" {statistics.median(together):.1f}): {ratio:.2f}x (goal: within 1.2x)"
    )
    if "Traceback" in log.read_text():
        raise CommandError(f"the worker logged a traceback: {log}")
