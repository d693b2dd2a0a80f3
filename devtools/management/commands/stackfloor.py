"""The floor under a move: the bare stack (devtools/bare_asgi.py) loaded like `loadtest`.

    python -m devtools stackfloor --games 100 --rate 1 --procs 1
    python -m devtools stackfloor --games 200 --procs 2 --ramp

Starts PROCS Daphne processes serving the bare stack (Daphne, Channels, the Pub/Sub layer on
Redis, one PostgreSQL transaction per move through raw psycopg; none of the product's code),
opens two player sockets and SPECTATORS spectator sockets per game, and has the players
alternate moves at RATE per game per second. Each stage prints the move round trip (mover to
every other socket), the servers' CPU per move, this load generator's CPU per move, and how
busy the machine's cores were. --ramp raises the rate each stage and prints the highest
throughput whose p99 stays under 100 ms: what `loadtest --ramp` could reach at best here.

Needs PostgreSQL (DATABASE_URL) and Redis (REDIS_URL).
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from devtools import bare_asgi
from devtools.management.commands.loadtest import percentile
from devtools.servers import (
    BenchServer,
    busy_jiffies,
    cores_busy,
    no_collector_pauses,
    start_servers,
    stop_servers,
    usage,
)

GRACE_SECONDS = 1.0
P99_LIMIT_MS = 100


def own_cpu() -> float:
    usage_ = resource.getrusage(resource.RUSAGE_SELF)
    return usage_.ru_utime + usage_.ru_stime


@dataclass
class Stage:
    sent: dict[tuple[int, int], float] = field(default_factory=dict)  # (game, ply) -> sent at
    arrivals: dict[tuple[int, int], list[float]] = field(default_factory=dict)
    errors: int = 0


class Table:
    """One game's sockets: seat 1 and 2 are the players, the rest spectators."""

    def __init__(self, game_id: int, port: int, seats: int) -> None:
        self.game_id = game_id
        self.port = port
        self.seats = seats
        self.ply = 0
        self.sockets: list[Any] = []
        self.readers: list[asyncio.Task[None]] = []
        self.acks: asyncio.Queue[int] = asyncio.Queue()
        self.stage = Stage()

    async def open(self) -> None:
        import websockets

        url = f"ws://127.0.0.1:{self.port}/ws/bare/{self.game_id}/"
        self.sockets = list(
            await asyncio.gather(
                *(websockets.connect(url, open_timeout=60) for _ in range(self.seats))
            )
        )
        for socket in self.sockets:
            assert json.loads(await socket.recv())["type"] == "ready"
        self.readers = [
            asyncio.ensure_future(self._read(seat, socket))
            for seat, socket in enumerate(self.sockets)
        ]

    async def _read(self, seat: int, socket: Any) -> None:
        async for raw in socket:
            now = time.perf_counter()
            message = json.loads(raw)
            if message["type"] == "error":
                self.stage.errors += 1
                await self.acks.put(-1)
                continue
            ply = message["ply"]
            mover = (ply - 1) % 2  # seat 0 plays the odd plies
            if seat == mover:
                await self.acks.put(ply)
            else:
                self.stage.arrivals.setdefault((self.game_id, ply), []).append(now)

    async def play(self, rate: float, until: float, offset: float) -> None:
        await asyncio.sleep(offset)
        next_at = time.perf_counter()
        while time.perf_counter() < until:
            next_at += 1 / rate
            sent = time.perf_counter()
            await self.sockets[self.ply % 2].send(json.dumps({"ply": self.ply}))
            answer = await asyncio.wait_for(self.acks.get(), 30)
            if answer < 0:
                return
            self.stage.sent[(self.game_id, answer)] = sent
            self.ply = answer
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))

    async def close(self) -> None:
        for socket in self.sockets:
            await socket.close()
        for reader in self.readers:
            reader.cancel()


class Command(BaseCommand):
    help = "Load the bare stack like loadtest: the floor under the product's move path."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--games", type=int, default=100)
        parser.add_argument("--rate", type=float, default=1.0, help="moves per game per second")
        parser.add_argument("--procs", type=int, default=1)
        parser.add_argument("--seconds", type=float, default=10.0)
        parser.add_argument("--spectators", type=int, default=1, help="spectators per game")
        parser.add_argument("--ramp", action="store_true", help="raise the rate each stage")
        parser.add_argument("--stages", type=int, default=12)

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "postgresql" or not settings.REDIS_URL:
            raise CommandError("stackfloor needs PostgreSQL (DATABASE_URL) and Redis (REDIS_URL).")
        games: int = options["games"]
        self._prepare_tables(games)
        servers = start_servers(options["procs"], application="devtools.bare_asgi:application")
        self.stdout.write(
            f"bare stack: {options['procs']} Daphne process(es), {games} games, "
            f"{options['spectators']} spectator(s) per game"
        )
        try:
            with no_collector_pauses():
                asyncio.run(self._run(servers, options))
        finally:
            stop_servers(servers)

    def measure(
        self, *, games: int, rate: float, procs: int, seconds: float, spectators: int
    ) -> dict[str, Any]:
        """One stage on the bare stack, as `loadtest --floor` runs it after the product's in
        the same invocation: its figures (CPU per move of the servers: `server_ms`)."""
        if connection.vendor != "postgresql" or not settings.REDIS_URL:
            raise CommandError("the floor needs PostgreSQL (DATABASE_URL) and Redis (REDIS_URL).")
        self._prepare_tables(games)
        servers = start_servers(procs, application="devtools.bare_asgi:application")
        try:
            with no_collector_pauses():
                return asyncio.run(self._one_stage(servers, games, rate, seconds, spectators))
        finally:
            stop_servers(servers)

    async def _one_stage(
        self, servers: list[BenchServer], games: int, rate: float, seconds: float, spectators: int
    ) -> dict[str, Any]:
        tables = [
            Table(index, servers[index % len(servers)].port, 2 + spectators)
            for index in range(1, games + 1)
        ]
        await asyncio.gather(*(table.open() for table in tables))
        try:
            return await self._stage(servers, tables, rate, seconds)
        finally:
            await asyncio.gather(*(table.close() for table in tables))

    def _prepare_tables(self, games: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"CREATE TABLE IF NOT EXISTS {bare_asgi.GAMES_TABLE} (id integer PRIMARY KEY, "
                "ply integer NOT NULL, state text NOT NULL, updated_at timestamptz NOT NULL)"
            )
            cursor.execute(
                f"CREATE TABLE IF NOT EXISTS {bare_asgi.EVENTS_TABLE} (id bigserial PRIMARY KEY, "
                "game_id integer NOT NULL, ply integer NOT NULL, payload jsonb NOT NULL, "
                "created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (game_id, ply))"
            )
            cursor.execute(f"TRUNCATE {bare_asgi.GAMES_TABLE}, {bare_asgi.EVENTS_TABLE}")
            cursor.execute(
                f"INSERT INTO {bare_asgi.GAMES_TABLE} SELECT g, 0, '', now() "
                "FROM generate_series(1, %s) g",
                [games],
            )

    async def _run(self, servers: list[BenchServer], options: dict[str, Any]) -> None:
        tables = [
            Table(index, servers[index % len(servers)].port, 2 + options["spectators"])
            for index in range(1, options["games"] + 1)
        ]
        await asyncio.gather(*(table.open() for table in tables))
        stages = options["stages"] if options["ramp"] else 1
        best = None
        for number in range(1, stages + 1):
            rate = options["rate"] * number
            figures = await self._stage(servers, tables, rate, options["seconds"])
            self.stdout.write(
                f"stage {number}: {rate:g} moves/s per game, {figures['throughput']:.0f} moves/s "
                f"applied, p50 {figures['p50']:.1f} ms, p99 {figures['p99']:.1f} ms, "
                f"lost {figures['lost']}, errors {figures['errors']}; CPU per move: servers "
                f"{figures['server_ms']:.2f} ms, load generator {figures['client_ms']:.2f} ms; "
                f"cores busy {figures['busy']:.0%}"
            )
            if figures["p99"] >= P99_LIMIT_MS or figures["lost"] or figures["errors"]:
                break
            best = figures["throughput"]
        if options["ramp"]:
            self.stdout.write(
                f"bare stack, sustained throughput with p99 < {P99_LIMIT_MS} ms on "
                f"{options['procs']} process(es): "
                + (f"{best:.0f} moves/s" if best is not None else "none (the first stage missed)")
            )
        await asyncio.gather(*(table.close() for table in tables))

    async def _stage(
        self, servers: list[BenchServer], tables: list[Table], rate: float, seconds: float
    ) -> dict[str, Any]:
        for table in tables:
            table.stage = Stage()
        before = await asyncio.to_thread(usage, servers)
        client_before, busy_before = own_cpu(), busy_jiffies()
        started = time.perf_counter()
        until = started + seconds
        spread = [index / len(tables) / rate for index in range(len(tables))]
        await asyncio.gather(
            *(table.play(rate, until, offset) for table, offset in zip(tables, spread, strict=True))
        )
        ended = time.perf_counter()
        after = await asyncio.to_thread(usage, servers)
        client_after, busy_after = own_cpu(), busy_jiffies()
        await asyncio.sleep(GRACE_SECONDS)  # the last broadcasts arrive
        rtts: list[float] = []
        lost = errors = moves = 0
        for table in tables:
            stage = table.stage
            errors += stage.errors
            moves += len(stage.sent)
            for key, sent in stage.sent.items():
                arrived = stage.arrivals.get(key, [])
                lost += len(arrived) < table.seats - 1
                rtts.extend((t - sent) * 1000 for t in arrived)
        per_move = 1000 / moves if moves else float("nan")
        busy = cores_busy(busy_before, busy_after)
        return {
            "throughput": moves / (ended - started),
            "p50": statistics.median(rtts) if rtts else float("nan"),
            "p99": percentile(rtts, 0.99),
            "lost": lost,
            "errors": errors,
            "server_ms": (after["cpu_seconds"] - before["cpu_seconds"]) * per_move,
            "client_ms": (client_after - client_before) * per_move,
            "busy": busy,
        }
