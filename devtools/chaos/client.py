"""Clients of the suite: sockets whose every frame is checked against docs/PROTOCOL.md, and
a browser-like HTTP client (cookies, CSRF)."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import websockets
from django.test import Client

from accounts.models import User
from lobby.protocol_doc import UndocumentedFrame, check_text

# Every socket of the suite that is open now (presence rows must match it).
OPEN: set[Socket] = set()

# Close codes the protocol document gives (and 1000/1001, an orderly close).
DOCUMENTED_CLOSES = frozenset({1000, 1001, 1012, 4401, 4404, 4408, 4429, 4503})


@dataclass
class Tally:
    """What every client of a section saw: frames, undocumented ones, closes."""

    received: int = 0
    undocumented: list[str] = field(default_factory=list)
    closes: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def bad_closes(self) -> dict[int, int]:
        return {code: n for code, n in self.closes.items() if code not in DOCUMENTED_CLOSES}


def session_cookie(user: User) -> str:
    browser = Client()
    browser.force_login(user)
    return f"sessionid={browser.cookies['sessionid'].value}"


class Socket:
    """One websocket. A reader task checks each frame, keeps the last version seen and the
    newest game view, and hands answers to whoever waits for their `id`."""

    def __init__(
        self, base: str, path: str, cookie: str | None, tally: Tally, address: str | None = None
    ) -> None:
        self.base = base  # ws://host:port
        self.path = path
        self.cookie = cookie
        self.address = address  # sent as X-Forwarded-For: where the client comes from
        self.tally = tally
        self.connection: Any = None
        self.reader: asyncio.Task[None] | None = None
        self.waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.v = 0
        self.view: dict[str, Any] = {}  # the game: ply, to_move, legal_moves, status
        self.close_code: int | None = None
        self.closed = asyncio.Event()
        self.on_frame: Callable[[dict[str, Any]], None] | None = None

    async def open(
        self, query: str = "", within: float = 20, wait_first: bool = True
    ) -> dict[str, Any]:
        """Connect; the first frame (a snapshot, or an error before a close), unless told not
        to wait for one (a reconnect with `?v=` gets none when it missed nothing)."""
        http = self.base.replace("ws://", "http://")
        headers = {"Cookie": self.cookie} if self.cookie else {}
        if self.address:
            headers["X-Forwarded-For"] = self.address
        self.close_code = None
        self.closed = asyncio.Event()
        self.connection = await asyncio.wait_for(
            websockets.connect(
                self.base + self.path + query,
                origin=websockets.Origin(http),
                additional_headers=headers,
                ping_interval=None,  # the server pings; the client answers
                max_size=2**24,
                open_timeout=within,
            ),
            within,
        )
        OPEN.add(self)
        first: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if wait_first:
            self.waiting["__first__"] = first
        self.reader = asyncio.create_task(self._read())
        return await asyncio.wait_for(first, within) if wait_first else {}

    async def _read(self) -> None:
        try:
            async for text in self.connection:
                self._take(text)
        except websockets.ConnectionClosed:
            pass
        finally:
            received = self.connection.protocol.close_rcvd
            self.close_code = received.code if received is not None else 1006
            self.tally.closes[self.close_code] += 1
            self.closed.set()
            OPEN.discard(self)
            for future in self.waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"closed with {self.close_code}"))
                    future.exception()  # whoever waits still gets it; nobody else must
            self.waiting.clear()

    def _take(self, text: str | bytes) -> None:
        self.tally.received += 1
        try:
            check_text(self.path, text)
        except UndocumentedFrame as error:
            self.tally.undocumented.append(str(error)[:300])
            return
        frame = json.loads(text)
        kind = frame["type"]
        if kind == "error":
            self.tally.errors[frame["code"]] += 1
        if kind == "batch":
            for event in frame["events"]:
                self.v = max(self.v, event.get("v", 0))
        elif kind in ("state", "lobby"):
            self.v = frame["v"]
            if kind == "state":
                game = frame["game"]
                self.view = {
                    key: game[key] for key in ("ply", "to_move", "legal_moves", "status")
                } | {"id": game["id"]}
        elif isinstance(frame.get("v"), int) and kind != "lobby":
            self.v = max(self.v, frame["v"])
            if kind == "move" and frame["ply"] >= self.view.get("ply", 0):
                self.view.update(
                    {key: frame[key] for key in ("ply", "to_move", "legal_moves", "status")}
                )
            elif kind == "end":
                self.view.update(status=frame["status"], legal_moves=[])
        if self.on_frame is not None:
            self.on_frame(frame)
        first = self.waiting.pop("__first__", None)
        if first is not None and not first.done():
            first.set_result(frame)
            return
        waiter = self.waiting.pop(frame.get("id"), None) if "id" in frame else None
        if waiter is not None and not waiter.done():
            waiter.set_result(frame)

    async def send(self, message: Any) -> None:
        text = message if isinstance(message, str | bytes) else json.dumps(message)
        await self.connection.send(text)

    async def request(self, message: dict[str, Any], within: float = 20) -> dict[str, Any]:
        """Send a message with an `id`; the answer that repeats it."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[message["id"]] = future
        await self.send(message)
        try:
            return await asyncio.wait_for(future, within)
        finally:
            self.waiting.pop(message["id"], None)

    @property
    def is_open(self) -> bool:
        return self.connection is not None and not self.closed.is_set()

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


class Browser:
    """A browser-like HTTP client: its cookies, the CSRF token, no redirects followed."""

    def __init__(self, base: str, cookie: str | None = None) -> None:
        self.base = base
        self.jar: dict[str, str] = {}
        if cookie:
            name, _, value = cookie.partition("=")
            self.jar[name] = value
        self.opener = urllib.request.build_opener(_NoRedirect())

    def fetch(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        content_type: str = "application/json",
        timeout: float = 20,
    ) -> tuple[int, bytes, Any]:
        headers = {"Content-Type": content_type, "Origin": self.base}
        if "csrftoken" in self.jar:
            headers["X-CSRFToken"] = self.jar["csrftoken"]
        if self.jar:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.jar.items())
        request = urllib.request.Request(
            self.base + path, data=body, headers=headers, method=method
        )
        try:
            with self.opener.open(request, timeout=timeout) as answer:
                status, data, received = answer.status, answer.read(), answer.headers
        except urllib.error.HTTPError as refused:
            status, data, received = refused.code, refused.read(), refused.headers
        for header in received.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            value = rest.split(";", 1)[0]
            if value in ("", '""'):
                self.jar.pop(name, None)
            else:
                self.jar[name] = value
        return status, data, received

    def get_csrf(self) -> None:
        """Load a page that sets the CSRF cookie."""
        self.fetch("GET", "/login/")

    def form(self, path: str, fields: dict[str, str]) -> tuple[int, bytes, Any]:
        from urllib.parse import urlencode

        body = urlencode({**fields, "csrfmiddlewaretoken": self.jar.get("csrftoken", "")})
        return self.fetch("POST", path, body.encode(), "application/x-www-form-urlencoded")

    @property
    def session(self) -> str | None:
        return f"sessionid={self.jar['sessionid']}" if "sessionid" in self.jar else None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def now() -> float:
    return time.monotonic()
