"""Websocket admission: the Origin check, the cookies, the session and the user, in one step.

What Channels' AllowedHostsOriginValidator, CookieMiddleware, SessionMiddleware and
AuthMiddleware do, as one application instead of four nested ones. Each of those stays on the
stack for the socket's whole life, awaiting the next: four coroutine frames, four copies of
the scope, a session wrapper and a lazy user per socket, about 4 KB of an idle socket's
memory. The session wrapper saves the session on "http.response.start", which a websocket
never sends. Here the scope is not copied, the user is the user (not a lazy object), and the
frame that stays is this one.

The user is looked up in the project's database thread pool: Channels' `get_user` goes
through `database_sync_to_async`, whose default is ONE thread per process, so in a
reconnection storm every handshake queued behind every other's two queries.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from importlib import import_module
from typing import Any
from urllib.parse import ParseResult, urlparse

from channels.auth import get_user
from channels.security.websocket import AllowedHostsOriginValidator, WebsocketDenier
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http.cookie import parse_cookie

from realtime import metrics
from realtime.db import db_call
from realtime.errors import is_outage

logger = logging.getLogger(__name__)

# The plain function behind Channels' decorated get_user.
_lookup = get_user.func


class SocketAdmission:
    """Admit a websocket (its Origin must be one of ALLOWED_HOSTS, as Channels'
    AllowedHostsOriginValidator has it) and give the inner application a scope with
    `cookies`, `session` (the session store of the session cookie) and `user`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        # Channels' validator, for its reading of ALLOWED_HOSTS (DEBUG's defaults included).
        self.origins = AllowedHostsOriginValidator(None)
        self.sessions = import_module(settings.SESSION_ENGINE).SessionStore

    def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Awaitable[None]:
        """The socket's application, to be awaited. Not a coroutine of its own: a visitor's
        socket gets the inner application's coroutine itself, so no frame of this one stays
        on the stack of every idle visitor's socket (0.4 KB each)."""
        if scope["type"] != "websocket":
            raise ValueError("SocketAdmission serves websockets only")
        if not self.origins.valid_origin(_origin(scope)):
            return WebsocketDenier()(scope, receive, send)
        cookies = _cookies(scope)
        # Added to the server's own scope, not to a copy: nothing above reads it once it is
        # handed on (Daphne, the protocol router), and every copy stays for the socket's life.
        scope["cookies"] = cookies
        key = cookies.get(settings.SESSION_COOKIE_NAME)
        scope["session"] = self.sessions(key)
        if not key:
            # A visitor: no session to read, so no turn in the database threads, where in a
            # connect storm the handshake queued behind other sockets' work past Daphne's
            # handshake timeout (refused with 403).
            scope["user"] = AnonymousUser()
            return self.inner(scope, receive, send)
        return self._signed_in(scope, receive, send)

    async def _signed_in(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            scope["user"] = await db_call(_lookup)(scope)
        except Exception as error:
            if not is_outage(error):
                raise
            # Who it is cannot be known now: the consumer tells the client to come back
            # (realtime/ws.py) rather than let it in as somebody else, a visitor.
            metrics.DATABASE_ERRORS.labels("socket").inc()
            logger.warning("websocket sign-in: database unreachable (%s)", error)
            scope["user"] = AnonymousUser()
            scope["database_unreachable"] = True
        await self.inner(scope, receive, send)


def _origin(scope: dict[str, Any]) -> ParseResult | None:
    """The Origin header, parsed (the last one, as Channels reads it); None without one."""
    origin = None
    for name, value in scope.get("headers", []):
        if name == b"origin":
            try:
                origin = urlparse(value.decode("latin1"))
            except ValueError:  # "http://[oops": refused as having none
                origin = None
    return origin


def _cookies(scope: dict[str, Any]) -> dict[str, str]:
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            return parse_cookie(value.decode("latin1"))
    return {}
