"""A connection that never sends a request is closed; an idle websocket is not."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
import websockets

from tests.servers import daphnes, shared_test_env

pytestmark = [
    pytest.mark.postgres(reason="a real server process on the shared database"),
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]

IDLE = 2  # seconds, for the test; production's is 15


def test_silent_connections_are_closed_and_idle_websockets_are_kept(tmp_path: Path) -> None:
    env = {**shared_test_env(f"silent-{id(tmp_path)}"), "HTTP_IDLE_SECONDS": str(IDLE)}

    async def run(server: Any) -> tuple[float | None, str]:
        lobby = await websockets.connect(
            f"{server.ws}/ws/lobby/", origin=websockets.Origin(server.http), ping_interval=None
        )
        await lobby.recv()  # the snapshot
        silent = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(20)]
        opened = time.monotonic()
        closed_after = None
        for connection in silent:
            connection.settimeout(IDLE * 4)
            assert connection.recv(1) == b""  # the server hung up
            closed_after = time.monotonic() - opened
            connection.close()
        await asyncio.sleep(IDLE * 2 - (time.monotonic() - opened) + 1)
        await lobby.send(json.dumps({"type": "ping", "id": 1}))  # idle far longer than IDLE
        while True:
            answer = json.loads(await asyncio.wait_for(lobby.recv(), 5))
            if answer["type"] == "pong":
                break
        await lobby.close()
        return closed_after, answer["type"]

    with daphnes(1, env, tmp_path) as (server,):
        closed_after, answer = asyncio.run(run(server))
    assert closed_after is not None and IDLE - 0.5 <= closed_after < IDLE * 3
    assert answer == "pong"
