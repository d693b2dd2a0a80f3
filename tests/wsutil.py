"""Helpers for websocket tests against the real ASGI application."""

from __future__ import annotations

from channels.testing import WebsocketCommunicator

from config.asgi import application

ORIGIN = b"http://localhost"


def communicator(
    path: str = "/ws/lobby/", *, origin: bytes = ORIGIN, session_key: str | None = None
) -> WebsocketCommunicator:
    """A client of the whole stack (origin check, session auth, routing), as a browser is."""
    headers = [(b"origin", origin), (b"host", b"localhost")]
    if session_key:
        headers.append((b"cookie", f"sessionid={session_key}".encode()))
    return WebsocketCommunicator(application, path, headers=headers)
