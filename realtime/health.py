"""Health checks, for the proxy, the orchestrator and the people who run the site:

- GET /healthz, liveness: the process answers (its event loop turns). It does not look at
  PostgreSQL or Redis: an outage of those is not cured by restarting every server process.
- GET /readyz, readiness: the process should be sent traffic. 503 while it drains (it was
  told to stop: realtime/drain.py) or while a real round trip to the database or to the
  channel layer fails; each check's result and time are in the body. The body also says
  whether e-mail goes out (`mail`, realtime/outgoing_mail.py), without changing the status:
  a process that cannot send mail still serves its games, and taking every web process out
  of rotation would not bring the mail server back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime
from typing import Any

from channels.layers import get_channel_layer
from django.db import connection
from django.http import HttpRequest, JsonResponse

from realtime import drain, outgoing_mail
from realtime.db import db_call

CHECK_TIMEOUT_SECONDS = 3.0


def _query_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        (value,) = cursor.fetchone()
    if value != 1:
        raise RuntimeError(f"SELECT 1 returned {value!r}")


async def _check(probe: Any) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        await asyncio.wait_for(probe(), CHECK_TIMEOUT_SECONDS)
    except TimeoutError:
        return {"ok": False, "error": f"no answer within {CHECK_TIMEOUT_SECONDS:g} s"}
    except Exception as error:  # any failure is a health fact to report, not to raise
        return {"ok": False, "error": f"{type(error).__name__}: {error}"}
    return {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 1)}


async def _database_round_trip() -> None:
    await db_call(_query_database)()


async def _channel_layer_round_trip() -> None:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer is configured")
    # Over each Redis server of a sharded layer: a process that cannot reach one of them
    # misses every broadcast of the games and groups that live there.
    servers = getattr(layer, "servers", 1)
    await asyncio.gather(*(_round_trip(layer, server if servers > 1 else None)
                           for server in range(servers)))  # fmt: skip


async def _round_trip(layer: Any, server: int | None) -> None:
    if server is None:
        channel = await layer.new_channel("healthz.")
    else:
        channel = await layer.new_channel("healthz.", server=server)
    token = time.time_ns()
    await layer.send(channel, {"type": "healthz.ping", "token": token})
    try:
        message = await layer.receive(channel)
    finally:
        await _release(layer, channel)
    if message.get("token") != token:
        raise RuntimeError("the channel layer returned a different message")


async def _release(layer: Any, channel: str) -> None:
    # The Pub/Sub layer unsubscribes a channel only when a receive on it is cancelled (its
    # consumers' way of leaving); without this every health check would leak a subscription.
    waiter = asyncio.ensure_future(layer.receive(channel))
    await asyncio.sleep(0)
    waiter.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiter


def _moment(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).isoformat(timespec="seconds")


async def _mail_status() -> dict[str, Any]:
    """The last attempt to hand mail to the outgoing server, by any process: `ok` true, false
    (with `error`, `hint` and `failing_since`) or null (no mail tried for a day)."""
    try:
        record = await asyncio.wait_for(
            asyncio.to_thread(outgoing_mail.status), CHECK_TIMEOUT_SECONDS
        )
    except Exception as error:  # TimeoutError included: a report, never a reason to fail
        return {"ok": None, "error": f"not known: {type(error).__name__}: {error}".strip()}
    if record is None:
        return {"ok": None}
    body: dict[str, Any] = {"ok": bool(record["ok"]), "last_attempt": _moment(record["at"])}
    if not record["ok"]:
        body |= {
            "failing_since": _moment(record.get("since", record["at"])),
            "error": record.get("error", ""),
            "hint": record.get("hint", ""),
        }
    return body


async def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok", "draining": drain.is_draining()})


async def readyz(request: HttpRequest) -> JsonResponse:
    database, channel_layer, mail = await asyncio.gather(
        _check(_database_round_trip), _check(_channel_layer_round_trip), _mail_status()
    )
    layer = get_channel_layer()
    if drain.is_draining():
        status = "draining"
    elif database["ok"] and channel_layer["ok"]:
        status = "ok"
    else:
        status = "unavailable"
    body = {
        "status": status,
        "database": {"vendor": connection.vendor, **database},
        "channel_layer": {"backend": type(layer).__name__ if layer else None, **channel_layer},
        "mail": mail,
    }
    return JsonResponse(body, status=200 if status == "ok" else 503)
