"""Calls of a database function from many sockets at once, made as one call.

A reconnection storm, a lobby emptying into games: thousands of sockets each want the same
small write at the same moment, and each write alone is a few round trips in a database
thread. `Batches(run)` gathers the items that come while the previous batch is in the
database and hands them all to `run` (a plain function taking the list and returning one
result per item, in order) in one `db_call`: one batch at a time per process, as big as
what came meanwhile.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from realtime import logs
from realtime.db import db_call

Item = TypeVar("Item")
Result = TypeVar("Result")


class _Loop(Generic[Item, Result]):
    def __init__(self) -> None:
        self.waiting: list[tuple[Item, asyncio.Future[Result]]] = []
        self.running: asyncio.Task[None] | None = None


class Batches(Generic[Item, Result]):
    def __init__(self, run: Callable[[list[Item]], list[Result]], size: int = 500) -> None:
        self.run = run
        self.size = size
        # One per event loop: a server has one; tests start a loop per test.
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Loop[Item, Result]] = (
            weakref.WeakKeyDictionary()
        )

    async def __call__(self, item: Item) -> Result:
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = self._loops[loop] = _Loop()
        result: asyncio.Future[Result] = loop.create_future()
        state.waiting.append((item, result))
        if state.running is None:
            # The process's work, not the socket's that happened to start it.
            state.running = loop.create_task(self._drain(state), context=logs.detached())
        return await result

    async def _drain(self, state: _Loop[Item, Result]) -> None:
        try:
            while state.waiting:
                batch, state.waiting = state.waiting[: self.size], state.waiting[self.size :]
                try:
                    results = await db_call(self.run)([item for item, _ in batch])
                except Exception as error:  # an outage: each caller handles it as its own
                    for _, result in batch:
                        if not result.done():
                            result.set_exception(error)
                    continue
                for (_, result), said in zip(batch, results, strict=True):
                    if not result.done():
                        result.set_result(said)
        finally:
            state.running = None
