"""Running database work from async consumers.

Channels' `database_sync_to_async` is thread-sensitive by default: every consumer of a
process queues on ONE thread, so a process applies moves one round trip at a time. Here the
work goes to a pool of DB_THREADS threads, each keeping its own connection. SQLite
allows one writer at a time, so the embedded default keeps a single thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import SyncToAsync, async_to_sync
from channels.db import DatabaseSyncToAsync
from django.conf import settings
from django.db import connections

logger = logging.getLogger(__name__)

_executor: ThreadPoolExecutor | None = None
_local = threading.local()


class _DatabaseCall(DatabaseSyncToAsync):
    """Remembers, for the running thread, the event loop that is waiting for it; keeps the
    thread's connection between calls."""

    def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
        _local.loop = loop
        try:
            _keep_connections()
            # Channels closes "old" connections before and after every call: with a pool
            # that returns the connection and checks one out again (with its health query)
            # each time, two extra round trips per move. These threads keep theirs instead.
            return SyncToAsync.thread_handler(self, loop, *args, **kwargs)
        finally:
            _local.loop = None


# A connection idle longer than this is checked (one round trip) before it is used: the
# database may have been restarted, or its sessions killed, while it waited. A busy thread's
# connection is not checked; a failure on it closes it for the next call.
IDLE_CHECK_SECONDS = 1.0


def _keep_connections() -> None:
    """Keep this thread's connections open for its next calls, unless one is broken (an
    error occurred on it and it no longer answers), left in the wrong state, or idle for a
    while and no longer answering: those are closed, and the next query opens a new one."""
    now = time.monotonic()
    idle = now - getattr(_local, "last_call", now) > IDLE_CHECK_SECONDS
    _local.last_call = now
    for conn in connections.all(initialized_only=True):
        if conn.connection is None:
            continue
        conn.close_at = None  # no maximum age: a database thread lives as long as the process
        if conn.errors_occurred or conn.get_autocommit() != conn.settings_dict["AUTOCOMMIT"]:
            conn.close_if_unusable_or_obsolete()
        elif idle and not conn.is_usable():
            conn.close()


def calling_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop of the consumer this database thread works for, if any."""
    return getattr(_local, "loop", None)


def run_soon(make: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run a coroutine from sync code: on the caller's loop without waiting, else to the end.

    From a consumer's database thread the broadcast goes out on the consumer's loop and the
    thread is free at once (no round trip to the loop and back per event); from plain sync
    code (HTTP views, management commands) it runs to completion before returning.
    """
    loop = calling_loop()
    if loop is not None and loop.is_running():
        asyncio.run_coroutine_threadsafe(make(), loop)
    elif loop is not None:
        # The consumer's loop has stopped under this thread (the process is exiting with the
        # call in hand): async_to_sync would wait for that loop forever, and the process
        # would never exit. Send on a loop of this thread's own, for a moment at most.
        asyncio.run(_at_exit(make()))
    else:
        async_to_sync(make)()


AT_EXIT_SECONDS = 2.0


async def _at_exit(sending: Coroutine[Any, Any, None]) -> None:
    try:
        await asyncio.wait_for(sending, AT_EXIT_SECONDS)
    except Exception as error:  # the process is going away: nothing is waiting for this
        logger.warning("not sent while the process stopped (%r)", error)


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=settings.DB_THREADS, thread_name_prefix="db")
    return _executor


def db_call(
    func: Callable[..., Any], executor: ThreadPoolExecutor | None = None
) -> Callable[..., Any]:
    """`await db_call(f)(*args)`: f in a database thread (of the shared pool, or of
    `executor`), on that thread's own connection; what f sends after commit goes out on
    the caller's event loop without the thread waiting for it."""
    return _DatabaseCall(func, thread_sensitive=False, executor=executor or _pool())
