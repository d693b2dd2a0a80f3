"""Closing an account (by its player or a moderator) and downloading one's data; and every
self-service page tried as a visitor, as another player and without the CSRF token."""

from __future__ import annotations

import json
from typing import Any

import pyotp
import pytest
from django.test import Client

from accounts.models import RetiredName, User
from analysis import services as analysis_services
from analysis.models import Analysis
from follows import services as follows_services
from games import services as games
from games.engine import rules_for
from games.models import ChatLine, Game
from lobby.models import Challenge, Seek
from lobby.services import challenges, seeks
from pbm import identity
from privacy.closure import close_account
from push import keys
from push import subscriptions as push_subscriptions
from realtime.errors import ServiceError
from tests.test_self_service import PASSWORD, make_user, next_code, signed_in, turn_on

pytestmark = pytest.mark.django_db


def play(first: User, second: User) -> Game:
    return games.create_game(slug="diffusion", options={}, player1=first, player2=second)


def move(game: Game, user: User) -> str:
    """Play the first legal move for `user`; the move."""
    game.refresh_from_db()
    rules = rules_for(game.slug, game.options)
    chosen = sorted(rules.legal_moves(rules.from_json(game.state)))[0]
    games.play_move(game_id=game.pk, user=user, move=chosen, ply=game.ply)
    return chosen


def close_with(browser: Client, **fields: str) -> Any:
    return browser.post("/settings/close/", {"password": PASSWORD, "confirm": "on", **fields})


def test_closing_ends_what_was_going_on_and_keeps_the_games_under_a_neutral_name() -> None:
    alice, bob = make_user("Alice", "alice@players.test"), make_user("bob")
    started = play(alice, bob)  # nobody moved: aborted
    moved = play(bob, alice)
    move(moved, bob)
    move(moved, alice)
    seek, _ = seeks.create_seek(user=alice, games=[{"slug": "zigzag"}], time_control="3d")
    sent = challenges.create_challenge(challenger=alice, challenged="bob", slug="zigzag")
    received = challenges.create_challenge(challenger=bob, challenged="Alice", slug="zigzag")
    analysis_services.start(user=alice, slug="zigzag")
    kept = analysis_services.start(user=bob, slug="zigzag")
    browser, elsewhere = signed_in(alice), signed_in(alice)

    answer = close_with(browser)

    assert answer.status_code == 302
    alice.refresh_from_db()
    assert alice.username.startswith("Closed-") and alice.closed_at is not None
    assert not alice.is_active and not alice.has_usable_password() and alice.email == ""
    assert RetiredName.objects.get(user=alice).name == "Alice"
    started.refresh_from_db()
    moved.refresh_from_db()
    assert started.status == Game.Status.ABORTED
    assert (moved.status, moved.winner) == (Game.Status.FINISHED, 1)
    assert alice.username in moved.reason and "Alice" not in moved.reason
    assert Seek.objects.get(pk=seek.pk).status == Seek.Status.CANCELLED
    statuses = dict(Challenge.objects.values_list("pk", "status"))
    assert statuses[sent.pk] == "cancelled" and statuses[received.pk] == "declined"
    for session in (browser, elsewhere):
        assert session.get("/settings/account/").status_code == 302  # signed out
    # Her analyses are her notes: gone; Bob's stay.
    assert list(Analysis.objects.values_list("key", flat=True)) == [kept.key]
    # Bob's game list still has the game, under the neutral name.
    assert alice.username in Client().get("/@bob/").content.decode()


@pytest.mark.parametrize("name", ["Alice", "alice", "ALICE"])
def test_a_closed_accounts_name_can_never_be_taken_again(name: str) -> None:
    close_account(user=make_user("Alice"), reason="test")
    page = Client().post(
        "/signup/", {"username": name, "password1": PASSWORD, "password2": PASSWORD}
    )
    assert "That name is taken." in page.content.decode()
    with pytest.raises(ServiceError, match="taken"):
        identity.sign_up(name, "mail-pw-1", "someone@players.test")
    assert Client().post("/login/", {"username": name, "password": PASSWORD}).status_code == 200


def test_closing_asks_for_the_password_and_the_second_factor_when_on() -> None:
    alice = make_user("alice")
    secret, _ = turn_on(alice)
    browser = signed_in(alice)
    assert close_with(browser, password="nope").status_code == 400
    assert close_with(browser, code="000000").status_code == 400
    assert browser.post("/settings/close/", {"password": PASSWORD}).status_code == 400
    alice.refresh_from_db()
    assert alice.is_active
    assert close_with(browser, code=next_code(secret)).status_code == 302
    alice.refresh_from_db()
    assert alice.closed_at is not None


def test_a_moderator_closing_an_account_is_recorded_and_closing_twice_changes_nothing() -> None:
    alice, moderator = make_user("alice"), make_user("mod")
    close_account(user=alice, reason="cheating", by=moderator)
    name = User.objects.get(pk=alice.pk).username
    close_account(user=alice, reason="again", by=moderator)
    retired = RetiredName.objects.get()
    assert (retired.reason, retired.closed_by, retired.user) == ("cheating", moderator, alice)
    assert User.objects.get(pk=alice.pk).username == name


def test_the_export_holds_the_players_own_data_as_a_download() -> None:
    alice, bob = make_user("alice", "alice@players.test"), make_user("bob", "bob@players.test")
    game = play(alice, bob)
    played = move(game, alice)
    games.post_chat(game_id=game.pk, user=alice, room="players", text="good luck")
    games.post_chat(game_id=game.pk, user=bob, room="players", text="bob's own line")
    play(bob, make_user("carol"))  # not Alice's
    analysis_services.start(user=alice, slug="diffusion", moves="I A")
    analysis_services.start(user=bob, slug="diffusion")  # not Alice's
    follows_services.follow_player(user=alice, username="bob")
    follows_services.follow_game(user=bob, game_id=game.pk)  # not Alice's
    push_subscriptions.subscribe(
        user=alice,
        endpoint="https://fcm.googleapis.com/fcm/send/alices-phone",
        p256dh=keys.generate()[0],
        auth=keys.b64url(b"0123456789abcdef"),
        language="fr",
    )

    answer = signed_in(alice).get("/settings/export.json")

    assert answer.status_code == 200 and answer["Content-Type"].startswith("application/json")
    assert answer["Content-Disposition"].startswith('attachment; filename="diffusion-alice-')
    data = json.loads(answer.content)
    assert set(data) == {
        "format",
        "exported_at",
        "profile",
        "games",
        "chat",
        "ratings",
        "analyses",
        "puzzles",
        "follows",
        "push",
    }
    assert data["follows"] == {"games": [], "players": ["bob"]}
    assert data["push"]["kinds"]["move_correspondence"] is True
    assert data["push"]["browsers"] == [
        {
            "push_service": "fcm.googleapis.com",
            "subscribed_at": data["push"]["browsers"][0]["subscribed_at"],
            "language": "fr",
        }
    ]
    assert "alices-phone" not in answer.content.decode()  # the browser's own address and keys
    assert data["puzzles"] == {"ratings": [], "answers": []}  # none answered
    [analysis] = data["analyses"]
    assert [node["move"] for node in analysis["tree"]["nodes"]] == [None, "I", "A"]
    assert (
        data["profile"]["username"] == "alice" and data["profile"]["email"] == "alice@players.test"
    )
    assert [g["id"] for g in data["games"]] == [game.pk]
    assert data["games"][0]["moves"] == [{"ply": 1, "player": 1, "move": played}]
    assert data["games"][0]["you"] == 1
    assert [line["text"] for line in data["chat"]] == ["good luck"]
    assert ChatLine.objects.count() == 2
    assert "bob@players.test" not in answer.content.decode()


# --- every page of one's own account, probed ---------------------------------------------------

PAGES: list[tuple[str, str, dict[str, str]]] = [
    ("get", "/settings/account/", {}),
    ("get", "/settings/export.json", {}),
    (
        "post",
        "/settings/password/",
        {"old_password": PASSWORD, "new_password1": "p-9-long-xx", "new_password2": "p-9-long-xx"},
    ),
    ("post", "/settings/email/", {"email": "probe@players.test", "password": PASSWORD}),
    ("post", "/settings/two-factor/", {"action": "start"}),
    ("post", "/settings/two-factor/", {"action": "disable", "password": PASSWORD}),
    ("post", "/settings/close/", {"password": PASSWORD, "confirm": "on"}),
]


def state_of(user: User) -> tuple[Any, ...]:
    user.refresh_from_db()
    return (
        user.username,
        user.password,
        user.email,
        user.pending_email,
        user.is_active,
        hasattr(user, "two_factor") and user.two_factor.confirmed_at,
    )


@pytest.mark.parametrize(("method", "path", "data"), PAGES)
def test_no_page_acts_for_a_visitor_or_on_anyone_but_the_signed_in_player(
    method: str, path: str, data: dict[str, str]
) -> None:
    alice, mallory = make_user("alice", "alice@players.test"), make_user("mallory")
    secret, _ = turn_on(alice)
    before = state_of(alice)
    visitor = getattr(Client(), method)(path, data)
    assert visitor.status_code == 302 and visitor["Location"].startswith("/login/")
    # Mallory, signed in, with a user named in every way a form could: only her own account.
    answer = getattr(signed_in(mallory), method)(
        path, {**data, "user": "alice", "username": "alice", "user_id": str(alice.pk)}
    )
    assert answer.status_code in {200, 302, 400}
    assert state_of(alice) == before
    if path.endswith(".json"):
        assert b"alice@players.test" not in answer.content
    # And without the CSRF token, Alice's own browser changes nothing either.
    if method == "post":
        forged = Client(enforce_csrf_checks=True)
        forged.force_login(alice)
        assert forged.post(path, data).status_code == 403
        assert state_of(alice) == before
    assert pyotp.TOTP(secret)  # her second factor is untouched


@pytest.mark.parametrize("path", ["/settings/account/", "/settings/email/", "/settings/close/"])
def test_guests_are_sent_to_sign_up(path: str) -> None:
    browser = Client()
    browser.post("/guest/")
    answer = browser.get(path)
    assert answer.status_code == 403 and "Sign up first" in answer.content.decode()


def test_every_new_page_carries_the_content_security_policy() -> None:
    alice = make_user("alice")
    browser = signed_in(alice)
    for path in ("/settings/account/", "/settings/two-factor/", "/password-reset/"):
        assert "script-src 'self'" in browser.get(path)["Content-Security-Policy"]
    page = browser.post("/settings/two-factor/", {"action": "start"}, follow=True)
    assert "<script" not in page.content.decode().split("<footer")[0].split("</header>")[1]
