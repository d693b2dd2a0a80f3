"""The Redis channel layer under a burst of connections and over long idle periods."""

from __future__ import annotations

import asyncio

import pytest
import redis.exceptions
from channels.layers import get_channel_layer
from django.test import override_settings

from lobby.consumers import LOBBY_GROUP
from tests.conftest import redis_layers
from tests.wsutil import communicator, receive

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]

BURST = 200
# redis-py 8 gives up on a silent socket after 5 s by default.
LONGER_THAN_REDIS_PY_TIMEOUT = 6.5


async def test_200_sockets_connecting_at_once_all_succeed(redis_channel_layer: str) -> None:
    clients = [communicator() for _ in range(BURST)]
    results = await asyncio.gather(*(client.connect(timeout=30) for client in clients))
    assert [connected for connected, _ in results] == [True] * BURST
    greetings = await asyncio.gather(*(receive(client, within=10) for client in clients))
    assert all(greeting["type"] == "lobby" for greeting in greetings)

    # Every one of them is really subscribed: one broadcast reaches all.
    payload = {"type": "announcement", "text": "tournament starts"}
    await get_channel_layer().group_send(
        LOBBY_GROUP, {"type": "lobby.announcement", "text": payload["text"]}
    )
    received = await asyncio.gather(*(receive(client, within=10) for client in clients))
    assert received == [payload] * BURST
    await asyncio.gather(*(client.disconnect() for client in clients))


async def test_the_burst_would_fail_with_a_small_connection_pool() -> None:
    # The control experiment: the same burst against the core layer with redis-py's old
    # ceiling of 100 connections (and fewer) does fail, so the test above can catch a regression.
    layers = redis_layers("core", max_connections=20)
    with override_settings(CHANNEL_LAYERS=layers):
        layer = get_channel_layer()
        names = [await layer.new_channel() for _ in range(BURST)]
        outcomes = await asyncio.gather(
            *(layer.group_add(LOBBY_GROUP, name) for name in names), return_exceptions=True
        )
        await layer.flush()
    refused = [o for o in outcomes if isinstance(o, redis.exceptions.RedisError)]
    assert refused, "a 20-connection pool absorbed a 200-socket burst"
    assert all("Too many connections" in str(error) for error in refused)


async def test_an_idle_socket_outlives_redis_pys_default_read_timeout(
    redis_channel_layer: str,
) -> None:
    client = communicator()
    connected, _ = await client.connect()
    assert connected
    await receive(client)

    await asyncio.sleep(LONGER_THAN_REDIS_PY_TIMEOUT)

    # Had the layer's blocking read timed out, the consumer would have crashed (close 1011)
    # and this broadcast would never arrive.
    payload = {"type": "announcement", "text": "still here"}
    await get_channel_layer().group_send(
        LOBBY_GROUP, {"type": "lobby.announcement", "text": payload["text"]}
    )
    assert await receive(client, within=5) == payload
    await client.send_json_to({"type": "ping", "id": "after-idle"})
    assert await receive(client, within=5) == {"type": "pong", "id": "after-idle"}
    await client.disconnect()


async def test_a_group_message_is_decoded_once_for_every_local_member() -> None:
    with override_settings(CHANNEL_LAYERS=redis_layers("pubsub")):
        layer = get_channel_layer()
        channels = [await layer.new_channel() for _ in range(3)]
        for channel in channels:
            await layer.group_add("decode-once", channel)
        try:
            for text in ("first", "second"):
                await layer.group_send("decode-once", {"type": "x.y", "text": text})
                received = [
                    await asyncio.wait_for(layer.receive(channel), 5) for channel in channels
                ]
                assert [message["text"] for message in received] == [text] * 3
                # One decoded message, shared: not a copy per receiving socket.
                assert received[0] is received[1] is received[2]
        finally:
            for channel in channels:
                await layer.group_discard("decode-once", channel)
            await layer.flush()


@pytest.mark.parametrize("kind", ["pubsub", "core"])
async def test_many_group_messages_sent_at_once_each_reach_their_own_group(kind: str) -> None:
    from realtime.channel_layers import group_send_many

    # Several shards: the messages are pipelined per shard, and each must reach its group.
    with override_settings(CHANNEL_LAYERS=redis_layers(kind, shards=3)):
        layer = get_channel_layer()
        groups = [f"many-{n}" for n in range(12)]
        channels = [await layer.new_channel() for _ in groups]
        for group, channel in zip(groups, channels, strict=True):
            await layer.group_add(group, channel)
        try:
            await group_send_many(
                layer, [(group, {"type": "x.y", "text": group}) for group in reversed(groups)]
            )
            received = [await asyncio.wait_for(layer.receive(channel), 5) for channel in channels]
            assert [message["text"] for message in received] == groups
        finally:
            for group, channel in zip(groups, channels, strict=True):
                await layer.group_discard(group, channel)
            await layer.flush()


async def test_broadcasts_made_at_once_go_out_in_their_order_over_one_connection() -> None:
    with override_settings(CHANNEL_LAYERS=redis_layers("pubsub")):
        layer = get_channel_layer()
        channel = await layer.new_channel()
        await layer.group_add("burst", channel)
        try:
            await asyncio.gather(
                *(layer.group_send("burst", {"type": "x.y", "n": n}) for n in range(300))
            )
            received = [
                (await asyncio.wait_for(layer.receive(channel), 5))["n"] for _ in range(300)
            ]
            assert received == list(range(300))
            loop_layer = layer._get_layer()
            shard = loop_layer._get_shard(loop_layer._get_group_channel_name("burst"))
            pool = shard._redis.connection_pool
            # The subscriptions' connection and one for the broadcasts, pipelined: not a
            # pooled connection opened for each broadcast of the burst.
            assert len(pool._available_connections) + len(pool._in_use_connections) == 2
        finally:
            await layer.group_discard("burst", channel)
            await layer.flush()
