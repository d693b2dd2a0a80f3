"""Sockets follow the session: logging out or changing password closes them (code 4401)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from accounts.models import User
from realtime.ws import CLOSE_SIGNED_OUT
from tests.games_helpers import make_user, new_game
from tests.wsutil import connected

pytestmark = pytest.mark.django_db(transaction=True)
db = database_sync_to_async


def signed_in(user: User) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


async def opened(path: str, browser: Client | None) -> Any:
    return await connected(path, browser.cookies["sessionid"].value if browser else None)


async def closed_with(client: Any) -> int | None:
    """The close code the server sent within a second (None if the socket stays open)."""
    deadline = asyncio.get_running_loop().time() + 1
    while True:
        left = deadline - asyncio.get_running_loop().time()
        # receive_nothing, unlike a receive that times out, leaves the application running.
        if left <= 0 or await client.receive_nothing(timeout=left):
            return None
        output = await client.receive_output()
        if output["type"] == "websocket.close":
            return int(output.get("code", 1000))


async def test_logging_out_closes_that_sessions_sockets_within_a_second_and_no_others() -> None:
    game = await db(new_game)()
    alice = game.player1
    laptop, phone = await db(signed_in)(alice), await db(signed_in)(alice)
    laptop_lobby = await opened("/ws/lobby/", laptop)
    laptop_game = await opened(f"/ws/games/{game.pk}/", laptop)
    phone_lobby = await opened("/ws/lobby/", phone)
    watcher = await opened(f"/ws/games/{game.pk}/", None)

    response = await db(laptop.post)("/logout/")
    assert response.status_code == 302

    assert await closed_with(laptop_lobby) == CLOSE_SIGNED_OUT
    assert await closed_with(laptop_game) == CLOSE_SIGNED_OUT
    assert await closed_with(phone_lobby) is None  # another session of the same user
    assert await closed_with(watcher) is None
    # The socket the logged-out browser opens next is a spectator's.
    again = await opened(f"/ws/games/{game.pk}/", laptop)
    state = await again.receive_json_from(timeout=5)
    assert state["type"] == "state" and state["you"] is None
    for client in (phone_lobby, watcher, again):
        await client.disconnect()


async def test_a_new_password_closes_every_socket_of_the_user() -> None:
    carol = await db(make_user)("carol")
    dave = await db(make_user)("dave")
    sockets = [
        await opened("/ws/lobby/", await db(signed_in)(carol)),
        await opened("/ws/lobby/", await db(signed_in)(carol)),
    ]
    other = await opened("/ws/lobby/", await db(signed_in)(dave))

    def change_password() -> None:
        user = User.objects.get(pk=carol.pk)
        user.set_password("a new and long password")
        user.save()

    await db(change_password)()

    assert [await closed_with(socket) for socket in sockets] == [CLOSE_SIGNED_OUT] * 2
    assert await closed_with(other) is None
    await other.disconnect()


async def test_saving_a_user_without_a_new_password_closes_nothing() -> None:
    erin = await db(make_user)("erin")
    socket = await opened("/ws/lobby/", await db(signed_in)(erin))

    def rename() -> None:
        user = User.objects.get(pk=erin.pk)
        user.email_on_move = False
        user.save()

    await db(rename)()
    assert await closed_with(socket) is None
    await socket.disconnect()
