"""Players, games and sockets for the live-play tests."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from accounts.models import User
from games import services
from games.models import Game
from tests.wsutil import communicator


def make_user(name: str) -> User:
    return User.objects.create_user(username=name, password="x-long-password-1")


def session_for(user: User) -> str:
    browser = Client()
    browser.force_login(user)
    return browser.cookies["sessionid"].value


def new_game(slug: str = "diffusion", options: dict[str, Any] | None = None) -> Game:
    alice = User.objects.filter(username="alice").first() or make_user("alice")
    bob = User.objects.filter(username="bob").first() or make_user("bob")
    return services.create_game(slug=slug, options=options or {}, player1=alice, player2=bob)


def overdue_game(seconds_late: float = 1.0) -> Game:
    """A real-time game whose first mover's 30 seconds ran out `seconds_late` ago."""
    game = new_game()
    started = services.now_ms() - 30_000 - int(seconds_late * 1000)
    game.time_control = "1+0"
    game.clock = {
        "control": "1+0",
        "remaining": [60_000, 60_000],
        "running": 1,
        "since": started,
        "moved": [False, False],
        "lag": [5_000, 5_000],
    }
    services._set_deadline(game)
    game.save()
    return game


async def open_socket(
    game_id: int, user: User | None = None, *, query: str = ""
) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    """A connected game socket and the first message it received."""
    key = await database_sync_to_async(session_for)(user) if user else None
    client = communicator(f"/ws/games/{game_id}/{query}", session_key=key)
    connected, _ = await client.connect()
    assert connected
    return client, await client.receive_json_from(timeout=5)


async def next_of_type(client: WebsocketCommunicator, kind: str) -> dict[str, Any]:
    """The next message of a type, skipping presence messages that may come in between."""
    while True:
        message = await client.receive_json_from(timeout=5)
        if message["type"] == kind:
            return message
        assert message["type"] == "crowd", f"expected {kind}, got {message}"


async def drain_crowd(client: WebsocketCommunicator) -> None:
    while not await client.receive_nothing(timeout=0.05):
        message = await client.receive_json_from()
        assert message["type"] == "crowd", message


async def settle_crowd(client: WebsocketCommunicator, *, spectators: int) -> None:
    """Read crowd frames until one shows both players here and `spectators` watching, then
    any that trail it: a crowd frame is computed in a database thread, so on a busy machine
    it can come well after the sockets opened."""
    while True:
        message = await client.receive_json_from(timeout=5)
        assert message["type"] == "crowd", message
        if message["spectators"] == spectators and all(message["players"].values()):
            break
    await drain_crowd(client)


def game_row(game_id: int) -> tuple[int, int, str]:
    game = Game.objects.get(pk=game_id)
    return game.ply, game.version, game.status
