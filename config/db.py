"""Running database work from async consumers.

Channels' `database_sync_to_async` is thread-sensitive by default: every consumer of a
process queues on ONE thread, so a process applies moves one round trip at a time. Here the
work goes to a pool of DB_THREADS threads, each with its own (persistent) connection. SQLite
allows one writer at a time, so the embedded default keeps a single thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import DatabaseSyncToAsync
from django.conf import settings

_executor: ThreadPoolExecutor | None = None
_local = threading.local()


class _DatabaseCall(DatabaseSyncToAsync):
    """Remembers, for the running thread, the event loop that is waiting for it."""

    def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
        _local.loop = loop
        try:
            return super().thread_handler(loop, *args, **kwargs)
        finally:
            _local.loop = None


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
    else:
        async_to_sync(make)()


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=settings.DB_THREADS, thread_name_prefix="db")
    return _executor


def db_call(func: Callable[..., Any]) -> Callable[..., Any]:
    """`await db_call(f)(*args)`: f in a database thread, stale connections closed around it."""
    return _DatabaseCall(func, thread_sensitive=False, executor=_pool())
