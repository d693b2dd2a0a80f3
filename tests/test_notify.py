"""The notification socket /ws/notify/: a signed-in user's personal lobby news on every page
but the lobby; nothing for visitors; the per-user socket cap holds for it too."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async

from lobby.services import challenges
from realtime.ws import CLOSE_TOO_MANY_SOCKETS
from tests.games_helpers import make_user, session_for
from tests.wsutil import connected, frames_until_close

pytestmark = pytest.mark.django_db(transaction=True)
db = database_sync_to_async


async def test_a_challenge_and_its_answer_reach_the_users_other_pages() -> None:
    alice = await db(make_user)("alice")
    bob = await db(make_user)("bob")
    bobs_page = await connected("/ws/notify/", await db(session_for)(bob))
    alices_page = await connected("/ws/notify/", await db(session_for)(alice))

    challenge = await db(challenges.create_challenge)(
        challenger=alice, challenged="bob", slug="diffusion"
    )
    news = await bobs_page.receive_json_from(timeout=5)
    assert news["type"] == "challenge"
    assert (news["challenge"]["id"], news["challenge"]["challenger"]) == (challenge.pk, "alice")
    assert (await alices_page.receive_json_from(timeout=5))["type"] == "challenge"

    game = await db(challenges.accept_challenge)(challenge_id=challenge.pk, user=bob)
    started = [await alices_page.receive_json_from(timeout=5) for _ in range(2)]
    kinds = {frame["type"] for frame in started}
    assert kinds == {"challenge_updated", "game_started"}
    assert next(f for f in started if f["type"] == "game_started")["game_id"] == game.pk
    for page in (alices_page, bobs_page):
        await page.disconnect()


async def test_it_answers_pings_and_refuses_anything_else() -> None:
    user = await db(make_user)("carol")
    page = await connected("/ws/notify/", await db(session_for)(user))
    await page.send_json_to({"type": "ping", "id": 3})
    assert await page.receive_json_from(timeout=5) == {"type": "pong", "id": 3}
    await page.send_json_to({"type": "seek", "games": []})
    refusal = await page.receive_json_from(timeout=5)
    assert (refusal["type"], refusal["code"]) == ("error", "unknown_type")
    await page.disconnect()


async def test_a_visitor_hears_nothing_but_may_ping() -> None:
    alice = await db(make_user)("alice")
    await db(make_user)("bob")
    visitor = await connected("/ws/notify/")
    await db(challenges.create_challenge)(challenger=alice, challenged="bob", slug="diffusion")
    assert await visitor.receive_nothing(timeout=0.3)
    await visitor.send_json_to({"type": "ping", "id": "v"})
    assert await visitor.receive_json_from(timeout=5) == {"type": "pong", "id": "v"}
    await visitor.disconnect()


async def test_one_socket_over_the_users_limit_is_refused(settings: Any) -> None:
    settings.MAX_SOCKETS_PER_USER = 2
    user = await db(make_user)("dave")
    key = await db(session_for)(user)
    pages = [await connected("/ws/notify/", key) for _ in range(2)]
    extra = await connected("/ws/notify/", key)
    frames, code = await frames_until_close(extra)
    assert [f["code"] for f in frames] == ["too_many_sockets"]
    assert code == CLOSE_TOO_MANY_SOCKETS
    await pages[0].disconnect()
    again = await connected("/ws/notify/", key)
    await again.send_json_to({"type": "ping", "id": 1})
    assert (await again.receive_json_from(timeout=5))["type"] == "pong"
    for page in (pages[1], again):
        await page.disconnect()
