"""The computer from the lobby: `play_computer` on the socket and over HTTP, and a seek that
asked for it handed to the computer when nobody paired within the wait."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from accounts.models import User
from games.models import Game
from lobby.models import Seek
from lobby.services import computer, seeks
from tests.games_helpers import make_user
from tests.test_lobby import lobby_socket, until

pytestmark = pytest.mark.django_db(transaction=True)
db = database_sync_to_async


async def test_a_player_starts_a_game_against_the_computer_from_the_lobby_socket() -> None:
    alice = await db(make_user)("alice")
    client, _ = await lobby_socket(alice)
    await client.send_json_to(
        {
            "type": "play_computer",
            "slug": "zigzag",
            "options": {"pits": 4},
            "level": 3,
            "side": "first",
            "time_control": "5+3",
            "id": 7,
        }
    )
    ok = await until(client, "ok")
    started = await until(client, "game_started")
    assert ok["id"] == 7 and started["game_id"] == ok["game_id"] and started["you"] == 1
    game = await db(Game.objects.select_related("player2").get)(pk=ok["game_id"])
    assert game.player2.username == "Computer-3" and game.player2.is_bot
    assert (game.slug, game.options, game.rated) == ("zigzag", {"pits": 4, "seeds": 5}, False)
    await client.disconnect()


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"level": 9}, "bad_level"),
        ({"level": "hard"}, "bad_message"),
        ({"side": "north"}, "bad_message"),
        ({"slug": "go"}, "invalid_options"),
        ({"time_control": "forever"}, "invalid_time_control"),
    ],
)
async def test_a_bad_request_for_the_computer_gets_a_clear_error_and_starts_nothing(
    fields: dict[str, Any], code: str
) -> None:
    alice = await db(make_user)("alice")
    client, _ = await lobby_socket(alice)
    await client.send_json_to({"type": "play_computer", "slug": "diffusion", "level": 2} | fields)
    error = await until(client, "error")
    assert error["code"] == code and error["message"]
    assert not await db(Game.objects.exists)()
    await client.disconnect()


async def test_a_visitor_cannot_play_the_computer() -> None:
    client, _ = await lobby_socket(None)
    await client.send_json_to({"type": "play_computer", "slug": "diffusion", "level": 1})
    assert (await until(client, "error"))["code"] == "not_logged_in"
    await client.disconnect()


def test_a_game_against_the_computer_starts_over_http() -> None:
    browser = Client()
    browser.post("/guest/")
    answer = browser.post(
        "/api/computer",
        json.dumps({"slug": "four-rank-diffusion", "level": 1, "side": "second"}),
        content_type="application/json",
    )
    assert answer.status_code == 200, answer.content
    game = Game.objects.get(pk=answer.json()["game_id"])
    assert answer.json()["you"] == 2 and game.player1.is_bot
    refused = browser.post(
        "/api/computer",
        json.dumps({"slug": "diffusion", "level": 0}),
        content_type="application/json",
    )
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "bad_level"


async def test_a_seek_nobody_pairs_is_handed_to_the_computer_after_the_wait(settings: Any) -> None:
    settings.COMPUTER_FALLBACK_SECONDS = 0.3
    alice = await db(make_user)("alice")
    client, _ = await lobby_socket(alice)
    await client.send_json_to(
        {
            "type": "seek",
            "games": [{"slug": "diffusion", "options": {}}],
            "computer": 1,
            "time_control": "3+2",
            "id": 1,
        }
    )
    ok = await until(client, "ok")
    started = await until(client, "game_started")  # from the socket's own timer
    seek = await db(Seek.objects.get)(pk=ok["seek_id"])
    assert seek.status == Seek.Status.PAIRED and seek.game_id == started["game_id"]
    game = await db(Game.objects.select_related("player1", "player2").get)(pk=seek.game_id)
    assert {game.player1.username, game.player2.username} == {"alice", "Computer-1"}
    assert game.time_control.code == "3+2"
    await client.disconnect()


def test_a_seek_paired_with_a_person_is_not_given_to_the_computer(settings: Any) -> None:
    settings.COMPUTER_FALLBACK_SECONDS = 0
    alice, bob = make_user("alice"), make_user("bob")
    seeks.create_seek(user=alice, games={"slug": "diffusion"}, computer=2)
    _, game = seeks.create_seek(user=bob, games={"slug": "diffusion"})
    assert game is not None
    assert computer.hand_to_computer() == 0
    assert Game.objects.count() == 1 and not User.objects.filter(is_bot=True).exists()


def test_the_worker_hands_over_seeks_left_without_a_socket(settings: Any) -> None:
    settings.COMPUTER_FALLBACK_SECONDS = 0
    alice = make_user("alice")
    waiting, _ = seeks.create_seek(
        user=alice, games={"slug": "zigzag"}, time_control="1d", computer=4
    )
    plain, _ = seeks.create_seek(user=alice, games={"slug": "diffusion"}, time_control="1d")
    assert computer.worker_tick() == 0  # the socket's grace is not over
    computer.WORKER_GRACE_SECONDS = 0
    try:
        assert computer.worker_tick() == 1
    finally:
        computer.WORKER_GRACE_SECONDS = 5
    waiting.refresh_from_db()
    plain.refresh_from_db()
    assert waiting.status == Seek.Status.PAIRED and plain.status == Seek.Status.OPEN
    assert waiting.game is not None and waiting.game.player1.is_bot != waiting.game.player2.is_bot


def test_a_seek_asks_for_a_level_the_computer_has() -> None:
    from realtime.errors import ServiceError

    alice = make_user("alice")
    with pytest.raises(ServiceError) as refused:
        seeks.create_seek(user=alice, games={"slug": "diffusion"}, computer=6)
    assert refused.value.code == "bad_level" and not Seek.objects.exists()
