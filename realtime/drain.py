"""A server process's orderly stop (SIGTERM): nobody playing should notice it.

config/serve.py calls `drain` when the process is told to stop, after it stopped accepting
connections. From then on:

- the readiness check answers 503 `draining` (realtime/health.py), so whatever routes traffic
  sends none here;
- every open socket is told `restarting` and goes on working: its page opens a new socket
  (the proxy sends it to another process) at a random moment of a window, resumes there
  by version, and only then closes this one. Nothing is missed meanwhile: the old socket
  delivers until the new one is open (docs/PROTOCOL.md);
- a second later, the sockets still open finish the message they have in hand (a move being
  played is answered first) and are closed with code 1012 ("service restart"): their pages
  reconnect after a short random wait;
- the presence rows of those sockets are not deleted but handed over: the player did not
  leave, so no opponent is told "left the game" and no seek is closed. The rows are aged so
  that a live process reaps them a few seconds later, and the apps then look again (a player
  who came back in the meantime is still here; one who did not counts as gone, as after a
  crash). See realtime/presence.py, `hand_over`.

All of it within `grace` seconds (or the shorter time the caller gives): every step that waits
(on a client, on a socket's message in hand, on the database) waits at most what is left, and
what could not be done is logged with its reason. What is still open then is left to Daphne,
which cancels it; a thread that never returns (a database that hangs) is left to
config/graceful.py, which ends the process when the grace is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from dataclasses import dataclass
from typing import Any, Protocol

from realtime import presence
from realtime.db import db_call

logger = logging.getLogger(__name__)

# Close code of a socket closed because its server process is restarting: "reconnect, to
# another process if need be, and resync" (RFC 6455's 1012, Service Restart).
CLOSE_RESTARTING = 1012


# The window the pages are given to move to another process: long enough that the other
# processes take the new sockets in their stride beside the games they serve, at
# RESTART_MOVES_PER_SECOND (a setting: opening a socket costs about ten queries, and 50 a
# second already doubled the move round trip on the 2-core machine of docs/PERFORMANCE.md);
# at least MOVE_MS_LEAST and at most 60% of the grace. A socket that moves is never without a
# connection, so a long window costs the players nothing. Then, after AFTER_MOVE_SECONDS, the
# sockets still here are closed with 1012.
MOVE_MS_LEAST = 2000
AFTER_MOVE_SECONDS = 1.5
# The last part of the drain's time is kept for the sockets closed with 1012 (their clients
# answer the close) and, after them, for handing the presence over: each a tenth of it, at
# most a second (both take milliseconds when all is well).
LAST_STEPS_SECONDS = 1.0


def move_window_ms(sockets: int, grace: float) -> int:
    from django.conf import settings

    pace = float(settings.RESTART_MOVES_PER_SECOND)
    return int(min(max(MOVE_MS_LEAST, sockets / pace * 1000), grace * 1000 * 0.6))


class Restartable(Protocol):
    async def announce_restart(self, within_ms: int) -> None: ...

    async def close_for_restart(self) -> None: ...


_sockets: weakref.WeakSet[Any] = weakref.WeakSet()
_state = {"draining": False}
_all_closed: asyncio.Event | None = None


def is_draining() -> bool:
    return _state["draining"]


def track(consumer: Restartable) -> None:
    """An open socket, to be closed with 1012 when the process drains."""
    _sockets.add(consumer)


def untrack(consumer: Restartable) -> None:
    _sockets.discard(consumer)
    if not _sockets and _all_closed is not None:
        _all_closed.set()


def open_sockets() -> int:
    return len(_sockets)


@dataclass(frozen=True)
class Drained:
    sockets: int  # open when the drain began
    moved: int  # closed by their pages once they had a new socket elsewhere
    left_open: int  # still open when the grace ran out
    handed_over: int  # presence rows handed to the other processes
    seconds: float


def reason(error: BaseException, waited: float | None = None) -> str:
    """Why a step failed, for the log: never empty (a timeout's message is)."""
    if isinstance(error, TimeoutError) and waited is not None:
        return f"timed out after {waited:.1f} s"
    return repr(error)


async def drain(grace: float, within: float | None = None) -> Drained:
    """Close every socket of this process for a restart and hand its presence over, in at
    most `within` seconds (`grace` by default; the window the pages are given to move is
    measured on `grace`)."""
    global _all_closed
    started = time.monotonic()
    deadline = started + (grace if within is None else min(within, grace))
    last_steps = min(LAST_STEPS_SECONDS, (deadline - started) * 0.1)

    def left(keep: float = 0.0) -> float:
        """What is left of the drain's time, less `keep` (kept for the steps after)."""
        return max(0.0, deadline - keep - time.monotonic())

    _state["draining"] = True
    presence.stop_reaping()
    sockets = list(_sockets)
    _all_closed = asyncio.Event()
    if not _sockets:
        _all_closed.set()
    window_ms = move_window_ms(len(sockets), grace)
    try:
        await asyncio.wait_for(
            asyncio.gather(
                *(socket.announce_restart(window_ms) for socket in sockets),
                return_exceptions=True,
            ),
            left(2 * last_steps),
        )
    except TimeoutError:
        logger.warning("drain: not every socket was told of the restart (timed out)")
    window = min(window_ms / 1000 + AFTER_MOVE_SECONDS, grace * 0.8, left(2 * last_steps))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_all_closed.wait(), window)
    moved = len(sockets) - len(_sockets)
    closing = [asyncio.ensure_future(socket.close_for_restart()) for socket in list(_sockets)]
    # Closed means the client answered the close and the consumer cleaned up.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_all_closed.wait(), left(last_steps))
    for task in closing:
        if not task.done():
            task.cancel()
        elif not task.cancelled() and task.exception() is not None:
            logger.error("drain: a socket could not be closed", exc_info=task.exception())
    left_open = len(_sockets)
    presence.stop_heartbeat()
    handed_over = 0
    waited = left()
    try:
        if waited <= 0:
            raise RuntimeError("no time left of the grace")
        # In a database thread, which may never return (a database that hangs): the wait
        # ends with the time left, and the thread is left behind.
        handed_over = await asyncio.wait_for(db_call(presence.hand_over)(), waited)
    except Exception as error:  # the rows then expire as a dead process's would
        logger.warning("drain: presence not handed over (%s)", reason(error, waited))
    return Drained(
        sockets=len(sockets),
        moved=moved,
        left_open=left_open,
        handed_over=handed_over,
        seconds=time.monotonic() - started,
    )
