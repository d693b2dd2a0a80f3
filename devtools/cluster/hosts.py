"""Hosts on one machine, for the cluster drill (issue 59): each host a network namespace with
its own address on a bridge, reachable from the others and from the machine itself (where
the proxy and the players run), and from nowhere else.

A host is cut off by taking its link to the bridge down: every connection to or from it
stalls at once, as when a machine loses its network, while its processes go on running.

Latency: this machine's kernel has no netem (`tc qdisc add ... netem` answers "Specified
qdisc kind is unknown": CONFIG_NET_SCH_NETEM is not set), so the links are as fast as the
bridge; the drill delays traffic where it needs to (devtools/cluster/latency.py).

Needs root and `ip` (iproute2). Names carry a run id, so drills and test workers running at
once never share a namespace, an interface or a subnet.
"""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass


class HostsError(RuntimeError):
    pass


def _ip(*argv: str) -> str:
    done = subprocess.run(["ip", *argv], capture_output=True, text=True, check=False)
    if done.returncode:
        raise HostsError(f"ip {' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout


@dataclass(frozen=True)
class Host:
    name: str  # "web1", "data"
    namespace: str  # the network namespace
    address: str  # its address on the bridge
    link: str  # the bridge's end of its link: down, the host is cut off

    def command(self, argv: Sequence[str]) -> list[str]:
        """`argv` run on this host."""
        return ["ip", "netns", "exec", self.namespace, *argv]


def _free_subnet() -> int:
    """A third octet for 10.77.X.0/24 that no interface of the machine uses yet."""
    used = _ip("-o", "-4", "addr", "show")
    for _ in range(100):
        octet = 1 + secrets.randbelow(254)
        if f" 10.77.{octet}." not in used:
            return octet
    raise HostsError("no free subnet in 10.77.0.0/16")


class Network:
    """A bridge with the machine at .1 and each host at .11, .12, ... in that order."""

    def __init__(self, names: Sequence[str]) -> None:
        self.run_id = secrets.token_hex(2)
        self.octet = _free_subnet()
        self.bridge = f"dfb{self.run_id}"
        self.gateway = f"10.77.{self.octet}.1"
        self.hosts = {
            name: Host(
                name=name,
                namespace=f"diffusion-{self.run_id}-{name}",
                address=f"10.77.{self.octet}.{11 + index}",
                link=f"dfv{self.run_id}{index}",
            )
            for index, name in enumerate(names)
        }

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    def up(self) -> None:
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for host in self.hosts.values():
            _ip("netns", "add", host.namespace)
            _ip("-n", host.namespace, "link", "set", "lo", "up")
            _ip("link", "add", host.link, "type", "veth", "peer", "name", "eth0", "netns",
                host.namespace)  # fmt: skip
            _ip("link", "set", host.link, "master", self.bridge, "up")
            _ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
            _ip("-n", host.namespace, "link", "set", "eth0", "up")

    def cut(self, name: str) -> None:
        """Host `name` loses its network; its processes run on."""
        _ip("link", "set", self.hosts[name].link, "down")

    def restore(self, name: str) -> None:
        _ip("link", "set", self.hosts[name].link, "up")

    def down(self) -> None:
        """Every namespace and link of this network gone (the processes in them must have
        been stopped first); what is already gone is not an error."""
        for host in self.hosts.values():
            subprocess.run(["ip", "link", "del", host.link], capture_output=True, check=False)
            subprocess.run(["ip", "netns", "del", host.namespace], capture_output=True,
                           check=False)  # fmt: skip
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True, check=False)


@contextmanager
def network(names: Sequence[str]) -> Iterator[Network]:
    built = Network(names)
    try:
        built.up()
        yield built
    finally:
        built.down()
