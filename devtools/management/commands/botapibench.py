"""Bots playing over the Bot API on the production shape, against the same games over sockets.

    python -m devtools botapibench --bots 200 --procs 2 --rate 1 --seconds 20
    python -m devtools botapibench --bots 4 --seconds 2 --no-sockets     # a quick check
    python -m devtools botapibench --servers http://h:8001,http://h:8002 --pids 811,812

Starts PROCS Daphne processes (devtools/servers.py, as loadtest does) on this environment's
PostgreSQL and Redis, makes BOTS bot accounts, each with a token of the `bot` scope, and
BOTS/2 games between them. Each bot follows its event stream (GET /api/stream/event) and,
when it names the bot's game, opens the game's stream (GET /api/games/<id>/stream); its moves
are POSTed (/api/games/<id>/move), random legal moves at RATE moves a second per game
(devtools/botapi_load.py). The streams and requests of player 1 of every game go to one
process, player 2's to the next: half the players on each process, so every move crosses
from one process to the other through Redis.

It checks that every move reached both players' game streams, in order (each line's version
one more than the last), none lost, and prints moves per second, the time from a move's POST
to its arrival on the opponent's stream (p50, p99), and the servers' CPU per move (their CPU
time from /proc at the measured period's ends). Then, unless --no-sockets, it plays the same
number of games of the same game at the same rate over websockets (loadtest's games, no
spectators) on the same servers, prints that CPU per move, and the ratio of the two (the
goal: the Bot API costs at most 1.5 times the sockets' CPU per move).

With --servers it plays against processes already running (on the database this
environment names, where it makes its accounts and games), and reads their CPU from /proc
when --pids gives their ids; the websocket comparison needs the processes it starts.

It fails (CommandError) on a lost move, a line out of order, an error, or (unless --untimed)
a ratio over the goal.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from accounts import bot_accounts, tokens
from accounts.models import User
from devtools.botapi_load import Bot, Driver, Table, Tally
from devtools.servers import (
    BenchServer,
    busy_jiffies,
    check_shared_services,
    cores_busy,
    no_collector_pauses,
    percentile,
    process_cpu_seconds,
    start_servers,
    stop_servers,
)
from games import services

GOAL_RATIO = 1.5


class Command(BaseCommand):
    help = (
        "Play bots' games over the Bot API's streams and POSTs; compare CPU per move with sockets."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--bots", type=int, default=200, help="bot accounts (two a game)")
        parser.add_argument("--procs", type=int, default=2)
        parser.add_argument("--rate", type=float, default=1.0, help="moves per game per second")
        parser.add_argument("--seconds", type=float, default=20.0, help="the measured period")
        parser.add_argument(
            "--settle", type=float, default=2.0, help="seconds of play before the period"
        )
        parser.add_argument("--slug", default="diffusion")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--no-sockets", action="store_true", help="skip the websocket comparison"
        )
        parser.add_argument(
            "--no-streams",
            action="store_true",
            help="open no stream: the moves' POSTs alone, timed to their answers (what the "
            "door for a move costs; nothing is checked for loss or order)",
        )
        parser.add_argument(
            "--servers",
            default="",
            help="run against these running processes instead (base URLs, comma-separated, "
            "sharing this environment's database); no websocket comparison",
        )
        parser.add_argument(
            "--pids",
            default="",
            help="with --servers: their process ids (this machine), for the CPU per move",
        )
        parser.add_argument(
            "--untimed",
            action="store_true",
            help="judge only what held (nothing lost, in order, no error): the CPU ratio is "
            "printed, not judged (the suite's small run on a shared machine)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["bots"] < 2 or options["bots"] % 2:
            raise CommandError("--bots is an even number, two a game")
        if options["servers"]:
            urls = [url.strip().rstrip("/") for url in options["servers"].split(",")]
            pids = [int(pid) for pid in options["pids"].split(",") if pid.strip()]
            self.stdout.write(f"{len(urls)} running process(es): {urls}, pids {pids or 'unknown'}")
            tables = self.prepare(options, urls)
            figures = self.bot_api(tables, pids, options)
            self.verdict(figures, None, judge_time=not options["untimed"])
            return
        check_shared_services(options["procs"])
        servers = start_servers(options["procs"])
        self.stdout.write(
            f"{options['procs']} Daphne process(es) on ports {[s.port for s in servers]}"
        )
        try:
            urls = [f"http://127.0.0.1:{server.port}" for server in servers]
            tables = self.prepare(options, urls)
            figures = self.bot_api(tables, [server.process.pid for server in servers], options)
            sockets = None if options["no_sockets"] else self.sockets(servers, options)
        finally:
            stop_servers(servers)
        self.verdict(figures, sockets, judge_time=not options["untimed"])

    # --- setting up -------------------------------------------------------------------------

    def prepare(self, options: dict[str, Any], urls: list[str]) -> list[Table]:
        run = f"{int(time.time()) % 100000}"
        made = time.perf_counter()
        bots = []
        for index in range(options["bots"]):
            user = User.objects.create_user(username=f"bb{run}n{index}", password=None)
            bot_accounts.upgrade(user=user)
            _, secret = tokens.create_token(user=user, name="botapibench", scopes=["bot"])
            seat = index % 2  # player 1's on the first process, player 2's on the next
            url = urls[seat % len(urls)]
            bots.append((user, Bot(username=user.username, token=secret, url=url)))
        tables = []
        for first, second in zip(bots[::2], bots[1::2], strict=True):
            game = services.create_game(
                slug=options["slug"], options={}, player1=first[0], player2=second[0]
            )
            tables.append(Table(game_id=game.pk, bots={1: first[1], 2: second[1]}))
        self.users = {bot.username: user for user, bot in bots}
        self.slug = options["slug"]
        self.stdout.write(
            f"{len(bots)} bot accounts with tokens and {len(tables)} games made in "
            f"{time.perf_counter() - made:.0f} s"
        )
        return tables

    def next_game(self, table: Table) -> int:
        """The two bots' next game (their last one ended), player 2 moving first now."""
        from django.db import close_old_connections

        close_old_connections()
        table.bots = {1: table.bots[2], 2: table.bots[1]}
        game = services.create_game(
            slug=self.slug,
            options={},
            player1=self.users[table.bots[1].username],
            player2=self.users[table.bots[2].username],
        )
        return int(game.pk)

    # --- the Bot API ------------------------------------------------------------------------

    def bot_api(
        self, tables: list[Table], pids: list[int], options: dict[str, Any]
    ) -> dict[str, Any]:
        """The bots' games; the CPU per move of the processes `pids` (none: not measured)."""
        marks: dict[str, tuple[float, float, tuple[int, int]]] = {}

        def sample(when: str) -> None:
            cpu = sum(process_cpu_seconds(pid) for pid in pids) if pids else float("nan")
            marks[when] = (time.perf_counter(), cpu, busy_jiffies())

        driver = Driver(
            tables,
            rate=options["rate"],
            seconds=options["seconds"],
            settle=options["settle"],
            seed=options["seed"],
            new_game=self.next_game,
            streams=not options["no_streams"],
        )
        with no_collector_pauses():
            tally = asyncio.run(driver.run(sample))
        return self.report(tally, marks, options)

    def report(
        self,
        tally: Tally,
        marks: dict[str, tuple[float, float, tuple[int, int]]],
        options: dict[str, Any],
    ) -> dict[str, Any]:
        if "end" not in marks:
            raise CommandError("the period was never reached: " + "; ".join(tally.errors[:5]))
        start, cpu_before, jiffies_before = marks["start"]
        end, cpu_after, jiffies_after = marks["end"]
        latencies: list[float] = []
        lost = 0
        streams = not options["no_streams"]
        for key, sent in tally.sent.items():
            if not streams:
                if start <= sent <= end:
                    latencies.append((tally.answered[key] - sent) * 1000)
                continue
            arrived = tally.arrivals.get(key, {})
            missing = [seat for seat in (1, 2) if seat not in arrived]
            if missing:
                lost += 1
                if lost <= 5:
                    self.stdout.write(f"  lost: game {key[0]} v {key[1]} on seat(s) {missing}")
                continue
            opponent = 3 - tally.mover[key]
            if start <= sent <= end:
                latencies.append((arrived[opponent] - sent) * 1000)
        moves = len(latencies)
        seconds = end - start
        cpu_ms = (cpu_after - cpu_before) * 1000 / moves if moves else float("nan")
        self.stdout.write(
            f"Bot API: {len(tally.connects)} games by {options['bots']} bots, "
            f"{options['rate']:g} move/s per game, {seconds:.1f} s measured after "
            f"{options['settle']:g} s of play"
        )
        self.stdout.write(
            f"  moves {moves} ({moves / seconds:.1f}/s)  lost {lost}  out of order "
            f"{len(tally.out_of_order)}  errors {len(tally.errors)}  games finished "
            f"{tally.games_finished}  game_start lines {tally.announced}"
        )
        for problem in (tally.out_of_order + tally.errors)[:5]:
            self.stdout.write(f"  {problem}")
        if latencies:
            self.stdout.write(
                ("  POST to the opponent's stream ms: " if streams else "  POST answered ms: ")
                + f"p50 {statistics.median(latencies):.1f}  p99 {percentile(latencies, 0.99):.1f}  "
                f"max {max(latencies):.1f}"
            )
        if tally.connects:
            self.stdout.write(
                "  event stream's game_start to both game streams' state ms: "
                f"p50 {statistics.median(tally.connects):.0f}  "
                f"p99 {percentile(tally.connects, 0.99):.0f}"
            )
        self.stdout.write(
            f"  server CPU per move {cpu_ms:.2f} ms (all processes, from /proc); the machine's "
            f"cores {cores_busy(jiffies_before, jiffies_after):.0%} busy"
        )
        return {
            "moves": moves,
            "lost": lost,
            "out_of_order": len(tally.out_of_order),
            "errors": len(tally.errors),
            "cpu_ms": cpu_ms,
        }

    # --- the same games over sockets --------------------------------------------------------

    def sockets(self, servers: list[BenchServer], options: dict[str, Any]) -> dict[str, Any]:
        """loadtest's games over websockets on the same servers: the same number, game, rate
        and period, no spectators. Its CPU per move is the servers' CPU time in its period."""
        from devtools.management.commands.loadtest import Command as LoadTest

        loadtest = LoadTest(stdout=self.stdout, stderr=self.stderr)
        loadtest.rng = random.Random(options["seed"])
        loadtest.spectators = 0
        loadtest.settle = options["settle"]
        same = {**options, "games": options["bots"] // 2, "slug": options["slug"]}
        stats = loadtest._stage(servers, same, options["rate"])
        figures: dict[str, Any] = loadtest._figures(stats)
        self.stdout.write(
            f"websockets (loadtest, same games, rate and period): moves {figures['in_window']}  "
            f"lost {figures['lost']}  errors {len(stats.errors)}  mover to opponent ms: "
            f"p50 {figures['p50']:.1f}  p99 {figures['p99']:.1f}  server CPU per move "
            f"{figures['cpu_ms']:.2f} ms"
        )
        return figures

    def verdict(
        self, figures: dict[str, Any], sockets: dict[str, Any] | None, *, judge_time: bool
    ) -> None:
        failures = [
            f"{figures[name]} {name.replace('_', ' ')}"
            for name in ("lost", "out_of_order", "errors")
            if figures[name]
        ]
        if not figures["moves"]:
            failures.append("no move measured")
        if sockets is not None and sockets["lost"]:
            failures.append(f"{sockets['lost']} lost over websockets")
        if sockets is not None and sockets.get("in_window"):
            ratio = figures["cpu_ms"] / sockets["cpu_ms"]
            self.stdout.write(
                f"CPU per move, Bot API / websockets: {ratio:.2f}x (goal: at most {GOAL_RATIO:g}x)"
            )
            if judge_time and not ratio <= GOAL_RATIO:
                failures.append(f"CPU ratio {ratio:.2f}x over {GOAL_RATIO:g}x")
        if failures:
            raise CommandError("not met: " + "; ".join(failures))
        self.stdout.write("every figure met")
