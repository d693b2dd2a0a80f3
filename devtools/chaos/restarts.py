"""Restarts as a deploy does them (SIGTERM, then start again), under live play:

- each server process in turn: the clients are current again soon after, no frame is
  undocumented (1012 is a documented close), no acknowledged move is lost (the suite's
  final check), and the process exits by itself within its grace;
- the sweeper, while the clocks of games nobody watches run out: every one of them ends, on
  time, exactly once (one `end` event each);
- the computer's worker, while it answers moves: every answer is played exactly once (the
  plies alternate: never two moves in a row by the bot), and it goes on answering after.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import signal
import subprocess
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async

from accounts.models import User
from bots.services import bot_user
from devtools.chaos.client import now
from devtools.chaos.cluster import Cluster, Proc
from devtools.chaos.outages import Rounds, measure_current
from devtools.chaos.tables import Table
from games import selectors, services
from games.engine import pick_client_move
from games.models import Game, GameEvent

# A stopping server's own limit is SHUTDOWN_GRACE_SECONDS; the suite waits this long.
STOP_WITHIN = 90.0


async def stop(proc: Proc, within: float = STOP_WITHIN) -> float:
    """SIGTERM, as an orchestrator stops a process; seconds until it exited by itself."""
    assert proc.process is not None
    started = now()
    os.killpg(proc.process.pid, signal.SIGTERM)
    try:
        await asyncio.to_thread(proc.process.wait, within)
    except subprocess.TimeoutExpired:
        os.killpg(proc.process.pid, signal.SIGKILL)
        await asyncio.to_thread(proc.process.wait)
        return float("inf")
    return now() - started


@dataclass
class ServerRestarts(Rounds):
    stopped: list[float] = field(default_factory=list)  # seconds from SIGTERM to exit


async def server_restarts(
    cluster: Cluster, tables: list[Table], go: asyncio.Event, rounds: int
) -> ServerRestarts:
    result = ServerRestarts("server process restart")
    for index in range(rounds):
        target = cluster.servers[index % len(cluster.servers)]
        go.set()
        await asyncio.sleep(1.0)
        signalled = now()
        result.stopped.append(await stop(target))
        await measure_current(tables, go, signalled, result)
        await asyncio.to_thread(cluster.restart, target)
    return result


def _legal(game: Game) -> tuple[int, Any]:
    view = selectors.snapshot(game)
    return view["to_move"], view["legal_moves"]


def _clocked_games(count: int, run: str, seconds: float) -> dict[int, datetime]:
    """Games nobody watches whose clocks run out in `seconds` to twice that: game ->
    deadline."""
    deadlines = {}
    for index in range(count):
        one = User.objects.create_user(username=f"cs{run}{index}a", password=None)
        two = User.objects.create_user(username=f"cs{run}{index}b", password=None)
        game = services.create_game(
            slug="diffusion", options={}, player1=one, player2=two, time_control="1+0"
        )
        # Both have moved once (a game nobody moved in is aborted, not lost on time), and the
        # player to move has `seconds` and a little more left.
        for player in (one, two):
            game = services.play_move(
                game_id=game.pk,
                user=player,
                move=pick_client_move(_legal(game)[1], random.Random(index)),
                ply=game.ply,
            ).game
        left = int((seconds + seconds * index / max(1, count - 1)) * 1000)
        clock = dict(game.clock)
        remaining = list(clock["remaining"])
        remaining[clock["running"] - 1] = left
        game.clock = {**clock, "remaining": remaining, "since": services.now_ms()}
        services._set_deadline(game)
        game.save()
        assert game.deadline is not None
        deadlines[game.pk] = game.deadline
    return deadlines


def _ends(deadlines: dict[int, datetime]) -> dict[int, tuple[int, float | None]]:
    """game -> (its `end` events, seconds from its deadline to its first end)."""
    found: dict[int, tuple[int, float | None]] = {}
    for game_id, deadline in deadlines.items():
        ends = list(
            GameEvent.objects.filter(game_id=game_id, payload__type="end")
            .order_by("created_at")
            .values_list("created_at", flat=True)
        )
        late = (ends[0] - deadline).total_seconds() if ends else None
        found[game_id] = (len(ends), late)
    return found


@dataclass
class SweeperRestart:
    games: int = 0
    ended_once: int = 0
    latest: float = float("nan")  # the latest end after its deadline, seconds
    stopped: float = float("nan")


async def sweeper_restart(cluster: Cluster, run: str, games: int = 6) -> SweeperRestart:
    """Restart the sweeper while the clocks of `games` unwatched games run out."""
    assert cluster.sweeper is not None
    ids = await sync_to_async(_clocked_games)(games, run, 2.0)
    await asyncio.sleep(1.5)
    result = SweeperRestart(games=len(ids))
    result.stopped = await stop(cluster.sweeper)
    await asyncio.sleep(1.5)  # down while deadlines pass
    await asyncio.to_thread(cluster._launch, cluster.sweeper)
    deadline = now() + 20
    ends: dict[int, tuple[int, float | None]] = {}
    while now() < deadline:
        ends = await sync_to_async(_ends)(ids)
        if all(count >= 1 for count, _ in ends.values()):
            break
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)  # a second end would come now if it ever did
    ends = await sync_to_async(_ends)(ids)
    result.ended_once = sum(1 for count, _ in ends.values() if count == 1)
    lates = [late for _, late in ends.values() if late is not None]
    result.latest = max(lates) if lates else float("nan")
    return result


@dataclass
class BotsRestart:
    games: int = 0
    answers: int = 0
    twice_in_a_row: int = 0  # a player with two moves in a row: a doubled or skipped answer
    answering_after: bool = False
    stopped: float = float("nan")
    first_answer_after: float = float("nan")  # seconds from the new worker's launch


def _human_moves(ids: list[int], human: dict[int, Any], rng: random.Random) -> int:
    """Play the person's move in every game where it is their turn; how many."""
    played = 0
    for game in Game.objects.filter(pk__in=ids, status=Game.Status.ACTIVE):
        to_move, legal = _legal(game)
        seat = 1 if game.player1_id == human[game.pk].pk else 2
        if to_move != seat:
            continue
        services.play_move(
            game_id=game.pk, user=human[game.pk], move=pick_client_move(legal, rng), ply=game.ply
        )
        played += 1
    return played


def _bot_games(count: int, run: str) -> tuple[list[int], dict[int, Any]]:
    bot = bot_user(1)
    ids, human = [], {}
    for index in range(count):
        person = User.objects.create_user(username=f"cb{run}{index}", password=None)
        game = services.create_game(slug="diffusion", options={}, player1=person, player2=bot)
        ids.append(game.pk)
        human[game.pk] = person
    return ids, human


def _movers(ids: list[int]) -> dict[int, list[int]]:
    movers: dict[int, list[int]] = {}
    for game_id, payload in (
        GameEvent.objects.filter(game_id__in=ids, ply__isnull=False)
        .order_by("game_id", "ply")
        .values_list("game_id", "payload")
    ):
        movers.setdefault(game_id, []).append(payload.get("player"))
    return movers


def _bot_answers(movers: dict[int, list[int]]) -> int:
    """The computer sits second in every game of this part."""
    return sum(sequence.count(2) for sequence in movers.values())


async def bots_restart(cluster: Cluster, run: str, games: int = 4) -> BotsRestart:
    """Play people's moves against the computer; restart its worker in the middle."""
    assert cluster.bots is not None
    rng = random.Random(run)
    ids, human = await sync_to_async(_bot_games)(games, run)
    result = BotsRestart(games=len(ids))
    restarted_at = now() + 3
    # Play goes on for a few seconds after the restart, and longer while the new worker has
    # not answered yet: on a loaded machine starting Django and its pools alone can take
    # seconds, and the part judges whether it answers, not how fast it starts.
    ends_at = restarted_at + 4
    gives_up_at = restarted_at + 60
    restarted = False
    answered_after = before = 0
    while now() < ends_at or (restarted and answered_after == 0 and now() < gives_up_at):
        await sync_to_async(_human_moves)(ids, human, rng)
        if not restarted and now() >= restarted_at:
            result.stopped = await stop(cluster.bots)
            relaunched = now()
            await asyncio.to_thread(cluster._launch, cluster.bots)
            restarted = True
            before = _bot_answers(await sync_to_async(_movers)(ids))
        elif restarted:
            after = _bot_answers(await sync_to_async(_movers)(ids))
            if answered_after == 0 and after > before:
                result.first_answer_after = now() - relaunched
            answered_after = after - before
        await asyncio.sleep(0.3)
    movers = await sync_to_async(_movers)(ids)
    result.answers = _bot_answers(movers)
    result.twice_in_a_row = sum(
        1
        for sequence in movers.values()
        for first, second in itertools.pairwise(sequence)
        if first == second
    )
    result.answering_after = answered_after > 0
    return result
