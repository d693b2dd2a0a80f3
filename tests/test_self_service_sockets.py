"""Sockets follow the account's changes: a password changed on the settings page closes the
sockets of every other session (4401) and keeps this one's; a closed account loses them all."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from privacy.closure import close_account
from realtime.ws import CLOSE_SIGNED_OUT
from tests.games_helpers import make_user
from tests.test_sign_out import closed_with, opened, signed_in

pytestmark = pytest.mark.django_db(transaction=True)
db = database_sync_to_async


async def test_a_password_changed_on_the_page_keeps_this_sessions_sockets_only() -> None:
    alice = await db(make_user)("alice")
    here, there = await db(signed_in)(alice), await db(signed_in)(alice)
    mine, other = await opened("/ws/lobby/", here), await opened("/ws/lobby/", there)
    new = "rodeffer-zigzag-7"
    answer = await db(here.post)(
        "/settings/password/",
        {"old_password": "x-long-password-1", "new_password1": new, "new_password2": new},
    )
    assert answer.status_code == 302
    assert await closed_with(other) == CLOSE_SIGNED_OUT
    assert await closed_with(mine) is None
    await mine.disconnect()


async def test_closing_an_account_closes_every_socket_of_it() -> None:
    bob = await db(make_user)("bob")
    sockets = [await opened("/ws/lobby/", await db(signed_in)(bob)) for _ in range(2)]
    await db(close_account)(user=bob, reason="test")
    assert [await closed_with(socket) for socket in sockets] == [CLOSE_SIGNED_OUT] * 2
