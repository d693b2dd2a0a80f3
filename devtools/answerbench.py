"""`python -m devtools botbench answer`: how long the computer's move takes to reach the page.

On this environment's stack (the embedded default without DATABASE_URL and REDIS_URL, as
`make run` serves; PostgreSQL and Redis with them) it starts one server (`config.serve`) and
the bots worker, each its own process as `make run` starts them, then plays `--games` games at
once against the computer at `--level`: the person is played here over a real game socket
with a signed-in session, answering each computer move at once with a random legal move. Every
frame is checked against the protocol's schema.

For each of the computer's moves it records when the frame reached the socket and, from the
database afterwards, when the worker stored the move (the event row's `created_at`, written
inside the worker's transaction: the commit comes after it, so the figure includes the commit).
It prints the median, p95 and max of that delay, and of the whole answer (the person's move
sent to the computer's move received) with the worker's thinking beside it.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from accounts.models import User
from bots import services as bots
from devtools.chaos.client import Socket, Tally, session_cookie
from devtools.servers import percentile, start_servers, stop_servers
from games.engine import pick_client_move
from games.models import Game, GameEvent

WORKER_READY_SECONDS = 30.0


@dataclass
class Seen:
    """One computer move as the socket saw it."""

    game_id: int
    version: int
    received: float  # wall clock (time.time), comparable with the row's created_at
    answer_ms: float | None  # from the person's move sent, when this answers one


@dataclass
class Run:
    seen: list[Seen] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    games_over: int = 0


def stack() -> str:
    database = (
        "SQLite" if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3") else ("PostgreSQL")
    )
    layer = "Redis" if settings.REDIS_URL else "the in-memory layer (bridged)"
    return f"{database} + {layer}"


def _prepare(games: int, slug: str, level: int, seed: int) -> tuple[str, list[tuple[int, int]]]:
    """A signed-in person and `games` new games of theirs against the computer: (cookie,
    [(game id, the person's seat)])."""
    person, _ = User.objects.get_or_create(username="answerbench")
    # An earlier run's unfinished games would count against the limit of games at once.
    for column in ("player1", "player2"):
        Game.objects.filter(status=Game.Status.ACTIVE, **{column: person}).update(
            status=Game.Status.ABORTED
        )
    rng = random.Random(seed)
    made = []
    for _ in range(games):
        game = bots.play_computer(
            user=person,
            slug=slug,
            options={},
            level=level,
            side=rng.choice(["first", "second"]),
            time_control=None,
        )
        seat = game.player_number(person)
        assert seat is not None
        made.append((game.pk, seat))
    return session_cookie(person), made


async def _play(
    base: str, cookie: str, game_id: int, seat: int, moves: int, rng: random.Random, run: Run
) -> None:
    socket = Socket(base, f"/ws/games/{game_id}/", cookie, run.tally)
    turn = asyncio.Event()
    sent_at: list[float] = []

    def on_frame(frame: dict[str, Any]) -> None:
        if frame["type"] == "move" and frame["player"] != seat:
            answer = (time.monotonic() - sent_at.pop()) * 1000 if sent_at else None
            run.seen.append(Seen(game_id, frame["v"], time.time(), answer))
        if socket.view.get("status") != "active" or socket.view.get("to_move") == seat:
            turn.set()

    socket.on_frame = on_frame
    await socket.open()
    if socket.view.get("to_move") == seat or socket.view.get("status") != "active":
        turn.set()
    request = 0
    try:
        while len([s for s in run.seen if s.game_id == game_id]) < moves:
            await asyncio.wait_for(turn.wait(), 60)
            turn.clear()
            if socket.view.get("status") != "active":
                run.games_over += 1
                return
            if socket.view.get("to_move") != seat:
                continue
            request += 1
            move = pick_client_move(socket.view["legal_moves"], rng)
            sent_at[:] = [time.monotonic()]
            answer = await socket.request(
                {"type": "move", "move": move, "ply": socket.view["ply"], "id": request}
            )
            if answer["type"] == "error":
                raise CommandError(f"game {game_id}: the move {move} was refused: {answer}")
            # A Diffusion Chess turn is several moves: the next one is ours again at once.
            if socket.view.get("to_move") == seat or socket.view.get("status") != "active":
                turn.set()
    finally:
        await socket.close()


def _stored(seen: list[Seen]) -> dict[tuple[int, int], datetime]:
    rows = GameEvent.objects.filter(game_id__in={s.game_id for s in seen}).values_list(
        "game_id", "version", "created_at"
    )
    return {(game, version): at for game, version, at in rows}


def _start_worker(log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "manage.py", "bots"],
            cwd=settings.BASE_DIR,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def bench(
    *, games: int, moves: int, slug: str, level: int, seed: int, say: Callable[[str], None]
) -> list[str]:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    say(f"{stack()}: one server and the bots worker, each its own process")
    cookie, made = _prepare(games, slug, level, seed)
    servers = start_servers(1, application="config.asgi:application")
    log = Path(servers[0].log.with_name(servers[0].log.stem + "-bots.log"))
    worker = _start_worker(log)
    run = Run()
    try:
        base = f"ws://127.0.0.1:{servers[0].port}"
        rng = random.Random(seed)

        async def main() -> None:
            await asyncio.gather(
                *(_play(base, cookie, game, seat, moves, rng, run) for game, seat in made)
            )

        started = time.monotonic()
        asyncio.run(main())
        elapsed = time.monotonic() - started
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        stop_servers(servers)
    stored = _stored(run.seen)
    delays = [
        (s.received - stored[(s.game_id, s.version)].timestamp()) * 1000
        for s in run.seen
        if (s.game_id, s.version) in stored
    ]
    answers = [s.answer_ms for s in run.seen if s.answer_ms is not None]
    if not delays:
        raise CommandError("the computer made no move")
    problems = len(run.tally.undocumented) + sum(run.tally.errors.values())
    return [
        f"{len(delays)} moves of the computer (level {level}, {slug}) in {games} game(s),"
        f" {elapsed:.0f} s; undocumented frames and error frames: {problems}",
        f"stored -> on the socket: median {statistics.median(delays):.1f}, p95"
        f" {percentile(delays, 0.95):.1f}, max {max(delays):.1f} ms",
        f"the person's move sent -> the answer on the socket: median"
        f" {statistics.median(answers):.0f}, p95 {percentile(answers, 0.95):.0f},"
        f" max {max(answers):.0f} ms"
        if answers
        else "no answers timed",
    ]
