"""One reader per Pub/Sub connection: only the receive loop connects it again.

channels_redis's Pub/Sub layer keeps one Redis connection per shard for its subscriptions.
Two coroutines use it: the receive loop reading messages, and whoever subscribes or
unsubscribes a channel. After an outage, redis-py connects again from whichever of them uses
the connection first, and connecting reads the server's answers to the handshake. If the
other one reads meanwhile, asyncio refuses a second reader ("readuntil() called while another
coroutine is already waiting for incoming data"): the receive loop logged a traceback, or a
handshake failed half-way and left the connection without its subscriptions.

Here the receive loop is the only coroutine that connects the Pub/Sub connection again, and it
does so holding the shard's lock, which subscribing and unsubscribing hold too. While the
connection is down, subscribing and unsubscribing only change the list of channels: when the
receive loop has connected, redis-py subscribes to every channel on it (its connect callback).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

import redis.exceptions
from channels_redis.pubsub import RedisSingleShardConnection
from channels_redis.utils import create_pool
from redis import asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.driver_info import DriverInfo
from redis.utils import get_lib_version

logger = logging.getLogger(__name__)

# What connecting raises while Redis is unreachable.
DOWN: tuple[type[BaseException], ...] = (
    OSError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)
# Between the receive loop's attempts to connect again: from the first to the most.
RECONNECT_FIRST_SECONDS = 0.1
RECONNECT_MOST_SECONDS = 1.0
# How long the receive loop waits for a message before looking at the connection again.
POLL_SECONDS = 0.1


# The driver's name and version that every new connection sends Redis (CLIENT SETINFO),
# looked up once: redis-py reads its package's metadata from disk for each connection it
# opens, on the event loop, and a shard's pool grows by hundreds in a burst of broadcasts
# (44% of a server's event-loop samples while 1,500 game sockets connected).
DRIVER_INFO = DriverInfo(lib_version=get_lib_version())


class ReconnectingElsewhere(redis.exceptions.ConnectionError):
    """The Pub/Sub connection is down and only the receive loop may connect it."""


class OneReaderPubSub(PubSub):
    """A PubSub that connects again only when its receive loop asks (`connect`)."""

    async def execute_command(self, *args: Any) -> None:
        connection = self.connection
        if not self.subscribed or (connection is not None and connection.is_connected):
            # Connected, or nothing subscribed (the receive loop is not reading): redis-py's
            # own way is safe.
            await super().execute_command(*args)
            return
        # Down, and the receive loop will connect: connecting here too would read the
        # handshake beside its reads. The server holds no subscriptions for a lost
        # connection; change only the list that the connect callback subscribes from.
        command = args[0] if args else None
        if command == "SUBSCRIBE":
            return  # subscribe() adds the channels to the list once this returns
        if command == "UNSUBSCRIBE":
            names = (
                self._normalize_keys(dict.fromkeys(args[1:]))
                if len(args) > 1
                else dict(self.channels)
            )
            for name in names:
                self.channels.pop(name, None)
                self.pending_unsubscribe_channels.discard(name)
            return
        raise ReconnectingElsewhere(f"the Pub/Sub connection is down; {command} not sent")

    # redis-py's signature, `timeout` included.
    async def parse_response(self, block: bool = True, timeout: float = 0) -> Any:  # noqa: ASYNC109
        connection = self.connection
        if connection is None or not connection.is_connected:
            # redis-py would connect here, outside the shard's lock.
            raise ReconnectingElsewhere("the Pub/Sub connection is down")
        return await super().parse_response(block=block, timeout=timeout)

    async def _reconnect(
        self, conn: Any, error: BaseException | None = None, *args: Any, **kwargs: Any
    ) -> None:
        # redis-py's own recovery after a failed read or write disconnects and connects at
        # once, from whichever coroutine failed; only disconnect, and leave connecting to
        # the receive loop.
        await conn.disconnect(error=error)


class OneReaderShard(RedisSingleShardConnection):
    """A channels_redis shard whose receive loop alone reconnects its Pub/Sub connection."""

    _redis: aioredis.Redis | None
    _pubsub: OneReaderPubSub | None

    def __init__(self, host: dict[str, Any], channel_layer: Any) -> None:
        super().__init__(host, channel_layer)
        self._down_since: float | None = None
        # This turn's publishes, and the pipelines on their way (publish).
        self._outbox: list[tuple[Any, Any, asyncio.Future[None]]] = []
        self._sending: set[asyncio.Task[None]] = set()

    def _ensure_redis(self) -> None:
        if self._redis is None:
            pool = create_pool({**self.host, "driver_info": DRIVER_INFO})
            self._redis = aioredis.Redis(connection_pool=pool)
            self._pubsub = OneReaderPubSub(pool)

    async def publish(self, channel: Any, message: Any) -> None:
        """Publish, with every other publish of this turn of the event loop and in their
        order: one pipeline, sent as the next turn begins.

        channels_redis publishes under the shard's lock, beside every subscribe and
        unsubscribe: an asyncio lock hands over once per turn of the event loop, so in a storm
        of sockets opening and closing each broadcast waited behind hundreds of them. Then a
        publish each on a pooled connection: a burst of 300 broadcasts opened 300 connections
        to Redis, the event loop busy opening them, and their order was lost. A pipeline
        takes one pooled connection and keeps its publishes in order; pipelines do not wait
        for each other's answers (a move's broadcast would wait a turn more)."""
        loop = asyncio.get_running_loop()
        sent: asyncio.Future[None] = loop.create_future()
        self._outbox.append((channel, message, sent))
        if len(self._outbox) == 1:
            # The shard's work, not the publishing socket's (its log context, its cancel).
            task = loop.create_task(self._send_outbox(), context=contextvars.Context())
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)
        await sent

    async def _send_outbox(self) -> None:
        batch, self._outbox = self._outbox, []
        try:
            self._ensure_redis()
            assert self._redis is not None
            async with self._redis.pipeline(transaction=False) as pipe:
                for channel, message, _ in batch:
                    pipe.publish(channel, message)
                await pipe.execute()
        except Exception as error:
            # Each publisher sees the failure as its own publish's.
            for *_, sent in batch:
                if not sent.done():
                    sent.set_exception(error)
            return
        except BaseException:  # cancelled: the loop is going away
            for *_, sent in batch:
                sent.cancel()
            raise
        for *_, sent in batch:
            if not sent.done():
                sent.set_result(None)

    async def _do_receiving(self) -> None:
        delay = RECONNECT_FIRST_SECONDS
        while True:
            pubsub = self._pubsub
            try:
                if pubsub is None or not pubsub.subscribed:
                    await asyncio.sleep(POLL_SECONDS)
                    continue
                connection = pubsub.connection
                if connection is None or not connection.is_connected:
                    async with self._lock:
                        if self._pubsub is pubsub and pubsub.subscribed:
                            # Connects, answers the handshake and subscribes again to every
                            # channel (redis-py's connect callback), with no one else reading.
                            await pubsub.connect()
                    self._back()
                    delay = RECONNECT_FIRST_SECONDS
                message = await pubsub.get_message(
                    ignore_subscribe_messages=True, timeout=POLL_SECONDS
                )
                self._receive_message(message)
            except (asyncio.CancelledError, GeneratorExit):
                raise
            except DOWN as error:
                self._down(error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MOST_SECONDS)
            except Exception:
                logger.exception("unexpected failure in the channel layer's receive loop")
                await asyncio.sleep(RECONNECT_MOST_SECONDS)

    def _down(self, error: BaseException) -> None:
        if self._down_since is None:
            self._down_since = asyncio.get_running_loop().time()
            logger.warning(
                "channel layer: lost its subscriptions' connection (%s); reconnecting", error
            )

    def _back(self) -> None:
        if self._down_since is not None:
            seconds = asyncio.get_running_loop().time() - self._down_since
            self._down_since = None
            logger.warning("channel layer: subscriptions' connection back after %.1f s", seconds)
