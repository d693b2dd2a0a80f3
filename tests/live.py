"""Playing against running server processes as a client would: HTTP for the lobby, real
websockets for the game, frames read as docs/PROTOCOL.md describes them."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import websockets

from tests.servers import Server, Visitor


async def open_socket(
    server: Server, path: str, visitor: Visitor | None = None
) -> tuple[Any, dict[str, Any]]:
    """A websocket to `path` on `server` (as `visitor`, or anonymous) and its first frame."""
    headers = visitor.websocket_headers() if visitor else {}
    socket = await websockets.connect(
        server.ws + path,
        origin=websockets.Origin(server.http),
        additional_headers={k: v for k, v in headers.items() if k != "Origin"},
        open_timeout=30,
    )
    return socket, json.loads(await asyncio.wait_for(socket.recv(), 30))


async def next_frame(
    socket: Any, kind: str, within: float = 30, personal: bool = False
) -> dict[str, Any]:
    """The next frame of type `kind` (unpacking lobby batches), skipping others; with
    `personal`, only the lobby's unversioned personal messages of that type."""
    deadline = time.monotonic() + within
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no {kind!r} frame within {within} s")
        frame = json.loads(await asyncio.wait_for(socket.recv(), left))
        for message in frame["events"] if frame["type"] == "batch" else [frame]:
            if message["type"] == kind and not (personal and "v" in message):
                return dict(message)


def challenge(challenger: Visitor, **fields: Any) -> dict[str, Any]:
    """Create a challenge over HTTP; the challenge as the API returns it."""
    answer = challenger.api("/api/challenges", {"slug": "diffusion", **fields})
    return dict(answer["challenge"])


def accept(visitor: Visitor, challenge_id: int) -> int:
    """Accept a challenge over HTTP; the new game's id."""
    return int(visitor.api(f"/api/challenges/{challenge_id}/accept", {})["game_id"])


def first_move_abort_seen(alice_on: Server, bob_on: Server, watcher_on: Server) -> list[float]:
    """Two guests start a 1+0 game (Alice, then Bob, then a spectator on the servers given)
    and nobody moves; how late (ms) each socket saw the abort after its deadline."""
    alice, bob = Visitor(alice_on).play_as_guest(), Visitor(bob_on).play_as_guest()
    offer = challenge(alice, user=bob.username, time_control="1+0", side="first")
    game_id = accept(bob, offer["id"])

    async def watch() -> list[float]:
        path = f"/ws/games/{game_id}/"
        first, snapshot = await open_socket(alice_on, path, alice)
        second, _ = await open_socket(bob_on, path, bob)
        watcher, _ = await open_socket(watcher_on, path)
        assert snapshot["you"] == 1 and snapshot["game"]["clock"]["first_move_by"]
        try:
            return await everyone_sees_the_first_move_abort([first, second, watcher], snapshot)
        finally:
            for socket in (first, second, watcher):
                await socket.close()

    lateness = asyncio.run(watch())
    print(f"end shown after the first-move deadline (ms): {[round(x) for x in lateness]}")
    return lateness


async def everyone_sees_the_first_move_abort(
    sockets: list[Any], snapshot: dict[str, Any]
) -> list[float]:
    """Wait for every socket's `end` of a game nobody moves in; how late each came after the
    first-move deadline (ms, from the client's clock)."""
    deadline = snapshot["game"]["clock"]["first_move_by"]
    skew = snapshot["game"]["clock"]["server_time"] - time.time() * 1000

    async def arrival(socket: Any) -> float:
        end = await next_frame(socket, "end", within=60)
        assert end["status"] == "aborted", end
        assert end["result"]["termination"] == "abort", end
        return time.time() * 1000 + skew - deadline

    return list(await asyncio.gather(*(arrival(socket) for socket in sockets)))
