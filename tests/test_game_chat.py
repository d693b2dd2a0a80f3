"""Game chat: the players' room, the spectators' room, limits, mutes and blocks."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import time_machine

from accounts.models import Block, User
from games import selectors, services
from games.models import ChatLine, Game
from realtime.errors import ServiceError
from realtime.protocol import encode
from tests.games_helpers import make_user, new_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast() -> dict[str, Any]:
    game = new_game()
    return {
        "game": game,
        "alice": User.objects.get(username="alice"),
        "bob": User.objects.get(username="bob"),
        "carol": make_user("carol"),
        "dave": make_user("dave"),
    }


def say(cast: dict[str, Any], who: str, room: str, text: str) -> dict[str, Any]:
    frame = services.post_chat(game_id=cast["game"].pk, user=cast[who], room=room, text=text)
    return dict(msgspec.json.decode(encode(frame)))


def seen_by(cast: dict[str, Any], who: str) -> list[tuple[str, str]]:
    game = Game.objects.get(pk=cast["game"].pk)
    user = cast[who]
    lines = selectors.chat_lines(game, user, game.player_number(user))
    return [(line["user"], line["text"]) for line in lines]


def test_each_room_is_seen_by_its_own_people(cast: dict[str, Any]) -> None:
    say(cast, "alice", "players", "good luck")
    say(cast, "bob", "players", "you too")
    say(cast, "carol", "spectators", "nice opening")
    assert seen_by(cast, "alice") == [("alice", "good luck"), ("bob", "you too")]
    assert seen_by(cast, "bob") == seen_by(cast, "alice")
    assert seen_by(cast, "dave") == [("carol", "nice opening")]


def test_a_line_is_stored_as_typed_and_tidied_of_extra_spaces(cast: dict[str, Any]) -> None:
    frame = say(cast, "alice", "players", "  <script>alert('x')</script>\n  hi  ")
    assert frame["type"] == "chat" and frame["room"] == "players"
    # Stored verbatim (escaping is the page's job, everywhere it is shown).
    assert frame["line"]["text"] == "<script>alert('x')</script> hi"
    assert frame["line"]["user"] == "alice"


@pytest.mark.parametrize(
    ("who", "room", "text", "code"),
    [
        ("alice", "players", "x" * 141, "chat_too_long"),
        ("alice", "players", "   ", "bad_message"),
        ("alice", "lounge", "hi", "bad_message"),
        ("carol", "players", "let me in", "not_a_player"),
        ("alice", "spectators", "psst", "not_a_spectator"),
        (None, "spectators", "anonymous", "not_logged_in"),
    ],
)
def test_a_refused_line_is_not_stored(
    cast: dict[str, Any], who: str | None, room: str, text: str, code: str
) -> None:
    with pytest.raises(ServiceError) as caught:
        services.post_chat(game_id=cast["game"].pk, user=cast.get(who or ""), room=room, text=text)
    assert caught.value.code == code and caught.value.message
    assert ChatLine.objects.count() == 0


def test_a_line_of_140_characters_is_accepted(cast: dict[str, Any]) -> None:
    say(cast, "alice", "players", "x" * 140)
    assert ChatLine.objects.get().text == "x" * 140


def test_chat_to_a_game_that_does_not_exist_is_refused(cast: dict[str, Any]) -> None:
    with pytest.raises(ServiceError) as caught:
        services.post_chat(game_id=999_999, user=cast["alice"], room="players", text="hi")
    assert caught.value.code == "no_such_game"


def test_a_fast_talker_is_slowed_down_and_may_talk_again_later(cast: dict[str, Any]) -> None:
    with time_machine.travel("2026-11-24 12:00:00", tick=False) as clock:
        for number in range(services.CHAT_BURST):
            say(cast, "alice", "players", f"line {number}")
        with pytest.raises(ServiceError) as caught:
            say(cast, "alice", "players", "one too many")
        assert caught.value.code == "chat_too_fast"
        # Bob is not slowed down by Alice.
        say(cast, "bob", "players", "calm down")
        clock.shift(services.CHAT_WINDOW + 1)
        say(cast, "alice", "players", "sorry")
    assert ChatLine.objects.filter(user=cast["alice"]).count() == services.CHAT_BURST + 1


def test_a_player_who_mutes_the_opponent_no_longer_sees_their_lines(cast: dict[str, Any]) -> None:
    say(cast, "alice", "players", "before")
    services.mute_chat(game_id=cast["game"].pk, user=cast["bob"], mute=True)
    say(cast, "alice", "players", "after")
    say(cast, "bob", "players", "mine")
    assert seen_by(cast, "bob") == [("bob", "mine")]
    assert seen_by(cast, "alice") == [("alice", "before"), ("alice", "after"), ("bob", "mine")]
    game = Game.objects.get(pk=cast["game"].pk)
    assert selectors.chat_hidden_from(game, cast["alice"].pk, "players") == [cast["bob"].pk]
    assert selectors.chat_view(game, cast["bob"], 2)["muted"] is True
    services.mute_chat(game_id=cast["game"].pk, user=cast["bob"], mute=False)
    assert ("alice", "after") in seen_by(cast, "bob")


def test_only_a_player_can_mute(cast: dict[str, Any]) -> None:
    with pytest.raises(ServiceError) as caught:
        services.mute_chat(game_id=cast["game"].pk, user=cast["carol"], mute=True)
    assert caught.value.code == "not_a_player"
    assert Game.objects.get(pk=cast["game"].pk).chat_muted == []


def test_a_blocked_users_lines_are_hidden_from_who_blocked_them(cast: dict[str, Any]) -> None:
    Block.objects.create(blocker=cast["dave"], blocked=cast["carol"])
    say(cast, "carol", "spectators", "spam")
    assert seen_by(cast, "dave") == []
    game = Game.objects.get(pk=cast["game"].pk)
    assert selectors.chat_hidden_from(game, cast["carol"].pk, "spectators") == [cast["dave"].pk]
