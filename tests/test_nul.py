"""NUL characters, which PostgreSQL cannot store or compare, are refused at the edge."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from tests.games_helpers import make_user, session_for
from tests.wsutil import communicator, receive

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def browser() -> Client:
    signed_in = Client()
    signed_in.force_login(make_user("carol"))
    return signed_in


@pytest.mark.parametrize(
    "path", ["/challenge/ab%00cd/", "/@ab%00cd/", "/live/?page=%00", "/api/games?status=a%00"]
)
def test_a_nul_in_a_path_or_query_is_a_400_not_a_lookup(browser: Client, path: str) -> None:
    answer = browser.get(path)
    assert answer.status_code == 400
    if path.startswith("/api/"):
        assert answer.json()["error"]["code"] == "bad_request"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/challenges", {"user": "da\x00ve", "slug": "diffusion"}),
        ("/api/command", {"text": "zigzag challenge carol da\x00ve"}),
        ("/api/challenges", {"user": "dave", "slug": "diffusion", "options": {"a\x00": 1}}),
    ],
)
def test_a_nul_in_an_api_body_is_a_bad_message(
    browser: Client, path: str, body: dict[str, Any]
) -> None:
    answer = browser.post(path, json.dumps(body), content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "bad_message"


def test_a_nul_in_a_form_field_is_refused() -> None:
    answer = Client().post("/login/", {"username": "a\x00b", "password": "x"})
    assert answer.status_code == 400


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "challenge", "user": "b\x00ob", "slug": "diffusion", "id": 4},
        {"type": "accept", "token": "a\x00b", "id": 4},
        {"type": "command", "text": "zigzag challenge alice b\x00ob", "id": 4},
    ],
)
async def test_a_nul_in_a_socket_message_is_a_bad_message(frame: dict[str, Any]) -> None:
    alice = await database_sync_to_async(make_user)("alice")
    key = await database_sync_to_async(session_for)(alice)
    client = communicator("/ws/lobby/", session_key=key)
    assert (await client.connect())[0]
    await receive(client)
    await client.send_json_to(frame)
    error = await receive(client)
    assert (error["type"], error["code"], error["id"]) == ("error", "bad_message", 4)
    await client.disconnect()
