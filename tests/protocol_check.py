"""Every frame a test receives from the server must be one docs/PROTOCOL.md describes.

A pytest plugin (registered in tests/conftest.py) wraps the receive methods of Channels'
WebsocketCommunicator and of the `websockets` client, so every frame of every socket test,
in-process or against real server processes, is checked as it arrives
(lobby/protocol_doc.py): an undocumented type or error code fails the test that received it,
naming the frame.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from lobby import protocol_doc
from lobby.protocol_doc import (
    DOCUMENT,
    UndocumentedFrame,
    check,
    documented,
    parse,
)
from tests.test_architecture import APPS

__all__ = ["DOCUMENT", "SEEN", "UndocumentedFrame", "check", "check_text", "documented", "parse"]

SEEN: set[tuple[str, str]] = set()


def check_text(path: str, text: str | bytes) -> None:
    protocol_doc.check_text(path, text, SEEN)


@pytest.fixture(autouse=True)
def _every_frame_is_documented(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from channels.testing import WebsocketCommunicator
    from websockets.asyncio.connection import Connection

    communicator_receive = WebsocketCommunicator.receive_from

    async def receive_from(self: WebsocketCommunicator, *args: Any, **kwargs: Any) -> Any:
        data = await communicator_receive(self, *args, **kwargs)
        check_text(self.scope["path"], data)
        return data

    connection_receive = Connection.recv

    async def recv(self: Connection, *args: Any, **kwargs: Any) -> Any:
        data = await connection_receive(self, *args, **kwargs)
        request = getattr(self, "request", None)
        if request is not None and isinstance(data, str | bytes):
            check_text(request.path.split("?")[0], data)
        return data

    monkeypatch.setattr(WebsocketCommunicator, "receive_from", receive_from)
    monkeypatch.setattr(Connection, "recv", recv)
    yield


# Every package of the product, from the house's own list (tests/test_architecture.py): a new
# app's error codes and frames are checked without anyone remembering to add it here.
SERVER_PACKAGES = ("realtime", "config", *APPS)


def code_mentions(name: str, roots: tuple[str, ...] = SERVER_PACKAGES) -> bool:
    """Whether the server's source names `name` as a string (a frame type or error code)."""
    base = DOCUMENT.parent.parent
    pattern = re.compile(rf"[\"']{re.escape(name)}[\"']")
    return any(
        pattern.search(path.read_text())
        for root in roots
        for path in (base / root).rglob("*.py")
        if "migrations" not in path.parts
    )
