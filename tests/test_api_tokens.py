"""Personal access tokens (accounts/tokens.py, docs/API.md): made on the settings page and
shown once, kept as a digest, sent as `Authorization: Bearer`, held to their scopes, and ended
by their owner, a new password and the account's closing."""

from __future__ import annotations

import hashlib
import re

import pytest
from django.test import Client

from accounts import tokens
from accounts.models import ApiToken, User
from games import services

pytestmark = pytest.mark.django_db
PASSWORD = "x-long-password-1"


def make_user(name: str) -> User:
    return User.objects.create_user(username=name, password=PASSWORD)


def signed_in(user: User) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def program(secret: str) -> Client:
    """A client that sends a token and never a cookie."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def create_on_page(browser: Client, name: str, scopes: list[str]) -> str:
    page = browser.post("/settings/tokens/", {"action": "create", "name": name, "scopes": scopes})
    assert page.status_code == 200, page.content
    found = re.search(r'id="new-token-secret">(dif_[A-Za-z0-9_-]+)<', page.content.decode())
    assert found, page.content.decode()
    return found.group(1)


def test_a_token_is_shown_once_and_only_its_digest_is_stored() -> None:
    alice = make_user("alice")
    browser = signed_in(alice)
    secret = create_on_page(browser, "my bot", ["read", "play"])
    row = ApiToken.objects.get(user=alice)
    assert row.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(list(ApiToken.objects.values()))
    assert (row.name, row.scopes, row.hint) == ("my bot", "read play", secret[-4:])
    listing = browser.get("/settings/tokens/").content.decode()
    assert "my bot" in listing and f"…{secret[-4:]}" in listing
    assert secret not in listing


@pytest.mark.parametrize(
    ("form", "code_text"),
    [
        ({"action": "create", "name": "", "scopes": ["read"]}, "Name the token"),
        ({"action": "create", "name": "x", "scopes": []}, "at least one scope"),
        ({"action": "create", "name": "x", "scopes": ["admin"]}, "Unknown scope admin"),
        ({"action": "drop"}, "not something this page does"),
        ({"action": "revoke", "token": "99999"}, "no such token"),
    ],
)
def test_the_settings_page_refuses_bad_forms_with_a_reason(
    form: dict[str, object], code_text: str
) -> None:
    browser = signed_in(make_user("alice"))
    page = browser.post("/settings/tokens/", form)
    assert page.status_code == 400 and code_text in page.content.decode()
    assert not ApiToken.objects.exists()


def test_guests_have_no_tokens() -> None:
    guest = User.objects.create(username="Guest-abcdef", is_guest=True)
    page = signed_in(guest).post(
        "/settings/tokens/", {"action": "create", "name": "x", "scopes": ["read"]}
    )
    assert page.status_code == 403 and not ApiToken.objects.exists()


def test_a_token_moves_without_csrf_and_only_with_the_play_scope() -> None:
    alice, bob = make_user("alice"), make_user("bob")
    game = services.create_game(slug="diffusion", options={}, player1=alice, player2=bob)
    _row, reader = tokens.create_token(user=alice, name="r", scopes=["read"])
    _row, player = tokens.create_token(user=alice, name="p", scopes=["play"])
    before = program(reader).get(f"/api/games/{game.pk}").json()
    body = {"move": before["game"]["legal_moves"][0], "ply": 0}
    refused = program(reader).post(
        f"/api/games/{game.pk}/move", body, content_type="application/json"
    )
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "missing_scope"
    played = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {player}").post(
        f"/api/games/{game.pk}/move", body, content_type="application/json"
    )
    assert played.status_code == 200, played.content
    assert played.json()["ok"] is True
    assert program(reader).get(f"/api/games/{game.pk}").json()["v"] > before["v"]


def test_any_scope_reads_public_endpoints_but_no_token_reaches_session_pages() -> None:
    alice = make_user("alice")
    _row, reader = tokens.create_token(user=alice, name="r", scopes=["read"])
    assert program(reader).get("/api/games?status=active").status_code == 200
    for path in ("/api/follows", "/api/blocks", "/api/vacation", "/api/analysis"):
        answer = program(reader).get(path)
        assert answer.status_code == 403, path
        assert answer.json()["error"]["code"] == "token_not_accepted", path
    # Not even its own settings page: a token cannot make tokens.
    page = program(reader).post(
        "/settings/tokens/", {"action": "create", "name": "more", "scopes": ["play"]}
    )
    assert page.status_code == 403 and ApiToken.objects.count() == 1


@pytest.mark.parametrize(
    "header",
    ["Bearer dif_not-a-token-at-all", "Bearer ", "bearer dif_" + "x" * 200, "Bearer abc"],
)
def test_an_unknown_token_is_refused_with_bad_token(header: str) -> None:
    answer = Client(HTTP_AUTHORIZATION=header).get("/api/games?status=active")
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "bad_token"
    assert answer["WWW-Authenticate"].startswith("Bearer")


def test_a_revoked_token_is_refused_at_once() -> None:
    alice = make_user("alice")
    browser = signed_in(alice)
    secret = create_on_page(browser, "bot", ["read"])
    assert program(secret).get("/api/games").status_code == 200
    row = ApiToken.objects.get()
    answer = browser.post("/settings/tokens/", {"action": "revoke", "token": str(row.pk)})
    assert answer.status_code == 302
    assert program(secret).get("/api/games").status_code == 401
    row.refresh_from_db()
    assert row.revoked_why == "owner"
    assert "bot" not in browser.get("/settings/tokens/").content.decode().split("Your tokens")[1]


def test_another_users_token_cannot_be_revoked() -> None:
    alice, mallory = make_user("alice"), make_user("mallory")
    row, secret = tokens.create_token(user=alice, name="a", scopes=["read"])
    page = signed_in(mallory).post("/settings/tokens/", {"action": "revoke", "token": str(row.pk)})
    assert page.status_code == 400
    assert program(secret).get("/api/games").status_code == 200


def test_a_new_password_ends_every_token() -> None:
    alice = make_user("alice")
    _row, secret = tokens.create_token(user=alice, name="a", scopes=["read"])
    alice.set_password("another-long-password-2")
    alice.save()
    assert program(secret).get("/api/games").status_code == 401
    assert ApiToken.objects.get().revoked_why == "password"


def test_closing_the_account_ends_every_token() -> None:
    from privacy.closure import close_account

    alice = make_user("alice")
    _row, secret = tokens.create_token(user=alice, name="a", scopes=["read"])
    close_account(user=alice, reason="leaving")
    assert program(secret).get("/api/games").status_code == 401
    assert ApiToken.objects.get().revoked_why == "closed"


def test_at_most_twenty_live_tokens() -> None:
    alice = make_user("alice")
    for number in range(tokens.MAX_TOKENS):
        tokens.create_token(user=alice, name=f"t{number}", scopes=["read"])
    page = signed_in(alice).post(
        "/settings/tokens/", {"action": "create", "name": "one more", "scopes": ["read"]}
    )
    assert page.status_code == 400 and "revoke one first" in page.content.decode()
