"""Matchmaking under load: N users seek at once through real lobby sockets.

    python -m devtools lobbybench --users 400 --procs 2
    python -m devtools lobbybench --users 400 --procs 2 --floor [--unstored]

Starts PROCS Daphne processes on this environment's database and channel layer, connects
every user's lobby socket (spread over the processes), then all users send a compatible
seek at the same moment. Prints pairings per second, the time from a pair's second seek to
both users hearing `game_started` (p50/p99), and any double pairing.

--floor drives the bare stack instead (devtools/bare_asgi.py, BareLobby): the same sockets
and seeks, each paired by one Redis script and stored by one INSERT, no product code: what
the product's figures cannot go below on this machine. --unstored leaves out the INSERT:
Daphne, Channels and Redis alone.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.db.models import Q
from django.test import Client

from accounts.models import User
from devtools import bare_asgi
from devtools.servers import (
    busy_jiffies,
    check_shared_services,
    cores_busy,
    no_collector_pauses,
    process_cpu_seconds,
    start_servers,
    stop_servers,
)
from games.models import Game
from lobby.models import Seek

SEEK = [{"slug": "diffusion", "options": {}}]


@dataclass(frozen=True)
class Burst:
    """What every user seeking at once measured."""

    sent: dict[int, float]  # user id -> when the seek went
    heard: dict[int, tuple[int, float]]  # user id -> (game id, when game_started came)
    errors: list[str]
    wall: float
    answered_ms: list[float]  # each seek's time to its `ok`
    frames: int  # what the players read until told, and its size
    characters: int
    # Whose CPU the burst took: this client's (it reads every frame the players get), the
    # servers', and how busy the machine was.
    client_cpu: float
    server_cpu: float
    cores_busy: float


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


class Command(BaseCommand):
    help = "Drive N users seeking at once through lobby sockets and report pairing speed."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--users", type=int, default=200)
        parser.add_argument("--procs", type=int, default=2)
        parser.add_argument(
            "--floor", action="store_true", help="the bare stack instead of the product"
        )
        parser.add_argument(
            "--unstored", action="store_true", help="with --floor: no database, pairs not stored"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        import websockets  # noqa: F401  (dev extra)

        count = options["users"] - options["users"] % 2
        check_shared_services(options["procs"])
        if options["floor"]:
            self._floor(count, options["procs"], stored=not options["unstored"])
            return
        run = f"lb{int(time.time()) % 100000}"
        users = [
            User.objects.create_user(username=f"{run}u{i}", password=None) for i in range(count)
        ]
        cookies = {}
        for user in users:
            browser = Client()
            browser.force_login(user)
            cookies[user.pk] = f"sessionid={browser.cookies['sessionid'].value}"
        ids = [u.pk for u in users]
        burst, memory = self._run(
            ids,
            lambda user_id: ("/ws/lobby/", {"Cookie": cookies[user_id]}),
            options["procs"],
            "devtools.asgi:application",
        )
        self._report(ids, burst, memory, options["procs"])
        self._check_stored(ids)

    def _floor(self, count: int, procs: int, *, stored: bool) -> None:
        if connection.vendor != "postgresql" or not settings.REDIS_URL:
            raise CommandError("the floor needs PostgreSQL (DATABASE_URL) and Redis (REDIS_URL).")
        import redis

        with connection.cursor() as cursor:
            cursor.execute(
                f"CREATE TABLE IF NOT EXISTS {bare_asgi.PAIRINGS_TABLE} (id bigserial PRIMARY KEY, "
                "player1 integer NOT NULL, player2 integer NOT NULL, "
                "created_at timestamptz NOT NULL DEFAULT now())"
            )
            cursor.execute(f"TRUNCATE {bare_asgi.PAIRINGS_TABLE}")
        redis.Redis.from_url(settings.REDIS_URL).delete(bare_asgi.WAITING_KEY)
        ids = list(range(1, count + 1))
        query = "" if stored else "?store=0"
        burst, memory = self._run(
            ids,
            lambda user_id: (f"/ws/bare/lobby/{user_id}/{query}", {}),
            procs,
            "devtools.bare_asgi:application",
        )
        self.stdout.write(
            "the bare stack (devtools/bare_asgi.py), no product code"
            + ("" if stored else ", pairs not stored")
            + ":"
        )
        self._report(ids, burst, memory, procs)

    def _run(
        self,
        ids: list[int],
        address: Callable[[int], tuple[str, dict[str, str]]],
        procs: int,
        application: str,
    ) -> tuple[Burst, list[float]]:
        """The burst on PROCS servers of `application`, and each server's peak memory."""
        servers = start_servers(procs, application=application)
        try:
            with no_collector_pauses():
                burst = asyncio.run(self._drive(ids, address, servers))
            return burst, [server.peak_memory_mb() for server in servers]
        finally:
            stop_servers(servers)

    async def _drive(
        self,
        ids: list[int],
        address: Callable[[int], tuple[str, dict[str, str]]],
        servers: list[Any],
    ) -> Burst:
        """Connect every user (`address`: a user's path and headers), then all seek at once."""
        import websockets

        gate = asyncio.Semaphore(50)

        async def connect(index: int, user_id: int) -> Any:
            port = servers[index % len(servers)].port
            path, headers = address(user_id)
            async with gate:
                socket = await websockets.connect(
                    f"ws://127.0.0.1:{port}{path}",
                    origin=websockets.Origin(f"http://127.0.0.1:{port}"),
                    additional_headers=headers,
                    open_timeout=60,
                    ping_interval=None,  # the measurement must not race keepalive pings
                )
                await socket.recv()  # the snapshot (the bare stack's `ready`)
            return socket

        sockets = await asyncio.gather(*(connect(i, u) for i, u in enumerate(ids)))
        await asyncio.sleep(1.5)  # let the arrivals' `online` updates settle
        sent: dict[int, float] = {}
        heard: dict[int, tuple[int, float]] = {}
        errors: list[str] = []
        answered: dict[int, float] = {}
        received = [0, 0]  # frames, characters

        async def one(user_id: int, socket: Any) -> None:
            sent[user_id] = time.perf_counter()
            await socket.send(json.dumps({"type": "seek", "games": SEEK}))
            while True:
                frame = await asyncio.wait_for(socket.recv(), 120)
                received[0] += 1
                received[1] += len(frame)
                message = json.loads(frame)
                if message["type"] == "ok":
                    answered[user_id] = time.perf_counter()
                if message["type"] == "game_started" and "you" in message:
                    heard[user_id] = (message["game_id"], time.perf_counter())
                    return
                if message["type"] == "error":
                    errors.append(f"{message['code']}: {message['message']}")
                    return

        client_cpu, machine = time.process_time(), busy_jiffies()
        server_cpu = sum(process_cpu_seconds(s.process.pid) for s in servers)
        started = time.perf_counter()
        await asyncio.gather(*(one(u, s) for u, s in zip(ids, sockets, strict=True)))
        wall = time.perf_counter() - started
        burst = Burst(
            sent=sent,
            heard=heard,
            errors=errors,
            wall=wall,
            answered_ms=[(answered[pk] - sent[pk]) * 1000 for pk in answered],
            frames=received[0],
            characters=received[1],
            client_cpu=time.process_time() - client_cpu,
            server_cpu=sum(process_cpu_seconds(s.process.pid) for s in servers) - server_cpu,
            cores_busy=cores_busy(machine, busy_jiffies()),
        )
        await asyncio.gather(*(s.close() for s in sockets))
        return burst

    def _report(self, ids: list[int], burst: Burst, memory: list[float], procs: int) -> None:
        sent, heard, errors, wall = burst.sent, burst.heard, burst.errors, burst.wall
        by_game: dict[int, list[int]] = {}
        for user_id, (game_id, _) in heard.items():
            by_game.setdefault(game_id, []).append(user_id)
        latencies = [
            (max(heard[u][1] for u in pair) - max(sent[u] for u in pair)) * 1000
            for pair in by_game.values()
            if len(pair) == 2
        ]
        self.stdout.write(f"users {len(ids)}  processes {procs}  games told {len(by_game)}")
        self.stdout.write(
            f"pairings per second {len(by_game) / wall:.0f}  (all paired in {wall:.2f} s)"
        )
        answered = burst.answered_ms
        if answered:
            self.stdout.write(
                f"seek -> its ok ms: p50 {statistics.median(answered):.1f}  "
                f"p99 {percentile(answered, 0.99):.1f}"
            )
        if latencies:
            self.stdout.write(
                f"second seek -> both told ms: p50 {statistics.median(latencies):.1f}  "
                f"p99 {percentile(latencies, 0.99):.1f}  max {max(latencies):.1f}"
            )
        self.stdout.write(
            f"users told twice {sum(1 for p in by_game.values() if len(p) > 2)}  "
            f"users without a game {len(ids) - len(heard)}  errors {len(errors)}"
        )
        for error in sorted(set(errors))[:5]:
            self.stdout.write(f"  error: {error}")
        self.stdout.write(
            f"frames the players read until told: {burst.frames} ({burst.characters / 1e6:.1f} MB)"
        )
        self.stdout.write(
            f"CPU during the seeks: servers {burst.server_cpu:.2f} s, this client "
            f"{burst.client_cpu:.2f} s, cores {burst.cores_busy:.0%} busy"
        )
        self.stdout.write("peak memory per process MB: " + ", ".join(f"{m:.0f}" for m in memory))

    def _check_stored(self, ids: list[int]) -> None:
        """What the database holds after the burst: a game per pair, no seat twice."""
        games = Game.objects.filter(Q(player1_id__in=ids) | Q(player2_id__in=ids))
        seats = Counter([g.player1_id for g in games] + [g.player2_id for g in games])
        doubles = sum(1 for n in seats.values() if n > 1)
        left_open = Seek.objects.filter(user_id__in=ids, status=Seek.Status.OPEN).count()
        self.stdout.write(
            f"games stored {games.count()}  double pairings {doubles}  seeks left open {left_open}"
        )
