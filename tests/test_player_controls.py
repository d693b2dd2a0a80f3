"""Players' own controls: who may challenge me, chat with me, follow me (everyone, people I
follow, nobody), on top of blocks; "people I follow" comes from follows through
accounts.circles."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from accounts import circles, services
from accounts.models import User
from follows import services as follows
from games import selectors
from games import services as games
from games.models import Game
from lobby.services import challenges
from realtime.errors import ServiceError
from tests.games_helpers import make_user, new_game

pytestmark = pytest.mark.django_db

CASES = [  # the setting, whether the asker is followed by its owner, allowed
    ("everyone", False, True),
    ("followed", True, True),
    ("followed", False, False),
    ("nobody", True, False),
]


@pytest.fixture
def people() -> dict[str, User]:
    new_game()
    return {name: User.objects.get(username=name) for name in ("alice", "bob")} | {
        "carol": make_user("carol")
    }


def set_controls(user: User, **changes: str) -> None:
    settings = {"may_challenge": "everyone", "may_chat": "everyone", "may_follow": "everyone"}
    services.do_set_controls(user=user, **(settings | changes))


def outcome(call: Any) -> str:
    try:
        call()
    except ServiceError as error:
        return error.code
    return "ok"


@pytest.mark.parametrize(("setting", "followed", "allowed"), CASES)
def test_who_may_challenge_me(
    people: dict[str, User], setting: str, followed: bool, allowed: bool
) -> None:
    alice, carol = people["alice"], people["carol"]
    set_controls(alice, may_challenge=setting)
    if followed:
        follows.follow_player(user=alice, username="carol")
    got = outcome(
        lambda: challenges.create_challenge(challenger=carol, challenged="alice", slug="zigzag")
    )
    assert got == ("ok" if allowed else "not_accepting_challenges")


@pytest.mark.parametrize(("setting", "followed", "allowed"), CASES)
def test_who_may_follow_me(
    people: dict[str, User], setting: str, followed: bool, allowed: bool
) -> None:
    alice, carol = people["alice"], people["carol"]
    set_controls(alice, may_follow=setting)
    if followed:
        follows.follow_player(user=alice, username="carol")
    got = outcome(lambda: follows.follow_player(user=carol, username="alice"))
    assert got == ("ok" if allowed else "not_accepting_followers")
    # Following a game stays open to all: it follows the game, not the player.
    assert outcome(lambda: follows.follow_game(user=carol, game_id=Game.objects.get().pk)) == "ok"


@pytest.mark.parametrize(("setting", "followed", "allowed"), CASES)
def test_whose_lines_i_see_in_the_players_room(
    people: dict[str, User], setting: str, followed: bool, allowed: bool
) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    game = Game.objects.get()
    set_controls(alice, may_chat=setting)
    if followed:
        follows.follow_player(user=alice, username="bob")
    games.post_chat(game_id=game.pk, user=bob, room="players", text="hello")
    games.post_chat(game_id=game.pk, user=alice, room="players", text="hi")
    games.post_chat(game_id=game.pk, user=carol, room="spectators", text="watching")
    seen = [line["text"] for line in selectors.chat_lines(game, alice, 1)]
    assert seen == (["hello", "hi"] if allowed else ["hi"])
    hidden = selectors.chat_hidden_from(game, bob.pk, "players")
    assert (alice.pk not in hidden) == allowed
    # Bob still sees his own line and alice's, and the spectators' room is not affected.
    assert [line["text"] for line in selectors.chat_lines(game, bob, 2)] == ["hello", "hi"]
    assert selectors.chat_hidden_from(game, carol.pk, "spectators") == []


@pytest.fixture
def no_follows_reader() -> Iterator[None]:
    saved = list(circles._reader)
    circles._reader.clear()
    yield
    circles._reader[:] = saved


@pytest.mark.sqlite(reason="pure: no database is read")
def test_without_the_follows_app_people_i_follow_lets_nobody_through(
    no_follows_reader: None,
) -> None:
    assert not circles.admits("followed", owner_id=1, other_id=2)
    assert circles.admits("followed", owner_id=1, other_id=1)
    assert circles.admits("everyone", owner_id=1, other_id=2)


def test_the_privacy_page_shows_and_saves_the_settings(people: dict[str, User]) -> None:
    browser = Client()
    browser.force_login(people["alice"])
    page = browser.get("/settings/privacy/")
    assert page.status_code == 200 and b"Who may challenge me" in page.content
    saved = browser.post(
        "/settings/privacy/",
        {"may_challenge": "followed", "may_chat": "nobody", "may_follow": "everyone"},
    )
    assert saved.status_code == 302
    alice = User.objects.get(username="alice")
    assert (alice.may_challenge, alice.may_chat, alice.may_follow) == (
        "followed",
        "nobody",
        "everyone",
    )
    bad = browser.post("/settings/privacy/", {"may_challenge": "friends", "may_chat": "x"})
    assert bad.status_code == 200
    assert User.objects.get(username="alice").may_challenge == "followed"
