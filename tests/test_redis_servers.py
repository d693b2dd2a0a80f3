"""Where the site's Redis is (realtime/redis_servers.py): one server's URL or Sentinel's
service; the channel layer spread over several servers; the layer, the cache and the rate
limits following Sentinel to the replica it promotes when the master dies."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import redis
from django.core.cache import caches
from django.test import Client, override_settings

from devtools.cluster.hosts import Network, network
from devtools.cluster.redis import RedisServer as DrillRedis
from devtools.cluster.redis import watched_pair
from realtime import limits
from realtime.channel_layers import PubSubChannelLayer, build_channel_layers, redis_host
from realtime.redis_servers import (
    CachePool,
    RedisServer,
    channel_host,
    parse,
    parse_list,
    redis_cache,
)
from tests.servers import free_port, own_redis

pytestmark = pytest.mark.sqlite(reason="no database is involved: run once")


# --- locations -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("redis://10.0.0.5:6379/2", RedisServer(url="redis://10.0.0.5:6379/2")),
        (
            "redis://:s3cret@10.0.0.5:6379/0",
            RedisServer(url="redis://:s3cret@10.0.0.5:6379/0", password="s3cret"),
        ),
        (
            "sentinel://10.0.0.7:26379,10.0.0.8:26379/layer-a/3",
            RedisServer(
                url="sentinel://10.0.0.7:26379,10.0.0.8:26379/layer-a/3",
                sentinels=(("10.0.0.7", 26379), ("10.0.0.8", 26379)),
                service="layer-a",
                db=3,
            ),
        ),
        (
            "sentinel://:p%40ss@s1:26379/cache",
            RedisServer(
                url="sentinel://:p%40ss@s1:26379/cache",
                sentinels=(("s1", 26379),),
                service="cache",
                password="p@ss",
            ),
        ),
    ],
)
def test_a_location_names_one_server_or_sentinel_s_service(
    text: str, expected: RedisServer
) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("http://10.0.0.5:6379", "redis://host:port/db or sentinel://"),
        ("sentinel://10.0.0.7/layer", "a sentinel is host:port"),
        ("sentinel://10.0.0.7:26379", "ends in /service or /service/db"),
        ("sentinel://10.0.0.7:26379/layer/first", "ends in /service or /service/db"),
    ],
)
def test_a_wrong_location_is_refused_saying_what_a_right_one_looks_like(
    text: str, complaint: str
) -> None:
    with pytest.raises(ValueError, match=complaint):
        parse(text)


def test_a_sharded_layer_spreads_its_connections_over_the_servers_in_turn() -> None:
    first, second = "redis://10.0.0.1:6379/0", "sentinel://10.0.0.9:26379/layer-b/0"
    config = build_channel_layers(f"{first} {second}", shards=3)["default"]["CONFIG"]
    # Three asked for, rounded up to two for each server, taken in turn.
    assert [host.get("address") or host["master_name"] for host in config["hosts"]] == [
        first, "layer-b", first, "layer-b"
    ]  # fmt: skip
    sentinel = config["hosts"][1]
    assert sentinel["sentinels"] == [("10.0.0.9", 26379)]
    assert sentinel["socket_timeout"] is None  # the layer's own options, kept
    assert sentinel["sentinel_kwargs"]["socket_timeout"] == 1.0  # a sentinel never hangs it
    assert PubSubChannelLayer(**config).servers == 2


# --- two servers -------------------------------------------------------------------------------


@pytest.fixture
def two_redis() -> Iterator[list[int]]:
    ports = [free_port(), free_port()]
    with ExitStack() as stack:
        for port in ports:
            stack.enter_context(own_redis(port))
        yield ports


async def _delivered(sender: Any, receiver: Any, channel: str, group: str, n: int) -> bool:
    await sender.group_send(group, {"type": "probe", "n": n})
    try:
        message = await asyncio.wait_for(receiver.receive(channel), 2)
    except TimeoutError:
        return False
    return bool(message == {"type": "probe", "n": n})


def test_groups_live_on_both_servers_and_reach_another_process_s_members(
    two_redis: list[int],
) -> None:
    urls = " ".join(f"redis://127.0.0.1:{port}/0" for port in two_redis)
    prefix = f"shard{uuid.uuid4().hex[:8]}"

    def layer() -> PubSubChannelLayer:
        config = build_channel_layers(urls, shards=4)["default"]["CONFIG"]
        return PubSubChannelLayer(**{**config, "prefix": prefix})

    async def scenario() -> list[list[Any]]:
        here, there = layer(), layer()  # two server processes
        try:
            groups = [f"game-{n}" for n in range(20)]
            channels = [await here.new_channel() for _ in groups]
            for group, channel in zip(groups, channels, strict=True):
                await here.group_add(group, channel)
            assert [
                await _delivered(there, here, channel, group, n)
                for n, (group, channel) in enumerate(zip(groups, channels, strict=True))
            ] == [True] * len(groups)
            # Each server holds some of the groups' subscriptions.
            return [
                [
                    name
                    for name in redis.Redis(port=port).pubsub_channels(f"{prefix}*")
                    if b"game-" in name
                ]
                for port in two_redis
            ]
        finally:
            await here.flush()
            await there.flush()

    on_each = asyncio.run(scenario())
    assert all(on_each), on_each
    assert sum(map(len, on_each)) == 20


@pytest.mark.django_db(transaction=True)  # readiness queries the database too
def test_readiness_needs_every_server_of_the_layer(two_redis: list[int], client: Client) -> None:
    both = " ".join(f"redis://127.0.0.1:{port}/0" for port in two_redis)
    with override_settings(CHANNEL_LAYERS=build_channel_layers(both, shards=2)):
        ok = client.get("/readyz")
        assert ok.status_code == 200, ok.json()
    # Nothing listens on port 1: the second server is unreachable.
    one_down = f"redis://127.0.0.1:{two_redis[0]}/0 redis://127.0.0.1:1/0"
    with override_settings(CHANNEL_LAYERS=build_channel_layers(one_down, shards=2)):
        answer = client.get("/readyz")
    assert answer.status_code == 503
    assert "ConnectionError" in answer.json()["channel_layer"]["error"]


# --- Sentinel ---------------------------------------------------------------------------------


@pytest.fixture
def watched() -> Iterator[tuple[Network, DrillRedis, DrillRedis, str]]:
    """A master and its replica on two hosts, a sentinel on a third, and the location that
    names the service."""
    with network(["data", "standby", "watch"]) as net, watched_pair(net, "site") as pair:
        master, replica, _ = pair
        # A sentinel that does not answer first: it is passed over for the next.
        where = f"127.0.0.1:{free_port()},{net['watch'].address}:26379"
        yield net, master, replica, f"sentinel://{where}/site/0"


def test_the_channel_layer_follows_sentinel_to_the_promoted_replica(
    watched: tuple[Network, DrillRedis, DrillRedis, str],
) -> None:
    _, master, replica, url = watched
    prefix = f"sentinel{uuid.uuid4().hex[:8]}"

    async def scenario() -> float:
        here = PubSubChannelLayer(hosts=[redis_host(url)], prefix=prefix)
        there = PubSubChannelLayer(hosts=[redis_host(url)], prefix=prefix)
        channel = await here.new_channel()
        # One receive held throughout, as a consumer holds it: a receive cancelled on the
        # Pub/Sub layer gives its channel up.
        heard = asyncio.ensure_future(here.receive(channel))
        try:
            await here.group_add("game-1", channel)
            await there.group_send("game-1", {"type": "probe", "n": 0})
            assert (await asyncio.wait_for(asyncio.shield(heard), 2))["n"] == 0
            heard = asyncio.ensure_future(here.receive(channel))
            master.stop()  # killed
            started = time.monotonic()
            n = 0
            while not heard.done():
                assert time.monotonic() - started < 30, "the group never heard again"
                n += 1
                with contextlib.suppress(redis.exceptions.ConnectionError):  # no master yet
                    await there.group_send("game-1", {"type": "probe", "n": n})
                await asyncio.wait({heard}, timeout=0.2)
            assert 1 <= heard.result()["n"] <= n  # a publish after the kill, on the new master
            return time.monotonic() - started
        finally:
            heard.cancel()
            await here.flush()
            await there.flush()

    seconds = asyncio.run(scenario())
    print(f"the group heard again {seconds:.1f} s after its master was killed")
    # Promoted, and both the subscriptions and the publishes on the new master.
    role = redis.Redis(replica.address, 6379).execute_command("ROLE")
    assert role[0] == b"master"


def test_the_cache_and_the_rate_limits_follow_sentinel_to_the_promoted_replica(
    watched: tuple[Network, DrillRedis, DrillRedis, str],
) -> None:
    _, master, replica, url = watched
    cache_settings = {"default": redis_cache(url, f"sentinel{uuid.uuid4().hex[:8]}")}
    limits._clients.clear()
    with override_settings(CACHES=cache_settings):
        cache = caches["default"]
        cache.set("seen", 1)
        assert cache.get("seen") == 1
        bucket = limits.Bucket(key="sentinel-test", burst=5, rate=0.001)
        assert [limits.take([bucket]) == 0.0 for _ in range(5)] == [True] * 5
        assert redis.Redis(master.address, 6379).wait(1, 5000) == 1
        master.stop()
        started = time.monotonic()
        while True:
            try:
                cache.set("after", 2)
                break
            except redis.exceptions.ConnectionError:
                assert time.monotonic() - started < 30, "the cache never found the new master"
                time.sleep(0.2)
        assert cache.get("seen") == 1  # replicated before the master died
        # The bucket emptied on the old master is empty on the new one: no burst granted twice.
        assert limits.take([bucket]) > 0.0
        assert redis.Redis(replica.address, 6379).execute_command("ROLE")[0] == b"master"
    limits._clients.clear()


def test_the_pool_class_keeps_a_plain_url_as_redis_py_reads_it() -> None:
    pool = CachePool.from_url("redis://127.0.0.1:6379/4", max_connections=3)
    assert type(pool) is redis.ConnectionPool
    assert pool.connection_kwargs["db"] == 4 and pool.max_connections == 3
    assert parse_list(" redis://a:1/0   redis://b:2/0 ") == [parse("redis://a:1/0"),
                                                          parse("redis://b:2/0")]  # fmt: skip
    assert channel_host(parse("redis://a:1/0"), {"x": 1}) == {"address": "redis://a:1/0", "x": 1}


def test_the_passwords_of_every_redis_location_are_secrets_the_logs_never_show() -> None:
    from realtime.log_format import configured_secrets

    with override_settings(
        REDIS_URL="redis://:first-secret-1@10.0.0.5:6379/0",
        CHANNEL_LAYER_REDIS="redis://:layer-secret-2@10.0.0.6:6379/0 "
        "sentinel://:p%40ss-secret-3@10.0.0.9:26379/layer-b/0",
        CACHE_REDIS_URL="sentinel://:cache-secret-4@10.0.0.9:26379/cache",
    ):
        secrets = configured_secrets()
    assert {"first-secret-1", "layer-secret-2", "p@ss-secret-3", "cache-secret-4"} <= secrets
