"""Games left for days (pbmserv's figures): a reminder after 7 days without a move, a loss
by forfeit after 21, vacations not counted; real-time games are never touched."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command

from accounts.models import User
from games import services
from games.models import Game
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db

START = "2026-03-01 12:00:00"


@pytest.fixture
def pair() -> tuple[User, User]:
    alice, bob = make_user("alice"), make_user("bob")
    for user in (alice, bob):
        user.email = f"{user.username}@example.com"
        user.save()
    return alice, bob


def game_of(alice: User, bob: User, control: str = "") -> Game:
    return services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control=control
    )


def status(game: Game) -> tuple[str, int | None, str]:
    game.refresh_from_db()
    return game.status, game.winner, game.termination


def test_a_player_who_has_not_moved_for_7_days_is_reminded_once(pair: tuple[User, User]) -> None:
    alice, bob = pair
    with time_machine.travel(START, tick=False) as clock:
        game = game_of(alice, bob)
        clock.shift(timedelta(days=6, hours=23))
        assert services.remind_stalled() == 0
        clock.shift(timedelta(hours=2))
        assert services.remind_stalled() == 1
        assert services.remind_stalled() == 0  # once per stall
        assert mail.outbox[0].to == ["alice@example.com"]
        assert "Reminder: your move" in mail.outbox[0].subject
        assert "21 days" in mail.outbox[0].body
        # Alice moves: Bob's stall starts, and he is reminded 7 days later.
        services.play_move(game_id=game.pk, user=alice, move="I", ply=0)
        clock.shift(timedelta(days=7, minutes=1))
        assert services.remind_stalled() == 1
        assert mail.outbox[1].to == ["bob@example.com"]
    assert status(game) == ("active", None, "")


def test_a_player_who_has_not_moved_for_21_days_loses_by_forfeit(pair: tuple[User, User]) -> None:
    alice, bob = pair
    with time_machine.travel(START, tick=False) as clock:
        game = game_of(alice, bob, "14d")
        services.play_move(game_id=game.pk, user=alice, move="I", ply=0)
        untimed = game_of(alice, bob)
        clock.shift(timedelta(days=20, hours=23))
        assert services.forfeit_stalled() == 0
        clock.shift(timedelta(hours=2))
        # The 14-day clock ended the first game already: the sweeper's clock check did.
        assert services.check_clock(game_id=game.pk).event is not None
        assert services.forfeit_stalled() == 1
    assert status(game) == ("finished", 1, "time")
    assert status(untimed) == ("finished", 2, "forfeit")
    untimed.refresh_from_db()
    assert untimed.reason == "alice did not move for 21 days"


def test_days_on_vacation_do_not_count_towards_a_forfeit(pair: tuple[User, User]) -> None:
    alice, bob = pair
    with time_machine.travel(START, tick=False) as clock:
        game = game_of(alice, bob)
        clock.shift(timedelta(days=5))
        services.start_vacation(user=alice, days=10)
        clock.shift(timedelta(days=20))  # 25 days since the start, 10 of them away
        assert services.forfeit_stalled() == 0
        assert services.remind_stalled() == 1
        clock.shift(timedelta(days=6, minutes=1))  # 31 days, 10 of them away: 21 count
        assert services.forfeit_stalled() == 1
    assert status(game) == ("finished", 2, "forfeit")


def test_real_time_games_are_never_reminded_or_forfeited(pair: tuple[User, User]) -> None:
    alice, bob = pair
    with time_machine.travel(START, tick=False) as clock:
        game = game_of(alice, bob, "30+20")
        clock.shift(timedelta(days=30))
        assert services.stalled_games(1) == []
        assert (services.remind_stalled(), services.forfeit_stalled()) == (0, 0)
    assert status(game)[2] != "forfeit"


def test_the_sweeper_sends_reminders_and_forfeits(pair: tuple[User, User]) -> None:
    alice, bob = pair
    with time_machine.travel(START, tick=False) as clock:
        game = game_of(alice, bob)
        clock.shift(timedelta(days=22))
        call_command("sweeper", "--once")
    assert status(game) == ("finished", 2, "forfeit")
