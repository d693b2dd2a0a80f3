"""Websocket admission: the Origin check, the cookies, the session and the user, in one step.

What Channels' AllowedHostsOriginValidator, CookieMiddleware, SessionMiddleware and
AuthMiddleware do, as one application instead of four nested ones. Each of those stays on the
stack for the socket's whole life, awaiting the next: four coroutine frames, four copies of
the scope, a session wrapper and a lazy user per socket, about 4 KB of an idle socket's
memory. The session wrapper saves the session on "http.response.start", which a websocket
never sends. Here the scope is not copied, the user is the user (not a lazy object), and the
frame that stays is this one for a signed-in socket, none for a visitor's.

Sessions and users are read in the project's database thread pool, for every socket opening
meanwhile at once (`signed_in_many`): Channels' `get_user` goes through
`database_sync_to_async`, whose default is ONE thread per process, so in a reconnection storm
every handshake queued behind every other's two queries.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from importlib import import_module
from typing import Any
from urllib.parse import ParseResult, urlparse

from channels.auth import _get_user_session_key as _user_session_key
from channels.auth import get_user
from channels.security.websocket import AllowedHostsOriginValidator, WebsocketDenier
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.http.cookie import parse_cookie
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from realtime import metrics
from realtime.batches import Batches
from realtime.errors import is_outage

logger = logging.getLogger(__name__)

# The plain function behind Channels' decorated get_user.
_lookup = get_user.func
# What `signed_in_many` reads in bulk: the database's sessions and the model backend.
DB_SESSIONS = "django.contrib.sessions.backends.db"
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def signed_in_many(keys: list[str]) -> list[tuple[Any, Any]]:
    """The session and the user of each session key, as Channels' `get_user` finds them, for
    many sockets at once: every session in one query and their users in one more.

    In a reconnection storm of signed-in players each socket read its session and its user
    alone, two round trips in a database thread: 69% of the server's samples, and 3,000
    signed-in sockets took three to four times as long as visitors' to be greeted. With
    other session engines or backends each key is looked up as Channels does."""
    engine = import_module(settings.SESSION_ENGINE).SessionStore
    if settings.SESSION_ENGINE != DB_SESSIONS or list(settings.AUTHENTICATION_BACKENDS) != [
        MODEL_BACKEND
    ]:
        found = []
        for key in keys:
            scope = {"session": engine(key)}
            found.append((scope["session"], _lookup(scope)))
        return found
    rows = {
        row.session_key: row
        for row in Session.objects.filter(session_key__in=set(keys), expire_date__gt=timezone.now())
    }
    sessions = [_ReadSession(key, rows.get(key)) for key in keys]
    wanted = {}
    for session in sessions:
        try:
            wanted[session] = _user_session_key(session)
        except (KeyError, ValidationError):
            continue
    users = get_user_model()._default_manager.in_bulk(set(wanted.values()))
    backend = ModelBackend()
    found = []
    for session in sessions:
        user = None
        # Channels' get_user, with the rows read above.
        if session in wanted and session.get(BACKEND_SESSION_KEY) == MODEL_BACKEND:
            user = users.get(wanted[session])
            if user is not None and not backend.user_can_authenticate(user):
                user = None
            if user is not None:
                session_hash = session.get(HASH_SESSION_KEY)
                if not (
                    session_hash
                    and constant_time_compare(session_hash, user.get_session_auth_hash())
                ):
                    session.flush()
                    user = None
        found.append((session, user or AnonymousUser()))
    return found


class _ReadSession(SessionStore):
    """A database session whose row was read already (None: there is none)."""

    def __init__(self, key: str, row: Session | None) -> None:
        super().__init__(key)
        self._row = row

    @property
    def key_salt(self) -> str:
        # Sessions are signed with their engine class's name: this one reads them as its own.
        return "django.contrib.sessions." + SessionStore.__qualname__

    def _get_session_from_db(self) -> Session | None:
        if self._row is None:
            self._session_key = None  # as the engine does for a key it does not find
        return self._row


# Looked up at each call (a test replaces it to take the database away).
_sign_in: Batches[str, tuple[Any, Any]] = Batches(lambda keys: signed_in_many(keys))


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
        return self._signed_in(key, scope, receive, send)

    async def _signed_in(self, key: str, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            scope["session"], scope["user"] = await _sign_in(key)
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
