"""The drill's players: games between pairs of accounts with spectators, every socket through
the proxy and behaving as the site's pages do (devtools/rolling.py: back after a close,
resuming from the last version seen; a move without an answer sent again on the new socket;
the pages' heartbeat), every frame checked against docs/PROTOCOL.md.

Runs in a process of its own with the drill's settings (its database through PgBouncer): told
on stdin when to stop, it checks every acknowledged move against the database and writes what
it saw as JSON.
"""

from __future__ import annotations

import asyncio
import json
import random
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
MAKERS = 32  # threads making games


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


async def play(
    proxy: BenchServer, tables: list[rolling.Table], spectators: int, rate: float, seed: int
) -> rolling.Tally:
    # Games are made on the loop's threads, each waiting for its broadcast on this loop: as
    # many threads as make most of them at once at the start.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(MAKERS))
    tally = rolling.Tally(tables=len(tables), check_frames=True, heartbeat=HEARTBEAT, trace=True)
    rng = random.Random(seed)
    stop = asyncio.Event()
    players = [
        asyncio.ensure_future(
            rolling.play_table(table, [proxy], spectators, rate, stop, tally, rng)
        )
        for table in tables
    ]
    await tally.all_playing.wait()
    print("PLAYING", flush=True)
    await _stdin_line()  # the drill is done with its faults
    stop.set()
    # Each game finishes the move in hand (a minute at most for its answer); one still busy
    # after that is reported by what it waits for, and stopped.
    _, busy = await asyncio.wait(players, timeout=FINISH_SECONDS)
    for task in busy:
        task.cancel()
    tally.unfinished = dict(Counter(tally.phases.values()))
    await asyncio.gather(*busy, return_exceptions=True)
    return tally


def run(
    address: str, port: int, tables: int, spectators: int, rate: float, seed: int, out: Path
) -> None:
    proxy = BenchServer(port=port, process=None, log=Path("/dev/null"), address=address)  # type: ignore[arg-type]
    made = rolling.signed_in_tables(tables, "diffusion", "cd")
    tally = asyncio.run(play(proxy, made, spectators, rate, seed))
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
        "undocumented": tally.undocumented[:20],
        "undocumented_count": len(tally.undocumented),
        "unfinished": tally.unfinished,
        "dead": tally.dead,
        "dead_at": tally.dead_at,
        "reconnects": len(tally.reconnects),
        "trips": tally.trips,
        "traced": tally.traced,
    }
    out.write_text(json.dumps(figures))
