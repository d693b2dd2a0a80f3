"""The drill's players: games between pairs of accounts with spectators, every socket through
the proxy and behaving as the site's pages do (devtools/rolling.py: back after a close,
resuming from the last version seen; a move without an answer sent again on the new socket;
the pages' heartbeat), every frame checked against docs/PROTOCOL.md. A share of the tables
is played by a second checker in another stack: Node.js players written from the protocol's
documents alone, every frame checked against docs/protocol.schema.json
(devtools/cluster/node/players.mjs, fed the games this process makes).

Runs in a process of its own with the drill's settings (its database through PgBouncer): told
on stdin when to stop, it checks every acknowledged move against the database and writes what
it saw as JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import shutil
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from django.db import OperationalError, close_old_connections

from devtools import rolling
from devtools.chaos.tables import lost_moves
from devtools.servers import BenchServer

# The pages' heartbeat (static/js/socket.js): a ping after this many seconds without a frame,
# the socket given up when nothing comes this many seconds after it.
HEARTBEAT = (3.0, 2.0)
FINISH_SECONDS = 90.0
OPEN_SECONDS = 400.0  # the most every game may take to be playing (1,000 players: 25-202 s)
MAKERS = 32  # threads making games
ROOT = Path(__file__).resolve().parents[2]
NODE_PLAYERS = Path(__file__).resolve().parent / "node" / "players.mjs"
SCHEMA = ROOT / "docs" / "protocol.schema.json"


class NodePlayers:
    """The Node.js players' process: each game handed to it on a line of its stdin, what its
    sockets saw read back into this process's tally as it happens."""

    def __init__(self, tally: rolling.Tally, base: str, spectators: int, rate: float) -> None:
        self.tally = tally
        self.base = base
        self.spectators = spectators
        self.rate = rate
        self.process: asyncio.subprocess.Process | None = None
        self.reader: asyncio.Task[None] | None = None
        self.complaints: asyncio.Task[None] | None = None
        self.games: dict[int, asyncio.Future[None]] = {}
        self.frames = 0  # frames its sockets checked against the schema
        self.acked = 0
        self.undocumented = 0
        self.failures: list[str] = []
        self.stderr = ""

    async def start(self) -> None:
        node = shutil.which("node")
        if node is None or not (NODE_PLAYERS.parent / "node_modules").is_dir():
            raise RuntimeError("the Node.js players need node and `make cluster-packages`")
        self.process = await asyncio.create_subprocess_exec(
            node, str(NODE_PLAYERS), self.base, str(SCHEMA),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, limit=1 << 20,
        )  # fmt: skip
        self.reader = asyncio.ensure_future(self._read())
        self.complaints = asyncio.ensure_future(self._stderr())

    async def play(self, game_id: int, table: rolling.Table) -> None:
        assert self.process is not None and self.process.stdin is not None
        if self.process.stdin.is_closing():
            return  # told to stop: a game made meanwhile is left unplayed
        if self.reader is not None and self.reader.done():
            # Its end is reported by finish() (the exit code and what it wrote on stderr).
            raise RuntimeError("the Node.js players' process is gone")
        done = self.games[game_id] = asyncio.get_running_loop().create_future()
        order = {
            "game": game_id, "table": id(table), "spectators": self.spectators,
            "rate": self.rate, "cookies": {"1": table.cookies[1], "2": table.cookies[2]},
        }  # fmt: skip
        self.process.stdin.write(json.dumps(order).encode() + b"\n")
        await done

    def stop(self) -> None:
        """Every game finishes the move in hand; the process ends once they have."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(b'{"stop": true}\n')
        self.process.stdin.close()

    async def finish(self) -> None:
        assert self.process is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), FINISH_SECONDS)
        if self.process.returncode is None:
            self.failures.append(f"still running {FINISH_SECONDS:.0f} s after the stop: killed")
            self.process.kill()
        assert self.reader is not None and self.complaints is not None
        await asyncio.gather(self.reader, self.complaints)
        if self.process.returncode:
            self.failures.append(
                f"the process ended with {self.process.returncode}: {self.stderr[-2000:]}"
            )
        elif not self.frames:
            self.failures.append("the process ended without saying how many frames it checked")

    async def _stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        async for line in self.process.stderr:
            self.stderr = (self.stderr + line.decode(errors="replace"))[-4000:]

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        async for line in self.process.stdout:
            self._take(json.loads(line))
        for game in self.games.values():  # the process is gone: nothing more will come
            if not game.done():
                game.set_result(None)

    def _take(self, fact: dict[str, Any]) -> None:
        tally, kind = self.tally, fact["kind"]
        if kind == "acked":
            self.acked += 1
            tally.acked.append((fact["game"], fact["ply"], fact["move"]))
            tally.acked_at.append((fact["at"], fact["table"]))
        elif kind == "trace":
            if fact.get("phase"):
                tally.phases[fact["table"]] = fact["what"]
            if tally.trace:
                tally.traced.append((fact["at"], fact["table"], fact["what"]))
        elif kind == "playing":
            tally.playing.add(fact["table"])
            if len(tally.playing) >= tally.tables:
                tally.all_playing.set()
        elif kind == "dead":
            tally.dead += 1
            tally.dead_at.append(fact["at"])
        elif kind == "close":
            tally.closes[fact["code"]] += 1
        elif kind == "reconnect":
            tally.reconnects.append(fact["seconds"])
        elif kind == "error":
            tally.errors[fact["code"]] += 1
        elif kind == "away":
            tally.away += 1
        elif kind == "undocumented":
            self.undocumented += 1
            tally.undocumented.append(f"(Node.js) {fact['text']}")
        elif kind == "unacked":
            tally.unacked += 1
        elif kind == "undelivered":
            tally.undelivered += 1
            tally.undelivered_at.append(fact["at"])
        elif kind == "trip":
            tally.trips.append((fact["at"], fact["ms"]))
        elif kind == "checked":
            self.frames = fact["frames"]
        elif kind in ("done", "failed"):
            if kind == "failed":
                self.failures.append(fact["text"][:2000])
            tally.phases.pop(fact["table"], None)
            game = self.games.pop(fact["game"], None)
            if game is not None and not game.done():
                game.set_result(None)


def _checked(acked: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The acknowledged moves the database lacks, asked again while the database is away
    (this process's connection may be one the failover dropped)."""
    deadline = time.monotonic() + 60
    while True:
        close_old_connections()
        try:
            return lost_moves(acked)
        except OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


async def _stdin_line() -> str:
    return await asyncio.to_thread(sys.stdin.readline)


def node_tables(tables: int, share: float) -> int:
    """How many of the tables the Node.js players take: at least one when any share is asked."""
    return min(tables, math.ceil(tables * share)) if share > 0 else 0


async def play(
    proxy: BenchServer,
    tables: list[rolling.Table],
    spectators: int,
    rate: float,
    seed: int,
    node_share: float = 0.0,
) -> tuple[rolling.Tally, NodePlayers | None]:
    # Games are made on the loop's threads, each waiting for its broadcast on this loop: as
    # many threads as make most of them at once at the start.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(MAKERS))
    tally = rolling.Tally(tables=len(tables), check_frames=True, heartbeat=HEARTBEAT, trace=True)
    rng = random.Random(seed)
    stop = asyncio.Event()
    node: NodePlayers | None = None
    if node_tables(len(tables), node_share):
        node = NodePlayers(tally, f"ws://{proxy.address}:{proxy.port}", spectators, rate)
        await node.start()
    # The Node.js players' tables spread over the run's: table i is theirs when the count
    # of their tables steps up at i.
    shared, count = node_tables(len(tables), node_share), len(tables)
    players = [
        asyncio.ensure_future(
            rolling.play_table(
                table, [proxy], spectators, rate, stop, tally, rng,
                node.play if node and i * shared // count != (i + 1) * shared // count else None,
            )
        )
        for i, table in enumerate(tables)
    ]  # fmt: skip
    try:
        await asyncio.wait_for(tally.all_playing.wait(), OPEN_SECONDS)
    except TimeoutError:
        # Never wait for ever: say which games are not playing, and what each waits for.
        waiting = Counter(tally.phases[t] for t in tally.phases if t not in tally.playing)
        failures = node.failures if node is not None else []
        raise RuntimeError(
            f"{len(tables) - len(tally.playing)} of {len(tables)} games not playing after "
            f"{OPEN_SECONDS:.0f} s: {dict(waiting)}; the Node.js players' failures: {failures}"
        ) from None
    print("PLAYING", flush=True)
    await _stdin_line()  # the drill is done with its faults
    stop.set()
    if node is not None:
        node.stop()
    # Each game finishes the move in hand (a minute at most for its answer); one still busy
    # after that is reported by what it waits for, and stopped.
    _, busy = await asyncio.wait(players, timeout=FINISH_SECONDS)
    for task in busy:
        task.cancel()
    tally.unfinished = dict(Counter(tally.phases.values()))
    await asyncio.gather(*busy, return_exceptions=True)
    if node is not None:
        await node.finish()
    return tally, node


def run(
    address: str,
    port: int,
    tables: int,
    spectators: int,
    rate: float,
    seed: int,
    out: Path,
    node_share: float = 0.0,
) -> None:
    proxy = BenchServer(port=port, process=None, log=Path("/dev/null"), address=address)  # type: ignore[arg-type]
    made = rolling.signed_in_tables(tables, "diffusion", "cd")
    tally, node = asyncio.run(play(proxy, made, spectators, rate, seed, node_share))
    lost = _checked(tally.acked)
    figures: dict[str, Any] = {
        "acked": len(tally.acked),
        "acked_at": tally.acked_at,
        "acked_moves": tally.acked,
        "lost": lost,
        "unacked": tally.unacked,
        "undelivered": tally.undelivered,
        "undelivered_at": tally.undelivered_at,
        "closes": dict(tally.closes),
        "errors": dict(tally.errors),
        "harness_errors": dict(tally.harness_errors),
        "undocumented": tally.undocumented[:20],
        "undocumented_count": len(tally.undocumented),
        "unfinished": tally.unfinished,
        "dead": tally.dead,
        "dead_at": tally.dead_at,
        "reconnects": len(tally.reconnects),
        "trips": tally.trips,
        "traced": tally.traced,
        "node": None
        if node is None
        else {
            "tables": node_tables(tables, node_share),
            "acked": node.acked,
            "frames": node.frames,
            "undocumented": node.undocumented,
            "failures": node.failures,
        },
    }
    out.write_text(json.dumps(figures))
