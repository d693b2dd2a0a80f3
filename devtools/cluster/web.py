"""The site's own processes on the drill's hosts: web server processes (Daphne, started as
every other place starts it, config/serve.py) and the background jobs (the sweeper, the
computer's worker), each with the environment the drill gives them and one log for all its
lives.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from config import serve
from devtools.cluster.daemons import Daemon, wait_until
from devtools.cluster.hosts import Host

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 90.0


def ready(address: str, port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://{address}:{port}/readyz", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


class SiteProcess(Daemon):
    """One process of the site on `host`; `argv` after the Python interpreter."""

    def __init__(self, host: Host, name: str, argv: list[str], env: dict[str, str]) -> None:
        super().__init__(host, name)
        self.name = name
        self.argv = argv
        self.env = env
        self.log = self.directory / f"{name}.log"
        self.lives = 0

    def start(self) -> None:
        with self.log.open("ab") as sink:
            self.spawn(
                [sys.executable, *self.argv],
                cwd=ROOT,
                env=self.env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        self.lives += 1

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def terminate(self, grace: float = 90.0) -> None:
        """SIGTERM, as a deploy stops it (a web process drains first), and wait."""
        if self.process is None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self) -> None:
        self.kill()
        # The log outlives the process: the drill counts tracebacks after the faults.


class WebProcess(SiteProcess):
    def __init__(self, host: Host, index: int, port: int, env: dict[str, str]) -> None:
        command = serve.command(host.address, port, "--proxy-headers")
        super().__init__(host, f"web{index}", command[1:], env)
        self.port = port

    @property
    def upstream(self) -> tuple[str, int]:
        return (self.host.address, self.port)

    def wait_ready(self, seconds: float = STARTUP_SECONDS) -> None:
        wait_until(
            lambda: ready(self.host.address, self.port),
            f"{self.name} on {self.host.name}",
            seconds,
            process=self.process,
            why=lambda: self.output()[-2000:],
        )
