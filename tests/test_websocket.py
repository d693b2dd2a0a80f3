"""The websocket stack: origin check, session auth, frame handling and group broadcasts."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.test import Client

from accounts.models import User
from lobby.consumers import LOBBY_GROUP
from tests.wsutil import communicator, receive


async def connect_and_greet(**kwargs: object) -> tuple[object, dict]:
    client = communicator(**kwargs)  # type: ignore[arg-type]
    connected, _ = await client.connect()
    assert connected
    return client, await receive(client)


@pytest.mark.django_db(transaction=True)
async def test_a_visitor_is_greeted_without_a_user() -> None:
    client, hello = await connect_and_greet()
    assert (hello["type"], hello["user"]) == ("lobby", None)
    await client.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_the_socket_knows_the_logged_in_user_from_the_session() -> None:
    def log_in_guest() -> str:
        browser = Client()
        browser.post("/guest/")
        return browser.cookies["sessionid"].value

    session_key = await database_sync_to_async(log_in_guest)()
    client, hello = await connect_and_greet(session_key=session_key)
    guest = await database_sync_to_async(User.objects.get)()
    assert hello["type"] == "lobby"
    assert hello["user"] == {"username": guest.username, "is_guest": True}
    await client.disconnect()


async def test_a_socket_from_another_site_is_refused() -> None:
    client = communicator(origin=b"https://evil.example")
    connected, _ = await client.connect()
    assert not connected


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("this is not json", "bad_json"),
        ("[1, 2, 3]", "bad_message"),
        ('{"no": "type"}', "bad_message"),
        ('{"type": 7}', "bad_message"),
        ('{"type": "launch_missiles"}', "unknown_type"),
        # Deep nesting once crashed the decoder (RecursionError): now a plain refusal.
        ("[" * 2000 + "]" * 2000, "bad_message"),
        ('{"type": "ping", "x": ' + "[" * 3000 + "]" * 3000 + "}", "bad_json"),
        ("{" * 100_000, "too_large"),
    ],
)
async def test_a_bad_frame_gets_an_error_and_the_socket_stays_usable(frame: str, code: str) -> None:
    client, _ = await connect_and_greet()
    await client.send_to(text_data=frame)
    error = await receive(client)
    assert error["type"] == "error"
    assert error["code"] == code
    assert error["message"]
    await client.send_json_to({"type": "ping", "id": 1})
    assert await receive(client) == {"type": "pong", "id": 1}
    await client.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_binary_frame_is_refused_with_a_message() -> None:
    client, _ = await connect_and_greet()
    await client.send_to(bytes_data=b"\x00\x01")
    error = await receive(client)
    assert error["code"] == "bad_frame"
    await client.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_the_size_limit_counts_bytes_not_characters(settings: object) -> None:
    limit = settings.WEBSOCKET_MAX_MESSAGE_BYTES  # type: ignore[attr-defined]
    # Each "é" is two bytes in UTF-8: under the limit in characters, over it in bytes.
    frame = json.dumps({"type": "ping", "id": "é" * (limit // 2)}, ensure_ascii=False)
    client, _ = await connect_and_greet()
    await client.send_to(text_data=frame)
    assert (await receive(client))["code"] == "too_large"
    await client.disconnect()


async def broadcast_reaches_two_sockets() -> None:
    first, _ = await connect_and_greet()
    second, _ = await connect_and_greet()
    payload = {"type": "announcement", "text": "Diffusion night at eight"}
    await get_channel_layer().group_send(
        LOBBY_GROUP, {"type": "lobby.announcement", "text": payload["text"]}
    )
    assert await receive(first, within=5) == payload
    assert await receive(second, within=5) == payload
    await first.disconnect()
    await second.disconnect()
    # The group still works after members leave.
    third, _ = await connect_and_greet()
    await get_channel_layer().group_send(
        LOBBY_GROUP, {"type": "lobby.announcement", "text": payload["text"]}
    )
    assert await receive(third, within=5) == payload
    await third.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_group_broadcast_reaches_every_member_in_memory(
    in_memory_channel_layer: str,
) -> None:
    await broadcast_reaches_two_sockets()


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
async def test_a_group_broadcast_reaches_every_member_through_redis(
    redis_channel_layer: str,
) -> None:
    await broadcast_reaches_two_sockets()
