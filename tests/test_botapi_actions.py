"""Game actions over HTTP (botapi/actions.py, docs/API.md "Game actions"): the socket's own
messages as bodies, its services, its refusals and their HTTP statuses; a token needs `play`
(a bot account's `bot`), a browser's session its CSRF token."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from games import services
from games.engine import pick_client_move
from games.models import ChatLine, Game
from games.selectors import snapshot
from tests.botapi_helpers import post, token_for
from tests.games_helpers import make_user, new_game

pytestmark = pytest.mark.django_db


def play_one(game: Game) -> None:
    """Player 1 makes a move (through the service, as any door would)."""
    legal = snapshot(Game.objects.get(pk=game.pk))["legal_moves"]
    move = pick_client_move(legal, random.Random(5))
    services.play_move(game_id=game.pk, user=game.player1, move=move, ply=0)


def test_resign_answers_its_end_event_and_ends_the_game() -> None:
    game = new_game()
    status, answer = post(f"/api/games/{game.pk}/resign", token=token_for(game.player2, "play"))
    assert status == 200
    assert answer["ok"] is True and answer["event"]["type"] == "end"
    assert answer["event"]["result"]["winner"] == 1
    assert Game.objects.get(pk=game.pk).status == Game.Status.FINISHED


def test_abort_before_both_moved() -> None:
    game = new_game()
    status, answer = post(f"/api/games/{game.pk}/abort", token=token_for(game.player1, "play"))
    assert (status, answer["event"]["status"]) == (200, "aborted")


def test_draws_are_offered_and_answered_where_the_rules_allow_them() -> None:
    game = new_game("zigzag")
    alice, bob = token_for(game.player1, "play"), token_for(game.player2, "play")
    status, answer = post(f"/api/games/{game.pk}/draw", token=alice)
    assert (status, answer["event"]["type"], answer["event"]["by"]) == (200, "draw_offer", 1)
    status, answer = post(f"/api/games/{game.pk}/draw_answer", {"accept": False}, token=bob)
    assert (status, answer["event"]["type"]) == (200, "draw_declined")
    post(f"/api/games/{game.pk}/draw", token=alice)
    status, answer = post(f"/api/games/{game.pk}/draw_answer", {"accept": True}, token=bob)
    assert status == 200 and answer["event"]["type"] == "end"
    assert answer["event"]["result"]["winner"] is None
    diffusion = new_game()
    status, answer = post(
        f"/api/games/{diffusion.pk}/draw", token=token_for(diffusion.player1, "play")
    )
    assert (status, answer["error"]["code"]) == (400, "no_draws")


def test_takebacks_are_offered_and_answered() -> None:
    game = new_game()
    play_one(game)
    alice, bob = token_for(game.player1, "play"), token_for(game.player2, "play")
    status, answer = post(f"/api/games/{game.pk}/takeback", token=alice)
    assert (status, answer["event"]["type"]) == (200, "takeback_offer")
    status, answer = post(f"/api/games/{game.pk}/takeback_answer", {"accept": True}, token=bob)
    assert status == 200 and answer["event"]["type"] == "takeback"
    assert answer["event"]["ply"] == 0
    status, answer = post(f"/api/games/{game.pk}/takeback_answer", {"accept": True}, token=bob)
    assert (status, answer["error"]["code"]) == (400, "no_offer")


def test_chat_goes_to_the_players_room() -> None:
    game = new_game()
    token = token_for(game.player1, "play")
    status, answer = post(f"/api/games/{game.pk}/chat", {"text": "  hello   there "}, token=token)
    assert status == 200 and answer["event"]["type"] == "chat"
    assert answer["event"]["line"]["text"] == "hello there"
    assert ChatLine.objects.get(game=game).room == ChatLine.Room.PLAYERS
    status, answer = post(f"/api/games/{game.pk}/chat", {"text": "x" * 141}, token=token)
    assert (status, answer["error"]["code"]) == (400, "chat_too_long")


def test_a_claim_against_a_connected_or_returning_opponent_is_refused() -> None:
    game = new_game()
    status, answer = post(f"/api/games/{game.pk}/claim", token=token_for(game.player1, "play"))
    assert (status, answer["error"]["code"]) == (409, "opponent_here")


@pytest.mark.parametrize(
    ("path", "body", "code", "status"),
    [
        ("resign", None, "not_a_player", 403),
        ("nonsense", None, "not_found", 404),
        ("draw_answer", {"accept": "yes"}, "bad_message", 400),
        ("draw_answer", {}, "bad_message", 400),
        ("chat", {"text": 5}, "bad_message", 400),
        ("resign", {"type": "move"}, "bad_message", 400),
    ],
)
def test_refusals_are_the_sockets_codes_and_statuses(
    path: str, body: dict[str, Any] | None, code: str, status: int
) -> None:
    game = new_game()
    outsider = make_user("carol")
    user = outsider if code == "not_a_player" else game.player1
    got, answer = post(f"/api/games/{game.pk}/{path}", body, token=token_for(user, "play"))
    assert (got, answer["error"]["code"]) == (status, code), answer
    assert Game.objects.get(pk=game.pk).version == game.version  # nothing changed


def test_a_game_that_is_not_there() -> None:
    alice = make_user("alice")
    status, answer = post("/api/games/999999/resign", token=token_for(alice, "play"))
    assert (status, answer["error"]["code"]) == (404, "no_such_game")


def test_a_token_needs_the_play_scope() -> None:
    game = new_game()
    status, answer = post(f"/api/games/{game.pk}/resign", token=token_for(game.player1, "read"))
    assert (status, answer["error"]["code"]) == (403, "missing_scope")
    assert Game.objects.get(pk=game.pk).status == Game.Status.ACTIVE


def test_a_bot_accounts_bot_scope_plays() -> None:
    game = new_game()
    User.objects.filter(pk=game.player1_id).update(bot_since="2026-01-01T00:00:00Z")
    bot = User.objects.get(pk=game.player1_id)
    status, answer = post(f"/api/games/{game.pk}/resign", token=token_for(bot, "play"))
    assert (status, answer["error"]["code"]) == (403, "missing_scope")  # bots play with `bot`
    status, answer = post(f"/api/games/{game.pk}/resign", token=token_for(bot, "bot"))
    assert (status, answer["event"]["type"]) == (200, "end")


def test_a_browser_session_acts_with_its_csrf_token() -> None:
    game = new_game()
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(game.player1)
    browser.get("/")  # the page sets the CSRF cookie
    csrf = browser.cookies["csrftoken"].value
    refused = browser.post(f"/api/games/{game.pk}/resign", "{}", content_type="application/json")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "csrf_failed")
    answer = browser.post(
        f"/api/games/{game.pk}/resign",
        json.dumps({}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=csrf,
    )
    assert answer.status_code == 200 and answer.json()["event"]["type"] == "end"


def test_a_visitor_is_told_to_log_in() -> None:
    game = new_game()
    answer = Client().post(f"/api/games/{game.pk}/resign", "{}", content_type="application/json")
    assert (answer.status_code, answer.json()["error"]["code"]) == (403, "not_logged_in")
