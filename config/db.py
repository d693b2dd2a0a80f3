"""Running database work from async consumers.

Channels' `database_sync_to_async` is thread-sensitive by default: every consumer of a
process queues on ONE thread, so a process applies moves one round trip at a time. Here the
work goes to a pool of DB_THREADS threads, each with its own (persistent) connection. SQLite
allows one writer at a time, so the embedded default keeps a single thread.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.db import DatabaseSyncToAsync
from django.conf import settings

_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=settings.DB_THREADS, thread_name_prefix="db")
    return _executor


def db_call(func: Callable[..., Any]) -> Callable[..., Any]:
    """`await db_call(f)(*args)`: f in a database thread, stale connections closed around it."""
    return DatabaseSyncToAsync(func, thread_sensitive=False, executor=_pool())
