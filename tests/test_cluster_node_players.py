"""The cluster drill's second checker, the Node.js players (devtools/cluster/node/players.mjs):
against a socket that sends what no document describes, it reports each such frame and
passes the documented ones. The drill's smoke test (tests/test_cluster_drill.py) has them play
against the site itself."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

pytestmark = pytest.mark.sqlite(reason="no database: once")

NODE = Path(__file__).resolve().parents[1] / "devtools" / "cluster" / "node"
SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "protocol.schema.json"

FRAMES: list[dict[str, Any]] = [
    {"type": "pong", "id": "heartbeat"},  # documented
    {"type": "state", "v": 1},  # a snapshot without its game
    {"type": "teleport", "to": "e4"},  # no such frame
    {"type": "pong", "id": "heartbeat", "extra": True},  # a field the schema does not name
]


async def _facts_from_a_socket_sending(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    paths: list[str] = []

    async def handler(connection: ServerConnection) -> None:
        assert connection.request is not None
        paths.append(connection.request.path)
        # The game's first socket (the first player's) gets the frames; the other socket, none.
        for frame in frames if len(paths) == 1 else []:
            await connection.send(json.dumps(frame))
        await connection.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        node = shutil.which("node")
        assert node is not None, "the Node.js players need node (make cluster-packages)"
        process = await asyncio.create_subprocess_exec(
            node, str(NODE / "players.mjs"), f"ws://127.0.0.1:{port}", str(SCHEMA),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        order = {"game": 7, "table": 1, "spectators": 0, "rate": 1, "cookies": {"1": "", "2": ""}}
        process.stdin.write(json.dumps(order).encode() + b"\n")
        facts: list[dict[str, Any]] = []
        try:
            async with asyncio.timeout(20):
                while sum(fact["kind"] == "undocumented" for fact in facts) < 3:
                    facts.append(json.loads(await process.stdout.readline()))
        finally:
            process.kill()
            await process.wait()
    assert paths and all(path == "/ws/games/7/" for path in paths), paths
    return facts


def test_the_node_players_report_every_frame_the_schema_does_not_describe() -> None:
    facts = asyncio.run(_facts_from_a_socket_sending(FRAMES))
    reported = [fact["text"] for fact in facts if fact["kind"] == "undocumented"]
    assert len(reported) == 3, reported
    assert "must have required property 'game'" in reported[0]
    assert 'no frame of type "teleport"' in reported[1]
    assert "must NOT have additional properties" in reported[2]
    # The documented pong was taken: the three reports are the three frames after it.
    assert all('"pong", "id": "heartbeat"}' not in text for text in reported[:2])
