"""Faults under live play: Redis killed, PostgreSQL's sessions killed, a server process
killed. After each, every client must be current within 10 s, presence right within 60 s,
and no acknowledged move may be lost."""

from __future__ import annotations

import asyncio
import urllib.request
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.db import connection

from devtools.chaos.client import OPEN, now
from devtools.chaos.cluster import APPLICATION_NAME, Cluster, Proc
from devtools.chaos.tables import Table, versions
from games.models import GameConnection
from lobby.models import LobbyConnection

CURRENT_WITHIN = 10.0
PRESENCE_WITHIN = 60.0


@dataclass
class Rounds:
    name: str
    rounds: int = 0
    current: list[float] = field(default_factory=list)  # seconds to every client current
    late: int = 0  # rounds where some client was not current within CURRENT_WITHIN
    failing: list[float] = field(default_factory=list)  # seconds requests failed after a kill
    presence: list[float] = field(default_factory=list)  # seconds to presence right
    presence_late: int = 0
    killed_sessions: int = 0
    behind: list[str] = field(default_factory=list)  # the sockets that were late, described

    def worst(self, values: list[float]) -> float:
        return max(values) if values else float("nan")


async def when_current(
    tables: list[Table], since: float, within: float, behind: list[str] | None = None
) -> float | None:
    """Seconds from `since` until every socket is open and has its game's stored version;
    None if not within `within` (then `behind` gets the sockets that were not)."""
    late: list[str] = []
    while now() - since < within:
        stored = await sync_to_async(versions)([t.game_id for t in tables])
        late = [
            f"game {t.game_id} {role}: {'open' if s.is_open else 'closed'}, "
            f"v {s.v} of {stored.get(t.game_id)}"
            for t in tables
            for role, s in t.sockets.items()
            if not s.is_open or s.v != stored.get(t.game_id)
        ]
        if not late and all(len(t.sockets) == len(t.roles) for t in tables):
            return now() - since
        await asyncio.sleep(0.1)
    if behind is not None:
        behind.extend(late[:5])
    return None


async def pause(tables: list[Table], go: asyncio.Event, within: float = 20) -> None:
    """Stop play and wait until no move is in flight."""
    go.clear()
    started = now()
    # The tables' flags are plain attributes: polling them is simplest.
    while any(table.busy for table in tables) and now() - started < within:  # noqa: ASYNC110
        await asyncio.sleep(0.05)


async def measure_current(
    tables: list[Table], go: asyncio.Event, since: float, result: Rounds
) -> None:
    """Stop play, then record one round: how long from `since` until every client was
    current (late if over CURRENT_WITHIN; then waited for up to a minute)."""
    await pause(tables, go)
    took = await when_current(tables, since, CURRENT_WITHIN, result.behind)
    result.rounds += 1
    if took is None:
        result.late += 1
        took = await when_current(tables, since, 60) or float("inf")
    result.current.append(took)


async def redis_kills(
    cluster: Cluster, tables: list[Table], go: asyncio.Event, rounds: int, down: float
) -> Rounds:
    result = Rounds("Redis kill -9")
    for _ in range(rounds):
        go.set()
        await asyncio.sleep(1.0)
        cluster.redis.kill()
        await asyncio.sleep(down)  # play goes on without the channel layer
        await asyncio.to_thread(cluster.redis.start)
        back = now()
        await measure_current(tables, go, back, result)
    return result


def kill_sessions() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = %s",
            [APPLICATION_NAME],
        )
        return int(cursor.fetchone()[0])


def _page_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return int(refused.code)
    except OSError:
        return 0


async def postgres_kills(
    cluster: Cluster, tables: list[Table], go: asyncio.Event, rounds: int, watch: float
) -> Rounds:
    result = Rounds("PostgreSQL backend kills")
    for _ in range(rounds):
        go.set()
        await asyncio.sleep(1.0)
        result.killed_sessions += await sync_to_async(kill_sessions)()
        killed = now()
        last_failure = killed
        # Pages read the database: poll one on every process while play goes on.
        while now() - killed < watch:
            for server in cluster.servers:
                url = f"{server.http}/games/{tables[0].game_id}/"
                if await asyncio.to_thread(_page_status, url) != 200:
                    last_failure = now()
            await asyncio.sleep(0.05)
        result.failing.append(last_failure - killed)
        await measure_current(tables, go, killed, result)
    return result


def presence_rows(prefixes: list[str]) -> int:
    """Connection rows held by the suite's server processes (any of their lives)."""
    total = 0
    for model in (GameConnection, LobbyConnection):
        for prefix in prefixes:
            total += model.objects.filter(server__startswith=prefix).count()
    return total


def rows_of(prefixes: list[str]) -> list[str]:
    """The suite's servers' connection rows, described (to find a leaked one)."""
    described = []
    for model in (GameConnection, LobbyConnection):
        for prefix in prefixes:
            for row in model.objects.filter(server__startswith=prefix).values():
                described.append(f"{model.__name__} {row}")
    return described


def server_prefixes(cluster: Cluster) -> list[str]:
    import socket

    host = socket.gethostname()[:40]
    return [f"{host}:{pid}:" for server in cluster.servers for pid in server.pids]


async def presence_right(cluster: Cluster, since: float, within: float) -> float | None:
    """Seconds from `since` until the servers' connection rows are exactly the open sockets."""
    while now() - since < within:
        rows = await sync_to_async(presence_rows)(server_prefixes(cluster))
        if rows == len(OPEN):
            return now() - since
        await asyncio.sleep(0.5)
    return None


async def server_kills(
    cluster: Cluster, tables: list[Table], go: asyncio.Event, rounds: int
) -> Rounds:
    result = Rounds("server process kill -9")
    for index in range(rounds):
        target: Proc = cluster.servers[index % len(cluster.servers)]
        go.set()
        await asyncio.sleep(1.0)
        cluster.kill(target)
        killed = now()
        await asyncio.sleep(1.0)  # play goes on, on the survivor
        await measure_current(tables, go, killed, result)
        presence = await presence_right(cluster, killed, PRESENCE_WITHIN)
        if presence is None:
            result.presence_late += 1
            presence = await presence_right(cluster, killed, 120) or float("inf")
        result.presence.append(presence)
        await asyncio.to_thread(cluster.restart, target)
    return result
