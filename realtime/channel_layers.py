"""Channel-layer configuration built from the environment.

Kept apart from settings so tests and the health check build exactly the configuration
production uses.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import redis.exceptions
from channels_redis.pubsub import RedisPubSubChannelLayer
from channels_redis.utils import _consistent_hash

from realtime import metrics
from realtime.pubsub_shard import OneReaderShard
from realtime.redis_servers import channel_host, parse, parse_list

logger = logging.getLogger(__name__)

# What the layer raises while Redis is unreachable.
LAYER_DOWN: tuple[type[BaseException], ...] = (
    OSError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)
# Between attempts to reach Redis again, at most.
LAYER_RETRY_SECONDS = 2.0

# redis-py 8 defaults socket_timeout to 5 s. The core layer's idle receive is a 5 s blocking
# BZPOPMIN, so the client gives up first and the consumer dies with 1011 (channels_redis #422).
# No read timeout: idle sockets must live for hours. Connecting still times out quickly, and
# TCP keepalive plus a periodic health check find dead connections instead.
REDIS_CONNECTION_OPTIONS: dict[str, Any] = {
    "socket_timeout": None,
    "socket_connect_timeout": 5,
    "socket_keepalive": True,
    "health_check_interval": 30,
}

# redis-py 8's asyncio pool allows 100 connections and raises MaxConnectionsError at once
# beyond that; hundreds of sockets connecting together would fail. The core layer can hold a
# connection per concurrent group_add/send, so allow far more than a burst needs.
DEFAULT_MAX_CONNECTIONS = 2000

# Core (list-based) layer only: a channel's queue length before sends to it are dropped, and
# how long group membership lasts. Games resync by version, so a drop is recoverable, but
# keep it rare; and a game can last longer than the default day of group_expiry.
DEFAULT_CAPACITY = 1000
DEFAULT_GROUP_EXPIRY = 7 * 24 * 3600

# How many recent messages a process keeps decoded (PubSubChannelLayer).
DECODED_KEPT = 64


class PubSubChannelLayer(RedisPubSubChannelLayer):
    """channels_redis's Pub/Sub layer, decoding a group message once per process, and with
    one reader per subscriptions' connection (`realtime.pubsub_shard`).

    The Pub/Sub layer queues the same bytes object for every local member of a group and
    each consumer decodes it again on receive: a lobby batch reaching 400 sockets was
    decoded 400 times (a third of a process's CPU in a burst of pairings). Here the decoded
    message is shared by every consumer that receives the same bytes. Consumers must treat
    layer messages as read-only (ours do: they copy before adding fields).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # id(bytes) -> (the bytes, kept alive so the id is not reused; the decoded message)
        self._decoded: dict[int, tuple[bytes, Any]] = {}
        self._later: set[asyncio.Task[None]] = set()
        # Each shard's Redis server, numbered: several shards may share one server.
        keys = [_server_key(host) for host in kwargs.get("hosts") or [{}]]
        numbers = {key: number for number, key in enumerate(dict.fromkeys(keys))}
        self._server_of_shard = [numbers[key] for key in keys]

    @property
    def servers(self) -> int:
        """How many Redis servers the layer spreads its channels and groups over."""
        return len(set(self._server_of_shard))

    def _name(self, prefix: str, server: int | None) -> str:
        while True:
            channel = f"{self.prefix}{prefix}{uuid.uuid4().hex}"
            shard = _consistent_hash(channel, len(self._server_of_shard))
            if server is None or self._server_of_shard[shard] == server:
                return channel

    async def new_channel(self, prefix: str = "specific.", *, server: int | None = None) -> str:
        """A channel for a new consumer (on the given Redis server, for the health check).
        While Redis is unreachable the consumer still starts (it crashed in its handshake):
        the channel is local until Redis is back and then subscribed. Our consumers hear
        everything through groups, which they join late."""
        channel = self._name(prefix, server)
        self.channels[channel] = asyncio.Queue()
        shard = self._get_shard(channel)
        try:
            await shard.subscribe(channel)
        except LAYER_DOWN as error:
            metrics.REDIS_ERRORS.labels("subscribe").inc()
            logger.warning("channel layer unreachable (%s): %s subscribes later", error, channel)
            task = asyncio.create_task(self._subscribe_later(channel))
            self._later.add(task)
            task.add_done_callback(self._later.discard)
        return channel

    async def _subscribe_later(self, channel: str) -> None:
        delay = 0.2
        while channel in self.channels:  # until its consumer is gone
            await asyncio.sleep(delay)
            try:
                await self._get_shard(channel).subscribe(channel)
                return
            except LAYER_DOWN:
                delay = min(delay * 2, LAYER_RETRY_SECONDS)

    def _get_layer(self) -> Any:
        layer = super()._get_layer()
        if not isinstance(layer._shards[0], OneReaderShard):
            # A new event loop's layer: its shards have not connected yet (they connect on
            # first use), so they are swapped for ones whose receive loop alone reconnects.
            layer._shards = [OneReaderShard(shard.host, layer) for shard in layer._shards]
        return layer

    def deserialize(self, message: bytes) -> Any:
        kept = self._decoded.get(id(message))
        if kept is not None and kept[0] is message:
            return kept[1]
        decoded = super().deserialize(message)
        if len(self._decoded) >= DECODED_KEPT:
            del self._decoded[next(iter(self._decoded))]
        self._decoded[id(message)] = (message, decoded)
        return decoded


LAYER_BACKENDS = {
    "pubsub": "realtime.channel_layers.PubSubChannelLayer",
    "core": "channels_redis.core.RedisChannelLayer",
}


async def group_send_many(layer: Any, messages: list[tuple[str, dict[str, Any]]]) -> None:
    """Send each (group, message) on any channel layer. On ours all at once: sent in the
    same turn of the event loop, they leave in one pipeline per shard (OneReaderShard), where
    one after another each waited for its own round trip (a matchmaking pass telling 400
    players their games). Elsewhere one by one: the core layer takes a pooled connection each."""
    if isinstance(layer, PubSubChannelLayer):
        await asyncio.gather(*(layer.group_send(group, message) for group, message in messages))
        return
    for group, message in messages:
        await layer.group_send(group, message)


def _server_key(host: dict[str, Any]) -> str:
    if "master_name" in host:
        return f"sentinel:{host['master_name']}/{host.get('db', 0)}"
    return str(host.get("address", ""))


def redis_host(url: str, *, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> dict[str, Any]:
    """One channels_redis host entry: the server at `url` (realtime/redis_servers.py: one
    server, or Sentinel's master of a service) plus our connection options."""
    options = {"max_connections": max_connections, **REDIS_CONNECTION_OPTIONS}
    return channel_host(parse(url), options)


def build_channel_layers(
    redis_urls: str | None,
    *,
    kind: str = "pubsub",
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    prefix: str = "diffusion",
    shards: int = 1,
) -> dict[str, Any]:
    """The CHANNEL_LAYERS setting: in-memory (bridged, bridge.py) without a Redis URL, else
    the chosen Redis layer over the servers `redis_urls` names (separated by spaces).

    `shards` (Pub/Sub only): how many subscription connections each process keeps, channels
    and groups spread over them by name, and the connections spread over the servers in
    turn (rounded up to the same number for each server). Each has its own lock for
    subscribing, and an asyncio lock hands over once per turn of the event loop: with one, a
    storm of sockets opening (a server restarting, its pages moving to the others) queued
    every subscription behind all the others. Every process must name the same servers in the
    same order, and the same number of shards: a group lives on the server its name picks."""
    servers = parse_list(redis_urls or "")
    if not servers:
        # In-memory, with the other processes' sends forwarded to the server (bridge.py).
        return {"default": {"BACKEND": "realtime.bridge.BridgedInMemoryChannelLayer"}}
    if kind not in LAYER_BACKENDS:
        raise ValueError(
            f"CHANNEL_LAYER must be one of {', '.join(sorted(LAYER_BACKENDS))}, not {kind!r}"
        )
    rounds = -(-max(1, shards) // len(servers)) if kind == "pubsub" else 1
    options = {"max_connections": max_connections, **REDIS_CONNECTION_OPTIONS}
    config: dict[str, Any] = {
        "hosts": [channel_host(server, options) for _ in range(rounds) for server in servers],
        "prefix": prefix,
    }
    if kind == "core":
        config |= {"capacity": DEFAULT_CAPACITY, "group_expiry": DEFAULT_GROUP_EXPIRY}
    return {"default": {"BACKEND": LAYER_BACKENDS[kind], "CONFIG": config}}
