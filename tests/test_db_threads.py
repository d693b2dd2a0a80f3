"""realtime/db.py: database work of consumers in a pool of threads, and what those threads
send when they are done."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from realtime.db import db_call, run_soon

pytestmark = pytest.mark.sqlite(reason="threads and event loops; no database is touched")


def test_a_broadcast_from_a_thread_whose_loop_has_stopped_is_sent_and_does_not_hang() -> None:
    """A process stopping with a database call in hand (the heartbeat reaping, say): what the
    call sends once its consumer's loop is gone still goes out, and the thread finishes, so
    the process can exit. It used to wait for the stopped loop forever."""
    release, sent, finished = threading.Event(), threading.Event(), threading.Event()

    async def send() -> None:
        sent.set()

    def work() -> None:
        release.wait(5)
        run_soon(send)
        finished.set()

    calls: list[asyncio.Future[None]] = []

    async def start_and_stop() -> None:
        # A thread of its own: one of the shared pool may hold an earlier test's connection.
        calls.append(asyncio.ensure_future(db_call(work, executor=own_thread)()))
        await asyncio.sleep(0.05)  # the thread has the call in hand; the loop now stops

    own_thread = ThreadPoolExecutor(max_workers=1)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(start_and_stop())
        release.set()
        assert finished.wait(5), "the database thread is still waiting for the stopped loop"
        assert sent.is_set()
        loop.run_until_complete(calls[0])  # the call's own end, so nothing is left pending
    finally:
        loop.close()
        own_thread.shutdown(wait=False)
