"""Following games and players: the follow itself, the news on the sockets, the e-mails."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.core import mail
from django.test import Client
from django.utils import timezone, translation

from accounts.models import User
from follows import services
from follows.models import Follow, FollowMail
from games import lifecycle
from games import services as game_services
from games.selectors import title_for
from realtime.errors import ServiceError
from tests.games_helpers import make_user, session_for
from tests.wsutil import connected

# News is sent once the game's transaction commits (games.lifecycle), as in production.
pytestmark = pytest.mark.django_db(transaction=True)
db = database_sync_to_async


@pytest.fixture
def people() -> dict[str, User]:
    return {name: make_user(name) for name in ("alice", "bob", "carol")}


def start(p1: User, p2: User, control: str = "") -> int:
    return game_services.create_game(
        slug="diffusion", options={}, player1=p1, player2=p2, time_control=control
    ).pk


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (
            lambda p: services.follow_player(user=p["carol"], username="carol"),
            "cannot_follow_yourself",
        ),
        (lambda p: services.follow_player(user=p["carol"], username="nobody"), "unknown_user"),
        (lambda p: services.follow_player(user=p["carol"], username=7), "bad_message"),
        (lambda p: services.follow_game(user=p["carol"], game_id=999_999), "no_such_game"),
        (lambda p: services.follow_game(user=p["carol"], game_id="12"), "bad_message"),
        (lambda p: services.follow_game(user=None, game_id=1), "not_logged_in"),
    ],
)
def test_a_bad_follow_is_refused_and_changes_nothing(
    people: dict[str, User], call: object, code: str
) -> None:
    with pytest.raises(ServiceError) as caught:
        call(people)  # type: ignore[operator]
    assert caught.value.code == code and caught.value.message
    assert Follow.objects.count() == 0


def test_following_twice_is_one_follow_and_the_limit_holds(
    people: dict[str, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    carol = people["carol"]
    services.follow_player(user=carol, username="ALICE")
    services.follow_player(user=carol, username="alice")
    assert services.following(carol) == {"games": [], "players": ["alice"]}
    monkeypatch.setattr(services, "MAX_FOLLOWS", 1)
    with pytest.raises(ServiceError) as caught:
        services.follow_player(user=carol, username="bob")
    assert caught.value.code == "too_many_follows"
    services.unfollow(user=carol, username="alice")
    assert services.following(carol) == {"games": [], "players": []}


def test_the_lobby_page_knows_whom_you_follow_to_show_their_live_games_first(
    people: dict[str, User],
) -> None:
    carol = people["carol"]
    services.follow_player(user=carol, username="alice")
    client = Client()
    client.force_login(carol)
    page = client.get("/").content.decode()
    data = page.split('<script id="following-data" type="application/json">')[1].split("<")[0]
    assert json.loads(data) == ["alice"]
    anyone = Client().get("/").content.decode()
    assert '<script id="following-data" type="application/json">[]</script>' in anyone


async def test_the_news_of_a_bot_accounts_game_names_its_seat_for_the_bot_mark() -> None:
    alice, robo, carol = [await db(make_user)(name) for name in ("alice", "robo", "carol")]
    await db(User.objects.filter(pk=robo.pk).update)(bot_since=timezone.now())
    robo = await db(User.objects.get)(pk=robo.pk)
    page = await connected("/ws/notify/", await db(session_for)(carol))
    await db(services.follow_player)(user=carol, username="robo")
    game_id = await db(start)(alice, robo)
    news = await page.receive_json_from(timeout=5)
    assert (news["news"], news["player"]) == ("game_started", "robo")
    assert news["game"] == {
        "id": game_id,
        "name": "Diffusion",
        "players": {"1": "alice", "2": "robo"},
        "bot_accounts": ["2"],
    }
    await page.disconnect()


async def test_followers_hear_of_a_new_game_and_of_its_end_on_every_page() -> None:
    alice, bob, carol = [await db(make_user)(name) for name in ("alice", "bob", "carol")]
    page = await connected("/ws/notify/", await db(session_for)(carol))
    await db(services.follow_player)(user=carol, username="alice")
    game_id = await db(start)(alice, bob)
    news = await page.receive_json_from(timeout=5)
    assert news == {
        "type": "followed",
        "news": "game_started",
        "player": "alice",
        "game": {
            "id": game_id,
            "name": "Diffusion",
            "players": {"1": "alice", "2": "bob"},
            "bot_accounts": [],
        },
        "result": None,
    }
    await db(services.follow_game)(user=carol, game_id=game_id)
    await db(game_services.resign)(game_id=game_id, user=bob)
    ended = await page.receive_json_from(timeout=5)
    assert (ended["news"], ended["player"]) == ("game_ended", None)
    assert ended["result"] == {
        "winner": 1,
        "termination": "resignation",
        "reason": "bob resigned",
    }
    # The players themselves are not told of their own game by following each other.
    await db(services.follow_player)(user=bob, username="alice")
    bobs_page = await connected("/ws/notify/", await db(session_for)(bob))
    await db(start)(alice, bob)
    frames = []
    while not await bobs_page.receive_nothing(timeout=0.3):
        frames.append(await bobs_page.receive_json_from())
    assert [frame for frame in frames if frame["type"] == "followed"] == []
    for client in (page, bobs_page):
        await client.disconnect()


async def test_a_followers_news_names_the_game_in_the_followers_language() -> None:
    # A game's name with its options is in the reader's language now: the news a follower
    # hears is in theirs, not in that of the player whose move made it.
    alice, bob, carol = [await db(make_user)(name) for name in ("alice", "bob", "carol")]
    carol.language = "fr"
    await db(carol.save)()
    page = await connected("/ws/notify/", await db(session_for)(carol))
    await db(services.follow_player)(user=carol, username="alice")
    options = {"pits": 6, "seeds": 5}

    def start_in_german() -> int:
        with translation.override("de"):
            return game_services.create_game(
                slug="zigzag", options=options, player1=alice, player2=bob
            ).pk

    await db(start_in_german)()
    news = await page.receive_json_from(timeout=5)
    with translation.override("fr"):
        french = title_for("zigzag", options)
    assert french != "ZigZag (pits 6, seeds 5)"
    assert news["game"]["name"] == french
    await page.disconnect()


def test_correspondence_news_is_e_mailed_to_those_who_asked(people: dict[str, User]) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    carol.email, carol.email_on_follow = "carol@example.com", True
    carol.save()
    bob.email = "bob@example.com"  # no opt-in: no mail
    bob.save()
    for follower in (carol, bob):
        services.follow_player(user=follower, username="alice")
    start(alice, make_user("dave"), "3d")
    start(alice, make_user("erin"), "5+3")  # real time: the sockets only
    assert FollowMail.objects.count() == 1
    lifecycle.sweep()  # the sweeper's pass sends it
    assert [message.to for message in mail.outbox] == [["carol@example.com"]]
    assert "alice started Diffusion" in mail.outbox[0].subject
    assert FollowMail.objects.count() == 0


def test_follows_over_http_and_the_buttons(people: dict[str, User]) -> None:
    carol = people["carol"]
    game_id = start(people["alice"], people["bob"])
    browser = Client()
    assert browser.get("/api/follows").json()["error"]["code"] == "not_logged_in"
    browser.force_login(carol)
    answer = browser.post("/api/follows", json.dumps({"game": game_id}), "application/json")
    assert answer.json() == {"games": [game_id], "players": []}
    answer = browser.post("/api/follows", json.dumps({"user": "bob"}), "application/json")
    assert answer.json()["players"] == ["bob"]
    refused = browser.post("/api/follows", json.dumps({"user": "carol"}), "application/json")
    assert refused.json()["error"]["code"] == "cannot_follow_yourself"
    browser.post("/api/follows/unfollow", json.dumps({"user": "bob"}), "application/json")
    page = browser.get(f"/games/{game_id}/")
    assert b'id="follow-button" data-following="true"' in page.content
    profile = browser.post("/settings/follow/", {"user": "alice", "next": "/@alice/"}, follow=True)
    assert b'data-following="true">Unfollow' in profile.content
    assert services.following(carol) == {"games": [game_id], "players": ["alice"]}
