"""Matchmaking under load: N users seek at once through real lobby sockets.

    python -m devtools lobbybench --users 400 --procs 2

Starts PROCS Daphne processes on this environment's database and channel layer, connects
every user's lobby socket (spread over the processes), then all users send a compatible
seek at the same moment. Prints pairings per second, the time from a pair's second seek to
both users hearing `game_started` (p50/p99), and any double pairing.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.core.management.base import BaseCommand
from django.db.models import Q
from django.test import Client

from accounts.models import User
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

    def handle(self, *args: Any, **options: Any) -> None:
        import websockets  # noqa: F401  (dev extra)

        count = options["users"] - options["users"] % 2
        check_shared_services(options["procs"])
        run = f"lb{int(time.time()) % 100000}"
        users = [
            User.objects.create_user(username=f"{run}u{i}", password=None) for i in range(count)
        ]
        cookies = {}
        for user in users:
            browser = Client()
            browser.force_login(user)
            cookies[user.pk] = f"sessionid={browser.cookies['sessionid'].value}"
        servers = start_servers(options["procs"])
        try:
            with no_collector_pauses():
                burst = asyncio.run(self._drive(users, cookies, servers))
            memory = [server.peak_memory_mb() for server in servers]
        finally:
            stop_servers(servers)
        self._report(users, burst, memory, options["procs"])

    async def _drive(self, users: list[User], cookies: dict[int, str], servers: list[Any]) -> Burst:
        import websockets

        gate = asyncio.Semaphore(50)

        async def connect(index: int, user: User) -> Any:
            port = servers[index % len(servers)].port
            async with gate:
                socket = await websockets.connect(
                    f"ws://127.0.0.1:{port}/ws/lobby/",
                    origin=websockets.Origin(f"http://127.0.0.1:{port}"),
                    additional_headers={"Cookie": cookies[user.pk]},
                    open_timeout=60,
                    ping_interval=None,  # the measurement must not race keepalive pings
                )
                await socket.recv()  # the snapshot
            return socket

        sockets = await asyncio.gather(*(connect(i, u) for i, u in enumerate(users)))
        await asyncio.sleep(1.5)  # let the arrivals' `online` updates settle
        sent: dict[int, float] = {}
        heard: dict[int, tuple[int, float]] = {}
        errors: list[str] = []
        answered: dict[int, float] = {}
        received = [0, 0]  # frames, characters

        async def one(user: User, socket: Any) -> None:
            sent[user.pk] = time.perf_counter()
            await socket.send(json.dumps({"type": "seek", "games": SEEK}))
            while True:
                frame = await asyncio.wait_for(socket.recv(), 120)
                received[0] += 1
                received[1] += len(frame)
                message = json.loads(frame)
                if message["type"] == "ok":
                    answered[user.pk] = time.perf_counter()
                if message["type"] == "game_started" and "you" in message:
                    heard[user.pk] = (message["game_id"], time.perf_counter())
                    return
                if message["type"] == "error":
                    errors.append(f"{message['code']}: {message['message']}")
                    return

        client_cpu, machine = time.process_time(), busy_jiffies()
        server_cpu = sum(process_cpu_seconds(s.process.pid) for s in servers)
        started = time.perf_counter()
        await asyncio.gather(*(one(u, s) for u, s in zip(users, sockets, strict=True)))
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

    def _report(
        self,
        users: list[User],
        burst: Burst,
        memory: list[float],
        procs: int,
    ) -> None:
        sent, heard, errors, wall = burst.sent, burst.heard, burst.errors, burst.wall
        ids = [u.pk for u in users]
        by_game: dict[int, list[int]] = {}
        for user_id, (game_id, _) in heard.items():
            by_game.setdefault(game_id, []).append(user_id)
        latencies = [
            (max(heard[u][1] for u in pair) - max(sent[u] for u in pair)) * 1000
            for pair in by_game.values()
            if len(pair) == 2
        ]
        games = Game.objects.filter(Q(player1_id__in=ids) | Q(player2_id__in=ids))
        seats = Counter([g.player1_id for g in games] + [g.player2_id for g in games])
        doubles = sum(1 for n in seats.values() if n > 1)
        left_open = Seek.objects.filter(user_id__in=ids, status=Seek.Status.OPEN).count()
        self.stdout.write(f"users {len(users)}  processes {procs}  games {games.count()}")
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
            f"double pairings {doubles}  users without a game {len(users) - len(heard)}  "
            f"seeks left open {left_open}  errors {len(errors)}"
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
