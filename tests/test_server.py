"""End to end: the README's `make run` serves pages and websockets; Daphne caps messages;
two server processes share one Redis channel layer (the production shape)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import smtplib
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
import websockets
from channels_redis.pubsub import RedisPubSubChannelLayer

from lobby.consumers import LOBBY_GROUP
from realtime.channel_layers import redis_host
from tests import live
from tests.conftest import require_redis
from tests.servers import (
    ROOT,
    Server,
    daphnes,
    free_port,
    free_ports,
    on_postgresql,
    running,
    scratch_database,
)

# `make run` on the embedded default (SQLite, the in-memory layer) and, on the PostgreSQL pass,
# the README's production example: two stacks, each checked.
pytestmark = pytest.mark.both_databases(reason="make run's embedded default and production's")

WS_MAX_BYTES = 65536


@pytest.fixture(scope="module")
def metrics_port() -> int:
    """make run's METRICS_PORT: its four processes serve their metrics from there on."""
    return free_ports(4)


@pytest.fixture(scope="module")
def make_run(tmp_path_factory: pytest.TempPathFactory, metrics_port: int) -> Iterator[Server]:
    """`make run` exactly as the README gives it, on a scratch database and port.

    The SQLite pass runs the embedded default; the PostgreSQL pass runs the README's
    production example, `DATABASE_URL=… REDIS_URL=… make run`.
    """
    scratch = tmp_path_factory.mktemp("make-run")
    port = free_port()
    with scratch_database(scratch) as database_url:
        env: dict[str, str | None] = {
            "PORT": str(port),
            "DATABASE_URL": database_url,
            "DJANGO_STATIC_ROOT": str(scratch / "static"),
            "WS_MAX_BYTES": str(WS_MAX_BYTES),
            "CHANNEL_LAYER_PREFIX": f"makerun{os.getpid()}",
            "PBM_SMTP_PORT": str(free_port()),
            "METRICS_PORT": str(metrics_port),
        }
        # The test run's own settings module and services must not leak into the server.
        for variable in ("DJANGO_SETTINGS_MODULE", "DJANGO_DEBUG", "DJANGO_SECRET_KEY"):
            env[variable] = None
        env["REDIS_URL"] = require_redis() if on_postgresql() else None
        with running(["make", "run"], env, scratch / "server.log", port) as server:
            yield server


def fetch(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read().decode()


def test_make_run_serves_the_home_page_and_its_static_files(make_run: Server) -> None:
    status, _, page = fetch(make_run.http + "/")
    assert status == 200
    assert "Play as guest" in page
    # collectstatic ran: the stylesheet link is a hashed name whitenoise serves.
    stylesheet = page.split('rel="stylesheet" href="')[1].split('"')[0]
    assert stylesheet.startswith("/static/css/site.") and stylesheet != "/static/css/site.css"
    status, content_type, css = fetch(make_run.http + stylesheet)
    assert status == 200
    assert content_type.startswith("text/css")
    assert "--accent" in css


def test_make_run_is_healthy_on_the_database_and_layer_it_was_given(make_run: Server) -> None:
    status, _, body = fetch(make_run.http + "/readyz")
    health = json.loads(body)
    assert status == 200
    if on_postgresql():
        assert health["database"]["vendor"] == "postgresql"
        assert health["channel_layer"]["backend"] == "PubSubChannelLayer"
    else:
        assert health["database"]["vendor"] == "sqlite"
        assert health["channel_layer"]["backend"] == "BridgedInMemoryChannelLayer"


def test_make_run_accepts_a_websocket(make_run: Server) -> None:
    async def talk() -> tuple[dict, dict]:
        async with websockets.connect(
            make_run.ws + "/ws/lobby/", origin=websockets.Origin(make_run.http)
        ) as socket:
            hello = json.loads(await socket.recv())
            await socket.send(json.dumps({"type": "ping", "id": 42}))
            pong = json.loads(await socket.recv())
            while pong["type"] == "online":  # presence news may come first
                pong = json.loads(await socket.recv())
            return hello, pong

    hello, pong = asyncio.run(talk())
    assert (hello["type"], hello["user"]) == ("lobby", None)
    assert pong == {"type": "pong", "id": 42}


def test_the_server_drops_a_socket_that_sends_an_oversized_message(make_run: Server) -> None:
    async def send(size: int) -> str:
        async with websockets.connect(
            make_run.ws + "/ws/lobby/", origin=websockets.Origin(make_run.http), max_size=None
        ) as socket:
            await socket.recv()
            await socket.send(json.dumps({"type": "ping", "id": 1, "padding": "x" * size}))
            try:
                while True:
                    kind = json.loads(await asyncio.wait_for(socket.recv(), 10))["type"]
                    if kind != "online":
                        return kind
            except websockets.ConnectionClosed:
                return "closed"

    # Daphne refuses the frame before the application sees it; the server lives on.
    assert asyncio.run(send(WS_MAX_BYTES)) == "closed"
    assert asyncio.run(send(1000)) == "pong"


def test_make_run_answers_a_mailed_command(make_run: Server) -> None:
    """The mail door is one of `make run`'s processes; with no EMAIL_HOST its replies are
    printed (Django's console backend), here into the server's log."""
    port = int(re.search(r"SMTP on 127.0.0.1:(\d+)", make_run.output()).group(1))  # type: ignore[union-attr]
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "player@players.test", "pbm@localhost", "list"
    mail["Message-ID"] = f"<make-run-{os.getpid()}@players.test>"
    mail.set_content("\n")
    deadline = time.monotonic() + 30
    while True:  # the mail door may start after the web server answers
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=10) as smtp:
                smtp.send_message(mail)
            break
        except ConnectionRefusedError:
            assert time.monotonic() < deadline, make_run.output()
            time.sleep(0.2)
    deadline = time.monotonic() + 20
    while "In-Reply-To: <make-run-" not in make_run.output() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "In-Reply-To: <make-run-" in make_run.output()
    assert "four-rank-diffusion" in make_run.output()


def test_a_second_make_run_just_starts_the_server(make_run: Server) -> None:
    # The fixture's run already installed and migrated; doing it again changes nothing.
    result = subprocess.run(
        ["make", "--question", ".venv/.installed", ".secret_key"], cwd=ROOT, capture_output=True
    )
    assert result.returncode == 0, "make would reinstall on a second run"


async def next_announcement(socket: Any) -> dict[str, Any]:
    while True:
        message = json.loads(await asyncio.wait_for(socket.recv(), 10))
        if message["type"] == "announcement":
            return message


@pytest.mark.redis
def test_two_server_processes_share_broadcasts_through_redis(
    tmp_path: Path, stack: ExitStack
) -> None:
    redis_url = require_redis()
    database_url = stack.enter_context(scratch_database(tmp_path))
    prefix = f"e2e{os.getpid()}"
    env: dict[str, str | None] = {
        "DJANGO_SECRET_KEY": "e2e-test-key",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CHANNEL_LAYER_PREFIX": prefix,
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
        capture_output=True,  # type: ignore[dict-item]
    )
    with daphnes(2, env, tmp_path) as (first, second):

        async def broadcast() -> list[dict]:
            sockets = [
                await websockets.connect(
                    server.ws + "/ws/lobby/", origin=websockets.Origin(server.http)
                )
                for server in (first, second)
            ]
            for socket in sockets:
                assert json.loads(await socket.recv())["type"] == "lobby"
            layer = RedisPubSubChannelLayer(hosts=[redis_host(redis_url)], prefix=prefix)
            payload = {"type": "announcement", "text": "from another process"}
            await layer.group_send(
                LOBBY_GROUP, {"type": "lobby.announcement", "text": payload["text"]}
            )
            received = [await next_announcement(s) for s in sockets]
            for socket in sockets:
                await socket.close()
            await layer.flush()
            return received

        received = asyncio.run(broadcast())
    assert received == [{"type": "announcement", "text": "from another process"}] * 2


def test_make_run_ends_a_game_nobody_moves_in_on_both_players_screens_and_a_spectators(
    make_run: Server,
) -> None:
    # Beside the server runs the sweeper, which wakes at the deadline first; on the embedded
    # default its news cannot reach the server's sockets, which must still show the end.
    lateness = live.first_move_abort_seen(make_run, make_run, make_run)
    assert len(lateness) == 3


def test_every_process_of_make_run_serves_its_own_metrics(
    make_run: Server, metrics_port: int
) -> None:
    """The server on METRICS_PORT, the sweeper on +1, the computer's worker on +2, the mail
    door on +3 (docs/METRICS.md); the site itself serves none."""

    def scrape(port: int, wanted: str) -> str:
        deadline = time.monotonic() + 60  # the worker and the mail door start beside the server
        while True:
            try:
                text = fetch(f"http://127.0.0.1:{port}/metrics")[2]
                if wanted in text:
                    return text
            except OSError:
                pass
            assert time.monotonic() < deadline, f"nothing with {wanted!r} on port {port}"
            time.sleep(0.2)

    async def with_a_socket_open() -> str:
        async with websockets.connect(
            make_run.ws + "/ws/lobby/", origin=websockets.Origin(make_run.http)
        ) as socket:
            await socket.recv()
            return await asyncio.to_thread(scrape, metrics_port, 'kind="lobby"')

    server = asyncio.run(with_a_socket_open())
    assert 'diffusion_sockets_open{kind="lobby"} 1.0' in server
    # The gauges read from the database: the sweeper's only.
    sweeper = scrape(metrics_port + 1, "diffusion_database_state_up 1.0")
    assert 'diffusion_seeks_waiting{kind="realtime"}' in sweeper
    assert "diffusion_sweeper_last_pass_timestamp_seconds" in sweeper
    assert "diffusion_database_state_up" not in server
    scrape(metrics_port + 2, 'diffusion_bot_turns{state="waiting"}')
    scrape(metrics_port + 3, "# TYPE diffusion_mails_total counter")
    with pytest.raises(urllib.error.HTTPError, match="404"):
        fetch(make_run.http + "/metrics")
