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
from realtime.batches import Batches
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


@dataclass(frozen=True)
class Admission:
    """A socket asking to be recorded in `model` under its user's and address's caps (a
    cap of 0 is not counted)."""

    model: type[models.Model]
    channel_name: str
    user_id: int | None
    address: str
    per_user: int
    per_address: int
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def counted_user(self) -> int | None:
        return self.user_id if self.per_user else None

    @property
    def counted_address(self) -> str:
        return self.address if self.per_address else ""


def admit_many(admissions: list[Admission]) -> list[str | None]:
    """Count each user's and address's open sockets and record the sockets for which there
    is room (as `arrive`), in order, in one transaction that no other admission of the same
    users or addresses overlaps: counted first and recorded later, sockets opened together
    all saw room. For each, "user" or "address" for the cap that refused it, None when it
    was admitted. (PostgreSQL: an advisory lock per user and per address; SQLite's
    transactions already take its one write lock at their start.) One lock statement, one
    count and one INSERT a table for all of them: a reconnection storm is made of these."""
    verdicts: list[str | None] = []
    with transaction.atomic():
        if connection.vendor == "postgresql":
            keys = sorted(
                {f"sockets-user:{a.counted_user}" for a in admissions if a.counted_user is not None}
                | {f"sockets-address:{a.counted_address}" for a in admissions if a.counted_address}
            )
            if keys:
                with connection.cursor() as cursor:
                    # Always in one order: two admissions cannot deadlock.
                    cursor.execute(
                        "SELECT pg_advisory_xact_lock(hashtext(k)) "
                        "FROM (SELECT unnest(%s::text[]) AS k ORDER BY 1) AS keys",
                        [keys],
                    )
        by_user, by_address = open_sockets(
            {a.counted_user for a in admissions if a.counted_user is not None},
            {a.counted_address for a in admissions if a.counted_address},
        )
        now = timezone.now()
        rows: dict[type[models.Model], list[models.Model]] = {}
        for a in admissions:
            if a.counted_user is not None and by_user.get(a.counted_user, 0) >= a.per_user:
                verdicts.append("user")
                continue
            if a.counted_address and by_address.get(a.counted_address, 0) >= a.per_address:
                verdicts.append("address")
                continue
            verdicts.append(None)
            if a.counted_user is not None:
                by_user[a.counted_user] = by_user.get(a.counted_user, 0) + 1
            if a.counted_address:
                by_address[a.counted_address] = by_address.get(a.counted_address, 0) + 1
            fields = {"user_id": a.user_id, "address": a.address, **a.fields}
            table = _tables[a.model]
            with table.lock:
                table.held[a.channel_name] = fields
            # A new socket's channel name is new: a plain INSERT (update_or_create would add
            # a locking read and a savepoint).
            rows.setdefault(a.model, []).append(
                a.model(channel_name=a.channel_name, server=SERVER_ID, seen_at=now, **fields)
            )
        for model, made in rows.items():
            # Held above before the INSERT commits, so a stamp() in between finds the row
            # missing and puts it back first (the same fields): then there is nothing to add.
            model._default_manager.bulk_create(made, ignore_conflicts=True)
    return verdicts


# `admit_many` for the sockets of this process opening together (realtime/batches.py).
admit_socket: Batches[Admission, str | None] = Batches(admit_many)


def open_sockets(users: set[int], addresses: set[str]) -> tuple[dict[int, int], dict[str, int]]:
    """How many sockets each user and each address has open, on every server process (the
    rows are shared), in one query over every table."""
    if not users and not addresses:
        return {}, {}
    # (the row's kind, the key as text, the column, the keys asked for)
    asked: list[tuple[str, str, str, list[Any]]] = [
        ("u", "CAST(user_id AS TEXT)", "user_id", sorted(users)),
        ("a", "address", "address", sorted(addresses)),
    ]
    parts: list[str] = []
    params: list[Any] = []
    for table in _tables.values():
        name = connection.ops.quote_name(table.model._meta.db_table)
        for kind, key, column, keys in asked:
            if keys:
                marks = ", ".join(["%s"] * len(keys))
                parts.append(
                    f"SELECT '{kind}', {key}, COUNT(*) FROM {name} "
                    f"WHERE {column} IN ({marks}) GROUP BY {column}"
                )
                params += keys
    by_user: dict[int, int] = {}
    by_address: dict[str, int] = {}
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        for kind, key, count in cursor.fetchall():
            if kind == "u":
                by_user[int(key)] = by_user.get(int(key), 0) + int(count)
            else:
                by_address[key] = by_address.get(key, 0) + int(count)
    return by_user, by_address


def leave(model: type[models.Model], channel_name: str) -> None:
    """Forget a closed socket of this process (in a database thread)."""
    leave_many(model, [channel_name])


def leave_many(model: type[models.Model], channel_names: list[str]) -> None:
    """Forget closed sockets of this process, in one DELETE (in a database thread)."""
    table = _tables[model]
    with table.lock:
        for name in channel_names:
            table.held.pop(name, None)
            table.gone.add(name)  # until its row is known to be deleted
    model._default_manager.filter(channel_name__in=channel_names).delete()
    with table.lock:
        table.gone.difference_update(channel_names)


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
