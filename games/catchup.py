"""Game sockets that missed an event catch up from the database, even when nothing follows it.

A broadcast can be lost between a move's commit and its delivery: Redis restarted, or this
process was reconnecting to it. A socket that then sees a later event fills the gap itself;
in a quiet game no later event comes, and the opponent would wait for a move already made.
So every CATCH_UP_SECONDS each server process reads, in one query, the versions of the games
its sockets show, and every socket still missing an event that was stored by the previous
check replays what it missed from the stored events (within two intervals of the loss). None
of this goes through the channel layer: sockets stay current while Redis is down.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Protocol

from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings

from games.models import Game
from realtime import logs, metrics
from realtime.db import db_call

logger = logging.getLogger(__name__)


class Stream(Protocol):
    """What this task needs of a game socket's stream (games.delivery.VersionedStream)."""

    @property
    def game_id(self) -> int: ...

    @property
    def last_v(self) -> int:
        """The last version the socket's client has."""
        ...

    @property
    def busy(self) -> bool:
        """Whether the stream is sending now (it brings its client up to date itself)."""
        ...

    async def catch_up(self, version: int) -> None:
        """Send the client what it lacks up to `version`."""
        ...


# The streams of this process's game sockets, per event loop (a server has one; tests start
# a loop per test), and each loop's catching-up task.
_sockets: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, weakref.WeakSet[Stream]] = (
    weakref.WeakKeyDictionary()
)
_runners: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[None]] = (
    weakref.WeakKeyDictionary()
)


def _in_memory_layer() -> bool:
    return isinstance(get_channel_layer(), InMemoryChannelLayer)


def interval() -> float:
    return float(getattr(settings, "GAME_CATCH_UP_SECONDS", 2.0))


def watch(stream: Stream) -> None:
    """Keep `stream` current from now on (its socket is open and has its snapshot)."""
    loop = asyncio.get_running_loop()
    _sockets.setdefault(loop, weakref.WeakSet()).add(stream)
    runner = _runners.get(loop)
    if runner is None or runner.done():
        _runners[loop] = loop.create_task(_run(loop), context=logs.detached())


def forget(stream: Stream) -> None:
    loop = asyncio.get_running_loop()
    _sockets.get(loop, weakref.WeakSet()).discard(stream)


def versions(game_ids: list[int]) -> dict[int, int]:
    return dict(Game.objects.filter(pk__in=game_ids).values_list("id", "version"))


# Per loop: each game's stored version at the previous check.
_previous: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, int]] = (
    weakref.WeakKeyDictionary()
)


async def catch_up_once(loop: asyncio.AbstractEventLoop) -> int:
    """Bring up to date every socket of this loop that still lacks an event stored before
    the previous check (a broadcast merely in flight is not a loss); how many there were."""
    streams = list(_sockets.get(loop, ()))
    if not streams:
        return 0
    current = await db_call(versions)(sorted({stream.game_id for stream in streams}))
    previous = _previous.get(loop, {})
    _previous[loop] = current
    # A busy stream is skipped, not waited for: it is answering a request or delivering an
    # event, which fills any gap before it, and the next check looks again. Waiting would hold
    # every other socket of the process behind one request's database call.
    behind = [s for s in streams if previous.get(s.game_id, 0) > s.last_v and not s.busy]
    for stream in behind:
        try:
            await stream.catch_up(current[stream.game_id])
        except Exception:  # one socket's trouble must not stop the others'
            logger.exception("catching up a socket of game %s failed", stream.game_id)
    if behind:
        metrics.CATCH_UPS.inc(len(behind))
        # On the in-memory layer (`make run`) the other processes' moves come over the bridge
        # (realtime/bridge.py); one it could not carry (too big, sent while the server was
        # starting) is routine there, a lost broadcast on Redis is not.
        level = logging.INFO if _in_memory_layer() else logging.WARNING
        logger.log(level, "caught up %d game socket(s) that missed an event", len(behind))
    return len(behind)


async def _run(loop: asyncio.AbstractEventLoop) -> None:
    while True:
        await asyncio.sleep(interval())
        try:
            await catch_up_once(loop)
        except Exception:
            logger.exception("catching up the game sockets failed")
