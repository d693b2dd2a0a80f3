"""The drill's latency relay (devtools/cluster/latency.py): every byte passed on in order,
each way no sooner than its delay, and a closed side closes the other; on asyncio's own loop
and on uvloop's, which the drill runs it on."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from devtools.cluster.latency import relay

pytestmark = [
    pytest.mark.sqlite(reason="no database: sockets only"),
    pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"]),
]
Runner = Callable[[Coroutine[Any, Any, None]], None]


async def echo_server() -> asyncio.Server:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65_536):
            writer.write(data)
            await writer.drain()
        writer.close()

    return await asyncio.start_server(echo, "127.0.0.1", 0)


def test_a_round_trip_through_the_relay_takes_both_ways_delays_and_loses_nothing(
    run: Runner,
) -> None:
    run(_round_trips())


async def _round_trips() -> None:
    server = await echo_server()
    target = server.sockets[0].getsockname()[:2]
    delayed = await relay(("127.0.0.1", 0), target, ms=20.0, jitter=5.0)
    reader, writer = await asyncio.open_connection(*delayed.sockets[0].getsockname()[:2])
    rounds = []
    for _ in range(5):
        started = time.monotonic()
        writer.write(b"ping")
        assert await reader.readexactly(4) == b"ping"
        rounds.append(time.monotonic() - started)
    assert min(rounds) >= 0.030  # two ways, each at least 15 ms
    payload = os.urandom(1_000_000)
    writer.write(payload)
    assert await reader.readexactly(len(payload)) == payload  # in order, whole
    writer.write_eof()
    assert await reader.read() == b""  # the far side closed after us
    writer.close()
    for running in (delayed, server):
        running.close()
        await running.wait_closed()


def test_a_target_that_does_not_answer_closes_the_client_s_connection(run: Runner) -> None:
    run(_no_target())


async def _no_target() -> None:
    server = await echo_server()
    target = server.sockets[0].getsockname()[:2]
    server.close()
    await server.wait_closed()  # nothing listens there now
    delayed = await relay(("127.0.0.1", 0), target, ms=1.0, jitter=0.0)
    reader, writer = await asyncio.open_connection(*delayed.sockets[0].getsockname()[:2])
    assert await asyncio.wait_for(reader.read(), 5) == b""
    writer.close()
    delayed.close()
    await delayed.wait_closed()
