"""The computer's moves: a loop that finds the games where a bot is to move, thinks in a pool
of processes (never on a server's event loop) and plays each move through games.services,
exactly as a person's move is played.

Nothing is kept but what the database says: a worker killed while thinking loses nothing,
and a restarted one finds every game where a bot is to move and thinks again. Several
workers may run: the move carries the ply it expects, so only one of two answers is played.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from django.dispatch import Signal

from accounts.models import User
from bots import searches
from bots.models import Bot
from bots.search.evaluate import evaluate_json
from bots.search.mcts import Choice, think_json
from games import clocks
from games import services as games
from games.models import Game
from realtime import logs, metrics
from realtime.errors import ServiceError, is_outage

logger = logging.getLogger(__name__)

# Sent about once a second by the worker: apps above this one do their bot-related periodic
# work on it (the lobby gives seeks that asked for it a game against the computer).
ticked = Signal()

# Errors that mean the position moved on while the bot thought (a takeback, a resignation,
# the clock): nothing to do but look again.
MOVED_ON = {"stale_ply", "not_your_turn", "game_over", "no_such_game", "not_a_player"}


@dataclass(frozen=True)
class Turn:
    """A game where a bot is to move, as stored at `version`."""

    game_id: int
    version: int
    ply: int
    player: int
    bot_id: int
    level: int
    slug: str
    options: dict[str, Any]
    state: dict[str, Any]
    clock: dict[str, Any] | None

    @property
    def key(self) -> tuple[int, int]:
        return (self.game_id, self.version)


def think_ms(turn: Turn, now: int, queued: float) -> float | None:
    """How long the bot may think on this answer: a share of its clock in a real-time game
    (less when `queued` other answers wait per process), None (the level's own limit) when
    time is not short."""
    clock = turn.clock
    if not clock or clock.get("running") != turn.player:
        return None
    control = clocks.parse(clock["control"])
    if not control.realtime:
        return None  # days per move: the level's limit is minutes short of any of them
    remaining = clock["remaining"][turn.player - 1]
    if clock["moved"][turn.player - 1]:
        remaining -= max(0, now - clocks.counting_from(clock))
    share = remaining / 30 + control.increment_ms * 0.6
    if remaining < 10_000:
        share = min(share, remaining / 15)
    return max(10.0, share / max(1.0, queued))


def _exit_with(parent: int) -> None:
    """Runs in each thinking process as it starts: it ends once the worker that started it
    is gone. A worker killed outright (SIGKILL) cannot stop its pool, and an idle thinking
    process would otherwise wait for work forever."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-worker", daemon=True).start()


def _exit_with_when_idle(parent: int) -> None:
    """`_exit_with`, in a process that runs on CPU time nothing else wants (searches for
    people: the servers and the computer players come first). Linux's idle scheduling class
    gives way at once to any other process that wakes; where it is not allowed, the lowest
    priority does nearly as much."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(19)
    _exit_with(parent)


def _thinking_pool(processes: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        max_workers=processes, initializer=_exit_with, initargs=(os.getpid(),)
    )


def _search_pool(processes: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        max_workers=processes, initializer=_exit_with_when_idle, initargs=(os.getpid(),)
    )


class Worker:
    """Plays every bot's moves. `processes` think at once; the loop looks for work every
    `poll` seconds when idle."""

    def __init__(self, processes: int = 1, poll: float = 0.1, search_processes: int = 1) -> None:
        self.processes = max(1, processes)
        self.poll = poll
        self.pool = _thinking_pool(self.processes)
        # Positions people asked the computer about: a pool of their own (bots/searches.py).
        self.search_processes = max(0, search_processes)
        self.search_pool = _search_pool(max(1, self.search_processes))
        self.searching: dict[Future[dict[str, Any]], tuple[int, int, bool]] = {}
        self.known: dict[int, tuple[int, Turn | None]] = {}  # game -> (version, turn)
        self.thinking: dict[Future[Choice], Turn] = {}
        self.bots: dict[int, tuple[int, User]] = {}  # user id -> (level, user)
        self.played = 0
        self.last_tick = 0.0

    def close(self) -> None:
        # Waiting lets the pool's manager thread close its pipes before the interpreter's
        # exit hook writes to them (without the wait, Python 3.11 can race it and print
        # "Bad file descriptor" at exit). A search in progress ends within its time limit.
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.search_pool.shutdown(wait=True, cancel_futures=True)

    # --- finding the turns --------------------------------------------------------------

    def _load_bots(self) -> None:
        self.bots = {
            bot.user_id: (bot.level, bot.user) for bot in Bot.objects.select_related("user")
        }

    def waiting(self) -> list[Turn]:
        """The games where a bot is to move, read again only where their version changed."""
        rows = dict(
            Game.objects.filter(status=Game.Status.ACTIVE, against_computer=True).values_list(
                "id", "version"
            )
        )
        for game_id in set(self.known) - set(rows):
            del self.known[game_id]
        changed = [game_id for game_id, v in rows.items() if self.known.get(game_id, (-1,))[0] != v]
        if changed:
            for game in Game.objects.filter(pk__in=changed, status=Game.Status.ACTIVE):
                turn = self._turn(game)
                # A game with an offer is read again next round, answered or not.
                self.known[game.pk] = (-1 if game.offers else game.version, turn)
        return [turn for _, turn in self.known.values() if turn is not None]

    def _turn(self, game: Game) -> Turn | None:
        if not {game.player1_id, game.player2_id} & set(self.bots):
            self._load_bots()  # a bot account made since the last look
        for bot_id in (game.player1_id, game.player2_id):
            if bot_id in self.bots and game.offers:
                self._answer_offers(game, bot_id)
                return None  # answering changed the game: it is read again next round
        player = game.state.get("to_move")
        if player not in (1, 2):
            return None
        bot_id = game.player1_id if player == 1 else game.player2_id
        if bot_id not in self.bots:
            return None
        return Turn(
            game_id=game.pk,
            version=game.version,
            ply=game.ply,
            player=player,
            bot_id=bot_id,
            level=self.bots[bot_id][0],
            slug=game.slug,
            options=game.options,
            state=game.state,
            clock=game.clock,
        )

    def _answer_offers(self, game: Game, bot_id: int) -> None:
        """The computer takes a move back when asked (it is a game to learn from) and plays
        on rather than agree a draw."""
        user = self.bots[bot_id][1]
        for offer, player in (game.offers or {}).items():
            if game.player_number(user) == player:
                continue
            try:
                if offer == "takeback":
                    games.answer_takeback(game_id=game.pk, user=user, accept=True)
                elif offer == "draw":
                    games.answer_draw(game_id=game.pk, user=user, accept=False)
            except ServiceError as error:
                logger.info("bot: offer %s in game %s: %s", offer, game.pk, error.code)

    # --- thinking and playing -----------------------------------------------------------

    def step(self) -> int:
        """One round: start thinking where a bot is to move, play what is ready. Returns the
        moves played."""
        turns = self.waiting()
        busy = {turn.key for turn in self.thinking.values()}
        ready = [turn for turn in turns if turn.key not in busy]
        now = clocks.now_ms()
        # The bot nearest to running out thinks first.
        ready.sort(key=lambda turn: self._time_left(turn, now))
        queued = len(ready) / self.processes
        for turn in ready[: max(0, self.processes * 2 - len(self.thinking))]:
            seed = turn.game_id * 1_000_003 + turn.ply
            future = self.pool.submit(
                think_json,
                turn.slug,
                turn.options,
                turn.state,
                turn.level,
                seed,
                think_ms(turn, now, queued),
                str(settings.ENDGAMES_DIR),
            )
            self.thinking[future] = turn
        self.search_step()
        metrics.BOT_TURNS.labels("thinking").set(len(self.thinking))
        metrics.BOT_TURNS.labels("waiting").set(max(0, len(turns) - len(self.thinking)))
        if not self.thinking:
            return 0
        done, _ = wait(list(self.thinking), timeout=self.poll, return_when="FIRST_COMPLETED")
        played = 0
        for future in done:
            turn = self.thinking.pop(future)
            try:
                choice = future.result()
            except BrokenProcessPool:
                logger.warning("bot: a thinking process died; starting the pool again")
                self.pool.shutdown(wait=True, cancel_futures=True)
                self.pool = _thinking_pool(self.processes)
                self.thinking.clear()
                return played
            except Exception:
                logger.exception("bot: thinking failed in game %s", turn.game_id)
                continue
            metrics.BOT_THINK_SECONDS.labels(turn.slug).observe(choice.ms / 1000)
            played += self.play(turn, choice)
        return played

    def search_step(self) -> None:
        """Record the searches that finished a round; start new ones in the free processes."""
        for future in [future for future in self.searching if future.done()]:
            job_id, rounds, last = self.searching.pop(future)
            try:
                result: dict[str, Any] | None = future.result()
            except BrokenProcessPool:
                logger.warning("bot: a searching process died; starting the pool again")
                self.search_pool.shutdown(wait=True, cancel_futures=True)
                self.search_pool = _search_pool(max(1, self.search_processes))
                self.searching.clear()
                searches.requeue_stale()
                return
            except Exception:
                logger.exception("bot: search %s failed", job_id)
                result = None
            searches.record(job_id, rounds, result, last)
        # Two a process: the next search waits in the pool, not for this loop's next round.
        free = 2 * self.search_processes - len(self.searching)
        for job in searches.claim(free) if free > 0 else []:
            budget = job.budgets[min(job.rounds, len(job.budgets) - 1)]
            future = self.search_pool.submit(
                evaluate_json, job.slug, job.options, job.state, budget, job.pk
            )
            self.searching[future] = (job.pk, job.rounds + 1, job.rounds + 1 >= len(job.budgets))

    def _time_left(self, turn: Turn, now: int) -> float:
        ms = think_ms(turn, now, 1.0)
        return float("inf") if ms is None else ms

    def play(self, turn: Turn, choice: Choice) -> int:
        user = self.bots[turn.bot_id][1]
        with logs.context(game_id=turn.game_id, user_id=user.pk, user=user.username):
            try:
                games.play_move(game_id=turn.game_id, user=user, move=choice.move, ply=turn.ply)
            except ServiceError as error:
                if error.code not in MOVED_ON:
                    logger.warning(
                        "bot: move %r refused in game %s: %s", choice.move, turn.game_id, error
                    )
                return 0
        self.played += 1
        return 1

    def run(self, stopping: Any) -> None:
        """Play until `stopping()` says so."""
        while not stopping():
            try:
                if not self.step():
                    time.sleep(self.poll if not self.thinking else 0)
                if time.monotonic() - self.last_tick >= 1.0:
                    self.last_tick = time.monotonic()
                    searches.requeue_stale()
                    ticked.send(sender=Worker)
            except Exception as error:
                # A worker that dies leaves every bot silent: report, and go on.
                if is_outage(error):
                    metrics.DATABASE_ERRORS.labels("bots").inc()
                    logger.warning("bot: database unreachable (%s); trying again", error)
                else:
                    logger.exception("bot: a round failed")
                close_old_connections()
                time.sleep(1.0)
