"""Floods: sockets that send as fast as they can. Each must be warned once (`rate_limited`)
and closed with 4429 after 100 dropped messages, and meanwhile the other games' move round
trip must stay within twice what it was without the flood: its 99th percentile, or its median
when too few moves were timed for a 99th percentile to be more than the one slowest move (the
quick run times about 25 a window, where one scheduler hiccup on a busy machine is the p99)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field

from devtools.chaos.client import Socket, Tally, now
from devtools.chaos.cluster import Cluster
from devtools.chaos.tables import Table
from devtools.servers import percentile

# Moves a window needs before its 99th percentile is judged (at 100, p99 is the second slowest).
P99_NEEDS_MOVES = 100


@dataclass
class Floods:
    connections: int = 0
    refused: int = 0  # reconnections refused at the handshake (the cool-down)
    sent: int = 0
    closes: Counter[int] = field(default_factory=Counter)
    warnings: Counter[int] = field(default_factory=Counter)  # warnings per connection -> n
    frames_before_close: list[int] = field(default_factory=list)
    baseline_p99: float = float("nan")
    flood_p99: float = float("nan")
    baseline_p50: float = float("nan")
    flood_p50: float = float("nan")
    baseline_moves: int = 0
    flood_moves: int = 0

    @property
    def closed_as_documented(self) -> bool:
        return self.connections > 0 and set(self.closes) == {4429} and set(self.warnings) == {1}

    @property
    def ratio(self) -> float:
        return self.flood_p99 / self.baseline_p99 if self.baseline_p99 else float("inf")

    @property
    def judged(self) -> str:
        """Which percentile the verdict holds to: p99 when each window has enough moves."""
        return "p99" if min(self.baseline_moves, self.flood_moves) >= P99_NEEDS_MOVES else "p50"

    @property
    def judged_ratio(self) -> float:
        if self.judged == "p99":
            return self.ratio
        return self.flood_p50 / self.baseline_p50 if self.baseline_p50 else float("inf")


async def flooder(
    cluster: Cluster, index: int, rate: float, stop: asyncio.Event, floods: Floods
) -> None:
    """One client flooding, reconnecting each time it is closed."""
    kind = "game" if index % 2 else "lobby"
    while not stop.is_set():
        tally = Tally()
        servers = cluster.live_servers()
        server = servers[index % len(servers)]
        path = "/ws/lobby/" if kind == "lobby" else f"/ws/games/{floods_game[0]}/"
        socket = Socket(server.ws, path, None, tally, address=f"198.51.100.{index + 1}")
        try:
            await socket.open()
        except Exception as error:
            if "403" in str(error):
                floods.refused += 1
            await asyncio.sleep(0.2)
            continue
        floods.connections += 1
        sent = 0
        text = json.dumps({"type": "ping", "id": 1})
        started = now()
        while socket.is_open and not stop.is_set():
            try:
                await socket.send(text)
            except Exception:
                break
            sent += 1
            # Paced at `rate` a second, as a script in a loop would be.
            delay = started + sent / rate - now()
            if delay > 0:
                await asyncio.sleep(delay)
        if stop.is_set() and socket.is_open:
            await socket.close()
            floods.connections -= 1  # cut short by the end of the test, not the server
            continue
        await socket.closed.wait()
        floods.sent += sent
        floods.closes[socket.close_code or 0] += 1
        floods.warnings[tally.errors["rate_limited"]] += 1
        floods.frames_before_close.append(sent)


# The game the game-socket flooders flood (set by run()).
floods_game: list[int] = [0]


def _window(tables: list[Table], start: float, end: float) -> list[float]:
    return [ms for table in tables for at, ms in table.round_trips if start <= at < end]


async def run(
    cluster: Cluster,
    tables: list[Table],
    go: asyncio.Event,
    *,
    flooders: int,
    rate: float,
    seconds: float,
) -> Floods:
    """Measure the tables' round trips for `seconds` without and then with the floods."""
    floods = Floods()
    floods_game[0] = tables[0].game_id
    go.set()
    await asyncio.sleep(2)  # settle
    start = now()
    await asyncio.sleep(seconds)
    middle = now()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(flooder(cluster, i, rate, stop, floods)) for i in range(flooders)]
    await asyncio.sleep(seconds)
    end = now()
    stop.set()
    await asyncio.gather(*tasks)
    go.clear()
    # The first table's game is the one flooded: the others are measured.
    before, during = _window(tables[1:], start, middle), _window(tables[1:], middle, end)
    floods.baseline_moves, floods.flood_moves = len(before), len(during)
    floods.baseline_p50, floods.baseline_p99 = percentile(before, 0.5), percentile(before, 0.99)
    floods.flood_p50, floods.flood_p99 = percentile(during, 0.5), percentile(during, 0.99)
    return floods
