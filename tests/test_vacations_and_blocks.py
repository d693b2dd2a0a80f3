"""Vacations (correspondence clocks stand still, 30 days a year) and blocking users."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from accounts.models import Block, User
from games import clocks, selectors, services
from games.models import Game, GameEvent
from realtime.errors import ServiceError
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db

DAY = clocks.DAY_MS
START = "2026-03-01 12:00:00"


def correspondence(alice: User, bob: User, control: str = "3d") -> Game:
    return services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control=control
    )


@pytest.fixture
def pair() -> tuple[User, User]:
    return make_user("alice"), make_user("bob")


def test_a_vacation_holds_the_clocks_of_correspondence_games_only(
    pair: tuple[User, User],
) -> None:
    alice, bob = pair
    with time_machine.travel(START, tick=False) as clock:
        slow = correspondence(alice, bob)
        fast = correspondence(alice, bob, "5+3")
        clock.shift(timedelta(days=1))  # alice has used a day of her 3
        services.start_vacation(user=alice, days=10)
        slow.refresh_from_db()
        fast.refresh_from_db()
        assert fast.clock.get("paused_until") is None
        view = clocks.view(slow.clock, clocks.now_ms())
        assert view["remaining"][0] == 2 * DAY  # the day used before stays used
        assert view["paused_until"] == clocks.now_ms() + 10 * DAY
        # Nine days on, no time has run: the deadline moved by the vacation.
        clock.shift(timedelta(days=9))
        assert clocks.view(slow.clock, clocks.now_ms())["remaining"][0] == 2 * DAY
        assert services.check_clock(game_id=slow.pk).event is None
        # Eleven days after the vacation began, one day of the two left has run.
        clock.shift(timedelta(days=2))
        assert clocks.view(slow.clock, clocks.now_ms())["remaining"][0] == DAY
        clock.shift(timedelta(days=1, seconds=1))
        ended = services.check_clock(game_id=slow.pk).event
        assert ended is not None and ended["result"]["termination"] == "time"
    event = GameEvent.objects.get(game=slow, payload__type="vacation").payload
    assert (event["player"], event["v"]) == (1, 1)


def test_coming_back_early_restarts_the_clocks_and_gives_back_the_days(
    pair: tuple[User, User],
) -> None:
    alice, bob = pair
    with time_machine.travel(START, tick=False) as clock:
        game = correspondence(alice, bob)
        services.start_vacation(user=alice, days=10)
        clock.shift(timedelta(days=4))
        services.end_vacation(user=alice)
        game.refresh_from_db()
        assert clocks.view(game.clock, clocks.now_ms())["paused_until"] is None
        clock.shift(timedelta(days=1))
        assert clocks.view(game.clock, clocks.now_ms())["remaining"][0] == 2 * DAY
        info = selectors.vacation_info(alice)
        assert (info["until"], info["days_used"], info["days_left"]) == (None, 4.0, 26)


def test_days_booked_and_given_back_at_once_cost_nothing(pair: tuple[User, User]) -> None:
    alice, _ = pair
    with time_machine.travel(START, tick=False) as clock:
        services.start_vacation(user=alice, days=2)
        clock.shift(timedelta(seconds=5))
        services.end_vacation(user=alice)
        assert selectors.vacation_info(alice)["days_left"] == 30
        # A part of a day is not a day taken either; a whole one is.
        services.start_vacation(user=alice, days=3)
        clock.shift(timedelta(days=1, hours=20))
        services.end_vacation(user=alice)
        assert selectors.vacation_info(alice)["days_left"] == 29
        services.start_vacation(user=alice, days=29)  # all that is left, to the day


@pytest.mark.parametrize(
    ("days", "code"),
    [(31, "vacation_limit"), (0, "bad_message"), ("7", "bad_message"), (True, "bad_message")],
)
def test_a_bad_vacation_request_is_refused(
    pair: tuple[User, User], days: object, code: str
) -> None:
    alice, bob = pair
    game = correspondence(alice, bob)
    with pytest.raises(ServiceError) as caught:
        services.start_vacation(user=alice, days=days)
    assert caught.value.code == code
    game.refresh_from_db()
    assert game.version == 0 and "paused_until" not in game.clock


def test_at_most_thirty_days_of_vacation_in_a_year(pair: tuple[User, User]) -> None:
    alice, _ = pair
    with time_machine.travel(START, tick=False) as clock:
        services.start_vacation(user=alice, days=20)
        with pytest.raises(ServiceError) as caught:
            services.start_vacation(user=alice, days=5)
        assert caught.value.code == "on_vacation"
        clock.shift(timedelta(days=25))
        with pytest.raises(ServiceError) as caught:
            services.start_vacation(user=alice, days=11)
        assert caught.value.code == "vacation_limit" and "10 left" in caught.value.message
        services.start_vacation(user=alice, days=10)
        services.end_vacation(user=alice)
        with pytest.raises(ServiceError) as caught:
            services.end_vacation(user=alice)
        assert caught.value.code == "not_on_vacation"
        # A year after the first, its days count no more.
        clock.shift(timedelta(days=366))
        assert selectors.vacation_info(alice)["days_left"] == 30


def test_vacations_over_http(pair: tuple[User, User]) -> None:
    alice, bob = pair
    correspondence(alice, bob)
    browser = Client()
    assert browser.get("/api/vacation").json()["error"]["code"] == "not_logged_in"
    browser.force_login(alice)
    answer = browser.post("/api/vacation", json.dumps({"days": 3}), content_type="text/json")
    assert answer.status_code == 200 and answer.json()["until"] is not None
    again = browser.post("/api/vacation", json.dumps({"days": 3}), content_type="text/json")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "on_vacation")
    # More days than the allowance: the documented 409 vacation_limit, as when few are left.
    bad = browser.post("/api/vacation", json.dumps({"days": 99}), content_type="text/json")
    assert (bad.status_code, bad.json()["error"]["code"]) == (409, "vacation_limit")
    nonsense = browser.post("/api/vacation", json.dumps({"days": 0}), content_type="text/json")
    assert (nonsense.status_code, nonsense.json()["error"]["code"]) == (400, "bad_message")
    back = browser.post("/api/vacation/end")
    assert back.status_code == 200 and back.json()["until"] is None
    # The profile's form.
    page = browser.post("/settings/vacation/", {"days": "2"}, follow=True)
    assert b"Enjoy your vacation" in page.content and b"Come back now" in page.content


def test_a_block_is_made_over_http_and_undone(pair: tuple[User, User]) -> None:
    alice, bob = pair
    browser = Client()
    browser.force_login(alice)
    made = browser.post("/api/blocks", json.dumps({"user": "BOB"}), content_type="text/json")
    assert made.json() == {"blocked": ["bob"]}
    assert Block.objects.filter(blocker=alice, blocked=bob).count() == 1
    browser.post("/api/blocks", json.dumps({"user": "bob"}), content_type="text/json")
    assert Block.objects.count() == 1
    for name, code in (("alice", "cannot_block_yourself"), ("nobody", "unknown_user")):
        refused = browser.post("/api/blocks", json.dumps({"user": name}), content_type="a/json")
        assert refused.json()["error"]["code"] == code
    assert browser.post("/api/blocks/remove", json.dumps({"user": "bob"}), "a/json").json() == {
        "blocked": []
    }
    page = browser.post("/@bob/block/", follow=True)
    assert b"Unblock bob" in page.content
    assert Block.objects.filter(blocker=alice, blocked=bob).exists()


def test_the_vacation_window_counts_only_the_last_365_days(pair: tuple[User, User]) -> None:
    alice, _ = pair
    now = timezone.now()
    alice_vacation = services.start_vacation(user=alice, days=5)
    assert alice_vacation.ends_at - alice_vacation.starts_at == timedelta(days=5)
    assert selectors.vacation_days_used(alice, now + timedelta(days=365 + 2)) == pytest.approx(3)
