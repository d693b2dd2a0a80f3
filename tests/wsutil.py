"""Helpers for websocket tests against the real ASGI application."""

from __future__ import annotations

import json
from typing import Any

from channels.testing import WebsocketCommunicator

from config.asgi import application

ORIGIN = b"http://localhost"


class Client(WebsocketCommunicator):  # type: ignore[misc]
    """Channels' communicator, whose handshake may take 10 s rather than 1: on a machine
    busy with the suite's other workers, opening a socket (the session looked up, presence
    written) has taken longer than a second."""

    async def connect(self, timeout: float = 10) -> Any:  # noqa: ASYNC109 (channels names it)
        return await super().connect(timeout)


def communicator(
    path: str = "/ws/lobby/",
    *,
    origin: bytes = ORIGIN,
    session_key: str | None = None,
    address: str | None = None,
) -> Client:
    """A client of the whole stack (origin check, session auth, routing), as a browser is;
    from `address` (as Daphne reports the peer), or from nowhere the server knows."""
    headers = [(b"origin", origin), (b"host", b"localhost")]
    if session_key:
        headers.append((b"cookie", f"sessionid={session_key}".encode()))
    client = Client(application, path, headers=headers)
    if address is not None:
        # The application reads its scope when it first runs, after this.
        client.scope["client"] = [address, 40000]
    return client


# Presence messages arrive whenever someone comes or goes; most tests look past them.
PRESENCE = frozenset({"online", "crowd"})


async def receive(client: WebsocketCommunicator, within: float = 5) -> dict[str, Any]:
    """The next message that is not a presence update."""
    while True:
        message = await client.receive_json_from(timeout=within)
        if message.get("type") not in PRESENCE:
            return message


async def connected(
    path: str, session_key: str | None = None, address: str | None = None
) -> WebsocketCommunicator:
    """A communicator on `path` (signed in with the session, if given), connected."""
    client = communicator(path, session_key=session_key, address=address)
    accepted, _ = await client.connect()
    assert accepted
    return client


async def frames_until_close(
    client: WebsocketCommunicator, within: float = 5
) -> tuple[list[dict[str, Any]], int]:
    """Every frame the server sends until it closes the socket, and the close code."""
    frames = []
    while True:
        output = await client.receive_output(timeout=within)
        if output["type"] == "websocket.close":
            return frames, int(output.get("code", 1000))
        frames.append(json.loads(output["text"]))
