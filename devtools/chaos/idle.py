"""Idle sockets: held open without a word for minutes, they must not be closed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from devtools.chaos.client import Socket, Tally
from devtools.chaos.cluster import Cluster


@dataclass
class Idle:
    sockets: int = 0
    closed: int = 0
    seconds: float = 0.0


async def hold(cluster: Cluster, cookies: list[str | None], game_id: int, seconds: float) -> Idle:
    """Open a lobby and a game socket per cookie (None: a visitor) on every process, say
    nothing for `seconds`, and count the ones the server closed."""
    tally = Tally()
    sockets = []
    for server in cluster.servers:
        for cookie in cookies:
            for path in ("/ws/lobby/", f"/ws/games/{game_id}/"):
                socket = Socket(server.ws, path, cookie, tally)
                await socket.open()
                sockets.append(socket)
    await asyncio.sleep(seconds)
    result = Idle(
        sockets=len(sockets),
        closed=sum(1 for socket in sockets if not socket.is_open),
        seconds=seconds,
    )
    for socket in sockets:
        await socket.close()
    return result
