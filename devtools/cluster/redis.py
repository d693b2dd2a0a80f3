"""Redis for the cluster drill: servers on the drill's hosts, a replica following each master,
and Redis Sentinel watching them (redis-server's own sentinel mode: no other package), which
promotes a replica when its master is lost and tells clients where the master is now.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from devtools.cluster.daemons import Daemon, answers, wait_until
from devtools.cluster.hosts import Host, Network


class RedisServer(Daemon):
    """A redis-server on `host` (keeping nothing on disk), a replica of `master` if given.
    A replica's full sync lands in a file of its working directory: its own."""

    def __init__(
        self, host: Host, port: int, master: RedisServer | None = None, front: int | None = None
    ) -> None:
        super().__init__(host, "redis")
        self.port = port
        self.master = master
        # Where the others reach it, if not at `port`: a relay in front (latency.Front).
        self.front = front

    @property
    def reached_at(self) -> int:
        return self.front or self.port

    @property
    def address(self) -> str:
        return self.host.address

    def start(self) -> None:
        options = ["--bind", self.host.address, "127.0.0.1", "--port", str(self.port)]
        options += ["--save", "", "--appendonly", "no", "--protected-mode", "no"]
        options += ["--dir", str(self.directory)]
        if self.master is not None:
            options += ["--replicaof", self.master.address, str(self.master.reached_at)]
        if self.front is not None:
            # What the master tells Sentinel (and Sentinel the clients) about this replica:
            # the relay, not the address the master sees its connection come from.
            options += ["--replica-announce-ip", self.address]
            options += ["--replica-announce-port", str(self.front)]
        process = self.spawn(["redis-server", *options])
        wait_until(lambda: answers(self.address, self.port), f"redis on {self.host.name}",
                   process=process)  # fmt: skip


class Sentinel(Daemon):
    """One Sentinel on `host` watching the masters it is given (by name), promoting a replica
    once `quorum` sentinels agree a master is down for `down_ms`."""

    def __init__(self, host: Host, port: int = 26379) -> None:
        super().__init__(host, "sentinel")
        self.port = port

    def start(self, masters: dict[str, RedisServer], quorum: int = 1, down_ms: int = 1000) -> None:
        lines = [
            f"bind {self.host.address} 127.0.0.1",
            f"port {self.port}",
            "protected-mode no",
            f"dir {self.directory}",
        ]
        for name, master in masters.items():
            lines += [
                f"sentinel monitor {name} {master.address} {master.reached_at} {quorum}",
                f"sentinel down-after-milliseconds {name} {down_ms}",
                f"sentinel failover-timeout {name} {max(3 * down_ms, 3000)}",
                f"sentinel parallel-syncs {name} 1",
            ]
        conf = self.directory / "sentinel.conf"  # Sentinel rewrites it: its own copy
        conf.write_text("\n".join(lines) + "\n")
        process = self.spawn(["redis-server", str(conf), "--sentinel"])
        wait_until(lambda: answers(self.host.address, self.port),
                   f"sentinel on {self.host.name}", process=process)  # fmt: skip


@contextmanager
def watched_pair(
    net: Network, service: str, down_ms: int = 500
) -> Iterator[tuple[RedisServer, RedisServer, Sentinel]]:
    """A master on the host `data`, its replica on `standby` and one sentinel on `watch`
    (quorum 1) watching it as `service`; all stopped afterwards."""
    master = RedisServer(net["data"], 6379)
    replica = RedisServer(net["standby"], 6379, master=master)
    sentinel = Sentinel(net["watch"])
    try:
        master.start()
        replica.start()
        sentinel.start({service: master}, quorum=1, down_ms=down_ms)
        yield master, replica, sentinel
    finally:
        sentinel.stop()
        replica.stop()
        master.stop()
