"""The Bot API in the test process: its streams read through Django's own ASGI handler (as
Daphne serves them), its actions posted with tokens or a browser's session."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import msgspec
from asgiref.testing import ApplicationCommunicator
from channels.db import database_sync_to_async
from django.core.asgi import get_asgi_application
from django.test import Client

from accounts import tokens
from accounts.models import User
from botapi.protocol import EVENT_STREAM_FRAMES, GAME_STREAM_FRAMES

db = database_sync_to_async

_decoders = {
    "event": msgspec.json.Decoder(EVENT_STREAM_FRAMES),
    "game": msgspec.json.Decoder(GAME_STREAM_FRAMES),
}


def token_for(user: User, *scopes: str) -> str:
    return tokens.create_token(user=user, name=f"bot {len(scopes)}", scopes=scopes or ["play"])[1]


def http_scope(path: str, method: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """An ASGI HTTP scope as Daphne makes one for a request from 127.0.0.1."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }


class Stream:
    """One streamed answer: its status, headers and lines, each checked against the frame
    models of its stream (botapi/protocol.py)."""

    def __init__(self, path: str, *, token: str | None = None, cookie: str | None = None) -> None:
        headers = [(b"host", b"testserver")]
        if token is not None:
            headers.append((b"authorization", f"Bearer {token}".encode()))
        if cookie is not None:
            headers.append((b"cookie", f"sessionid={cookie}".encode()))
        scope = http_scope(path, "GET", headers)
        self.kind = "event" if path.startswith("/api/stream/") else "game"
        self.app = ApplicationCommunicator(get_asgi_application(), scope)
        self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self.ended = False
        self._buffer = b""
        self.body = b""  # the whole body of an answer that is not a stream

    async def open(self, seconds: float = 10) -> Stream:
        await self.app.send_input({"type": "http.request", "body": b"", "more_body": False})
        start = await self.app.receive_output(seconds)
        assert start["type"] == "http.response.start", start
        self.status = start["status"]
        self.headers = dict(start["headers"])
        if self.status != 200:
            while not self.ended:
                await self._more(seconds)
            self.body = self._buffer
        return self

    async def _more(self, seconds: float) -> None:
        message = await self.app.receive_output(seconds)
        assert message["type"] == "http.response.body", message
        self._buffer += message.get("body", b"")
        if not message.get("more_body", False):
            self.ended = True

    async def raw_line(self, seconds: float = 10) -> bytes | None:
        """The next line as sent (b"" for a keep-alive), or None once the answer ended."""
        while b"\n" not in self._buffer:
            if self.ended:
                assert not self._buffer, f"a last line without its newline: {self._buffer!r}"
                return None
            await self._more(seconds)
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    async def line(self, seconds: float = 10) -> dict[str, Any] | None:
        """The next frame (keep-alives skipped), checked against its model; None at the end."""
        while True:
            raw = await self.raw_line(seconds)
            if raw is None:
                return None
            if raw:
                _decoders[self.kind].decode(raw)
                frame: dict[str, Any] = json.loads(raw)
                return frame

    async def until(self, kind: str, seconds: float = 10) -> dict[str, Any]:
        """Frames up to the first of type `kind` (which is returned)."""
        while True:
            frame = await self.line(seconds)
            assert frame is not None, f"the stream ended before a {kind!r}"
            if frame["type"] == kind:
                return frame

    async def end(self, seconds: float = 10) -> list[dict[str, Any]]:
        """The frames left until the server ends the answer."""
        frames = []
        while (frame := await self.line(seconds)) is not None:
            frames.append(frame)
        await self.app.wait(seconds)
        return frames

    async def close(self) -> None:
        """The client goes away."""
        if not self.ended:
            await self.app.send_input({"type": "http.disconnect"})
        with contextlib.suppress(asyncio.CancelledError):
            await self.app.wait(5)

    def error(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.body)["error"]
        return found


def post(path: str, body: dict[str, Any] | None = None, *, token: str) -> tuple[int, Any]:
    """POST a JSON body with a token; the status and the decoded answer."""
    answer = Client(HTTP_AUTHORIZATION=f"Bearer {token}").post(
        path, json.dumps(body or {}), content_type="application/json"
    )
    return answer.status_code, answer.json()


apost = db(post)
