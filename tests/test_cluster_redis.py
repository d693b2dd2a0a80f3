"""The drill's Redis (devtools/cluster/redis.py): a master on one host, its replica on another,
and Sentinel, which promotes the replica when the master's host is lost; a client that asks
Sentinel (redis-py's Sentinel) writes to the new master."""

from __future__ import annotations

import time

import pytest
import redis
from redis.sentinel import MasterNotFoundError
from redis.sentinel import Sentinel as SentinelClient

from devtools.cluster.hosts import network
from devtools.cluster.redis import watched_pair

pytestmark = pytest.mark.sqlite(reason="no database: Redis servers of its own")


def master_of(client: SentinelClient) -> tuple[str, int] | None:
    """Where Sentinel says the master is; None while it has none to give (the old one is
    down and no replica promoted yet)."""
    try:
        return client.discover_master("layer")
    except MasterNotFoundError:
        return None


def test_sentinel_promotes_the_replica_when_the_master_s_host_is_lost() -> None:
    with network(["data", "standby", "watch"]) as net, watched_pair(net, "layer") as pair:
        master, replica, _ = pair
        client = SentinelClient([(net["watch"].address, 26379)], socket_timeout=0.5)
        assert client.discover_master("layer") == (master.address, 6379)
        first = client.master_for("layer", socket_timeout=15)
        first.set("moves", 3)
        # Replication is asynchronous: WAIT holds until the replica has the write.
        assert first.wait(1, 10_000) == 1
        net.cut("data")
        started = time.monotonic()
        while master_of(client) != (replica.address, 6379):
            assert time.monotonic() - started < 30, "no failover within 30 s"
            time.sleep(0.1)
        promoted = client.master_for("layer", socket_timeout=2)
        assert promoted.get("moves") == b"3"  # replicated before the loss
        promoted.incr("moves")
        assert redis.Redis(replica.address, 6379).get("moves") == b"4"
