"""A program's requests (made with a token) are held by token buckets, per token and per
account, in Redis (realtime/limits.py, docs/SECURITY.md): over either, 429 `rate_limited`
saying when to retry, and nothing is run. Sessions keep their fixed window, which token
requests do not count against."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from django.core.cache import cache
from django.test import Client, override_settings
from django.utils import timezone

from accounts import tokens
from games import services
from games.models import Game
from realtime import limits
from tests.conftest import require_redis
from tests.games_helpers import make_user
from tests.servers import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_cache() -> Iterator[Any]:
    """The default cache on the real Redis, under a prefix of this run's own."""
    prefix = f"buckets{os.getpid()}"
    with override_settings(
        CACHES={
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": require_redis(),
                "KEY_PREFIX": prefix,
            }
        }
    ):
        client = cache._cache.get_client(write=True)  # type: ignore[attr-defined]
        yield client
        for key in client.scan_iter(f"{prefix}:*"):
            client.delete(key)


def program(secret: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def figures(settings: Any, token: tuple[float, float], account: tuple[float, float]) -> None:
    settings.API_TOKEN_BURST, settings.API_TOKEN_PER_SECOND = token
    settings.API_ACCOUNT_BURST, settings.API_ACCOUNT_PER_SECOND = account


def test_a_token_over_its_bucket_is_told_when_to_retry_and_nothing_is_run(
    redis_cache: Any, settings: Any
) -> None:
    figures(settings, token=(3, 0.5), account=(100, 100))
    alice, bob = make_user("alice"), make_user("bob")
    game = services.create_game(slug="diffusion", options={}, player1=alice, player2=bob)
    _row, secret = tokens.create_token(user=alice, name="bot", scopes=["read", "play"])
    assert Client().get("/api/games").status_code == 200  # the first request's setting up
    bot = program(secret)
    assert [bot.get(f"/api/games/{game.pk}").status_code for _ in range(3)] == [200] * 3
    assert bot.get(f"/api/games/{game.pk}").status_code == 429
    body = {"move": "a1", "ply": 0}
    refused = bot.post(f"/api/games/{game.pk}/move", body, content_type="application/json")
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "rate_limited"
    # At a unit every 2 seconds, the next one is at most 2 seconds away.
    assert 0 < error["retry_after"] <= 2
    assert refused["Retry-After"] == str(math.ceil(error["retry_after"]))
    assert Game.objects.get(pk=game.pk).ply == 0  # the move was not even tried
    # The buckets are Redis's, not this process's: forgetting this process's changes nothing.
    limits.forget_buckets()
    again = bot.get(f"/api/games/{game.pk}")
    assert again.status_code == 429
    # When it says, it may.
    time.sleep(again.json()["error"]["retry_after"])
    assert bot.get(f"/api/games/{game.pk}").status_code == 200
    keys = sorted(key.decode() for key in redis_cache.scan_iter(f"{cache.key_prefix}:*bucket*"))
    row = tokens.live(alice).get()
    assert [key.split(":", 2)[-1] for key in keys] == [
        f"bucket:account:{alice.pk}",
        f"bucket:token:{row.pk}",
    ]
    # Each expires once it would be full again (3 units at one every 2 s, and a second more).
    assert 0 < redis_cache.pttl(keys[1]) <= 7000


def test_an_accounts_tokens_share_its_bucket_and_other_accounts_are_not_touched(
    redis_cache: Any, settings: Any
) -> None:
    figures(settings, token=(100, 100), account=(4, 0.1))
    alice, bob = make_user("alice"), make_user("bob")
    first = program(tokens.create_token(user=alice, name="one", scopes=["read"])[1])
    second = program(tokens.create_token(user=alice, name="two", scopes=["read"])[1])
    other = program(tokens.create_token(user=bob, name="bob's", scopes=["read"])[1])
    answers = [client.get("/api/games").status_code for client in (first, second) * 2]
    assert answers == [200] * 4
    assert first.get("/api/games").status_code == 429
    refused = second.get("/api/games")
    assert refused.status_code == 429
    wait = refused.json()["error"]["retry_after"]
    assert 5 < wait <= 10  # a unit every 10 s
    assert refused["Retry-After"] == str(math.ceil(wait))
    assert other.get("/api/games").status_code == 200


def test_token_requests_are_not_counted_in_the_sessions_window(
    redis_cache: Any, settings: Any
) -> None:
    """A bot moves far more often than 120 times a minute: the window holds sessions and
    visitors only, and the buckets the tokens only."""
    figures(settings, token=(100, 100), account=(100, 100))
    settings.API_REQUESTS_PER_CLIENT = "2/m"
    alice = make_user("alice")
    bot = program(tokens.create_token(user=alice, name="bot", scopes=["read"])[1])
    assert {bot.get("/api/games").status_code for _ in range(6)} == {200}
    browser = Client()
    browser.force_login(alice)
    # The window is a fixed minute: three requests on a busy machine once straddled two.
    # Time stands still for the window (the buckets keep Redis's own clock).
    with time_machine.travel(timezone.now(), tick=False):
        assert [browser.get("/api/games").status_code for _ in range(3)] == [200, 200, 429]
        refused = browser.get("/api/games")
        assert refused["Retry-After"] == "60" and refused.json()["error"]["retry_after"] == 60
        assert bot.get("/api/games").status_code == 200


def test_a_token_is_limited_on_any_path_and_a_refusal_takes_nothing(
    redis_cache: Any, settings: Any
) -> None:
    figures(settings, token=(2, 0.1), account=(3, 0.1))
    alice = make_user("alice")
    one = program(tokens.create_token(user=alice, name="one", scopes=["read"])[1])
    two = program(tokens.create_token(user=alice, name="two", scopes=["read"])[1])
    # A page a token cannot call still costs it a request (it was made).
    assert one.get("/settings/tokens/").status_code == 403
    assert one.get("/api/games").status_code == 200
    assert one.get("/api/games").status_code == 429  # its own bucket is empty
    # Its refusals took nothing from the account's: the other token still has one unit.
    assert two.get("/api/games").status_code == 200
    assert two.get("/api/games").status_code == 429


def test_without_redis_the_embedded_default_counts_in_its_process(settings: Any) -> None:
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    figures(settings, token=(2, 0.1), account=(100, 100))
    bot = program(tokens.create_token(user=make_user("alice"), name="bot", scopes=["read"])[1])
    assert [bot.get("/api/games").status_code for _ in range(3)] == [200, 200, 429]
    limits.forget_buckets()
    assert bot.get("/api/games").status_code == 200


def test_while_redis_is_down_tokens_are_counted_in_the_process(settings: Any) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",  # nothing listens there
        }
    }
    figures(settings, token=(2, 0.1), account=(100, 100))
    bot = program(tokens.create_token(user=make_user("alice"), name="bot", scopes=["read"])[1])
    assert [bot.get("/api/games").status_code for _ in range(3)] == [200, 200, 429]


def test_a_bucket_without_a_rate_has_no_limit() -> None:
    assert limits.take([limits.Bucket("token:1", 0, 0)]) == 0.0
