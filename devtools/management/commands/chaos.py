"""The fault-injection suite: attack two real server processes (PostgreSQL, a Redis of its
own) as a hostile client and a bad network would, and print what held.

    make chaos                      # the full suite (about 20 minutes)
    python -m devtools chaos --quick  # every part, small counts (about a minute)

Parts, in order: fuzzed frames; random protocol requests (sockets and HTTP API); floods
(against a measured baseline of other games' move round trip); password guessing; logout
closing sockets; idle sockets (held from the start, for --idle-minutes, beside the parts
above); then under live play: Redis kill -9, PostgreSQL backend kills, server process
kill -9, then restarts as a deploy does them (SIGTERM and start again: each server process,
the sweeper, the computer's worker). Every line ends PASS or FAIL, and the command fails if
any part did.

Needs DATABASE_URL (PostgreSQL; the database is created and migrated if need be) and
redis-server on the PATH (the suite runs its own Redis, since it kills it). The figures it
printed are in docs/SECURITY.md.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from typing import Any

from asgiref.sync import sync_to_async
from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from devtools.chaos import accounts, floods, fuzz, idle, outages, requests, restarts
from devtools.chaos.client import OPEN, Tally, session_cookie
from devtools.chaos.cluster import Cluster
from devtools.chaos.tables import Table, lost_moves
from devtools.servers import percentile

FULL = {
    "frames": 100_000,
    "fuzz_sockets": 80,
    "requests": 10_000,
    "flood_seconds": 15.0,
    "flooders": 4,
    "redis_kills": 20,
    "postgres_kills": 20,
    "server_kills": 5,
    "server_restarts": 4,
    "logouts": 5,
    "idle_minutes": 10.0,
    "tables": 12,
}
QUICK = {
    "frames": 2_000,
    "fuzz_sockets": 30,
    "requests": 400,
    "flood_seconds": 4.0,
    "flooders": 2,
    "redis_kills": 1,
    "postgres_kills": 1,
    "server_kills": 1,
    "server_restarts": 1,
    "logouts": 1,
    "idle_minutes": 0.25,
    "tables": 4,
}


class Command(BaseCommand):
    help = "Attack two real server processes with faults and hostile input; print what held."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--quick", action="store_true", help="every part, small counts")
        for name, value in FULL.items():
            parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=None)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--untimed",
            action="store_true",
            help="judge what held, not how fast (the test suite's run, beside other tests): "
            "the time limits are printed, and judged by the run without it",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        figures = dict(QUICK if options["quick"] else FULL)
        for name in FULL:
            if options.get(name) is not None:
                figures[name] = options[name]
        self.failed: list[str] = []
        self.timed = not options["untimed"]
        extra = {}
        if options["quick"]:
            # Presence of a dead process is dropped after 30 s in production; the quick run
            # checks the same mechanism on a shorter clock.
            extra = {"PRESENCE_HEARTBEAT_SECONDS": "1", "PRESENCE_EXPIRY_SECONDS": "3"}
        cluster = Cluster(procs=2, extra_env=extra)
        cluster.check_services()
        prepare_database()
        started = time.monotonic()
        try:
            cluster.start()
            self.line(
                f"fault-injection suite: {len(cluster.servers)} server processes and a sweeper "
                f"on PostgreSQL, Redis of its own on port {cluster.redis.port}; logs in "
                f"{cluster.directory}"
            )
            asyncio.run(self.suite(cluster, figures, random.Random(options["seed"])))
            tracebacks = cluster.tracebacks()
            self.verdict(f"tracebacks in the servers' logs: {tracebacks}", tracebacks == 0)
        finally:
            cluster.stop()
        self.line(f"took {time.monotonic() - started:.0f} s")
        if self.failed:
            raise CommandError(f"{len(self.failed)} part(s) failed: {', '.join(self.failed)}")

    def line(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def within(self, in_time: bool) -> bool:
        """A time limit, judged unless --untimed (the figure is printed either way)."""
        return in_time or not self.timed

    def current(self, rounds: Any) -> bool:
        """Every client was current again: within outages.CURRENT_WITHIN of each fault, or,
        --untimed, at all (within the minute measure_current waits)."""
        if self.timed:
            return bool(rounds.late == 0)
        return bool(rounds.worst(rounds.current) < float("inf"))

    def verdict(self, text: str, ok: bool) -> None:
        self.line(f"{text}  {'PASS' if ok else 'FAIL'}")
        if not ok:
            self.failed.append(text.split(":", 1)[0])

    async def suite(self, cluster: Cluster, figures: dict[str, Any], rng: random.Random) -> None:
        run = secrets.token_hex(3)
        users = await sync_to_async(make_users)(run, 60)
        watchers, fuzzers, askers, players = users[:8], users[8:20], users[20:36], users[36:60]
        watched = await sync_to_async(fuzz.watched_games)(watchers, 6, rng)

        cookies = [await sync_to_async(session_cookie)(user) for user in fuzzers[:2]]
        holding = asyncio.create_task(
            idle.hold(cluster, [None, *cookies], watched.ids[0], figures["idle_minutes"] * 60)
        )
        await asyncio.sleep(1)
        held = len(OPEN)

        await self.fuzz(cluster, figures, rng, fuzzers, watched, held)
        await self.requests(cluster, figures, rng, askers)
        tables, go, keepers, stop = await self.start_tables(cluster, figures, rng, players)
        await self.floods(cluster, figures, tables, go)
        await self.accounts(cluster, figures, run, watched.ids[0])

        result = await holding
        self.verdict(
            f"idle sockets: {result.sockets} held {result.seconds / 60:.1f} minutes without a "
            f"word, {result.closed} closed",
            result.closed == 0 and result.sockets > 0,
        )
        await self.outages(cluster, figures, tables, go)
        await self.restarts(cluster, figures, tables, go, run)
        stop.set()
        go.set()
        await asyncio.gather(*keepers)
        acked = [move for table in tables for move in table.acked]
        lost = await sync_to_async(lost_moves)(acked)
        answers: dict[str, int] = {}
        for table in tables:
            for key, value in table.answers.items():
                answers[key] = answers.get(key, 0) + value
        self.verdict(
            f"acknowledged moves under the faults: {len(acked)}, lost {len(lost)} "
            f"(answers to the players' moves: {dict(sorted(answers.items()))})",
            not lost and len(acked) > 0,
        )
        for table in tables:
            await table.close()

    async def fuzz(
        self,
        cluster: Cluster,
        figures: dict[str, Any],
        rng: random.Random,
        fuzzers: list[User],
        watched: fuzz.Watched,
        held: int,
    ) -> None:
        tally = Tally()
        began = time.monotonic()
        sent = await fuzz.run(
            cluster,
            tally,
            target=figures["frames"],
            sockets=figures["fuzz_sockets"],
            rate=15.0,
            fuzzers=fuzzers,
            watched=watched,
            rng=rng,
        )
        took = time.monotonic() - began
        after = await sync_to_async(fuzz.rows)(watched.ids)
        changed = [pk for pk in watched.ids if after.get(pk) != watched.before.get(pk)]
        leaked = await self.leaked(cluster, held)
        bad_closes = tally.bad_closes()
        self.verdict(
            f"frames fuzzed: {sent:,} over {figures['fuzz_sockets']} sockets in {took:.0f} s; "
            f"{tally.received:,} frames back, {len(tally.undocumented)} undocumented; "
            f"closes {dict(tally.closes)}; games changed {len(changed)} of {len(watched.ids)}; "
            f"presence rows leaked {leaked}; error codes {dict(tally.errors.most_common(8))}",
            sent >= figures["frames"]
            and not tally.undocumented
            and not bad_closes
            and not changed
            and leaked == 0,
        )
        for problem in tally.undocumented[:5]:
            self.line(f"  undocumented: {problem}")
        if leaked:
            for row in await sync_to_async(outages.rows_of)(outages.server_prefixes(cluster)):
                self.line(f"  row: {row}")

    async def leaked(self, cluster: Cluster, held: int, within: float = 10) -> int:
        """Connection rows beyond the sockets the suite holds open, once closes settled."""
        deadline = time.monotonic() + within
        while True:
            rows = await sync_to_async(outages.presence_rows)(outages.server_prefixes(cluster))
            extra = rows - len(OPEN)
            if extra == 0 or time.monotonic() > deadline:
                return extra
            await asyncio.sleep(0.2)

    async def requests(
        self, cluster: Cluster, figures: dict[str, Any], rng: random.Random, askers: list[User]
    ) -> None:
        tally = Tally()
        began = time.monotonic()
        answers = await requests.run(
            cluster, tally, target=figures["requests"], http_share=0.2, players=askers, rng=rng
        )
        took = time.monotonic() - began
        kinds = dict(answers.kinds.most_common(12))
        self.verdict(
            f"random protocol requests: {answers.asked:,} in {took:.0f} s ({answers.http:,} over "
            f"HTTP); answered with a documented code {answers.answered:,}, unanswered "
            f"{len(answers.unanswered)}, undocumented "
            f"{len(answers.undocumented) + len(tally.undocumented)}; "
            f"most common answers {kinds}",
            answers.asked >= figures["requests"]
            and answers.answered == answers.asked
            and not tally.undocumented
            and not tally.bad_closes(),
        )
        for problem in [
            *answers.unanswered[:3],
            *answers.undocumented[:3],
            *tally.undocumented[:3],
        ]:
            self.line(f"  {problem}")

    async def start_tables(
        self, cluster: Cluster, figures: dict[str, Any], rng: random.Random, players: list[User]
    ) -> tuple[list[Table], asyncio.Event, list[asyncio.Task[None]], asyncio.Event]:
        tally = Tally()
        self.table_tally = tally
        tables = []
        for index in range(figures["tables"]):
            pair = (players[2 * index % len(players)], players[(2 * index + 1) % len(players)])
            table = Table(cluster, pair, tally, random.Random(rng.random()))
            await table.start()
            tables.append(table)
        go, stop = asyncio.Event(), asyncio.Event()
        keepers = []
        for table in tables:
            keepers.append(asyncio.create_task(table.keep_connected(stop)))
            keepers.append(asyncio.create_task(table.play(0.5, go, stop)))
        return tables, go, keepers, stop

    async def floods(
        self, cluster: Cluster, figures: dict[str, Any], tables: list[Table], go: asyncio.Event
    ) -> None:
        result = await floods.run(
            cluster,
            tables,
            go,
            flooders=figures["flooders"],
            rate=300,
            seconds=figures["flood_seconds"],
        )
        median = percentile([float(n) for n in result.frames_before_close], 0.5)
        self.verdict(
            f"floods: {result.connections} flooding connections at 300 messages/s, "
            f"{result.sent:,} messages; closes {dict(result.closes)}, then "
            f"{result.refused} reconnection(s) refused at the handshake; warnings per connection "
            f"{dict(result.warnings)}, messages before the close median {median:.0f}; other "
            f"games' move round trip p50 {result.baseline_p50:.1f} -> {result.flood_p50:.1f} ms, "
            f"p99 {result.baseline_p99:.1f} -> {result.flood_p99:.1f} ms (x{result.ratio:.2f}; "
            f"{result.baseline_moves} and {result.flood_moves} moves; judged on the "
            f"{result.judged}: x{result.judged_ratio:.2f})",
            result.closed_as_documented and self.within(result.judged_ratio <= 2.0),
        )

    async def accounts(
        self, cluster: Cluster, figures: dict[str, Any], run: str, game_id: int
    ) -> None:
        password = f"chaos-{run}-long-password"
        victim, leaver = await sync_to_async(make_accounts)(run, password)
        guessing = await asyncio.to_thread(accounts.guess, cluster, victim, password)
        limit = 20 if guessing.window_turned else 10
        self.verdict(
            f"login guessing: locked out after {guessing.failures_before_lock} failures"
            f"{' (the counting window turned over meanwhile)' if guessing.window_turned else ''}; "
            f"the right password refused while locked: {guessing.right_password_refused}",
            guessing.failures_before_lock is not None
            and guessing.failures_before_lock <= limit
            and guessing.right_password_refused,
        )
        tally = Tally()
        result = await accounts.logouts(
            cluster, tally, leaver, password, game_id, figures["logouts"]
        )
        self.verdict(
            f"logout: {result.rounds} log-outs, {result.closed_4401} of {result.sockets} sockets "
            f"(lobby and game, both processes) closed with 4401, the slowest "
            f"{result.slowest * 1000:.0f} ms after the request",
            result.rounds == figures["logouts"]
            and result.closed_4401 == result.sockets
            and self.within(result.slowest <= 1.0),
        )

    async def outages(
        self, cluster: Cluster, figures: dict[str, Any], tables: list[Table], go: asyncio.Event
    ) -> None:
        redis = await outages.redis_kills(cluster, tables, go, figures["redis_kills"], down=2.0)
        self.verdict(
            f"Redis kill -9 x{redis.rounds} (down 2 s each, play going on): every client "
            f"current within {redis.worst(redis.current):.1f} s of Redis back (max; median "
            f"{percentile(redis.current, 0.5):.1f}), "
            f"{redis.late} round(s) over {outages.CURRENT_WITHIN:.0f} s",
            redis.rounds == figures["redis_kills"] and self.current(redis),
        )
        for problem in redis.behind[:5]:
            self.line(f"  behind: {problem}")
        postgres = await outages.postgres_kills(
            cluster, tables, go, figures["postgres_kills"], watch=3.0
        )
        self.verdict(
            f"PostgreSQL backend kills x{postgres.rounds} ({postgres.killed_sessions} sessions): "
            f"pages failing after a kill for at most {postgres.worst(postgres.failing):.2f} s; "
            f"every client current within {postgres.worst(postgres.current):.1f} s (max)",
            postgres.rounds == figures["postgres_kills"]
            and self.current(postgres)
            and self.within(postgres.worst(postgres.failing) <= 2.0)
            and postgres.worst(postgres.failing) < float("inf"),
        )
        for problem in postgres.behind[:5]:
            self.line(f"  behind: {problem}")
        servers = await outages.server_kills(cluster, tables, go, figures["server_kills"])
        self.verdict(
            f"server process kill -9 x{servers.rounds}: every client current within "
            f"{servers.worst(servers.current):.1f} s (max) of the kill, presence right within "
            f"{servers.worst(servers.presence):.1f} s (max)",
            servers.rounds == figures["server_kills"]
            and self.current(servers)
            and self.within(servers.presence_late == 0)
            and servers.worst(servers.presence) < float("inf"),
        )
        for problem in servers.behind[:5]:
            self.line(f"  behind: {problem}")
        tally = self.table_tally
        self.verdict(
            f"frames the players and spectators received: {tally.received:,}, undocumented "
            f"{len(tally.undocumented)}; closes {dict(tally.closes)}",
            not tally.undocumented,
        )

    async def restarts(
        self,
        cluster: Cluster,
        figures: dict[str, Any],
        tables: list[Table],
        go: asyncio.Event,
        run: str,
    ) -> None:
        servers = await restarts.server_restarts(cluster, tables, go, figures["server_restarts"])
        self.verdict(
            f"server process restart (SIGTERM, start again) x{servers.rounds}: each stopped by "
            f"itself in at most {servers.worst(servers.stopped):.1f} s; every client current "
            f"within {servers.worst(servers.current):.1f} s (max) of the signal",
            servers.rounds == figures["server_restarts"]
            and self.current(servers)
            and servers.worst(servers.stopped) < restarts.STOP_WITHIN,
        )
        for problem in servers.behind[:5]:
            self.line(f"  behind: {problem}")
        sweeper = await restarts.sweeper_restart(cluster, run)
        self.verdict(
            f"sweeper restart while {sweeper.games} unwatched games ran out of time: "
            f"{sweeper.ended_once} ended exactly once, the latest {sweeper.latest:.1f} s after "
            f"its deadline; the sweeper stopped in {sweeper.stopped:.1f} s",
            sweeper.ended_once == sweeper.games and self.within(sweeper.latest < 10),
        )
        bots = await restarts.bots_restart(cluster, run)
        self.verdict(
            f"computer's worker restart while it answered {bots.games} games: {bots.answers} "
            f"answers, moves twice in a row {bots.twice_in_a_row}, answering after the restart: "
            f"{'yes' if bots.answering_after else 'no'}"
            + (
                f" ({bots.first_answer_after:.1f} s after its launch)"
                if bots.answering_after
                else ""
            )
            + f"; it stopped in {bots.stopped:.1f} s",
            bots.twice_in_a_row == 0 and bots.answering_after and bots.answers > 0,
        )


def prepare_database() -> None:
    """Create the configured database if it is missing, and migrate it."""
    import psycopg
    from django.conf import settings
    from django.core.management import call_command

    database = settings.DATABASES["default"]
    user, host, port = database["USER"], database["HOST"] or "127.0.0.1", database["PORT"] or 5432
    admin = f"postgresql://{user}@{host}:{port}/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        found = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [database["NAME"]]
        ).fetchone()
        if not found:
            connection.execute(f'CREATE DATABASE "{database["NAME"]}"')
    call_command("migrate", verbosity=0, interactive=False)


def make_users(run: str, count: int) -> list[User]:
    return [
        User.objects.create_user(username=f"cx{run}{index:02d}", password=None)
        for index in range(count)
    ]


def make_accounts(run: str, password: str) -> tuple[str, str]:
    victim = User.objects.create_user(username=f"cx{run}victim", password=password)
    leaver = User.objects.create_user(username=f"cx{run}leaver", password=password)
    return victim.username, leaver.username
