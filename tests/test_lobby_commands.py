"""The lobby's one command table (lobby/commands.py): every operation in it is served by the
socket and by HTTP, through the table, with the same request."""

from __future__ import annotations

import dataclasses
import json
import re
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import resolve

from lobby import api, commands, protocol
from lobby.consumers import LobbyConsumer
from realtime.protocol import Message, tag_of
from tests.wsutil import communicator, receive

pytestmark = pytest.mark.django_db(transaction=True)
db = database_sync_to_async

# A request of each operation, as the socket sends it (without `type` and `id`). A new
# operation needs one here: the tests below then check that both doors serve it.
EXAMPLES: dict[str, dict[str, Any]] = {
    "seek": {"games": [{"slug": "diffusion", "options": {}}], "time_control": "5+3"},
    "cancel_seek": {"seek_id": 5},
    "challenge": {"user": "bob", "slug": "diffusion", "side": "first"},
    "accept": {"challenge_id": 6},
    "decline": {"challenge_id": 7, "reason": "too fast"},
    "cancel_challenge": {"challenge_id": 8},
    "command": {"text": "diffusion challenge alice bob"},
    "play_computer": {"slug": "diffusion", "level": 2},
}


def test_every_operation_has_an_example() -> None:
    assert set(EXAMPLES) == set(commands.BY_TAG)


def test_the_socket_accepts_the_tables_operations_and_its_own_two() -> None:
    accepted = {tag_of(kind) for kind in protocol.CLIENT_MESSAGES.__args__}
    assert accepted == {*commands.BY_TAG, "ping", "sync"}
    for tag in commands.BY_TAG:
        assert LobbyConsumer.handlers[tag] == "handle_operation"


@pytest.mark.parametrize("operation", commands.OPERATIONS, ids=lambda op: op.tag)
def test_every_operation_has_its_http_route(operation: commands.Operation) -> None:
    url = "/" + re.sub(r"<int:\w+>", "1", operation.route)
    match = resolve(url)
    assert match.url_name == operation.url_name
    assert match.func.__name__ == api.view(operation).__name__


def split(operation: commands.Operation, fields: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The HTTP address and body of a request: route parameters go in the address."""
    body = dict(fields)
    url = "/" + re.sub(r"<int:(\w+)>", lambda name: str(body.pop(name.group(1))), operation.route)
    return url, body


@pytest.mark.parametrize("tag", sorted(EXAMPLES))
async def test_both_doors_dispatch_through_the_one_table(
    tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replace the operation's service call in the table only: both doors then reach the
    replacement, with the same typed request, and answer as the table says."""
    heard: list[tuple[str, Message, bool]] = []

    def call(user: Any, message: Message, pair_now: bool) -> Any:
        heard.append((user.username, message, pair_now))
        return SimpleNamespace(pk=0), None

    def call_many(requests: list[tuple[Any, Message]]) -> list[Any]:
        # A batch of requests, as the socket sends an operation that has one: never paired.
        return [call(user, message, False) for user, message in requests]

    operation = commands.BY_TAG[tag]
    replaced = dataclasses.replace(
        operation,
        call=call,
        call_many=call_many if operation.call_many else None,
        ok=lambda _: {},
        answer=lambda _: {"served": tag},
    )
    monkeypatch.setitem(commands.BY_TAG, tag, replaced)

    browser = Client()
    await db(browser.post)("/guest/")
    url, body = split(operation, EXAMPLES[tag])
    answer = await db(browser.post)(url, data=json.dumps(body), content_type="application/json")
    assert answer.status_code == 200, answer.content
    assert answer.json() == {"served": tag}

    socket = communicator(session_key=browser.cookies["sessionid"].value)
    assert (await socket.connect())[0]
    assert (await receive(socket))["type"] == "lobby"
    await socket.send_json_to({"type": tag, "id": 41, **EXAMPLES[tag]})
    assert await receive(socket) == {"type": "ok", "id": 41}
    await socket.disconnect()

    (by_http, http_message, http_pairs), (by_socket, socket_message, socket_pairs) = heard
    assert by_http == by_socket
    assert http_message == msgspec.structs.replace(socket_message, id=None)
    assert isinstance(http_message, operation.message)
    # HTTP pairs a seek at once; the socket leaves it to the matchmaker.
    assert (http_pairs, socket_pairs) == (True, False)
