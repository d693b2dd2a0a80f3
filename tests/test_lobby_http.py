"""The lobby over HTTP: the same services as the socket, with JSON errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from games.models import Game
from lobby.models import Challenge, Seek

pytestmark = pytest.mark.django_db(transaction=True)


def guest() -> tuple[Client, str]:
    browser = Client()
    browser.post("/guest/")
    name = browser.get("/api/lobby").json()["user"]["username"]
    return browser, name


def post(browser: Client, url: str, body: Any = None) -> Any:
    return browser.post(url, data=json.dumps(body or {}), content_type="application/json")


def test_two_seeks_over_http_pair_into_a_game() -> None:
    first, _ = guest()
    second, _ = guest()
    answer = post(first, "/api/seeks", {"games": [{"slug": "diffusion"}]})
    assert answer.status_code == 200 and answer.json()["game_id"] is None
    answer = post(second, "/api/seeks", {"games": [{"slug": "diffusion", "options": {}}]})
    game_id = answer.json()["game_id"]
    assert Game.objects.filter(pk=game_id).exists()
    assert Seek.objects.filter(status="open").count() == 0


def test_a_challenge_over_http_from_creation_to_game() -> None:
    alice, _ = guest()
    bob, bob_name = guest()
    made = post(alice, "/api/challenges", {"user": bob_name, "slug": "diffusion", "side": "first"})
    challenge_id = made.json()["challenge"]["id"]
    assert bob.get("/api/lobby").json()["challenges"]["incoming"][0]["id"] == challenge_id
    refused = post(alice, f"/api/challenges/{challenge_id}/accept")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "not_yours"
    accepted = post(bob, f"/api/challenges/{challenge_id}/accept")
    assert Game.objects.get(pk=accepted.json()["game_id"]).player2.username == bob_name
    again = post(bob, f"/api/challenges/{challenge_id}/accept")
    assert again.status_code == 409 and again.json()["error"]["code"] == "challenge_accepted"


@pytest.mark.parametrize(
    ("url", "body", "status", "code"),
    [
        ("/api/seeks", {"games": [{"slug": "go"}]}, 400, "invalid_options"),
        ("/api/seeks", {"games": "diffusion"}, 400, "bad_message"),
        ("/api/challenges", {"user": "nobody", "slug": "diffusion"}, 404, "unknown_user"),
        ("/api/command", {"text": "diffusion frobnicate"}, 400, "bad_command"),
        ("/api/command", {"text": "diffusion resign 1 alice mail-pw"}, 400, "mail_only"),
        ("/api/seeks/999/cancel", {}, 404, "no_such_seek"),
        ("/api/challenges/999/decline", {}, 404, "no_such_challenge"),
    ],
)
def test_bad_lobby_requests_get_json_errors(url: str, body: Any, status: int, code: str) -> None:
    browser, _ = guest()
    answer = post(browser, url, body)
    assert answer.status_code == status
    assert answer.json()["error"]["code"] == code
    assert Challenge.objects.count() == 0


def test_a_visitor_must_sign_in_first() -> None:
    answer = post(Client(), "/api/seeks", {"games": [{"slug": "diffusion"}]})
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "not_logged_in"
    assert Client().get("/api/lobby").json()["user"] is None


def test_a_body_that_is_not_json_is_refused_as_on_the_socket() -> None:
    browser, _ = guest()
    answer = browser.post("/api/seeks", data="{", content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "bad_json"


def test_a_pbmserv_option_in_superscript_digits_is_refused_not_a_crash() -> None:
    alice, name = guest()
    _, other = guest()
    for game in ("zigzag", "diffusion"):
        answer = post(alice, "/api/command", {"text": f"{game} challenge -pits=² {name} {other}"})
        assert answer.status_code == 400, answer.content
        assert answer.json()["error"]["code"] == "invalid_options"
    assert not Challenge.objects.exists()


def test_an_unexpected_failure_in_the_api_is_a_json_500_without_a_traceback(
    monkeypatch: Any,
) -> None:
    from lobby.services import seeks

    def broken(**_: Any) -> None:
        raise RuntimeError("a bug deep inside")

    monkeypatch.setattr(seeks, "create_seek", broken)
    alice, _ = guest()
    alice.raise_request_exception = False  # answer as the server would, not re-raise
    answer = post(alice, "/api/seeks", {"games": [{"slug": "diffusion"}]})
    assert answer.status_code == 500
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["error"]["code"] == "server_error"
    assert "a bug deep inside" not in answer.content.decode()


@pytest.mark.parametrize(
    ("method", "url", "status", "code"),
    [
        ("get", "/api/no-such-thing", 404, "not_found"),
        ("get", "/api/seeks", 405, "method_not_allowed"),
        ("post", "/api/games/999999/move", 403, "csrf_failed"),
    ],
)
def test_api_refusals_outside_the_views_are_json_too(
    method: str, url: str, status: int, code: str
) -> None:
    browser = Client(enforce_csrf_checks=True)
    answer = getattr(browser, method)(url)
    assert answer.status_code == status
    assert answer.json()["error"]["code"] == code


def test_a_deeply_nested_body_is_refused_without_a_crash() -> None:
    browser, _ = guest()
    body = '{"games": [{"slug": "diffusion"}], "x": ' + "[" * 5000 + "]" * 5000 + "}"
    answer = browser.post("/api/seeks", data=body, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "bad_json"
    assert not Seek.objects.exists()
