"""Sending push notices to a real push service on this machine (tests/pushservice.py): it
checks the VAPID signature against the site's public key and decrypts each notice with the
browser's private key, as Google's, Mozilla's and Apple's services and the browser do. Gone
subscriptions are deleted, other failures retried then given up, and a push service that
hangs holds up neither a move nor the sweeper's pass."""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.utils import translation

from accounts.models import User
from games import selectors
from games import services as game_services
from games.models import Game
from push import notices, sending, subscriptions
from push.models import Notice, Subscription
from tests.games_helpers import make_user
from tests.pushservice import Browser, PushService

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def service(settings: Any) -> Iterator[PushService]:
    settings.PUSH_SERVICES = ["http://127.0.0.1:*"]
    notices.forget_wanting()  # each test's own database: who wants notices is read afresh
    settings.PUSH_RETRY_SECONDS = 0.0  # retries due at once: the test runs the passes
    settings.PUSH_ATTEMPTS = 3
    with PushService(settings.VAPID_PUBLIC_KEY) as running:
        yield running
    sending.wait_for_sends()


def subscribe(user: User, browser: Browser) -> Subscription:
    sub = browser.subscription()
    subscriptions.subscribe(user=user, endpoint=sub["endpoint"], **sub["keys"])
    return Subscription.objects.get(endpoint=sub["endpoint"])


def move(game_id: int, user: User) -> None:
    game = Game.objects.get(pk=game_id)
    legal = sorted(selectors.snapshot(game)["legal_moves"])[0]
    game_services.play_move(game_id=game_id, user=user, move=legal, ply=game.ply)


def sweep() -> int:
    """One sweeper pass of push's (games.lifecycle.sweeping), and its sends finished."""
    handed = sending.send_pending()
    sending.wait_for_sends()
    return handed


def players(control: str = "") -> tuple[User, User, int]:
    alice, bob = make_user("alice"), make_user("bob")
    game = game_services.create_game(
        slug="diffusion", options={}, player1=alice, player2=bob, time_control=control
    )
    return alice, bob, game.pk


def test_a_notice_reaches_the_push_service_signed_and_encrypted_for_the_browser(
    service: PushService,
) -> None:
    alice, bob, game_id = players()
    phone = subscribe(bob, service.browser("phone"))
    move(game_id, alice)
    assert sweep() == 1
    received = service.next()
    assert service.refusals == []
    assert received.payload == {
        "title": "Your move against alice",
        "body": f"alice has moved in Diffusion #{game_id}.",
        "url": f"/games/{game_id}/",
        "tag": f"game-{game_id}",
        "kind": "move_correspondence",
        "lang": "en",
    }
    assert received.headers == {"TTL": "86400", "Urgency": "normal", "Topic": f"game-{game_id}"}
    phone.refresh_from_db()
    assert phone.succeeded_at is not None and phone.failures == 0
    assert Notice.objects.count() == 0


def test_a_notice_names_the_game_and_its_options_in_the_readers_language(
    service: PushService,
) -> None:
    # The name was built outside the reader's language: "ZigZag (pits 4, seeds 3)" in every one.
    alice, bob = make_user("alice"), make_user("bob")
    bob.language = "fr"
    bob.save()
    options = {"pits": 4, "seeds": 3}
    game = game_services.create_game(slug="zigzag", options=options, player1=alice, player2=bob)
    subscribe(bob, service.browser("phone"))
    move(game.pk, alice)
    assert sweep() == 1
    with translation.override("fr"):
        french = selectors.title_for("zigzag", options)
    assert french != "ZigZag (pits 4, seeds 3)"
    assert french in service.next().payload["body"]


def test_a_real_time_move_is_urgent_and_short_lived_and_every_browser_gets_it(
    service: PushService,
) -> None:
    alice, bob, game_id = players("3+2")
    subscribe(bob, service.browser("phone"))
    subscribe(bob, service.browser("laptop"))
    move(game_id, alice)
    assert sweep() == 2
    got = sorted([service.next(), service.next()], key=lambda r: r.browser)
    assert [r.browser for r in got] == ["laptop", "phone"]
    assert {r.payload["kind"] for r in got} == {"move_realtime"}
    assert {(r.headers["TTL"], r.headers["Urgency"]) for r in got} == {("120", "high")}


@pytest.mark.parametrize("status", [404, 410])
def test_a_subscription_the_push_service_says_is_gone_is_deleted(
    service: PushService, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    alice, bob, game_id = players()
    browser = service.browser("old-phone")
    subscribe(bob, browser)
    service.answer(browser, status)
    move(game_id, alice)
    sweep()
    assert not Subscription.objects.exists()
    assert Notice.objects.count() == 0  # nothing to retry
    assert service.tries == {"old-phone": 1}
    assert not [r for r in caplog.records if r.exc_info]


def test_other_failures_are_retried_then_given_up_each_in_one_line_without_a_traceback(
    service: PushService, caplog: pytest.LogCaptureFixture
) -> None:
    alice, bob, game_id = players()
    flaky, broken = service.browser("flaky"), service.browser("broken")
    subscribe(bob, flaky)
    subscribe(bob, broken)
    service.answer(flaky, 503)
    service.answer(broken, 500, 500, 500)
    caplog.set_level(logging.INFO, logger="push")
    move(game_id, alice)
    for _ in range(3):
        sweep()
    assert service.tries == {"flaky": 2, "broken": 3}
    assert service.next().browser == "flaky"  # the second try went through
    assert Notice.objects.count() == 0
    gave_up = [r.getMessage() for r in caplog.records if "given up" in r.getMessage()]
    assert gave_up == [
        f"push: move_correspondence to {service.origin[7:]} given up after 3 "
        "attempts (500 Internal Server Error)"
    ]
    assert not [r for r in caplog.records if r.exc_info]
    by_name = {s.endpoint.rsplit("/", 1)[1].split("-")[0]: s for s in Subscription.objects.all()}
    assert by_name["flaky"].failures == 0 and by_name["flaky"].succeeded_at is not None
    assert by_name["broken"].failures == 3  # kept: a later notice may go through


def test_a_service_that_cannot_be_reached_is_retried_like_any_failure(
    service: PushService, caplog: pytest.LogCaptureFixture
) -> None:
    alice, bob, game_id = players()
    sub = service.browser("nowhere").subscription()
    # A port where nothing listens: the connection is refused.
    sub["endpoint"] = "http://127.0.0.1:9/push/nowhere"
    subscriptions.subscribe(user=bob, endpoint=sub["endpoint"], **sub["keys"])
    move(game_id, alice)
    for _ in range(3):
        sweep()
    assert Notice.objects.count() == 0
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("push")]
    assert any("given up after 3 attempts (ConnectionError)" in line for line in lines)
    assert not [r for r in caplog.records if r.exc_info]


def test_a_push_service_that_hangs_holds_up_neither_a_move_nor_the_sweepers_pass(
    service: PushService, settings: Any
) -> None:
    settings.PUSH_TIMEOUT = 1.5
    alice, bob, game_id = players()
    browser = service.browser("slow")
    subscribe(bob, browser)
    service.answer(browser, 3.0)  # answers after three seconds
    move(game_id, alice)
    began = time.perf_counter()
    assert sending.send_pending() == 1
    handing = time.perf_counter() - began
    # Meanwhile the players go on: the move and its news are not held up by the send.
    began = time.perf_counter()
    move(game_id, bob)
    move(game_id, alice)
    moving = (time.perf_counter() - began) / 2
    sending.wait_for_sends(timeout=10)
    assert handing < 0.5 and moving < 0.5, (handing, moving)
    # The send timed out: it waits for its retry.
    assert Notice.objects.filter(subscription__isnull=False).count() == 1
    print(
        f"\npush: sweeper pass handing a send to a hanging service {handing * 1000:.1f} ms; "
        f"a move meanwhile {moving * 1000:.1f} ms"
    )


def test_what_the_news_adds_to_a_move_and_how_long_a_send_takes(service: PushService) -> None:
    """Figures for docs and the closing note (printed with -s): the move's own time with and
    without a reader who wants the notice, and from the move's return to the push service
    holding the decrypted notice, the sweeper's pass run at once."""
    alice, bob, game_id = players()
    timings: dict[str, list[float]] = {"without push": [], "with push": [], "send": []}
    for round_ in range(2):
        if round_ == 1:
            subscribe(bob, service.browser("phone"))
        for _ in range(10):
            for mover in (alice, bob):
                began = time.perf_counter()
                move(game_id, mover)
                took = time.perf_counter() - began
                if mover is alice:
                    timings["with push" if round_ else "without push"].append(took)
                    if round_:
                        began = time.perf_counter()
                        sweep()
                        service.next()
                        timings["send"].append(time.perf_counter() - began)
            Notice.objects.all().delete()
    figures = {name: statistics.median(values) * 1000 for name, values in timings.items()}
    print(
        f"\npush: a move, median of 10 ({settings.DATABASES['default']['ENGINE']}): "
        f"{figures['without push']:.2f} ms when the opponent has no push, "
        f"{figures['with push']:.2f} ms when a notice is queued; "
        f"queued -> decrypted at the push service: {figures['send']:.1f} ms"
    )
    assert service.refusals == []
