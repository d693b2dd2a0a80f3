"""`python -m devtools botbench load`: many real-time games against the computer at once.

The people are played here, through games.services like any client: a random legal move
after a pause drawn around `human_ms`. The computer is played by the worker, a separate
process. A game that ends is replaced, so `games` games go on the whole time.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from django.db import close_old_connections

from accounts.models import User
from bots import services as bots
from games import clocks, services
from games.models import Game
from games.rules import get_rules
from realtime.errors import ServiceError

POLL = 0.05


class LoadBench:
    def __init__(
        self,
        *,
        games: int,
        level: int,
        control: str,
        slugs: list[str],
        human_ms: float,
        seed: int,
    ) -> None:
        self.count = games
        self.level = level
        self.control = control
        self.slugs = slugs
        self.human_ms = human_ms
        self.rng = random.Random(seed)
        self.humans: list[User] = []
        self.games: dict[int, int] = {}  # game id -> index of its human
        self.known: dict[int, int] = {}  # game id -> version last read
        self.due: dict[int, float] = {}  # game id -> when its human moves
        self.human_moved: dict[int, float] = {}  # game id -> when (waiting for the bot)
        self.answers: list[float] = []  # ms from a person's move to the bot's answer seen
        self.lowest_clock = float("inf")
        self.finished = 0
        self.bot_flags = 0
        self.human_flags = 0
        self.bot_moves = 0
        self.errors = 0

    def start_game(self, index: int) -> None:
        slug = self.slugs[index % len(self.slugs)]
        game = bots.play_computer(
            user=self.humans[index],
            slug=slug,
            options={},
            level=self.level,
            side=self.rng.choice(["first", "second"]),
            time_control=self.control,
        )
        self.games[game.pk] = index
        self.known[game.pk] = -1

    def setup(self) -> None:
        bots.bot_user(self.level)
        for index in range(self.count):
            user, _ = User.objects.get_or_create(username=f"loadbench-{index}")
            Game.objects.filter(status=Game.Status.ACTIVE, player1=user).update(
                status=Game.Status.ABORTED
            )
            Game.objects.filter(status=Game.Status.ACTIVE, player2=user).update(
                status=Game.Status.ABORTED
            )
            self.humans.append(user)
        for index in range(self.count):
            self.start_game(index)

    def look(self, now: float) -> None:
        versions = dict(Game.objects.filter(pk__in=list(self.games)).values_list("id", "version"))
        changed = [g for g, v in versions.items() if self.known.get(g) != v]
        for game in Game.objects.filter(pk__in=changed):
            self.known[game.pk] = game.version
            human = self.humans[self.games[game.pk]]
            seat = game.player_number(human)
            assert seat is not None
            if game.status != Game.Status.ACTIVE:
                self.finished += 1
                if game.termination == Game.Termination.TIME:
                    if game.winner == seat:
                        self.bot_flags += 1
                    else:
                        self.human_flags += 1
                index = self.games.pop(game.pk)
                self.due.pop(game.pk, None)
                self.human_moved.pop(game.pk, None)
                self.start_game(index)
                continue
            to_move = game.state.get("to_move")
            if to_move == seat:
                if game.pk in self.human_moved:
                    self.answers.append((now - self.human_moved.pop(game.pk)) * 1000)
                    self.bot_moves += 1
                self.due.setdefault(game.pk, now + self.rng.expovariate(1000 / self.human_ms))
            elif game.clock:
                view = clocks.view(game.clock, clocks.now_ms())
                if view:
                    self.lowest_clock = min(self.lowest_clock, view["remaining"][2 - seat])

    def move_people(self, now: float) -> None:
        for game_id, at in list(self.due.items()):
            if at > now:
                continue
            del self.due[game_id]
            game = Game.objects.get(pk=game_id)
            if game.status != Game.Status.ACTIVE:
                continue
            rules = get_rules(game.slug, **game.options)
            state = rules.from_json(game.state)
            drawn = getattr(rules, "random_move", None)
            move = (
                drawn(state, self.rng) if drawn else self.rng.choice(list(rules.legal_moves(state)))
            )
            human = self.humans[self.games[game_id]]
            try:
                services.play_move(game_id=game_id, user=human, move=move, ply=game.ply)
            except ServiceError:
                self.errors += 1
                continue
            after = rules.play(state, move)
            if rules.outcome(after) is None and rules.to_move(after) != game.player_number(human):
                self.human_moved[game_id] = time.monotonic()

    def run(self, seconds: float, say: Callable[[str], None]) -> list[str]:
        self.setup()
        say(f"{self.count} games against level {self.level} at {self.control} for {seconds:.0f} s")
        started = time.monotonic()
        next_report = started + 30
        while (now := time.monotonic()) < started + seconds:
            self.look(now)
            self.move_people(now)
            close_old_connections()
            if now >= next_report:
                next_report += 30
                say(
                    f"  {now - started:5.0f} s: {self.bot_moves} bot answers,"
                    f" {self.finished} games over, {self.bot_flags} lost on time by a bot"
                )
            time.sleep(POLL)
        return self.report(time.monotonic() - started)

    def report(self, elapsed: float) -> list[str]:
        answers = sorted(self.answers) or [0.0]
        p95 = answers[min(len(answers) - 1, int(len(answers) * 0.95))]
        lowest = "n/a" if self.lowest_clock == float("inf") else f"{self.lowest_clock / 1000:.1f} s"
        return [
            f"{elapsed:.0f} s, {self.count} games at once: {self.finished} finished,"
            f" {self.bot_moves} bot answers ({self.bot_moves / elapsed:.1f}/s)",
            f"bot answer seen after a person's move: median {statistics.median(answers):.0f} ms,"
            f" p95 {p95:.0f} ms, max {answers[-1]:.0f} ms (polled every {POLL * 1000:.0f} ms)",
            f"lowest clock of a bot seen: {lowest}",
            f"lost on time: {self.bot_flags} by a bot, {self.human_flags} by a person;"
            f" refused moves of people: {self.errors}",
        ]
