"""Redis for the cluster drill: servers on the drill's hosts, a replica following each master,
and Redis Sentinel watching them (redis-server's own sentinel mode: no other package), which
promotes a replica when its master is lost and tells clients where the master is now.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from devtools.cluster.hosts import Host


class RedisError(RuntimeError):
    pass


def answers(address: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


class RedisServer:
    """A redis-server on `host` (keeping nothing on disk), a replica of `master` if given."""

    def __init__(self, host: Host, port: int, master: RedisServer | None = None) -> None:
        self.host = host
        self.port = port
        self.master = master
        self.process: subprocess.Popen[bytes] | None = None
        # A replica's full sync lands in a file of its working directory: its own.
        self.directory = Path(tempfile.mkdtemp(prefix=f"diffusion-redis-{host.name}-"))

    @property
    def address(self) -> str:
        return self.host.address

    def start(self) -> None:
        options = ["--bind", self.host.address, "127.0.0.1", "--port", str(self.port)]
        options += ["--save", "", "--appendonly", "no", "--protected-mode", "no"]
        options += ["--dir", str(self.directory)]
        if self.master is not None:
            options += ["--replicaof", self.master.address, str(self.master.port)]
        self.process = subprocess.Popen(
            self.host.command(["redis-server", *options]), stdout=subprocess.DEVNULL
        )
        _wait(lambda: answers(self.address, self.port), f"redis on {self.host.name}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None
        shutil.rmtree(self.directory, ignore_errors=True)


class Sentinel:
    """One Sentinel on `host` watching the masters it is given (by name), promoting a replica
    once `quorum` sentinels agree a master is down for `down_ms`."""

    def __init__(self, host: Host, port: int = 26379) -> None:
        self.host = host
        self.port = port
        self.directory = Path(tempfile.mkdtemp(prefix=f"diffusion-sentinel-{host.name}-"))
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, masters: dict[str, RedisServer], quorum: int = 1, down_ms: int = 1000) -> None:
        lines = [
            f"bind {self.host.address} 127.0.0.1",
            f"port {self.port}",
            "protected-mode no",
            f"dir {self.directory}",
        ]
        for name, master in masters.items():
            lines += [
                f"sentinel monitor {name} {master.address} {master.port} {quorum}",
                f"sentinel down-after-milliseconds {name} {down_ms}",
                f"sentinel failover-timeout {name} {max(3 * down_ms, 3000)}",
                f"sentinel parallel-syncs {name} 1",
            ]
        conf = self.directory / "sentinel.conf"  # Sentinel rewrites it: its own copy
        conf.write_text("\n".join(lines) + "\n")
        self.process = subprocess.Popen(
            self.host.command(["redis-server", str(conf), "--sentinel"]),
            stdout=subprocess.DEVNULL,
        )
        _wait(lambda: answers(self.host.address, self.port), f"sentinel on {self.host.name}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None
        shutil.rmtree(self.directory, ignore_errors=True)


def _wait(ready: Callable[[], bool], what: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise RedisError(f"{what} did not start within {seconds} s")
        time.sleep(0.05)
