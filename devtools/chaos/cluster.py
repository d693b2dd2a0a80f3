"""The system under attack: two server processes, a sweeper, a Redis of the suite's own (it is
killed), and the environment's PostgreSQL (its sessions are killed, by application name)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.core.management.base import CommandError

from config import serve

STARTUP_SECONDS = 60
# The application name of the servers' and the sweeper's PostgreSQL sessions.
APPLICATION_NAME = "diffusion-chaos"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


class Redis:
    """A redis-server of the suite's own on a free port: the machine's must not be killed."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        options = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        try:
            self.process = subprocess.Popen(
                ["redis-server", *options, "--appendonly", "no"], stdout=subprocess.DEVNULL
            )
        except FileNotFoundError:
            raise CommandError("redis-server is missing: apt-get install redis-server") from None
        deadline = time.monotonic() + 10
        while not _answers(self.port):
            if time.monotonic() > deadline:
                raise CommandError("redis-server did not start within 10 s")
            time.sleep(0.02)

    def kill(self) -> None:
        """kill -9, as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        self.kill()


@dataclass
class Proc:
    """One server process (or the sweeper); restartable on the same port, one log for all
    its lives."""

    name: str
    command: list[str]
    log: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    lives: int = 0
    pids: list[int] = field(default_factory=list)  # of every life

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class Cluster:
    """Start with `start()`, end with `stop()`; `env` is what every process gets."""

    procs: int = 2
    extra_env: dict[str, str] = field(default_factory=dict)
    redis: Redis = field(default_factory=Redis)
    servers: list[Proc] = field(default_factory=list)
    sweeper: Proc | None = None
    bots: Proc | None = None
    directory: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="chaos-")))

    def check_services(self) -> None:
        if not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
            raise CommandError(
                "The fault-injection suite runs on PostgreSQL: set DATABASE_URL "
                "(postgres://postgres@127.0.0.1:5432/<database>)."
            )

    @property
    def database_url(self) -> str:
        url = os.environ.get("DATABASE_URL", "")
        parts = urlsplit(url)
        query = "&".join(
            q for q in (parts.query, urlencode({"application_name": APPLICATION_NAME})) if q
        )
        return urlunsplit(parts._replace(query=query))

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis.url,
            "CHANNEL_LAYER_PREFIX": f"chaos{self.redis.port}",
            # Every client of the suite comes from 127.0.0.1: the per-address limit would
            # count them all as one visitor (it has its own tests).
            "MAX_SOCKETS_PER_ADDRESS": "0",
            **self.extra_env,
        }

    def start(self) -> None:
        self.check_services()
        # As `make run` does: pages name their static files through the manifest.
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
            cwd=settings.BASE_DIR,
            env=self.env,
            check=True,
        )
        self.redis.start()
        for index in range(self.procs):
            port = free_port()
            server = Proc(
                name=f"server-{index}",
                # As behind the production proxy: a client may come from any address (the
                # flooders each from their own, so the flood cool-down is theirs alone).
                command=serve.command("127.0.0.1", port, "--proxy-headers"),
                log=self.directory / f"server-{index}.log",
                port=port,
            )
            self.servers.append(server)
            self._launch(server)
        self.sweeper = Proc(
            name="sweeper",
            command=[sys.executable, "manage.py", "sweeper"],
            log=self.directory / "sweeper.log",
        )
        self._launch(self.sweeper)
        self.bots = Proc(
            name="bots",
            command=[sys.executable, "manage.py", "bots", "--processes", "1"],
            log=self.directory / "bots.log",
        )
        self._launch(self.bots)
        for server in self.servers:
            self.wait_serving(server)

    def _launch(self, proc: Proc) -> None:
        with proc.log.open("ab") as sink:
            proc.process = subprocess.Popen(
                proc.command,
                cwd=settings.BASE_DIR,
                env=self.env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        proc.lives += 1
        proc.pids.append(proc.process.pid)

    def wait_serving(self, server: Proc) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            try:
                with urllib.request.urlopen(f"{server.http}/readyz", timeout=2):
                    return
            except OSError as error:
                if not server.alive or time.monotonic() > deadline:
                    raise CommandError(
                        f"{server.name} did not start:\n{server.log.read_text()[-3000:]}"
                    ) from error
                time.sleep(0.1)

    def kill(self, proc: Proc) -> None:
        """kill -9 the process (and anything it started)."""
        if proc.process is not None and proc.alive:
            os.killpg(proc.process.pid, signal.SIGKILL)
            proc.process.wait()

    def restart(self, server: Proc) -> None:
        self._launch(server)
        self.wait_serving(server)

    def live_servers(self) -> list[Proc]:
        return [server for server in self.servers if server.alive]

    def background(self) -> list[Proc]:
        return [proc for proc in (self.sweeper, self.bots) if proc is not None]

    def logs(self) -> str:
        procs = [*self.servers, *self.background()]
        return "".join(proc.log.read_text(errors="replace") for proc in procs if proc.log.exists())

    def tracebacks(self) -> int:
        return self.logs().count("Traceback (most recent call last)")

    def stop(self) -> None:
        procs = [*self.servers, *self.background()]
        for proc in procs:
            if proc.process is not None and proc.alive:
                os.killpg(proc.process.pid, signal.SIGTERM)
        for proc in procs:
            if proc.process is None:
                continue
            try:
                proc.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.process.pid, signal.SIGKILL)
        self.redis.stop()
