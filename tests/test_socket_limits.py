"""A signed-in user may hold MAX_SOCKETS_PER_USER sockets open at once, and an address
MAX_SOCKETS_PER_ADDRESS, on every process."""

from __future__ import annotations

import asyncio
import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import websockets
from channels.db import database_sync_to_async

from config import serve
from lobby.models import LobbyConnection
from realtime import presence
from realtime.ws import CLOSE_TOO_MANY_SOCKETS
from tests.games_helpers import new_game, session_for
from tests.servers import Server, free_port, running, shared_test_env
from tests.wsutil import connected, receive

pytestmark = pytest.mark.django_db(transaction=True)
db = database_sync_to_async


async def opened(
    path: str, key: str | None, address: str | None = None
) -> tuple[Any, dict[str, Any]]:
    client = await connected(path, key, address)
    return client, await receive(client)


async def test_a_user_over_the_limit_is_told_why_and_closed_and_may_open_one_after_closing(
    settings: Any,
) -> None:
    settings.MAX_SOCKETS_PER_USER = 3
    game = await db(new_game)()
    key = await db(session_for)(game.player1)
    lobby, hello = await opened("/ws/lobby/", key)
    assert hello["type"] == "lobby"
    first, _ = await opened(f"/ws/games/{game.pk}/", key)
    second, _ = await opened(f"/ws/games/{game.pk}/", key)

    for path in ("/ws/lobby/", f"/ws/games/{game.pk}/"):
        extra, refusal = await opened(path, key)
        assert (refusal["type"], refusal["code"]) == ("error", "too_many_sockets")
        assert "3 connections" in refusal["message"]
        closed = await extra.receive_output(timeout=5)
        assert (closed["type"], closed["code"]) == ("websocket.close", CLOSE_TOO_MANY_SOCKETS)

    # Others are not counted against her: visitors, and other users.
    visitors = [await opened(f"/ws/games/{game.pk}/", None) for _ in range(4)]
    assert all(snapshot["type"] == "state" for _, snapshot in visitors)
    bob_key = await db(session_for)(game.player2)
    bob, snapshot = await opened(f"/ws/games/{game.pk}/", bob_key)
    assert snapshot["type"] == "state"

    await second.disconnect()
    again, snapshot = await opened(f"/ws/games/{game.pk}/", key)
    assert snapshot["type"] == "state"
    for client in (lobby, first, again, bob, *(client for client, _ in visitors)):
        await client.disconnect()


async def test_an_address_over_its_limit_is_told_why_and_closed_whoever_connects(
    settings: Any,
) -> None:
    settings.MAX_SOCKETS_PER_ADDRESS = 3
    game = await db(new_game)()
    key = await db(session_for)(game.player1)
    here, elsewhere = "203.0.113.7", "198.51.100.2"
    held = [
        await opened(f"/ws/games/{game.pk}/", None, here),
        await opened("/ws/lobby/", None, here),
        await opened(f"/ws/games/{game.pk}/", key, here),
    ]
    assert [hello["type"] for _, hello in held] == ["state", "lobby", "state"]

    # A visitor and a signed-in player from the same address are both over it now.
    for path, session in ((f"/ws/games/{game.pk}/", None), ("/ws/lobby/", key)):
        extra, refusal = await opened(path, session, here)
        assert (refusal["type"], refusal["code"]) == ("error", "too_many_sockets")
        assert "network address has 3 connections" in refusal["message"]
        closed = await extra.receive_output(timeout=5)
        assert (closed["type"], closed["code"]) == ("websocket.close", CLOSE_TOO_MANY_SOCKETS)

    # Another address is not counted against it; a closed socket frees a place.
    other, snapshot = await opened(f"/ws/games/{game.pk}/", None, elsewhere)
    assert snapshot["type"] == "state"
    await held[0][0].disconnect()
    again, snapshot = await opened(f"/ws/games/{game.pk}/", None, here)
    assert snapshot["type"] == "state"
    for client in (other, again, *(client for client, _ in held[1:])):
        await client.disconnect()


async def test_no_address_limit_when_it_is_zero(settings: Any) -> None:
    settings.MAX_SOCKETS_PER_ADDRESS = 0
    game = await db(new_game)()
    clients = [await opened(f"/ws/games/{game.pk}/", None, "203.0.113.9") for _ in range(4)]
    assert all(snapshot["type"] == "state" for _, snapshot in clients)
    for client, _ in clients:
        await client.disconnect()


def behind_a_proxy(count: int, env: dict[str, str | None], logs: Path, scenario: Any) -> str:
    """Run `scenario(servers)` against `count` Daphne processes started as behind the Docker
    shape's nginx (--proxy-headers: the forwarded address is the client's); their logs."""
    with ExitStack() as stack:
        servers = [
            stack.enter_context(
                running(
                    serve.command("127.0.0.1", port, "--proxy-headers"),
                    env,
                    logs / f"daphne-{port}.log",
                    port,
                )
            )
            for port in [free_port() for _ in range(count)]
        ]
        asyncio.run(scenario(servers))
        return "".join(server.output() for server in servers)


@pytest.mark.postgres(reason="two server processes share one database")
@pytest.mark.redis
def test_behind_a_proxy_the_forwarded_address_is_counted_on_every_process(
    tmp_path: Path,
) -> None:
    # The Docker shape: nginx passes X-Forwarded-For and Daphne runs with --proxy-headers,
    # so the proxy's own address (shared by everyone) is not what is counted.
    env = {**shared_test_env(f"address-{tmp_path.name}"), "MAX_SOCKETS_PER_ADDRESS": "3"}

    async def dial(server: Server, forwarded: str) -> tuple[Any, dict[str, Any]]:
        client = await websockets.connect(
            f"{server.ws}/ws/lobby/",
            origin=websockets.Origin(server.http),
            additional_headers={"X-Forwarded-For": forwarded},
        )
        return client, json.loads(await asyncio.wait_for(client.recv(), 10))

    async def scenario(servers: list[Server]) -> None:
        held = [await dial(servers[index % 2], "203.0.113.7") for index in range(3)]
        assert [hello["type"] for _, hello in held] == ["lobby"] * 3
        extra, refusal = await dial(servers[1], "203.0.113.7")
        assert refusal["code"] == "too_many_sockets"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(extra.recv(), 10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_TOO_MANY_SOCKETS
        neighbour, hello = await dial(servers[1], "198.51.100.2")
        assert hello["type"] == "lobby"
        for client in (neighbour, *(client for client, _ in held)):
            await client.close()

    logs = behind_a_proxy(2, env, tmp_path, scenario)
    assert "Traceback" not in logs, logs[-3000:]


@pytest.mark.postgres(reason="two server processes share one database")
@pytest.mark.redis
def test_a_burst_of_sockets_on_two_processes_is_held_to_the_caps_exactly(tmp_path: Path) -> None:
    """Counted then recorded, sockets opened together all saw room: 600 of one guest left
    298-434 open against a cap of 30. Each is now counted and recorded in one step."""
    env = {
        **shared_test_env(f"burst-{tmp_path.name}"),
        "MAX_SOCKETS_PER_USER": "30",
        "MAX_SOCKETS_PER_ADDRESS": "100",
    }
    game = new_game()
    cookie = f"sessionid={session_for(game.player1)}"

    async def dial(server: Server, headers: dict[str, str]) -> tuple[Any, str]:
        client = await websockets.connect(
            f"{server.ws}/ws/lobby/",
            origin=websockets.Origin(server.http),
            additional_headers=headers,
            open_timeout=30,
        )
        first = json.loads(await asyncio.wait_for(client.recv(), 30))
        return client, first.get("code") or first["type"]

    async def burst(servers: list[Server], count: int, headers: dict[str, str]) -> list[str]:
        opened = await asyncio.gather(*(dial(servers[n % 2], headers) for n in range(count)))
        answers = [answer for _, answer in opened]
        for client, _ in opened:
            await client.close()
        return answers

    async def scenario(servers: list[Server]) -> None:
        mine = await burst(servers, 120, {"Cookie": cookie, "X-Forwarded-For": "198.51.100.1"})
        assert mine.count("lobby") == 30, mine.count("lobby")
        assert mine.count("too_many_sockets") == 90
        await asyncio.sleep(1)  # the closed sockets' rows go
        visitors = await burst(servers, 150, {"X-Forwarded-For": "203.0.113.50"})
        assert visitors.count("lobby") == 100, visitors.count("lobby")

    logs = behind_a_proxy(2, env, tmp_path, scenario)
    assert "Traceback" not in logs, logs[-3000:]


def test_sockets_admitted_together_are_counted_in_order_against_every_cap() -> None:
    """One transaction for a batch (realtime/presence.py): each socket is counted with the
    ones before it in the batch and the ones already open."""
    game = new_game()
    alice, bob = game.player1.pk, game.player2.pk
    opened = presence.Admission(LobbyConnection, "open-1", bob, "x", 2, 3)
    assert presence.admit_many([opened]) == [None]

    def asking(n: int, user: int | None, address: str) -> presence.Admission:
        return presence.Admission(LobbyConnection, f"new-{n}", user, address, 2, 3)

    try:
        said = presence.admit_many(
            [
                asking(1, alice, "x"),
                asking(2, alice, "x"),
                asking(3, alice, "y"),  # Alice's third: over her cap of 2
                asking(4, bob, "x"),  # Bob's second, the address's fourth with his first
                asking(5, None, "y"),  # a visitor on another address: room
            ]
        )
        assert said == [None, None, "user", "address", None]
        recorded = set(LobbyConnection.objects.values_list("channel_name", flat=True))
        assert recorded == {"open-1", "new-1", "new-2", "new-5"}
    finally:
        # This process holds them now (its heartbeat would put their rows back in a later
        # test, whose database has no such users): closed, as sockets would be.
        presence.leave_many(LobbyConnection, ["open-1", *(f"new-{n}" for n in range(1, 6))])
        assert not {"open-1", "new-1", "new-2", "new-5"} & set(
            presence._tables[LobbyConnection].held
        )
