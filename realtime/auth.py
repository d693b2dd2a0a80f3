"""Websocket authentication: Channels' session auth, with the user looked up in the project's
database thread pool.

Channels' AuthMiddleware looks the session's user up through `database_sync_to_async`, whose
default is ONE thread per process: in a reconnection storm every handshake queued behind
every other's two queries. Here the lookups share realtime.db's pool of DB_THREADS threads.
"""

from __future__ import annotations

import logging
from typing import Any

from channels.auth import AuthMiddleware, get_user
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.contrib.auth.models import AnonymousUser

from realtime import metrics
from realtime.db import db_call
from realtime.errors import is_outage

logger = logging.getLogger(__name__)

# The plain function behind Channels' decorated get_user.
_lookup = get_user.func


class PooledAuthMiddleware(AuthMiddleware):
    async def resolve_scope(self, scope: dict[str, Any]) -> None:
        try:
            scope["user"]._wrapped = await db_call(_lookup)(scope)
        except Exception as error:
            if not is_outage(error):
                raise
            # Who it is cannot be known now: the consumer tells the client to come back
            # (realtime/ws.py) rather than let it in as somebody else, a visitor.
            metrics.DATABASE_ERRORS.labels("socket").inc()
            logger.warning("websocket sign-in: database unreachable (%s)", error)
            scope["user"]._wrapped = AnonymousUser()
            scope["database_unreachable"] = True


def AuthMiddlewareStack(inner: Any) -> Any:
    """Cookies, sessions and the user, as channels.auth.AuthMiddlewareStack."""
    return CookieMiddleware(SessionMiddleware(PooledAuthMiddleware(inner)))
