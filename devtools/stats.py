"""Counters a benchmark reads from a running server process.

The benchmark commands serve the product through devtools/asgi.py, which installs these
counters: each database connection counts the statements it executes, and GET /bench/stats
answers the process's totals: statements and CPU seconds. The product itself has neither the
counters nor the route.
"""

from __future__ import annotations

import json
import resource
import threading
from typing import Any

from django.db.backends.signals import connection_created

PATH = "/bench/stats"

_lock = threading.Lock()
_counts = {"statements": 0}


def _count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    with _lock:
        _counts["statements"] += 1
    return execute(sql, params, many, context)


def _install(sender: Any, connection: Any, **kwargs: Any) -> None:
    if _count not in connection.execute_wrappers:
        connection.execute_wrappers.append(_count)


def enable() -> None:
    connection_created.connect(_install, dispatch_uid="devtools.stats")


def totals() -> dict[str, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with _lock:
        counts: dict[str, float] = dict(_counts)
    return {**counts, "cpu_seconds": usage.ru_utime + usage.ru_stime}


def serving(inner: Any) -> Any:
    """An ASGI application that answers GET /bench/stats itself and hands the rest on."""

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == PATH:
            body = json.dumps(totals()).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await inner(scope, receive, send)

    return application
