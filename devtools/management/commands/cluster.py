"""The cluster drill (issue 59): the site on nine hosts of this machine (devtools/cluster/drill.py)
with players through nginx, through a web host cut off, a Redis master killed, the PostgreSQL
primary lost and a rolling deploy of the six web processes.

    sudo .venv/bin/python -m devtools cluster [--tables 250] [--spectators 2] [--rate 0.5]
        [--faults web,redis,postgres,deploy] [--gap 20]

Prints, for each fault: the seconds until every game played again (the longest any game went
without an acknowledged move in the window after the fault, counted from the fault; a game
moves every 1/rate s), the median game's, the acknowledged moves lost, and the tracebacks in
the processes' logs; and PostgreSQL's client connections. Fails unless every figure meets its
goal (10 s for a web host and a deploy, 30 s for Redis and PostgreSQL; 0 lost; 0 tracebacks;
every frame documented).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from devtools.cluster import costs
from devtools.cluster import drill as drills
from devtools.cluster.hosts import Network

FAULTS = ("web", "redis", "postgres", "deploy")
GOALS = {"web": 10.0, "redis": 30.0, "postgres": 30.0, "deploy": 10.0}


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tables", type=int, default=250, help="games at once")
        parser.add_argument("--spectators", type=int, default=2, help="per game")
        parser.add_argument("--rate", type=float, default=0.5, help="moves a second per game")
        parser.add_argument("--faults", default=",".join(FAULTS))
        parser.add_argument("--gap", type=float, default=20.0, help="seconds between faults")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--web-hosts", type=int, default=3, help="two web processes each")
        parser.add_argument(
            "--latency", type=float, default=0.0,
            help="ms each way between a web host and a data service, through a relay in "
            "user space (the kernel here has no netem): 0.75 for 1-2 ms a round trip; the "
            "relays' CPU is the drill's (docs/SCALING.md)",
        )  # fmt: skip
        parser.add_argument("--jitter", type=float, default=0.25, help="ms, each way")
        parser.add_argument(
            "--measure", type=float, default=0.0,
            help="seconds of steady play, before the faults, over which each part's cost is "
            "measured (docs/SCALING.md)",
        )  # fmt: skip
        parser.add_argument(
            "--node-share", type=float, default=0.2,
            help="the share of the tables played by the Node.js players "
            "(devtools/cluster/node), at least one table when above 0",
        )  # fmt: skip
        # The players' process (started by the drill itself).
        parser.add_argument("--players", metavar="ADDRESS:PORT", help="==SUPPRESS==")
        parser.add_argument("--out", help="==SUPPRESS==")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["players"]:
            from devtools.cluster import players

            address, port = options["players"].rsplit(":", 1)
            players.run(
                address, int(port), options["tables"], options["spectators"], options["rate"],
                options["seed"], Path(options["out"]), options["node_share"],
            )  # fmt: skip
            return
        if os.geteuid() != 0:
            raise CommandError("the drill makes network namespaces: run it as root")
        faults = [name for name in options["faults"].split(",") if name]
        unknown = set(faults) - set(FAULTS)
        if unknown:
            raise CommandError(f"--faults takes {', '.join(FAULTS)}, not {', '.join(unknown)}")
        drill = drills.Drill(
            Network(drills.hosts(options["web_hosts"])),
            web_hosts=options["web_hosts"],
            say=self.stdout.write,
            latency=(options["latency"], options["jitter"]) if options["latency"] else None,
        )
        try:
            drill.up()
            ok = self._play(drill, faults, options)
        finally:
            drill.down()
        if not ok:
            raise CommandError("a figure missed its goal (see above)")

    def _play(self, drill: drills.Drill, faults: list[str], options: dict[str, Any]) -> bool:
        assert drill.proxy is not None
        out = Path(tempfile.mkdtemp(prefix="diffusion-drill-")) / "players.json"
        command = [
            sys.executable, "-m", "devtools", "cluster",
            "--players", f"{drill.proxy.host.address}:80", "--out", str(out),
            "--tables", str(options["tables"]), "--spectators", str(options["spectators"]),
            "--rate", str(options["rate"]), "--seed", str(options["seed"]),
            "--node-share", str(options["node_share"]),
        ]  # fmt: skip
        env = {**drill.env, "DJANGO_SETTINGS_MODULE": "devtools.settings"}
        players = subprocess.Popen(
            command, cwd=drills.ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        try:
            return self._run(drill, players, out, faults, options)
        finally:
            if players.poll() is None:
                players.kill()
                players.wait()

    def _run(
        self,
        drill: drills.Drill,
        players: subprocess.Popen[str],
        out: Path,
        faults: list[str],
        options: dict[str, Any],
    ) -> bool:
        clients = options["tables"] * (2 + options["spectators"])
        assert players.stdin is not None and players.stdout is not None
        started = time.monotonic()
        for line in players.stdout:
            if line.strip() == "PLAYING":
                break
            self.stdout.write(f"  players: {line.rstrip()}")
        else:
            raise CommandError("the players' process ended before playing")
        self.stdout.write(
            f"{clients} clients playing {options['tables']} games through nginx "
            f"({time.monotonic() - started:.1f} s to open every socket)"
        )
        ticks = costs.machine_ticks()
        time.sleep(options["gap"])
        self.stdout.write(
            f"steady play: the machine's CPU {costs.busy(ticks, costs.machine_ticks()):.0%} busy"
        )
        window: tuple[costs.Reading, costs.Reading] | None = None
        if options["measure"]:
            others = {"players": players.pid}
            first = drill.reading(others)
            time.sleep(options["measure"])
            window = (first, drill.reading(others))
        marks: list[tuple[str, float, float, int, str, float]] = []
        for fault in faults:
            before = drill.tracebacks()
            at = time.monotonic()
            ticks = costs.machine_ticks()
            detail = self._inject(drill, fault)
            self.stdout.write(f"{fault}: {detail} ({time.monotonic() - at:.1f} s)")
            time.sleep(options["gap"])
            busy = costs.busy(ticks, costs.machine_ticks())
            marks.append(
                (fault, at, time.monotonic(), _new(before, drill.tracebacks()), detail, busy)
            )
            healed = self._heal(drill, fault)
            if healed:
                self.stdout.write(f"    then {healed}")
                time.sleep(options["gap"] / 2)
        connections = drill.postgres_connections()
        players.stdin.write("stop\n")
        players.stdin.flush()
        rest = players.stdout.read()
        if players.wait() != 0 or not out.exists():
            raise CommandError(f"the players' process failed:\n{rest[-3000:]}")
        seen = json.loads(out.read_text())
        if window is not None:
            self._costs(window, seen, clients)
        return self._report(drill, seen, marks, connections, options)

    def _costs(
        self, window: tuple[costs.Reading, costs.Reading], seen: dict[str, Any], sockets: int
    ) -> None:
        """Each part's cost over the steady window, per move and per socket."""
        first, last = window
        seconds = last.at - first.at
        moves = sum(1 for at, _ in seen["acked_at"] if first.at <= float(at) < last.at)
        if not moves:
            self.stdout.write("no move was acknowledged in the measured window")
            return
        silent = sum(1 for at in seen["dead_at"] if first.at <= float(at) < last.at)
        used = costs.cores(first, last)
        per_move = costs.per(first, last, moves)
        self.stdout.write(
            f"steady play, {seconds:.0f} s: {moves / seconds:.1f} moves/s, {sockets} sockets, "
            f"{silent} given up as silent"
        )
        for part in sorted(used, key=lambda name: -used[name]):
            self.stdout.write(
                f"    {part:<10} {used[part]:6.3f} cores  {per_move[part]:7.3f} ms CPU a move"
            )
        wal = (last.wal - first.wal) / moves
        publishes = sum(
            last.redis_publishes.get(name, 0) - count
            for name, count in first.redis_publishes.items()
        )
        commands = sum(
            last.redis_commands.get(name, 0) - count for name, count in first.redis_commands.items()
        )
        redis_cpu = sum(
            last.redis_cpu.get(name, 0.0) - cpu for name, cpu in first.redis_cpu.items()
        )
        self.stdout.write(
            f"    WAL {wal:,.0f} bytes a move; Redis {publishes / moves:.2f} publishes and "
            f"{commands / moves:.1f} commands a move (replicas included), "
            f"{redis_cpu * 1000 / moves:.3f} ms of its CPU a move"
        )

    def _inject(self, drill: drills.Drill, fault: str) -> str:
        if fault == "web":
            last = drill.web_host_names[-1]
            drill.cut_web_host(last)
            names = [p.name for p in drill.web if p.host.name == last]
            return f"{last} cut off ({', '.join(names)} and a sentinel)"
        if fault == "redis":
            drill.kill_redis_master("layer-a")
            return "layer-a's master killed (kill -9)"
        if fault == "postgres":
            times = drill.lose_primary()
            return (
                f"db1 cut off; promoted after {times['promoted']:.1f} s, PgBouncer pointed "
                f"at it after {times['pointed']:.1f} s"
            )
        if fault == "deploy":
            took = [drill.deploy(process) for process in drill.web if process.alive]
            return "rolling deploy: " + ", ".join(f"{t['ready']:.1f} s" for t in took)
        raise CommandError(fault)

    def _heal(self, drill: drills.Drill, fault: str) -> str:
        """What an operator does after the fault, before the next one."""
        if fault == "web":
            last = drill.web_host_names[-1]
            drill.restore_web_host(last)
            for process in drill.web:
                if process.host.name == last:
                    process.wait_ready()
            return f"{last} back on the network, its processes ready again"
        if fault == "redis":
            drill.redis["layer-a"][0].start()
            return "the killed Redis started again (Sentinel makes it the new master's replica)"
        return ""

    def _stalls(
        self, seen: dict[str, Any], stalls: dict[int, tuple[float, float]], at: float
    ) -> None:
        """What the three games that waited longest went through while they waited (times
        from the fault): where the time went."""
        longest = sorted(stalls.items(), key=lambda item: -min(item[1][0], 1e9))[:3]
        for table, (wait, began) in longest:
            end = began + min(wait, 120.0)
            self.stdout.write(f"    a game that waited {wait:.1f} s from {began - at:+.1f} s:")
            for when, where, what in seen["traced"]:
                if where == table and began - 1 <= when <= end + 0.5:
                    self.stdout.write(f"      {when - at:+7.2f} s  {what}")

    def _report(
        self,
        drill: drills.Drill,
        seen: dict[str, Any],
        marks: list[tuple[str, float, float, int, str, float]],
        connections: int,
        options: dict[str, Any],
    ) -> bool:
        acked_at = [(float(at), int(table)) for at, table in seen["acked_at"]]
        when_acked = {
            tuple(move): at for move, (at, _) in zip(seen["acked_moves"], acked_at, strict=True)
        }
        lost_at = [when_acked.get(tuple(move), 0.0) for move in seen["lost"]]
        ok = True
        pauses = _between_games(seen["traced"])
        for fault, at, until, tracebacks, detail, busy in marks:
            # Tables that were playing just before the fault: the longest each one waited for a
            # move to be acknowledged from the fault to the end of its window (counted from the
            # fault for the first), and never moving again is forever.
            playing = {table for when, table in acked_at if at - 10 <= when < at}
            stalls = _longest_waits(acked_at, playing, at, until, pauses)
            waits = {table: wait for table, (wait, _) in stalls.items()}
            stalled = sum(1 for wait in waits.values() if wait == float("inf"))
            worst = max(waits.values(), default=float("inf"))
            lost = sum(1 for when in lost_at if at <= when < until)
            moves = sum(1 for when, _ in acked_at if at <= when < until)
            missed = sum(1 for when in seen["undelivered_at"] if at <= when < until)
            dead = sum(1 for when in seen["dead_at"] if at <= when < until)
            met = worst <= GOALS[fault] and tracebacks == 0 and lost == 0
            ok = ok and met
            self.stdout.write(
                f"{fault}: {detail}\n"
                f"    every game played again within {worst:.1f} s (goal {GOALS[fault]:g} s; "
                f"half of them within {_median(waits.values()):.1f} s at worst; "
                f"{len(playing)} games, {stalled} never moved again), {moves} moves "
                f"acknowledged in the {until - at:.0f} s after it, {dead} sockets given up as "
                f"silent, lost {lost}, move events a "
                f"socket never got {missed}, tracebacks {tracebacks}; the machine's CPU "
                f"{busy:.0%} busy{'' if met else '   MISSED'}"
            )
            if worst > GOALS[fault] / 2:
                self._stalls(seen, stalls, at)
        lost = seen["lost"]
        self.stdout.write(
            f"moves acknowledged {seen['acked']}, lost {len(lost)}, never answered "
            f"{seen['unacked']}, move events a socket never got {seen['undelivered']}; "
            f"sockets given up as silent {seen['dead']}, reconnects {seen['reconnects']}; "
            f"closes {seen['closes']}; error frames {seen['errors']}; undocumented frames "
            f"{seen['undocumented_count']}; the players' own failures to make a game (the "
            f"database away) {seen['harness_errors']}"
        )
        node = seen["node"]
        if node is not None:
            self.stdout.write(
                f"of which the Node.js players' (devtools/cluster/node), {node['tables']} "
                f"tables: moves acknowledged {node['acked']}, frames checked against "
                f"docs/protocol.schema.json {node['frames']}, undocumented frames "
                f"{node['undocumented']}, games that failed {len(node['failures'])}"
            )
            for failure in node["failures"][:1]:
                self.stdout.write(f"    {failure}")
        if seen["unfinished"]:
            self.stdout.write(f"games still busy when told to stop: {seen['unfinished']}")
        for line in seen["undocumented"][:3]:
            self.stdout.write(f"    {line}")
        self.stdout.write(
            f"PostgreSQL client connections at the end: {connections} (PgBouncer's pool: "
            f"{drill.pool_size}); tracebacks by process: {drill.tracebacks()}"
        )
        for line in drill.first_traceback().splitlines():
            self.stdout.write(f"    {line}")
        return (
            ok
            and not lost
            and not seen["undocumented_count"]
            and not seen["unfinished"]
            and not (node and node["failures"])
        )


def _new(before: dict[str, int], after: dict[str, int]) -> int:
    """Tracebacks logged between two counts."""
    return sum(count - before.get(name, 0) for name, count in after.items())


def _median(values: Iterable[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else float("nan")


def _between_games(traced: list[tuple[float, int, str]]) -> dict[int, list[tuple[float, float]]]:
    """For each table, when the players' harness itself was idle between two games: from the
    end of a game (its last events let arrive, its sockets closed) to the next game's sockets
    opening. Those seconds are the harness's, not a wait for the site."""
    pauses: dict[int, list[tuple[float, float]]] = {}
    began: dict[int, float] = {}
    for when, table, what in sorted(traced, key=lambda entry: entry[0]):
        if what == "letting the last events arrive":
            began[table] = when
        elif what == "opening its sockets" and table in began:
            pauses.setdefault(table, []).append((began.pop(table), when))
    return pauses


def _paused(pauses: list[tuple[float, float]], start: float, end: float) -> float:
    return sum(max(0.0, min(end, stop) - max(start, begin)) for begin, stop in pauses)


def _longest_waits(
    acked_at: list[tuple[float, int]],
    tables: set[int],
    at: float,
    until: float,
    pauses: dict[int, list[tuple[float, float]]] | None = None,
) -> dict[int, tuple[float, float]]:
    """For each table, the longest it went without an acknowledged move between `at` and
    `until` (a wait that began before `at` counted from `at`, one still on at `until` up to
    it; forever for a table that moved not once in the window), less the harness's own pauses
    between two games, and when that wait began."""
    times: dict[int, list[float]] = {table: [] for table in tables}
    for when, table in sorted(acked_at):
        if table in times:
            times[table].append(when)
    longest: dict[int, tuple[float, float]] = {}
    for table, ticks in times.items():
        idle = (pauses or {}).get(table, [])
        worst, began = 0.0, at
        since = at
        moved = False
        for when in ticks:
            if when < at:
                continue
            wait = when - since - _paused(idle, since, when)
            if wait > worst:
                worst, began = wait, since
            since = when
            if when >= until:
                break
            moved = True
        else:
            wait = until - since - _paused(idle, since, until)
            if wait > worst:  # still waiting when the window ended
                worst, began = wait, since
        longest[table] = (worst if moved else float("inf"), began)
    return longest
