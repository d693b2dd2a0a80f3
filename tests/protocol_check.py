"""Every frame a test receives from the server must be one docs/PROTOCOL.md describes.

The document's tables "Every frame the server sends" (socket, type) and "Error codes" are
read once. A pytest plugin (registered in tests/conftest.py) wraps the receive methods of
Channels' WebsocketCommunicator and of the `websockets` client, so every frame of every
socket test, in-process or against real server processes, is checked as it arrives: an
undocumented type or error code fails the test that received it, naming the frame.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest

DOCUMENT = Path(__file__).resolve().parent.parent / "docs" / "PROTOCOL.md"
# Only these may come inside a lobby `batch`.
BATCHED = frozenset({"seek_added", "seek_removed", "game_started", "game_ended"})
SEEN: set[tuple[str, str]] = set()


class UndocumentedFrame(AssertionError):
    pass


@dataclass(frozen=True)
class Protocol:
    frames: frozenset[tuple[str, str]]  # (socket, type)
    codes: frozenset[str]


def _table(text: str, heading: str) -> list[list[str]]:
    """The rows of the first table under `heading`, cells stripped of backticks."""
    section = f"\n{text}".split(f"\n## {heading}\n", 1)
    if len(section) < 2:
        raise AssertionError(f"docs/PROTOCOL.md has no section '## {heading}'")
    rows = []
    for line in section[1].split("\n## ", 1)[0].splitlines():
        if not line.startswith("|") or set(line) <= {"|", "-", " "}:
            continue
        rows.append([cell.strip().strip("`") for cell in line.strip("|").split("|")])
    return rows[1:]  # without the header


def parse(text: str) -> Protocol:
    frames = frozenset((row[0], row[1]) for row in _table(text, "Every frame the server sends"))
    codes = frozenset(row[0] for row in _table(text, "Error codes"))
    return Protocol(frames=frames, codes=codes)


@cache
def documented() -> Protocol:
    return parse(DOCUMENT.read_text())


def socket_of(path: str) -> str:
    if path.startswith("/ws/lobby/"):
        return "lobby"
    if path.startswith("/ws/games/"):
        return "game"
    raise UndocumentedFrame(f"a socket at {path!r}, which docs/PROTOCOL.md does not describe")


def check(socket: str, frame: Any, protocol: Protocol | None = None) -> None:
    """Raise UndocumentedFrame unless `frame` is one the document lets `socket` send."""
    protocol = protocol or documented()
    if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
        raise UndocumentedFrame(f"the {socket} socket sent a frame without a type: {frame!r}")
    kind = frame["type"]
    SEEN.add((socket, kind))
    if (socket, kind) not in protocol.frames:
        raise UndocumentedFrame(
            f"the {socket} socket sent a {kind!r} frame, which docs/PROTOCOL.md does not list: "
            f"{json.dumps(frame)[:300]}"
        )
    if kind == "error" and frame.get("code") not in protocol.codes:
        raise UndocumentedFrame(f"undocumented error code {frame.get('code')!r}: {frame!r}")
    if kind == "batch":
        for event in frame.get("events", []):
            if not isinstance(event, dict) or event.get("type") not in BATCHED:
                raise UndocumentedFrame(f"a batch holds {event!r}, not a public feed event")
            check(socket, event, protocol)


@cache
def frame_decoder(socket: str) -> msgspec.json.Decoder[Any]:
    """The typed models of what this socket sends (games/protocol.py, lobby/protocol.py)."""
    from games import protocol as games
    from lobby import protocol as lobby

    return msgspec.json.Decoder((games if socket == "game" else lobby).SERVER_FRAMES)


def check_text(path: str, text: str | bytes) -> None:
    try:
        frame = json.loads(text)
    except ValueError:
        raise UndocumentedFrame(f"a frame that is not JSON: {text[:200]!r}") from None
    socket = socket_of(path)
    check(socket, frame)
    try:
        frame_decoder(socket).decode(text)
    except msgspec.ValidationError as error:
        raise UndocumentedFrame(
            f"the {socket} socket sent a {frame.get('type')!r} frame that does not match its "
            f"model ({error}): {str(text)[:300]}"
        ) from None


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


def code_mentions(name: str, roots: tuple[str, ...] = ("config", "games", "lobby")) -> bool:
    """Whether the server's source names `name` as a string (a frame type or error code)."""
    base = DOCUMENT.parent.parent
    pattern = re.compile(rf"[\"']{re.escape(name)}[\"']")
    return any(
        pattern.search(path.read_text())
        for root in roots
        for path in (base / root).rglob("*.py")
        if "migrations" not in path.parts
    )
