"""The channel layer's subscriptions after an outage, when Redis comes back just as a consumer
subscribes and answers the new connection's handshake slowly.

Only one coroutine may read a connection. channels_redis's receive loop used to read beside a
subscription's handshake: asyncio refused it ("readuntil() called while another coroutine is
already waiting for incoming data") and a traceback went to the server's log (seen once in
four runs of the Redis-outage test under load). A proxy between the layer and a redis-server of
the test's own makes the timing certain: it cuts the connections, refuses the layer's first
attempt to connect again, and then holds Redis's first answers on a new connection.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from realtime.channel_layers import PubSubChannelLayer, redis_host
from realtime.log_filters import ConnectionErrorsInOneLine
from tests.servers import free_port, own_redis

pytestmark = [
    pytest.mark.redis,
    pytest.mark.sqlite(reason="no database is involved: run once"),
]

HOLD_SECONDS = 2.0  # longer than the receive loop's pause between attempts (1 s at most)


class Proxy:
    """TCP from the layer to a redis-server. While down it accepts and closes at once (Redis
    refusing); once back, it holds each new connection's first answers for `hold` seconds."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.down = False
        self.hold = 0.0
        self.attempt = asyncio.Event()  # set at each connection attempt
        self.writers: list[asyncio.StreamWriter] = []
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _client(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.attempt.set()
        if self.down:
            client_w.close()
            return
        redis_r, redis_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers += [client_w, redis_w]
        until = asyncio.get_running_loop().time() + self.hold
        await asyncio.gather(
            self._pipe(client_r, redis_w, 0.0), self._pipe(redis_r, client_w, until)
        )

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, until: float) -> None:
        try:
            while data := await source.read(65536):
                wait = until - asyncio.get_running_loop().time()
                if wait > 0:
                    await asyncio.sleep(wait)
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            sink.close()

    def cut(self) -> None:
        """Redis goes away: every connection through the proxy is closed, new ones refused."""
        self.down = True
        for writer in self.writers:
            writer.close()
        self.writers.clear()

    async def close(self) -> None:
        self.cut()
        self.server.close()
        await self.server.wait_closed()


class Records(logging.Handler):
    """What the layer logs, after the product's own log filter."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.addFilter(ConnectionErrorsInOneLine())
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def tracebacks(self) -> list[str]:
        return [
            f"{r.name}: {r.getMessage()}: {r.exc_info[1]!r}" for r in self.records if r.exc_info
        ]


@pytest.fixture
def records() -> Iterator[Records]:
    handler = Records()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


async def delivered(publisher: Any, subscriber: Any, channel: str) -> bool:
    """A message sent by another process's layer reaches the channel."""
    await publisher.send(channel, {"type": "probe", "to": channel})
    try:
        message = await asyncio.wait_for(subscriber.receive(channel), 5)
    except TimeoutError:
        return False
    return bool(message == {"type": "probe", "to": channel})


def test_a_consumer_subscribing_as_redis_comes_back_slowly_gets_its_messages_and_no_traceback(
    records: Records,
) -> None:
    port = free_port()

    async def scenario() -> None:
        proxy = Proxy(port)
        await proxy.start()
        prefix = f"reconnect{uuid.uuid4().hex[:8]}"
        layer = PubSubChannelLayer(
            hosts=[redis_host(f"redis://127.0.0.1:{proxy.port}/0")], prefix=prefix
        )
        # Another server process, publishing straight to Redis.
        publisher = PubSubChannelLayer(
            hosts=[redis_host(f"redis://127.0.0.1:{port}/0")], prefix=prefix
        )
        try:
            before = await layer.new_channel()
            assert await delivered(publisher, layer, before)

            proxy.attempt.clear()
            proxy.cut()
            # The receive loop finds its connection gone and tries again, refused: it pauses.
            await asyncio.wait_for(proxy.attempt.wait(), 5)
            proxy.down, proxy.hold = False, HOLD_SECONDS
            # Redis is back, slow to answer; a consumer starts and subscribes.
            during = await asyncio.wait_for(layer.new_channel(), 10)
            await asyncio.sleep(HOLD_SECONDS + 1.5)

            assert [await delivered(publisher, layer, c) for c in (before, during)] == [True, True]
        finally:
            await layer.flush()
            await publisher.flush()
            await proxy.close()

    with own_redis(port):
        asyncio.run(scenario())
    assert records.tracebacks() == []
    said = [r.getMessage() for r in records.records if r.name.startswith("realtime")]
    assert any("back after" in line for line in said), said
