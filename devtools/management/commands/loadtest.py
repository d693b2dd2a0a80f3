"""Live-play load test over real websockets against real server processes.

    python -m devtools loadtest --games 500 --rate 1 --procs 2 --seconds 30
    python -m devtools loadtest --games 200 --spectators 10 --procs 2
    python -m devtools loadtest --games 200 --procs 2 --ramp

Starts PROCS Daphne processes on this settings' database and channel layer (use PostgreSQL
and REDIS_URL for more than one process), opens two player sockets and SPECTATORS spectator
sockets per game, all of them at once (all sockets of a game on one process, as a proxy
hashing the game URL would route them), plays random legal moves at RATE moves per game per
second, and prints the move round trip, throughput, lost moves, errors, the connect-time
distribution, the servers' CPU time and SQL statements per move, and each process's peak
memory. Finished games are replaced by their rematch.

The measured period starts --settle seconds after the last socket connected: the round trips
of the moves played while the servers finish the connect storm's work are printed apart.

--ramp raises the rate stage by stage (new games each stage, same servers) and prints the
highest throughput whose p99 round trip stays under 100 ms.

--rolling-restart plays on while each process in turn is replaced as docs/DEPLOY.md's upgrade
does (its replacement started on a spare port and ready, then the old one stopped with SIGTERM:
it drains; --stop-first stops it before starting it again), every socket moving or
reconnecting as the pages do, and prints what a player would have noticed: moves lost, error
frames, banners, the round trip during the restarts (devtools/rolling.py). It fails unless
all of them are nothing and the p99 is under 1 s.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from devtools import rolling
from devtools.chaos.client import session_cookie
from devtools.servers import (
    BenchServer,
    busy_jiffies,
    check_shared_services,
    cores_busy,
    no_collector_pauses,
    percentile,
    start_servers,
    stop_servers,
    usage,
)
from games import services
from games.engine import pick_client_move

STARTUP_SECONDS = 60
GRACE_SECONDS = 3.0


def role_of(seat: int) -> str:
    return {1: "p1", 2: "p2"}.get(seat, f"s{-seat}")


@dataclass
class Stats:
    sent: dict[tuple[int, int], float] = field(default_factory=dict)  # (game, v) -> sent at
    acked: dict[tuple[int, int], str] = field(default_factory=dict)  # -> the mover's role
    arrivals: dict[tuple[int, int], dict[str, float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    games_finished: int = 0
    connects: list[float] = field(default_factory=list)  # ms from dial to snapshot, per socket
    # The servers' counters at the start and the end of the measured period.
    window: tuple[float, float] = (0.0, 0.0)
    usage_before: dict[str, float] = field(default_factory=dict)
    usage_after: dict[str, float] = field(default_factory=dict)
    busy: float = float("nan")  # the share of the machine's CPU busy in the period


class Clock:
    """Starts play once every game's sockets are connected, and the measured period
    `settle` seconds later."""

    def __init__(self, expected: int, seconds: float, settle: float) -> None:
        self.expected = expected
        self.seconds = seconds
        self.settle = settle
        self.arrived = 0
        self.started = False
        self.measure_from = 0.0
        self.stop_at = 0.0
        self.event = asyncio.Event()

    async def arrive(self) -> None:
        self.arrived += 1
        self._maybe_start()
        await self.event.wait()

    def give_up(self) -> None:
        """A game that could not connect is not waited for."""
        self.expected -= 1
        self._maybe_start()

    def _maybe_start(self) -> None:
        if not self.started and self.arrived >= self.expected:
            self.started = True
            self.measure_from = time.perf_counter() + self.settle
            self.stop_at = self.measure_from + self.seconds
            self.event.set()


@dataclass
class Table:
    game_id: int
    cookies: dict[int, str]
    port: int


class Command(BaseCommand):
    help = "Play many live games over real websockets and report latency and losses."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--games", type=int, default=100)
        parser.add_argument("--rate", type=float, default=1.0, help="moves per game per second")
        parser.add_argument("--procs", type=int, default=1)
        parser.add_argument("--seconds", type=float, default=20.0)
        parser.add_argument("--slug", default="diffusion")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--spectators", type=int, default=1, help="spectators per game")
        parser.add_argument(
            "--ramp",
            action="store_true",
            help="raise the rate per game by --rate each stage until p99 >= 100 ms",
        )
        parser.add_argument("--stages", type=int, default=12, help="most stages of --ramp")
        parser.add_argument(
            "--rolling-restart",
            action="store_true",
            help="restart each process in turn (SIGTERM, start again) while the games go on",
        )
        parser.add_argument(
            "--timeline", action="store_true", help="with --rolling-restart: round trips by 2 s"
        )
        parser.add_argument(
            "--stop-first",
            action="store_true",
            help="with --rolling-restart: stop each process before its replacement starts, "
            "instead of starting the replacement on a spare port first (docs/DEPLOY.md)",
        )
        parser.add_argument(
            "--floor",
            action="store_true",
            help="then run the bare stack (stackfloor) with the same games, rate, processes "
            "and seconds, and print its CPU per move beside the product's, and their ratio",
        )
        parser.add_argument(
            "--settle",
            type=float,
            default=2.0,
            help="seconds of play after every socket connected before the measured period "
            "(their round trips are printed apart)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            import websockets  # noqa: F401
        except ImportError as error:
            raise CommandError("loadtest needs the dev extra: pip install -e '.[dev]'") from error
        procs: int = options["procs"]
        check_shared_services(procs)
        self.rng = random.Random(options["seed"])
        servers = start_servers(procs)
        self.stdout.write(f"{procs} Daphne process(es) on ports {[s.port for s in servers]}")
        self.spectators = options["spectators"]
        self.settle = options["settle"]
        try:
            if options["rolling_restart"]:
                self._rolling_restart(servers, options)
                return
            if options["ramp"]:
                self._ramp(servers, options)
                return
            stats = self._stage(servers, options, options["rate"])
            memory = [server.peak_memory_mb() for server in servers]
        finally:
            stop_servers(servers)
        figures = self._report(stats, options, memory)
        if options["floor"]:
            self._floor(options, figures)

    def _floor(self, options: dict[str, Any], figures: dict[str, Any]) -> None:
        """The bare stack's CPU per move, measured now, beside the product's just measured:
        on a shared machine only a ratio taken in one run means anything."""
        from devtools.management.commands.stackfloor import Command as StackFloor

        floor = StackFloor(stdout=self.stdout, stderr=self.stderr).measure(
            games=options["games"],
            rate=options["rate"],
            procs=options["procs"],
            seconds=options["seconds"],
            spectators=options["spectators"],
        )
        product = figures.get("cpu_ms", float("nan")) if figures.get("in_window") else float("nan")
        self.stdout.write(
            f"the floor (stackfloor, same games, rate, processes and seconds, run now): CPU per "
            f"move {floor['server_ms']:.2f} ms, p99 {floor['p99']:.1f} ms, lost {floor['lost']}; "
            f"the product's CPU per move is {product / floor['server_ms']:.2f}x the floor's"
        )

    def _stage(self, servers: list[BenchServer], options: dict[str, Any], rate: float) -> Stats:
        tables = self._prepare(options["games"], options["slug"], [s.port for s in servers])
        with no_collector_pauses():
            return asyncio.run(self._drive(tables, rate, options["seconds"], servers))

    def _ramp(self, servers: list[BenchServer], options: dict[str, Any]) -> None:
        best = None
        for stage in range(1, options["stages"] + 1):
            rate = options["rate"] * stage
            stats = self._stage(servers, options, rate)
            figures = self._figures(stats)
            moves_per_second = figures["in_window"] / options["seconds"]
            self.stdout.write(
                f"stage {stage}: {rate:g} moves/s per game, {moves_per_second:.0f} moves/s "
                f"applied, p50 {figures['p50']:.1f} ms, p99 {figures['p99']:.1f} ms, "
                f"lost {figures['lost']}, errors {len(stats.errors)}, "
                f"CPU {figures['cpu_ms']:.2f} ms/move"
            )
            if figures["p99"] >= 100 or figures["lost"] or stats.errors:
                break
            best = moves_per_second
        self.stdout.write(
            f"sustained throughput with p99 < 100 ms on {options['procs']} process(es): "
            + (f"{best:.0f} moves/s" if best is not None else "none (the first stage missed)")
        )

    def _rolling_restart(self, servers: list[BenchServer], options: dict[str, Any]) -> None:
        tables = rolling.signed_in_tables(options["games"], options["slug"], "rr")
        self.stdout.write(
            f"{options['games']} games at {options['rate']:g} move/s each, {self.spectators} "
            f"spectator(s) per game; restarting each process {self.settle + 5:g} s after every "
            "socket is open"
        )
        with no_collector_pauses():
            tally = asyncio.run(
                rolling.run(
                    tables,
                    servers,
                    spectators=self.spectators,
                    rate=options["rate"],
                    before=self.settle + 5,
                    after=5.0,
                    seed=options["seed"],
                    surge=not options["stop_first"],
                )
            )
        if not rolling.report(tally, self.stdout.write, timeline=options["timeline"]):
            raise CommandError("the rolling restart was noticed (see above)")

    # --- setting up -------------------------------------------------------------------------

    def _prepare(self, games: int, slug: str, ports: list[int]) -> list[Table]:
        run = f"{int(time.time()) % 100000}"
        tables = []
        for index in range(games):
            first = User.objects.create_user(username=f"lt{run}a{index}", password=None)
            second = User.objects.create_user(username=f"lt{run}b{index}", password=None)
            game = services.create_game(slug=slug, options={}, player1=first, player2=second)
            tables.append(
                Table(
                    game_id=game.pk,
                    cookies={1: session_cookie(first), 2: session_cookie(second)},
                    port=ports[game.pk % len(ports)],
                )
            )
        return tables

    # --- playing ----------------------------------------------------------------------------

    async def _drive(
        self, tables: list[Table], rate: float, seconds: float, servers: list[BenchServer]
    ) -> Stats:
        stats = Stats()
        clock = Clock(expected=len(tables), seconds=seconds, settle=self.settle)

        async def sample() -> None:
            await clock.event.wait()
            await asyncio.sleep(max(0.0, clock.measure_from - time.perf_counter()))
            started = time.perf_counter()
            stats.usage_before = await asyncio.to_thread(usage, servers)
            jiffies = busy_jiffies()
            await asyncio.sleep(max(0.0, clock.stop_at - time.perf_counter()))
            stats.usage_after = await asyncio.to_thread(usage, servers)
            stats.busy = cores_busy(jiffies, busy_jiffies())
            stats.window = (started, time.perf_counter())

        sampler = asyncio.ensure_future(sample())
        await asyncio.gather(*(self._play(table, rate, clock, stats) for table in tables))
        await sampler
        return stats

    async def _play(self, table: Table, rate: float, clock: Clock, stats: Stats) -> None:
        import websockets

        game_id = table.game_id
        while not clock.started or time.perf_counter() < clock.stop_at:
            base = f"ws://127.0.0.1:{table.port}/ws/games/{game_id}/"
            origin = websockets.Origin(f"http://127.0.0.1:{table.port}")
            dialled = time.perf_counter()
            # 1 and 2 are the players; 0, -1, ... the spectators.
            seats = (1, 2, *range(0, -self.spectators, -1))
            try:
                # All at once: a reconnection storm after a deploy looks exactly like this.
                opened = await asyncio.gather(
                    *(
                        websockets.connect(
                            base,
                            origin=origin,
                            additional_headers={"Cookie": table.cookies[seat]} if seat > 0 else {},
                            open_timeout=60,
                        )
                        for seat in seats
                    )
                )
                sockets = dict(zip(seats, opened, strict=True))
            except Exception as error:
                stats.errors.append(f"connect: {type(error).__name__}: {error}")
                if not clock.started:
                    clock.give_up()
                return
            rematch = await self._play_one(game_id, sockets, rate, clock, stats, dialled)
            for socket in sockets.values():
                await socket.close()
            if rematch is None:
                return
            game_id = rematch
            table.cookies = {1: table.cookies[2], 2: table.cookies[1]}  # the rematch swaps sides

    async def _play_one(
        self,
        game_id: int,
        sockets: dict[int, Any],
        rate: float,
        clock: Clock,
        stats: Stats,
        dialled: float,
    ) -> int | None:
        view: dict[str, Any] = {}
        acks: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        rematch: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        roles = {seat: role_of(seat) for seat in sockets}
        ready = asyncio.Event()  # every socket has its snapshot: moves from now on are events
        snapshots: set[int] = set()

        async def read(seat: int) -> None:
            async for raw in sockets[seat]:
                now = time.perf_counter()
                message = json.loads(raw)
                kind = message["type"]
                if kind == "state":
                    if seat not in snapshots and not clock.started:
                        stats.connects.append((now - dialled) * 1000)
                    if seat == 1:
                        view.update(message["game"])
                    snapshots.add(seat)
                    if len(snapshots) == len(sockets):
                        ready.set()
                elif kind == "move":
                    stats.arrivals.setdefault((game_id, message["v"]), {})[roles[seat]] = now
                    if "id" in message:
                        await acks.put(message)
                elif kind == "error":
                    stats.errors.append(f"{message['code']}: {message['message']}")
                    if "id" in message:
                        await acks.put(message)
                elif kind == "rematch" and not rematch.done():
                    rematch.set_result(message["new_game_id"])

        readers = [asyncio.ensure_future(read(seat)) for seat in sockets]
        arrived = False
        try:
            await asyncio.wait_for(ready.wait(), 60)
            if not clock.started:
                # Measure the steady state: every game connected, moves spread over a second.
                arrived = True
                await clock.arrive()
                await asyncio.sleep(self.rng.random() / rate)
            stop_at = clock.stop_at
            legal, to_move, ply, status = (
                view["legal_moves"],
                view["to_move"],
                view["ply"],
                view["status"],
            )
            interval = 1 / rate
            next_at = time.perf_counter()
            while status == "active" and time.perf_counter() < stop_at:
                next_at += interval
                move = pick_client_move(legal, self.rng)
                sent = time.perf_counter()
                await sockets[to_move].send(
                    json.dumps({"type": "move", "move": move, "ply": ply, "id": ply})
                )
                answer = await asyncio.wait_for(acks.get(), 30)
                if answer["type"] == "error":
                    break
                key = (game_id, answer["v"])
                stats.sent[key] = sent
                stats.acked[key] = "p1" if to_move == 1 else "p2"
                legal, to_move, ply, status = (
                    answer["legal_moves"],
                    answer["to_move"],
                    answer["ply"],
                    answer["status"],
                )
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            if status == "active":
                await asyncio.sleep(GRACE_SECONDS)  # let the last broadcasts arrive
                return None
            stats.games_finished += 1
            for seat in (1, 2):
                await sockets[seat].send(json.dumps({"type": "rematch"}))
            return await asyncio.wait_for(rematch, 30)
        except Exception as error:
            stats.errors.append(f"{type(error).__name__}: {error}")
            if not clock.started and not arrived:
                clock.give_up()
            return None
        finally:
            for reader in readers:
                reader.cancel()

    # --- reporting --------------------------------------------------------------------------

    def _figures(self, stats: Stats) -> dict[str, Any]:
        start, end = stats.window
        rtts: list[float] = []  # moves sent in the measured period
        settling: list[float] = []  # moves sent before it, right after the connect storm
        lost = 0
        roles = ["p1", "p2", *(role_of(-i) for i in range(self.spectators))]
        for key, mover in stats.acked.items():
            arrived = stats.arrivals.get(key, {})
            # The mover's own copy is the acknowledgement; every other socket must get it.
            others = [arrived.get(role) for role in roles if role != mover]
            if None in others:
                lost += 1
                if lost <= 5:
                    self.stdout.write(f"  lost {key} mover {mover} arrived {sorted(arrived)}")
            sent = stats.sent[key]
            (rtts if sent >= start else settling).extend(
                (t - sent) * 1000 for t in others if t is not None
            )
        in_window = sum(1 for sent in stats.sent.values() if start <= sent <= end)
        cpu_ms = statements = float("nan")
        if in_window and stats.usage_after:
            cpu = stats.usage_after["cpu_seconds"] - stats.usage_before["cpu_seconds"]
            cpu_ms = cpu * 1000 / in_window
            statements = (
                stats.usage_after["statements"] - stats.usage_before["statements"]
            ) / in_window
        return {
            "rtts": rtts,
            "settling": settling,
            "lost": lost,
            "in_window": in_window,
            "cpu_ms": cpu_ms,
            "statements": statements,
            "p50": statistics.median(rtts) if rtts else float("nan"),
            "p99": percentile(rtts, 0.99),
        }

    def _report(self, stats: Stats, options: dict[str, Any], memory: list[float]) -> dict[str, Any]:
        """Print the stage's figures; returns them."""
        figures = self._figures(stats)
        rtts = figures["rtts"]
        moves = figures["in_window"]
        database = settings.DATABASES["default"]["ENGINE"].split(".")[-1]
        layer = settings.CHANNEL_LAYERS["default"]["BACKEND"].split(".")[-1]
        self.stdout.write(
            f"games {options['games']}  rate {options['rate']}/s per game  "
            f"spectators {self.spectators} per game  procs {options['procs']}  "
            f"seconds {options['seconds']} after {self.settle:g} s of settling  "
            f"({database}, {layer})"
        )
        self.stdout.write(
            f"moves applied {moves}  ({moves / options['seconds']:.0f}/s)  "
            f"games finished {stats.games_finished}"
        )
        if rtts:
            self.stdout.write(
                "round trip ms (mover to every other socket of the game): "
                f"p50 {statistics.median(rtts):.1f}  p95 {percentile(rtts, 0.95):.1f}  "
                f"p99 {percentile(rtts, 0.99):.1f}  max {max(rtts):.1f}"
            )
        if figures["settling"]:
            early = figures["settling"]
            self.stdout.write(
                f"  settling (the first {self.settle:g} s of play after the connect storm, "
                f"not in the figures above): p50 {statistics.median(early):.1f}  "
                f"p99 {percentile(early, 0.99):.1f}  max {max(early):.1f}"
            )
        self.stdout.write(f"moves lost {figures['lost']}  errors {len(stats.errors)}")
        for error in sorted(set(stats.errors))[:5]:
            self.stdout.write(f"  error: {error}")
        if stats.connects:
            c = stats.connects
            self.stdout.write(
                f"connect ms (dial to snapshot, {len(c)} sockets at once): "
                f"p50 {statistics.median(c):.0f}  p95 {percentile(c, 0.95):.0f}  "
                f"p99 {percentile(c, 0.99):.0f}  max {max(c):.0f}"
            )
        if figures["in_window"]:
            self.stdout.write(
                f"server per move ({figures['in_window']} moves measured): "
                f"CPU {figures['cpu_ms']:.2f} ms  SQL statements {figures['statements']:.2f}  "
                f"(all processes, everything they did in the period); the machine's cores "
                f"{stats.busy:.0%} busy"
            )
        self.stdout.write("peak memory per process MB: " + ", ".join(f"{m:.0f}" for m in memory))
        return figures
