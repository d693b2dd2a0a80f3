"""Daphne processes for the benchmark commands (loadtest, stackfloor, lobbybench, wsburst,
tourneybench), and the sweeper beside them."""

from __future__ import annotations

import gc
import json
import os
import signal
import smtplib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

from config import serve

STARTUP_SECONDS = 60


def percentile(values: list[float], fraction: float) -> float:
    """The value at `fraction` (0..1) of the sorted values; NaN for none."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def busy_jiffies() -> tuple[int, int]:
    """(busy, total) CPU time of the whole machine so far, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def process_cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user and system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cores_busy(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the machine's CPU time that was busy between two busy_jiffies()."""
    return (after[0] - before[0]) / max(1, after[1] - before[1])


@contextmanager
def no_collector_pauses() -> Iterator[None]:
    """No garbage collection in the load generator while it measures.

    With thousands of sockets in one process its own collections pause it for up to 270 ms
    (measured), and every frame that arrives meanwhile is timed late: the servers' latency
    would include the load generator's pauses. A run lasts seconds; the garbage waits.
    """
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()


def usage(servers: list[BenchServer]) -> dict[str, float]:
    """The servers' counters summed."""
    total: dict[str, float] = {}
    for server in servers:
        for key, value in server.stats().items():
            total[key] = total.get(key, 0) + value
    return total


@dataclass
class BenchServer:
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    # Stopped for good by a surge restart (`replace_server`): a replacement took its place.
    retired: bool = False
    # Where it listens: this machine, or (the cluster drill) the proxy's host.
    address: str = "127.0.0.1"

    def stats(self) -> dict[str, float]:
        """The process's counters (devtools/stats.py): statements run, CPU seconds."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/bench/stats", timeout=10) as r:
            return dict(json.loads(r.read()))

    def peak_memory_mb(self) -> float:
        """The process's peak resident memory (VmHWM), read before it is stopped."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return float("nan")
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def check_shared_services(procs: int) -> None:
    if procs > 1 and not settings.REDIS_URL:
        raise CommandError("More than one process needs a shared layer: set REDIS_URL.")
    if procs > 1 and settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        raise CommandError("More than one process needs PostgreSQL: set DATABASE_URL.")


def start_servers(
    procs: int, *extra: str, application: str = "devtools.asgi:application"
) -> list[BenchServer]:
    """Start `procs` Daphne processes on this environment's settings, serving the product with
    the benchmark's counters (devtools/asgi.py) unless told otherwise; wait until they answer.
    `extra` goes to config.serve's command line."""
    servers = []
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ["DJANGO_SETTINGS_MODULE"],
        # The load generator is one address holding thousands of sockets.
        "MAX_SOCKETS_PER_ADDRESS": "0",
    }
    for _ in range(procs):
        port = free_port()
        log = Path(tempfile.mkstemp(prefix=f"bench-{port}-", suffix=".log")[1])
        command = serve.command("127.0.0.1", port, "--application", application, *extra)
        server = BenchServer(port=port, process=_launch(command, env, log), log=log)
        server.command, server.env = command, env
        servers.append(server)
    for server in servers:
        try:
            wait_ready(server)
        except CommandError:
            stop_servers(servers)
            raise
    return servers


def _launch(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            command,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_ready(server: BenchServer) -> None:
    """Until the server's readiness check answers 200."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/readyz", timeout=2)
            return
        except OSError as error:
            if server.process.poll() is not None or time.monotonic() > deadline:
                raise CommandError(f"server failed:\n{server.log.read_text()}") from error
            time.sleep(0.1)


def restart_server(server: BenchServer, grace: float = 90.0) -> tuple[float, float]:
    """Stop the server as a deploy does (SIGTERM: it drains) and start it again on the same
    port. Returns (seconds until it exited, seconds until the new one was ready)."""
    began = time.monotonic()
    os.killpg(server.process.pid, signal.SIGTERM)
    try:
        server.process.wait(timeout=grace)
    except subprocess.TimeoutExpired as error:
        raise CommandError(f"server on {server.port} did not stop within {grace} s") from error
    stopped = time.monotonic() - began
    server.process = _launch(server.command, server.env, server.log)
    wait_ready(server)
    return stopped, time.monotonic() - began


def replace_server(
    servers: list[BenchServer], index: int, grace: float = 90.0
) -> tuple[float, float]:
    """Restart as a deploy with one spare slot does: start the replacement on a new port and
    wait for its `/readyz`, then stop the old process (SIGTERM: it drains, its pages moving to
    the ready processes, the new one among them). The new server is appended to `servers`,
    the old one marked retired. Returns (seconds until the new one was ready, seconds until
    the old one had exited), both from the start."""
    old = servers[index]
    began = time.monotonic()
    port = free_port()
    command = list(old.command)
    command[command.index("--port") + 1] = str(port)
    new = BenchServer(port=port, process=_launch(command, old.env, old.log), log=old.log)
    new.command, new.env = command, old.env
    wait_ready(new)
    ready = time.monotonic() - began
    servers.append(new)
    old.retired = True  # its readiness fails from the signal on: the proxy sends nothing more
    os.killpg(old.process.pid, signal.SIGTERM)
    try:
        old.process.wait(timeout=grace)
    except subprocess.TimeoutExpired as error:
        raise CommandError(f"server on {old.port} did not stop within {grace} s") from error
    return ready, time.monotonic() - began


@dataclass
class BenchSweeper:
    """`manage.py sweeper` beside the servers: it starts, pairs and ends tournaments and ends
    games on time. Its metrics are served on `metrics_port`, its log written to `log`."""

    process: subprocess.Popen[bytes]
    log: Path
    metrics_port: int

    def metrics(self) -> str:
        """Its Prometheus metrics, as text."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as answer:
            return str(answer.read().decode())

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)


def start_sweeper(*extra: str) -> BenchSweeper:
    """One sweeper on this environment's settings, serving its metrics on a port of its own;
    waits until they answer (the sweeper is then in its loop)."""
    port = free_port()
    log = Path(tempfile.mkstemp(prefix="bench-sweeper-", suffix=".log")[1])
    env = {**os.environ, "METRICS_PORT": str(port), "METRICS_HOST": "127.0.0.1"}
    command = [sys.executable, "-m", "devtools", "sweeper", *extra]
    sweeper = BenchSweeper(process=_launch(command, env, log), log=log, metrics_port=port)
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            sweeper.metrics()
            return sweeper
        except OSError as error:
            if sweeper.process.poll() is not None or time.monotonic() > deadline:
                sweeper.stop()
                raise CommandError(f"sweeper failed:\n{log.read_text()}") from error
            time.sleep(0.2)


def stop_servers(servers: list[BenchServer]) -> None:
    for server in servers:
        if server.process.poll() is None:
            os.killpg(server.process.pid, signal.SIGTERM)
    for server in servers:
        try:
            server.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.process.pid, signal.SIGKILL)


def wait_for_smtp(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until `manage.py mailserver` (`process`, logging to `log`) answers SMTP on `port`;
    RuntimeError, with its log, if it exits or is silent for a minute."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the mail server exited:\n{log.read_text(errors='replace')}")
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=2) as smtp:
                smtp.noop()
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the mail server did not listen:\n{log.read_text(errors='replace')}")
