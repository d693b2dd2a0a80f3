"""The lobby's matchmaker: one asyncio task per server process that pairs seeks in batches.

Lobby sockets create seeks without pairing them and poke the matchmaker; it runs a pass
(lobby.services.seeks.pair_all) in its own database thread, so a burst of seeks costs a few
passes, not one locked transaction each, and a pass never waits behind the seeks it is to
pair. Passes of several processes exclude each other through the matchmaking lock; a process
that finds the lock taken tries again shortly, because the other pass may have started
before its seeks were committed.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from concurrent.futures import ThreadPoolExecutor

from lobby.services import seeks
from realtime import logs
from realtime.db import db_call

logger = logging.getLogger(__name__)

RETRY_SECONDS = 0.02

_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="matchmaker")
# Its own thread, so a pass never waits behind the seeks it is to pair; what it broadcasts
# goes out on the server's loop (db_call) instead of holding the pass until each is sent.
_pass = db_call(seeks.pair_all, executor=_thread)


class _Matchmaker:
    def __init__(self) -> None:
        self.wanted = asyncio.Event()
        # The process's matchmaker, not the socket's whose seek started it (realtime/logs.py).
        self.task: asyncio.Future[None] = logs.detached().run(asyncio.ensure_future, self.run())

    async def run(self) -> None:
        while True:
            await self.wanted.wait()
            self.wanted.clear()
            try:
                started = await _pass()
            except Exception:
                logger.exception("matchmaking pass failed")
                started = -1
            if started < 0:  # busy in another process, or failed: look again shortly
                await asyncio.sleep(RETRY_SECONDS)
                self.wanted.set()


# One per event loop (a server has one; tests start a loop per test).
_matchmakers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Matchmaker] = (
    weakref.WeakKeyDictionary()
)


def poke() -> None:
    """Ask for a matchmaking pass soon (seeks arrived)."""
    loop = asyncio.get_running_loop()
    matchmaker = _matchmakers.get(loop)
    if matchmaker is None or matchmaker.task.done():
        matchmaker = _matchmakers[loop] = _Matchmaker()
    matchmaker.wanted.set()
