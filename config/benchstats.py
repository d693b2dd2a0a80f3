"""Counters a benchmark reads from a running server process (BENCH_STATS=1 only).

The benchmark commands start their server processes with BENCH_STATS=1; each database
connection then counts the statements it executes, and GET /bench/stats answers the
process's totals: statements, transactions committed, and CPU seconds.
"""

from __future__ import annotations

import os
import resource
import threading
from typing import Any

from django.db.backends.signals import connection_created
from django.http import HttpRequest, JsonResponse

ENABLED = os.environ.get("BENCH_STATS") == "1"

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
    if ENABLED:
        connection_created.connect(_install, dispatch_uid="benchstats")


def stats(request: HttpRequest) -> JsonResponse:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with _lock:
        counts = dict(_counts)
    return JsonResponse({**counts, "cpu_seconds": usage.ru_utime + usage.ru_stime})
