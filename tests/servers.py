"""Real server processes for end-to-end tests: `make run` itself, or Daphne with chosen env."""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config import serve
from tests import run_shared

ROOT = Path(__file__).resolve().parent.parent
STARTUP_SECONDS = 120  # the first `make run` on a machine installs and migrates


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_ports(count: int) -> int:
    """The first of `count` free ports in a row (`make run` gives its processes' metrics
    METRICS_PORT, +1, +2, +3), below the kernel's range for ports it hands out itself: there,
    another test's `free_port()` or an outgoing connection could take one of the row before
    its process binds it (a run saw the mail door's metrics port taken so)."""
    low = _ephemeral_low()
    rng = random.Random()
    for _ in range(100):
        first = rng.randrange(10_000, max(low, 20_000) - count)
        if all(_free(first + n) for n in range(count)):
            return first
    raise RuntimeError(f"no {count} free ports in a row")


def _ephemeral_low() -> int:
    """The lowest port the kernel hands out for a bind to port 0 (Linux; 32768 elsewhere)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class Server:
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def _wait_until_serving(server: Server) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the server exited early:\n{server.output()}")
        try:
            with urllib.request.urlopen(f"{server.http}/readyz", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not answer within {STARTUP_SECONDS} s:\n{server.output()}")


# The servers a test starts keep small database pools (a test's load needs few connections):
# on the PostgreSQL pass, four workers' stacks, the chaos suite's and the compose file's run
# at once on one PostgreSQL, whose 100 connections the production pool sizes (2 to 20 a
# process) would use up. A test's own env may say otherwise.
SMALL_POOLS = {"DATABASE_POOL_MIN": "1", "DATABASE_POOL_MAX": "6"}


@contextmanager
def background(
    command: list[str],
    env: dict[str, str | None],
    log: Path,
    stop_signal: int = signal.SIGTERM,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start the command (None in env unsets a variable); stop its whole tree afterwards with
    `stop_signal` (SIGTERM: a server drains first; SIGKILL: a crash)."""
    environment = {**SMALL_POOLS, **os.environ, **env}
    full_env = {key: value for key, value in environment.items() if value is not None}
    with log.open("wb") as sink:
        # Own process group, so the whole tree (make, daphne) is stopped afterwards.
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=full_env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield process
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, stop_signal)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def running(
    command: list[str],
    env: dict[str, str | None],
    log: Path,
    port: int,
    stop_signal: int = signal.SIGTERM,
) -> Iterator[Server]:
    """Start a web server (as `background`) and wait until its /readyz answers."""
    with background(command, env, log, stop_signal) as process:
        server = Server(port=port, process=process, log=log)
        _wait_until_serving(server)
        yield server


@contextmanager
def daphnes(count: int, env: dict[str, str | None], logs: Path) -> Iterator[list[Server]]:
    """`count` Daphne processes sharing one environment (database, channel layer)."""
    with ExitStack() as stack:
        servers = []
        for index in range(count):
            port = free_port()
            command = serve.command("127.0.0.1", port)
            servers.append(
                stack.enter_context(running(command, env, logs / f"daphne-{index}.log", port))
            )
        yield servers


def shared_test_env(prefix: str) -> dict[str, str | None]:
    """Settings for server processes sharing the running test's PostgreSQL database and Redis."""
    from django.db import connection

    from tests.conftest import require_redis

    database = connection.settings_dict
    return {
        **SMALL_POOLS,
        "DJANGO_SECRET_KEY": "test-only-secret-key-not-for-production-use-0123456789",
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:"
        f"{database['PORT'] or 5432}/{database['NAME']}",
        "REDIS_URL": require_redis(),
        "CHANNEL_LAYER_PREFIX": prefix,
        # A test is one address holding many clients' sockets; the limit has its own tests.
        "MAX_SOCKETS_PER_ADDRESS": "0",
    }


def on_postgresql() -> bool:
    """Whether this pass of the suite runs on PostgreSQL (the second pass of `make test`)."""
    from django.conf import settings

    return bool(settings.DATABASES["default"]["ENGINE"].endswith(".postgresql"))


@contextmanager
def scratch_database(directory: Path, template: str | None = None) -> Iterator[str]:
    """A DATABASE_URL for server processes started by a test, on this pass's backend.

    The SQLite pass gets a file in `directory`; the PostgreSQL pass gets a new database on
    the same server (empty, or a copy of `template`), dropped afterwards. Unless it is a copy,
    the servers migrate it.
    """
    if not on_postgresql():
        yield f"sqlite:///{directory / 'db.sqlite3'}"
        return
    import uuid

    user, host, port = _postgres_server()
    name = f"scratch_{uuid.uuid4().hex[:12]}"
    admin = f"postgresql://{user}@{host}:{port}/postgres"
    copy = f' TEMPLATE "{template}"' if template else ""
    with _admin_connection(admin) as connection:
        connection.execute(f'CREATE DATABASE "{name}"{copy}')
    try:
        yield f"postgres://{user}@{host}:{port}/{name}"
    finally:
        with _admin_connection(admin) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _admin_connection(admin: str) -> Any:
    """A connection to the server's `postgres` database. The suite's workers start and stop
    whole stacks: just after a stack stops, its sessions may still hold the server's slots
    for a moment ("too many clients already"), so a full server is waited for, up to 30 s."""
    import psycopg

    deadline = time.monotonic() + 30
    while True:
        try:
            return psycopg.connect(admin, autocommit=True)
        except psycopg.OperationalError as error:
            if "too many clients" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _manage(*command: str, **env: str) -> None:
    """One manage.py command on the product's settings, as a one-off process."""
    subprocess.run(
        [sys.executable, "manage.py", *command, "--noinput", "-v", "0"],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DJANGO_SECRET_KEY": "test-only-secret-key-not-for-production-use-0123456789",
            **env,
        },
        check=True,
    )


def migrated_database() -> str:
    """A database migrated once for the whole run (PostgreSQL: a template database; SQLite: a
    file), copied for the test databases (tests/conftest.py) and for each test that needs a
    migrated scratch database, instead of migrating each from nothing (seconds of CPU each).
    The test settings install no model the product's do not (devtools has none), so one
    schema serves both."""
    if not on_postgresql():
        return run_shared.once("sqlite", _migrated_sqlite)
    return run_shared.once("postgres", _migrated_postgres)


def _migrated_sqlite(directory: Path) -> str:
    seed = directory / "migrated.sqlite3"
    _manage("migrate", DATABASE_URL=f"sqlite:///{seed}")
    return str(seed)


def _migrated_postgres(directory: Path) -> str:
    import uuid

    import psycopg

    user, host, port = _postgres_server()
    template = f"scratch_template_{uuid.uuid4().hex[:12]}"
    url = f"postgres://{user}@{host}:{port}/{template}"
    with psycopg.connect(f"postgresql://{user}@{host}:{port}/postgres", autocommit=True) as db:
        db.execute(f'CREATE DATABASE "{template}"')
    run_shared.remember_database(url)
    _manage("migrate", DATABASE_URL=url)
    return template


@contextmanager
def migrated_scratch_database(directory: Path) -> Iterator[str]:
    """scratch_database, already migrated: a copy of the run's migrated database."""
    if not on_postgresql():
        shutil.copyfile(migrated_database(), directory / "db.sqlite3")
        yield f"sqlite:///{directory / 'db.sqlite3'}"
        return
    with scratch_database(directory, template=migrated_database()) as url:
        yield url


def _postgres_server() -> tuple[str, str, str | int]:
    from django.conf import settings

    database = settings.DATABASES["default"]
    return database["USER"], database["HOST"] or "127.0.0.1", database["PORT"] or 5432


def collected_static() -> Path:
    """The site's static files collected once per run (they are the same for every test): a
    STATIC_ROOT for the servers tests start."""
    return Path(run_shared.once("static", _collect_static))


def _collect_static(directory: Path) -> str:
    root = directory / "static"
    _manage("collectstatic", DJANGO_STATIC_ROOT=str(root))
    return str(root)


class Visitor:
    """A browser-like HTTP client of a running server: cookies, CSRF, JSON API calls."""

    def __init__(self, server: Server) -> None:
        import http.cookiejar

        self.server = server
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))
        self.username = ""

    def cookie(self, name: str) -> str:
        return next((c.value or "" for c in self.cookies if c.name == name), "")

    def play_as_guest(self) -> Visitor:
        import re
        from urllib.parse import urlencode

        with self.opener.open(self.server.http + "/", timeout=20) as response:
            response.read()
        form = urlencode({"csrfmiddlewaretoken": self.cookie("csrftoken")}).encode()
        with self.opener.open(self.server.http + "/guest/", data=form, timeout=20) as response:
            page = response.read().decode()
        found = re.search(r'data-username="([^"]+)"', page)
        assert found, "the lobby page after 'Play as guest' names no user"
        self.username = found.group(1)
        return self

    def api(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """POST `body` (or GET without one) to the JSON API; the decoded answer."""
        import json

        request = urllib.request.Request(
            self.server.http + path,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "X-CSRFToken": self.cookie("csrftoken")},
        )
        with self.opener.open(request, timeout=20) as response:
            answer: dict[str, Any] = json.loads(response.read())
        return answer

    def websocket_headers(self) -> dict[str, str]:
        return {"Cookie": f"sessionid={self.cookie('sessionid')}", "Origin": self.server.http}


@contextmanager
def own_redis(port: int) -> Iterator[dict[str, Any]]:
    """A redis-server of this test's own (the shared one must not be killed), restartable."""
    handle: dict[str, Any] = {}

    def start() -> None:
        options = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        handle["process"] = subprocess.Popen(
            ["redis-server", *options],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start: is it installed (apt-get install redis)?")

    def kill() -> None:
        os.kill(handle["process"].pid, signal.SIGKILL)
        handle["process"].wait()

    handle.update(start=start, kill=kill)
    start()
    try:
        yield handle
    finally:
        if handle["process"].poll() is None:
            kill()
