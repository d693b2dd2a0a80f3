"""The short way in for a program's game actions: `POST /api/games/<id>/<action>` with a token.

Django's ASGI handler serves a sync view behind sync middleware by starting a thread of its
own for each request (asgiref's thread-sensitive context), crossing between that thread and
the event loop at every place where an async-capable layer meets a sync-only one (a move over
HTTP crossed eight times: the start signal, the chain, back to the loop for Django's
async-capable innermost middleware, once per view middleware, the view, the end signal), and
taking a pooled database connection, checked with a query, for each new thread. A bot's move
over HTTP cost the servers three times a socket's (docs/PERFORMANCE.md, "The Bot API"); a
socket's move runs in one of the process's database threads (realtime.db.db_call), which keep
their connections.

This door serves those requests with the SAME middleware (settings.MIDDLEWARE, in order),
URLs, views and services as every other request, through Django's synchronous handler (the
one a WSGI server runs: `BaseHandler.get_response`), in one call to a database thread of
realtime.db: one crossing, no new thread, a connection kept. The request id, the token and
its scopes, the buckets, the language, the security headers, the errors and the log lines are
the same code's, by construction; the request and the answer are read and written by Django's
ASGI handler's own methods (tests/test_botapi_door.py compares the two handlers' answers).
Everything else (a session's request, any other path or method, websockets) goes on to
Django's ASGI handler as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.http import HttpRequest, HttpResponseBase
from django.urls import set_script_prefix

from realtime.db import db_call

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# The game actions' path (games.urls' move, botapi.game_urls' other actions). The URL
# configuration still decides which view answers, and an unknown action is its 404.
ACTION_PATH = re.compile(r"/api/games/[0-9]+/[a-z_]+")


def takes(scope: Scope) -> bool:
    """Whether the door serves this request: a POST to a game action made with a token."""
    if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("root_path"):
        return False
    if not ACTION_PATH.fullmatch(scope.get("path", "")):
        return False
    for name, value in scope.get("headers") or ():
        if name == b"authorization":
            return bytes(value[:7]).lower() == b"bearer "
    return False


class _SyncHandler(BaseHandler):
    """settings.MIDDLEWARE around the URL configuration's views, loaded synchronously: what
    Django's WSGI handler runs."""

    def __init__(self) -> None:
        super().__init__()
        self.load_middleware(is_async=False)

    def respond(self, request: HttpRequest) -> HttpResponseBase:
        """The request's answer, whole (a game action's answer is bytes already).

        Django's request_started and request_finished signals are not sent: their receivers
        look after a request thread's database connections (close_old_connections, which
        would check this thread's connection with a query each time, and close one opened
        during the request at its end) and its caches. A database thread keeps its own
        connection (realtime/db.py), as for the sockets' work. The request's log context
        stays bound, as after Django's ASGI handler's chain, for Daphne's access line."""
        response = self.get_response(request)
        response._handler_class = ASGIHandler
        return response


class GameActionDoor:
    """ASGI: a program's game actions through `_SyncHandler` in a database thread; every other
    request to `django` (Django's ASGI handler)."""

    def __init__(self, django: ASGIHandler) -> None:
        self.django = django
        self.handler = _SyncHandler()
        self._respond = db_call(self.handler.respond)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not takes(scope):
            await self.django(scope, receive, send)
            return
        # Django's ASGI handler's own reading of the body and making of the request.
        try:
            body_file = await self.django.read_body(receive)
        except RequestAborted:
            return
        request = None
        try:
            set_script_prefix(get_script_prefix(scope))
            request, refusal = self.django.create_request(scope, body_file)
            if request is None:  # an unreadable request: Django's own refusal
                assert refusal is not None
                response: HttpResponseBase = refusal
            else:
                response = await self._respond(request)
            with contextlib.suppress(asyncio.CancelledError):  # the client went away meanwhile
                await self.django.send_response(response, send)
        finally:
            if request is not None:
                request.close()
            body_file.close()


def with_game_action_door(django: ASGIApp) -> ASGIApp:
    """`django` (Django's ASGI handler) behind the door for programs' game actions."""
    assert isinstance(django, ASGIHandler), django
    return GameActionDoor(django)
