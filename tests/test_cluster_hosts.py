"""The cluster drill's hosts (devtools/cluster/hosts.py): network namespaces on a bridge that
reach each other and the machine, and a host cut off reaches nothing until it is restored."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from devtools.cluster.hosts import network

pytestmark = pytest.mark.sqlite(reason="no database: namespaces and sockets only")

# Listens on the host's address, answers each connection with the host's name.
ANSWER = """
import socket, sys
server = socket.create_server((sys.argv[1], 9000))
print("ready", flush=True)
while True:
    connection, _ = server.accept()
    connection.sendall(sys.argv[2].encode())
    connection.close()
"""

# Connects (from wherever it runs) and prints what it was told, or the error's name.
ASK = """
import socket, sys
try:
    with socket.create_connection((sys.argv[1], 9000), timeout=float(sys.argv[2])) as c:
        print(c.recv(100).decode())
except OSError as error:
    print(type(error).__name__)
"""


def ask(argv_prefix: list[str], address: str, timeout: float = 2.0) -> str:
    done = subprocess.run(
        [*argv_prefix, sys.executable, "-c", ASK, address, str(timeout)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_hosts_reach_each_other_and_the_machine_and_a_cut_host_reaches_nothing() -> None:
    with network(["web1", "data"]) as net:
        web1, data = net["web1"], net["data"]
        assert web1.address != data.address
        listener = subprocess.Popen(
            data.command([sys.executable, "-c", ANSWER, data.address, "data"]),
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert listener.stdout is not None and listener.stdout.readline() == "ready\n"
            assert ask(web1.command([]), data.address) == "data"  # host to host
            assert ask([], data.address) == "data"  # the machine to a host
            net.cut("data")
            started = time.monotonic()
            assert ask(web1.command([]), data.address, timeout=1.0) in {"TimeoutError", "timeout"}
            assert time.monotonic() - started >= 0.9  # stalled, not refused: as a lost host
            net.restore("data")
            assert ask(web1.command([]), data.address) == "data"
        finally:
            listener.kill()
            listener.wait()
        namespaces = [host.namespace for host in net.hosts.values()]
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(name in listed for name in namespaces)  # nothing left behind
