"""Limits per client: failed log-ins, new accounts and API requests (realtime/limits.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from tests.games_helpers import make_user, new_game
from tests.servers import free_port

pytestmark = pytest.mark.django_db

PASSWORD = "x-long-password-1"  # make_user's


def log_in(browser: Client, username: str, password: str) -> int:
    return int(browser.post("/login/", {"username": username, "password": password}).status_code)


def signed_in(browser: Client) -> bool:
    return "_auth_user_id" in browser.session


def test_a_password_guesser_is_locked_out_after_ten_failures_even_with_the_right_one() -> None:
    make_user("alice")
    guesser = Client(REMOTE_ADDR="10.0.0.1")
    start = timezone.now()
    with time_machine.travel(start, tick=False):  # all in one counting window
        assert [log_in(guesser, "alice", f"guess-{n}") for n in range(10)] == [200] * 10
        assert log_in(guesser, "alice", PASSWORD) == 429
        assert not signed_in(guesser)
        # Alice herself, from elsewhere, is locked out of her account too, for a while.
        alice = Client(REMOTE_ADDR="10.0.0.2")
        assert log_in(alice, "ALICE", PASSWORD) == 429
    with time_machine.travel(start + timedelta(minutes=31)):
        assert log_in(alice, "alice", PASSWORD) == 302
        assert signed_in(alice)


def test_guessing_across_accounts_from_one_address_is_limited_too() -> None:
    make_user("bob")
    guesser = Client(REMOTE_ADDR="10.0.0.3")
    # The counts are kept in fixed 15-minute windows; 50 log-ins take seconds on a busy
    # machine and once crossed into a new window (1 run in a few hundred): time stands still.
    with time_machine.travel(timezone.now(), tick=False):
        assert {log_in(guesser, f"user{n}", "guess") for n in range(50)} == {200}
        assert log_in(guesser, "bob", PASSWORD) == 429
        assert log_in(Client(REMOTE_ADDR="10.0.0.4"), "bob", PASSWORD) == 302


def test_a_good_log_in_is_not_slowed_by_others_failures_on_other_accounts() -> None:
    make_user("carol")
    for n in range(9):
        log_in(Client(REMOTE_ADDR=f"10.0.1.{n}"), "carol", "wrong")
    assert log_in(Client(REMOTE_ADDR="10.0.2.1"), "carol", PASSWORD) == 302


def test_one_address_may_open_ten_new_accounts_an_hour() -> None:
    answers = [Client(REMOTE_ADDR="10.0.0.5").post("/guest/").status_code for _ in range(10)]
    assert answers == [302] * 10
    refused = Client(REMOTE_ADDR="10.0.0.5").post("/guest/")
    assert refused.status_code == 429
    assert "Too many new accounts" in refused.content.decode()
    signup = Client(REMOTE_ADDR="10.0.0.5").post(
        "/signup/", {"username": "dave", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert signup.status_code == 429
    assert Client(REMOTE_ADDR="10.0.0.6").post("/guest/").status_code == 302


def test_the_api_answers_a_client_over_its_rate_with_a_json_429(settings: object) -> None:
    settings.API_REQUESTS_PER_CLIENT = "5/m"  # type: ignore[attr-defined]
    erin = Client()
    erin.force_login(make_user("erin"))
    # The window is a fixed minute: on a busy machine six requests once straddled two of
    # them and the sixth was let through. Time stands still for the window.
    with time_machine.travel(timezone.now(), tick=False):
        assert [erin.get("/api/lobby").status_code for _ in range(5)] == [200] * 5
        refused = erin.get("/api/lobby")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "rate_limited"
        assert refused["Retry-After"] == "60"
        # Another user from the same address has a budget of their own.
        frank = Client()
        frank.force_login(make_user("frank"))
        assert frank.get("/api/lobby").status_code == 200
        # Pages are not counted.
        assert erin.get("/").status_code == 200


def test_while_redis_is_down_the_api_answers_and_counts_in_the_process(settings: object) -> None:
    """The counters live in Redis; with Redis away the API answers from PostgreSQL as usual
    and each process counts on its own meanwhile (fail open, but still limited)."""
    nobody = free_port()  # nothing listens there: Redis is down
    settings.CACHES = {  # type: ignore[attr-defined]
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{nobody}/0",
        }
    }
    settings.API_REQUESTS_PER_CLIENT = "3/m"  # type: ignore[attr-defined]
    game = new_game()
    erin = Client()
    erin.force_login(game.player1)
    with time_machine.travel(timezone.now(), tick=False):  # one window, however busy
        answers = [erin.get(f"/api/games/{game.pk}").status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
