"""The sweeper's mails ("your move", reminders, follow news) against an outgoing mail server
that fails: here a real plain relay (no STARTTLS) with EMAIL_USE_TLS on. Nothing is lost:
each mail waits, the server is tried again after a growing wait (not at every pass), and
once it works every waiting mail goes out."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.test import override_settings

from accounts.models import User
from follows import services as follows
from follows.models import FollowMail
from games import services
from games.models import Game, MoveNotice
from games.services import correspondence
from realtime import outgoing_mail
from tests.games_helpers import make_user
from tests.relay import PlainRelay, failing_relay
from tests.test_metrics import first_move

pytestmark = pytest.mark.django_db


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def relay(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[PlainRelay, Clock]]:
    """A plain relay the site reaches with STARTTLS asked (failing), and the sweeper's
    retry clocks, which the test moves on."""
    clock = Clock()
    monkeypatch.setattr(correspondence, "_retry", outgoing_mail.Backoff(clock=clock))
    monkeypatch.setattr(follows, "_retry", outgoing_mail.Backoff(clock=clock))
    with failing_relay() as (server, _port):
        yield server, clock


def _players() -> tuple[User, User]:
    alice, bob = make_user("alice"), make_user("bob")
    for user in (alice, bob):
        user.email = f"{user.username}@players.test"
        user.email_on_follow = True
        user.save()
    return alice, bob


def _passes(send: Any, relay: PlainRelay, clock: Clock, seconds: int) -> list[int]:
    """The sweeper's passes a second apart: the seconds at which the server was tried."""
    tried = []
    for _ in range(seconds):
        before = relay.greetings
        send()
        if relay.greetings > before:
            tried.append(int(clock.now))
        clock.now += 1
    return tried


def test_a_your_move_mail_waits_for_a_failing_server_and_goes_out_once_it_works(
    relay: tuple[PlainRelay, Clock],
) -> None:
    server, clock = relay
    alice, bob = _players()
    game = services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control="3d"
    )
    services.play_move(game_id=game.pk, user=alice, move=first_move(game), ply=0)
    assert _passes(services.send_move_notices, server, clock, 8) == [0, 1, 3, 7]
    assert list(MoveNotice.objects.values_list("game_id", "player")) == [(game.pk, 2)]
    assert server.mails == []
    with override_settings(EMAIL_USE_TLS=False):  # the operator's fix
        clock.now += 8
        assert services.send_move_notices() == 1
    assert not MoveNotice.objects.exists()
    assert len(server.mails) == 1 and b"Your move in Diffusion" in server.mails[0]


def test_a_reminder_waits_for_a_failing_server_and_is_sent_once_it_works(
    relay: tuple[PlainRelay, Clock],
) -> None:
    server, clock = relay
    alice, bob = _players()
    with time_machine.travel("2026-03-01 12:00:00", tick=False) as travel:
        game = services.create_game(slug="diffusion", options={}, player1=alice, player2=bob)
        travel.shift(timedelta(days=7, hours=1))
        assert correspondence.remind_stalled() == 0
        assert Game.objects.get(pk=game.pk).reminded_at is None  # not counted as reminded
        assert correspondence.remind_stalled() == 0  # within the wait: the server not tried
        assert server.greetings == 1
        with override_settings(EMAIL_USE_TLS=False):
            clock.now += 1
            assert correspondence.remind_stalled() == 1
    assert Game.objects.get(pk=game.pk).reminded_at is not None
    assert len(server.mails) == 1 and b"Reminder: your move" in server.mails[0]


def test_follow_mails_wait_for_a_failing_server_and_all_go_out_once_it_works(
    relay: tuple[PlainRelay, Clock],
) -> None:
    server, clock = relay
    alice, _bob = _players()
    for number in range(3):
        FollowMail.objects.create(user=alice, subject=f"news {number}", body="b")
    assert _passes(follows.send_mails, server, clock, 4) == [0, 1, 3]
    assert sorted(FollowMail.objects.values_list("subject", flat=True)) == [
        "news 0",
        "news 1",
        "news 2",
    ]
    with override_settings(EMAIL_USE_TLS=False):
        clock.now += 4
        assert follows.send_mails() == 3
    assert not FollowMail.objects.exists()
    assert sorted(mail.split(b"Subject: ")[1].split(b"\n")[0].strip() for mail in server.mails) == [
        b"news 0",
        b"news 1",
        b"news 2",
    ]
