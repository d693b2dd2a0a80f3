"""docker/compose.yml run for real, without a Docker engine: its migrate, web1, web2 and
sweeper services start as local processes with the commands and environment the file (and
the image's Dockerfile) give them, pointed at this machine's PostgreSQL and Redis instead of
the `db` and `redis` containers. Players on different web processes then meet through every
kind of challenge and see the sweeper's news, and each process answers Prometheus' scrape
(docker/prometheus.yml) on its metrics port (a port of its own here, as each container has).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import live
from tests.conftest import require_redis
from tests.servers import (
    ROOT,
    Server,
    Visitor,
    background,
    free_port,
    running,
    scratch_database,
)

pytestmark = [
    pytest.mark.postgres(
        reason="the compose file is the production shape: PostgreSQL, Redis, several processes"
    ),
]

DOCKER = ROOT / "docker"
SECRET = "compose-test-secret-key-not-for-production-0123456789"
# The scrape target (service:port in docker/prometheus.yml) of each process started here ->
# the local port it serves its metrics on.
SCRAPED: dict[str, int] = {}


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error} forms."""

    def one(match: re.Match[str]) -> str:
        name, form, rest = match.group(1), match.group(2) or "", match.group(3) or ""
        if env.get(name):
            return env[name]
        if form == ":?":
            raise AssertionError(f"compose needs {name}: {rest}")
        return rest if form == ":-" else ""

    return re.sub(r"\$\{([A-Z_]+)(:[-?])?([^}]*)\}", one, value)


def image_command() -> list[str]:
    text = (DOCKER / "Dockerfile").read_text().replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.strip().startswith("CMD"))
    return list(json.loads(line.strip()[3:]))


def local(command: list[str], port: int | None = None) -> list[str]:
    """The container's command as a process here: this Python, this machine's port."""
    out: list[str] = []
    for arg in command:
        if arg in ("python", "python3"):
            out.append(sys.executable)
            continue
        if arg == "daphne":
            out += [sys.executable, "-m", "daphne"]
            continue
        arg = arg.replace("0.0.0.0", "127.0.0.1")
        if port is not None:
            arg = str(port) if arg == "8000" else arg.replace("port=8000", f"port={port}")
        out.append(arg)
    return out


def metrics_env(name: str, service: dict[str, Any]) -> dict[str, str | None]:
    """The service's metrics port, moved to a free one of this machine (every container has
    the same port to itself), on the loopback."""
    target = f"{name}:{service['environment']['METRICS_PORT']}"
    SCRAPED[target] = free_port()
    return {"METRICS_PORT": str(SCRAPED[target]), "METRICS_HOST": "127.0.0.1"}


def service_env(service: dict[str, Any], database_url: str, prefix: str) -> dict[str, str | None]:
    # The secrets the operator passes: the key, and the push key pair (this test process's).
    given = {
        "DJANGO_SECRET_KEY": SECRET,
        **{name: os.environ[name] for name in ("VAPID_PUBLIC_KEY", "VAPID_PRIVATE_KEY")},
        "VAPID_SUBJECT": "mailto:operator@example.org",
    }
    env: dict[str, str | None] = {
        key: interpolate(str(value), given) for key, value in service["environment"].items()
    }
    assert str(env["DATABASE_URL"]).startswith("postgres://")
    assert str(env["REDIS_URL"]).startswith("redis://redis:")
    env["DATABASE_URL"] = database_url  # the `db` container: this machine's PostgreSQL
    env["REDIS_URL"] = require_redis()  # the `redis` container: this machine's Redis
    env["CHANNEL_LAYER_PREFIX"] = prefix  # keeps parallel runs apart on the shared Redis
    env["DJANGO_SETTINGS_MODULE"] = None
    return env


@pytest.fixture(scope="module")
def compose_up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Server]]:
    compose = yaml.safe_load((DOCKER / "compose.yml").read_text())
    services = compose["services"]
    scratch = tmp_path_factory.mktemp("compose")
    with ExitStack() as stack:
        database_url = stack.enter_context(scratch_database(scratch))
        prefix = f"compose{os.getpid()}"
        env = service_env(services["web1"], database_url, prefix)
        env["DJANGO_STATIC_ROOT"] = str(scratch / "static")  # the image's build step
        full = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
            cwd=ROOT,
            env=full,
            check=True,
        )
        subprocess.run(local(services["migrate"]["command"]), cwd=ROOT, env=full, check=True)
        servers = []
        for name in ("web1", "web2"):
            assert "command" not in services[name], f"{name} runs the image's CMD"
            port = free_port()
            servers.append(
                stack.enter_context(
                    running(
                        local(image_command(), port),
                        {**env, **metrics_env(name, services[name])},
                        scratch / f"{name}.log",
                        port,
                    )
                )
            )
        stack.enter_context(
            background(
                local(services["sweeper"]["command"]),
                {**env, **metrics_env("sweeper", services["sweeper"])},
                scratch / "sweeper.log",
            )
        )
        yield servers
        for log in sorted(Path(scratch).glob("*.log")):
            assert "Traceback" not in log.read_text(errors="replace"), log.read_text()


def test_challenges_of_every_kind_are_accepted_across_the_two_web_processes(
    compose_up: list[Server],
) -> None:
    web1, web2 = compose_up
    alice = Visitor(web1).play_as_guest()
    bob = Visitor(web2).play_as_guest()
    carol = Visitor(web2).play_as_guest()

    async def meet() -> list[tuple[int, int]]:
        lobby, hello = await live.open_socket(web1, "/ws/lobby/", alice)
        assert hello["type"] == "lobby" and hello["user"]["username"] == alice.username
        games = []
        try:
            direct = live.challenge(alice, user=bob.username, side="first")
            games.append((live.accept(bob, direct["id"]), 1))
            started = await live.next_frame(lobby, "game_started", personal=True)
            assert (started["game_id"], started["you"]) == games[-1]

            # An open challenge: its link's token, accepted by whoever comes first.
            open_one = live.challenge(alice, side="second", slug="zigzag")
            games.append((live.accept(carol, open_one["id"]), 2))
            started = await live.next_frame(lobby, "game_started", personal=True)
            assert (started["game_id"], started["you"]) == games[-1]

            # pbmserv's command form: userid1 moves first.
            made = alice.api(
                "/api/command", {"text": f"diffusion challenge {bob.username} {alice.username}"}
            )["challenge"]
            games.append((live.accept(bob, made["id"]), 2))
            started = await live.next_frame(lobby, "game_started", personal=True)
            assert (started["game_id"], started["you"]) == games[-1]
        finally:
            await lobby.close()
        return games

    games = asyncio.run(meet())
    assert len({game_id for game_id, _ in games}) == 3


def test_the_sweepers_first_move_abort_reaches_players_on_both_processes(
    compose_up: list[Server],
) -> None:
    web1, web2 = compose_up
    lateness = live.first_move_abort_seen(web1, web2, web1)
    assert len(lateness) == 3


def test_prometheus_scrapes_each_process_it_is_configured_for(compose_up: list[Server]) -> None:
    config = yaml.safe_load((DOCKER / "prometheus.yml").read_text())
    jobs = {
        target: job["job_name"]
        for job in config["scrape_configs"]
        for static in job["static_configs"]
        for target in static["targets"]
    }
    assert set(SCRAPED) == {"web1:9100", "web2:9100", "sweeper:9100"}
    assert set(SCRAPED) <= set(jobs)
    for target, port in SCRAPED.items():
        deadline = time.monotonic() + 30  # the sweeper starts beside the servers
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text = r.read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline, f"{target} serves no metrics"
                time.sleep(0.2)
        assert "# TYPE diffusion_moves_total counter" in text, target
        # The gauges read from the database: the sweeper's job only.
        assert ("diffusion_database_state_up 1.0" in text) == (jobs[target] == "sweeper"), target
