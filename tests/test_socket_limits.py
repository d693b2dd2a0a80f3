"""A signed-in user may hold MAX_SOCKETS_PER_USER sockets open at once, on every process."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async

from config.ws import CLOSE_TOO_MANY_SOCKETS
from tests.games_helpers import new_game, session_for
from tests.wsutil import connected, receive

pytestmark = pytest.mark.django_db(transaction=True)
db = database_sync_to_async


async def opened(path: str, key: str | None) -> tuple[Any, dict[str, Any]]:
    client = await connected(path, key)
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
