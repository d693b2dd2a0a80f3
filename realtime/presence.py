"""Presence that outlives no process: connection rows carry the process that holds them and
when it last vouched for them.

Every open socket is a row (games' GameConnection, lobby's LobbyConnection) so that all
server processes count the same crowd. A clean disconnect deletes its row, but a process
that dies (kill -9, a crashed host) cannot. So each process stamps its rows every
HEARTBEAT seconds, and any process (and the sweeper) removes rows nobody has stamped for
EXPIRY seconds, then lets the owning app react (a player counts as gone, seeks close, counts
drop). A process that was merely stalled past the expiry puts its rows back at its next
stamp and the app hears that they returned.

Apps register their table in AppConfig.ready(); this module knows no app.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, models, transaction
from django.utils import timezone

from realtime import logs
from realtime.db import db_call

logger = logging.getLogger(__name__)

# This process: rows it holds carry this id.
SERVER_ID = f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"


def heartbeat_seconds() -> float:
    return float(getattr(settings, "PRESENCE_HEARTBEAT_SECONDS", 10.0))


def expiry_seconds() -> float:
    return float(getattr(settings, "PRESENCE_EXPIRY_SECONDS", 30.0))


Rows = list[Any]


@dataclass
class Table:
    """A connection table: rows with `channel_name`, `server` and `seen_at` fields."""

    model: type[models.Model]
    # Called outside the reaping transaction with the rows that were removed / put back.
    on_reaped: Callable[[Rows], None]
    on_revived: Callable[[Rows], None]
    # channel name -> the row's other fields, for the sockets this process holds open
    held: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Sockets that closed while their row could not be deleted (the database was away): the
    # heartbeat deletes them, since it vouches for every row of this process.
    gone: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


_tables: dict[type[models.Model], Table] = {}


def register(
    model: type[models.Model],
    *,
    on_reaped: Callable[[Rows], None],
    on_revived: Callable[[Rows], None],
) -> None:
    _tables[model] = Table(model=model, on_reaped=on_reaped, on_revived=on_revived)


def arrive(model: type[models.Model], channel_name: str, **fields: Any) -> None:
    """Record an open socket of this process (in a database thread)."""
    table = _tables[model]
    with table.lock:
        table.held[channel_name] = fields
    model._default_manager.update_or_create(
        channel_name=channel_name,
        defaults={**fields, "server": SERVER_ID, "seen_at": timezone.now()},
    )


def admit(
    model: type[models.Model],
    channel_name: str,
    *,
    user_id: int | None,
    address: str,
    per_user: int,
    per_address: int,
    **fields: Any,
) -> str | None:
    """Count the user's and the address's open sockets and, if there is room, record this
    one (as `arrive`), in one transaction that no other admission of the same user or
    address overlaps: counted first and recorded later, sockets opened together all saw
    room. Returns "user" or "address" for the cap that refused it, None when admitted.
    (PostgreSQL: an advisory lock per user and per address; SQLite's transactions already
    take its one write lock at their start.)"""
    counted_user = user_id if per_user else None
    counted_address = address if per_address else ""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            keys = sorted(
                ([f"sockets-user:{counted_user}"] if counted_user is not None else [])
                + ([f"sockets-address:{counted_address}"] if counted_address else [])
            )
            with connection.cursor() as cursor:
                for key in keys:  # always in one order: two admissions cannot deadlock
                    cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [key])
        if counted_user is not None or counted_address:
            by_user, by_address = open_sockets(counted_user, counted_address)
            if counted_user is not None and by_user >= per_user:
                return "user"
            if counted_address and by_address >= per_address:
                return "address"
        fields = {"user_id": user_id, "address": address, **fields}
        table = _tables[model]
        with table.lock:
            table.held[channel_name] = fields
        # A new socket's channel name is new: one INSERT (update_or_create would add a locking
        # read and a savepoint, and a reconnection storm is made of these).
        model._default_manager.create(
            channel_name=channel_name, server=SERVER_ID, seen_at=timezone.now(), **fields
        )
    return None


def open_sockets(user_id: int | None, address: str) -> tuple[int, int]:
    """How many sockets the user and the address have open, on every server process (the
    rows are shared), in one query over every table; a count not asked for (None, "") is 0."""
    if user_id is None and not address:
        return 0, 0
    # A count not asked for is a condition no row meets.
    by_user, user_params = ("user_id = %s", [user_id]) if user_id is not None else ("1 = 0", [])
    by_address, address_params = ("address = %s", [address]) if address else ("1 = 0", [])
    parts: list[str] = []
    params: list[Any] = []
    for table in _tables.values():
        name = connection.ops.quote_name(table.model._meta.db_table)
        parts.append(
            f"SELECT SUM(CASE WHEN {by_user} THEN 1 ELSE 0 END) AS u, "
            f"SUM(CASE WHEN {by_address} THEN 1 ELSE 0 END) AS a "
            f"FROM {name} WHERE {by_user} OR {by_address}"
        )
        params += [*user_params, *address_params, *user_params, *address_params]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT COALESCE(SUM(u), 0), COALESCE(SUM(a), 0) FROM ({' UNION ALL '.join(parts)}) t",
            params,
        )
        by_user_total, by_address_total = cursor.fetchone()
    return int(by_user_total), int(by_address_total)


def leave(model: type[models.Model], channel_name: str) -> None:
    """Forget a closed socket of this process (in a database thread)."""
    table = _tables[model]
    with table.lock:
        table.held.pop(channel_name, None)
        table.gone.add(channel_name)  # until its row is known to be deleted
    model._default_manager.filter(channel_name=channel_name).delete()
    with table.lock:
        table.gone.discard(channel_name)


# A socket closed for a restart (realtime/drain.py) is handed over rather than removed: its
# row stays, marked with this prefix, and is reaped this many seconds later by a live
# process. By then its page has reconnected to another process, so the apps find the player
# still here (no "left the game", no seek closed); a page that did not come back counts as
# gone, as after a crash.
HANDED_OVER = "handover:"
HANDOVER_SECONDS = 5.0


def hand_over() -> int:
    """Hand this process's rows to the live processes (it is stopping); how many."""
    aged = timezone.now() - timedelta(seconds=max(0.0, expiry_seconds() - HANDOVER_SECONDS))
    handed = 0
    for table in _tables.values():
        with table.lock:
            table.held.clear()  # nothing of this process is stamped or put back any more
        handed += table.model._default_manager.filter(server=SERVER_ID).update(
            server=f"{HANDED_OVER}{SERVER_ID}", seen_at=aged
        )
    return handed


def stamp() -> None:
    """Vouch for this process's rows; put back any that were reaped while it stalled."""
    now = timezone.now()
    for table in _tables.values():
        revived = _revive(table, _missing(table, now), now)
        if revived:
            logger.warning("presence: %d connection(s) of this process came back", len(revived))
            table.on_revived(revived)


def _missing(table: Table, now: Any) -> dict[str, dict[str, Any]]:
    """Stamp the table's rows of this process; the sockets it holds that have no row."""
    manager = table.model._default_manager
    with table.lock:
        gone = set(table.gone)
    if gone:
        manager.filter(channel_name__in=gone).delete()
        with table.lock:
            table.gone -= gone
    with table.lock:
        held = dict(table.held)
    updated = manager.filter(server=SERVER_ID).update(seen_at=now)
    if updated >= len(held):
        return {}
    present = set(
        manager.filter(channel_name__in=list(held)).values_list("channel_name", flat=True)
    )
    return {name: fields for name, fields in held.items() if name not in present}


def _revive(table: Table, missing: dict[str, dict[str, Any]], now: Any) -> Rows:
    """Put back the rows of sockets this process still holds. A socket that closed since
    `missing` was read must not come back: its row would be stamped for ever, a phantom
    spectator. `leave` forgets a socket under the same lock, before deleting its row."""
    manager = table.model._default_manager
    revived = []
    for channel_name, fields in missing.items():
        with table.lock:
            if channel_name not in table.held:
                continue
            row, _ = manager.update_or_create(
                channel_name=channel_name,
                defaults={**fields, "server": SERVER_ID, "seen_at": now},
            )
        revived.append(row)
    return revived


def reap() -> int:
    """Remove the rows no live process vouches for; how many went."""
    cutoff = timezone.now() - timedelta(seconds=expiry_seconds())
    removed = 0
    for table in _tables.values():
        manager = table.model._default_manager
        with transaction.atomic():
            # Two reapers (processes, the sweeper) never both take the same rows.
            rows = list(
                manager.select_for_update(skip_locked=True).filter(seen_at__lt=cutoff)[:1000]
            )
            if rows:
                manager.filter(pk__in=[row.pk for row in rows]).delete()
        if rows:
            handed = sum(1 for row in rows if row.server.startswith(HANDED_OVER))
            if handed < len(rows):
                logger.warning(
                    "presence: removed %d %s row(s) of dead processes",
                    len(rows) - handed,
                    table.model.__name__,
                )
            if handed:
                logger.info(
                    "presence: %d %s row(s) handed over by stopped processes checked",
                    handed,
                    table.model.__name__,
                )
            table.on_reaped(rows)
            removed += len(rows)
    return removed


# Off while this process drains (realtime/drain.py): it carries its sockets until they move,
# and the dead processes' rows are the live processes' to reap (a burst of checks here came
# on top of a load that was about to move, and held up its games' moves).
_reaping = {"on": True}


def stop_reaping() -> None:
    _reaping["on"] = False


def beat() -> None:
    """One heartbeat: stamp this process's rows, then reap the dead ones."""
    stamp()
    if _reaping["on"]:
        reap()


async def _run() -> None:
    while True:
        await asyncio.sleep(heartbeat_seconds())
        try:
            await db_call(beat)()
        except Exception:
            logger.exception("presence heartbeat failed")


# One per event loop: a server has one; tests start a loop per test.
_beaters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[None]] = (
    weakref.WeakKeyDictionary()
)


def ensure_heartbeat() -> None:
    """Start this process's heartbeat (on the running loop) if it is not running yet."""
    loop = asyncio.get_running_loop()
    task = _beaters.get(loop)
    if task is None or task.done():
        _beaters[loop] = loop.create_task(_run(), context=logs.detached())


def stop_heartbeat() -> None:
    """Stop this process's heartbeat: it is stopping, its rows are handed over, and a beat
    that reaps and sends while the loop goes away only holds up the exit."""
    task = _beaters.pop(asyncio.get_running_loop(), None)
    if task is not None:
        task.cancel()
