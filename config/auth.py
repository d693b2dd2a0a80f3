"""Websocket authentication: Channels' session auth, with the user looked up in the project's
database thread pool.

Channels' AuthMiddleware looks the session's user up through `database_sync_to_async`, whose
default is ONE thread per process: in a reconnection storm every handshake queued behind
every other's two queries. Here the lookups share config.db's pool of DB_THREADS threads.
"""

from __future__ import annotations

from typing import Any

from channels.auth import AuthMiddleware, get_user
from channels.sessions import CookieMiddleware, SessionMiddleware

from config.db import db_call

# The plain function behind Channels' decorated get_user.
_lookup = get_user.func


class PooledAuthMiddleware(AuthMiddleware):
    async def resolve_scope(self, scope: dict[str, Any]) -> None:
        scope["user"]._wrapped = await db_call(_lookup)(scope)


def AuthMiddlewareStack(inner: Any) -> Any:
    """Cookies, sessions and the user, as channels.auth.AuthMiddlewareStack."""
    return CookieMiddleware(SessionMiddleware(PooledAuthMiddleware(inner)))
