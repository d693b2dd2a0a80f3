"""The TV socket (/ws/tv/): the game shown, as a spectator sees it, and the switch pushed on
the same socket when it ends; one feed per process for every TV socket (lobby/tv_feed.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.core.cache import cache
from django.test import Client

from accounts.models import User
from games import services
from games.models import Game
from lobby import tv_feed
from ratings.glicko import INITIAL_DEVIATION, INITIAL_VOLATILITY
from ratings.models import Rating
from ratings.services import speed_of
from tests.games_helpers import make_user
from tests.wsutil import communicator, frames_until_close

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


def rated_game(first: str, second: str, rating: float, slug: str = "diffusion") -> Game:
    """A live real-time game between two new players rated `rating` in it."""
    one, two = make_user(first), make_user(second)
    game = services.create_game(slug=slug, options={}, player1=one, player2=two, time_control="5+3")
    for player in (one, two):
        Rating.objects.create(
            user=player,
            slug=slug,
            speed=speed_of(game),
            rating=rating,
            deviation=INITIAL_DEVIATION,
            volatility=INITIAL_VOLATILITY,
        )
    return game


async def tv_socket(path: str = "/ws/tv/") -> Any:
    client = communicator(path)
    accepted, _ = await client.connect()
    assert accepted
    return client


async def next_frame(client: Any, *, within: float = 5) -> dict[str, Any]:
    """The next frame that is not a crowd count."""
    while True:
        frame: dict[str, Any] = await client.receive_json_from(timeout=within)
        if frame["type"] != "crowd":
            return frame


@pytest.fixture(autouse=True)
def _no_shared_answer() -> None:
    # TV's answer is shared through the cache for a second: another test's game is not ours.
    cache.delete_many(["tv:featured:", "tv:featured:diffusion", "tv:featured:zigzag"])


async def test_tv_shows_the_best_game_then_pushes_the_next_when_it_ends() -> None:
    best = await db(rated_game)("ann", "ben", 2100)
    other = await db(rated_game)("cat", "dan", 1900)
    tv = await tv_socket()
    shown = await next_frame(tv)
    assert shown["type"] == "tv"
    assert shown["game"]["id"] == best.pk
    assert shown["game"]["rating"] == 2100
    assert shown["game"]["players"] == {"1": "ann", "2": "ben"}
    state = await next_frame(tv)
    assert (state["type"], state["v"], state["you"]) == ("state", 0, None)
    assert state["game"]["id"] == best.pk and state["game"]["status"] == "active"

    # A move in the game shown reaches the TV socket as the spectators' `move`.
    ann = await db(User.objects.get)(username="ann")
    await db(services.play_move)(game_id=best.pk, user=ann, move="I", ply=0)
    move = await next_frame(tv)
    assert (move["type"], move["v"], move["move"], move["ply"]) == ("move", 1, "I", 1)
    assert move["state"]["rows"] == [[4, 5, 5, 5, 4, 4], [4, 4, 0, 5, 4, 4]]

    # It ends: its `end`, then at once the next game's `tv` and snapshot, on the same socket.
    ben = await db(User.objects.get)(username="ben")
    await db(services.resign)(game_id=best.pk, user=ben)
    end = await next_frame(tv)
    assert (end["type"], end["v"], end["result"]["winner"]) == ("end", 2, 1)
    following = await next_frame(tv)
    assert following["type"] == "tv" and following["game"]["id"] == other.pk
    state = await next_frame(tv)
    assert state["type"] == "state" and state["game"]["id"] == other.pk
    assert state["v"] == 0 and state["game"]["players"]["1"]["username"] == "cat"
    # The shared answer of GET /api/tv went with the game that ended.
    answer = await db(lambda: Client().get("/api/tv").json())()
    assert answer["game"]["id"] == other.pk
    await tv.disconnect()


async def test_tv_sockets_of_a_process_share_one_feed_and_a_late_one_starts_now() -> None:
    game = await db(rated_game)("ann", "ben", 1800)
    first = await tv_socket()
    assert (await next_frame(first))["game"]["id"] == game.pk
    assert (await next_frame(first))["v"] == 0
    ann = await db(User.objects.get)(username="ann")
    await db(services.play_move)(game_id=game.pk, user=ann, move="I", ply=0)
    assert (await next_frame(first))["v"] == 1

    late = await tv_socket()
    assert (await next_frame(late))["game"]["id"] == game.pk
    snapshot = await next_frame(late)
    assert (snapshot["type"], snapshot["v"], snapshot["game"]["ply"]) == ("state", 1, 1)
    feeds = tv_feed._feeds[asyncio.get_running_loop()]
    assert list(feeds) == [""]  # one feed, "all games"
    assert len(feeds[""].watchers) == 2

    ben = await db(User.objects.get)(username="ben")
    await db(services.play_move)(game_id=game.pk, user=ben, move="A", ply=1)
    for client in (first, late):
        move = await next_frame(client)
        assert (move["type"], move["v"], move["player"]) == ("move", 2, 2)
    await first.disconnect()
    await late.disconnect()
    # The last watcher gone, the process follows nothing.
    assert "" not in tv_feed._feeds.get(asyncio.get_running_loop(), {})


async def test_with_no_game_tv_says_so_and_shows_the_first_that_starts(settings: Any) -> None:
    settings.TV_NO_GAME_SECONDS = 0.1
    tv = await tv_socket()
    assert await next_frame(tv) == {"type": "tv", "game": None}
    game = await db(rated_game)("ann", "ben", 1500)
    shown = await next_frame(tv)
    assert shown["type"] == "tv" and shown["game"]["id"] == game.pk
    assert (await next_frame(tv))["type"] == "state"
    await tv.disconnect()


async def test_a_channel_shows_only_its_own_game() -> None:
    await db(rated_game)("ann", "ben", 2400)
    zigzag = await db(rated_game)("cat", "dan", 1400, "zigzag")
    tv = await tv_socket("/ws/tv/zigzag/")
    shown = await next_frame(tv)
    assert shown["game"]["id"] == zigzag.pk and shown["game"]["slug"] == "zigzag"
    state = await next_frame(tv)
    assert state["game"]["slug"] == "zigzag"
    await tv.disconnect()


async def test_an_unknown_channel_is_refused_and_closed() -> None:
    tv = await tv_socket("/ws/tv/chess/")
    frames, code = await frames_until_close(tv)
    assert code == 4404
    assert [(frame["type"], frame["code"]) for frame in frames] == [("error", "no_such_game")]


async def test_tv_answers_ping_and_refuses_anything_else() -> None:
    tv = await tv_socket()
    assert (await next_frame(tv))["type"] == "tv"
    await tv.send_json_to({"type": "ping", "id": 3})
    assert await next_frame(tv) == {"type": "pong", "id": 3}
    await tv.send_json_to({"type": "move", "move": "I", "ply": 0})
    refusal = await next_frame(tv)
    assert (refusal["type"], refusal["code"]) == ("error", "unknown_type")
    await tv.disconnect()
