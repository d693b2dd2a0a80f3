"""The websocket stack: origin check, session auth, frame handling and group broadcasts."""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.test import Client

from accounts.models import User
from config.asgi import application
from lobby.consumers import LOBBY_GROUP
from lobby.protocol import Ping
from realtime.ws import CLOSE_FLOODING, FloodGuard, JsonConsumer, Turn
from tests.wsutil import Client as SocketClient
from tests.wsutil import communicator, frames_until_close, receive


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
    assert hello["user"] == {"username": guest.username, "is_guest": True, "is_bot_account": False}
    await client.disconnect()


async def test_a_socket_from_another_site_is_refused() -> None:
    client = communicator(origin=b"https://evil.example")
    connected, _ = await client.connect()
    assert not connected


@pytest.mark.parametrize("origin", [None, b"http://[localhost", b"http://localhost.evil.example"])
async def test_a_socket_without_a_good_origin_is_refused(origin: bytes | None) -> None:
    headers = [(b"host", b"localhost")] + ([(b"origin", origin)] if origin else [])
    client = SocketClient(application, "/ws/lobby/", headers=headers)
    connected, _ = await client.connect()
    assert not connected


@pytest.mark.django_db(transaction=True)
async def test_a_session_whose_password_changed_since_is_a_visitor_on_the_socket() -> None:
    def signed_in_then_password_changed() -> str:
        browser = Client()
        browser.post("/guest/")
        guest = User.objects.get()
        guest.set_password("a new one entirely")  # the session's hash no longer matches
        guest.save()
        return browser.cookies["sessionid"].value

    session_key = await database_sync_to_async(signed_in_then_password_changed)()
    client, hello = await connect_and_greet(session_key=session_key)
    assert (hello["type"], hello["user"]) == ("lobby", None)
    await client.disconnect()


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


@pytest.mark.django_db(transaction=True)
async def test_a_layer_message_with_no_handler_ends_the_socket_as_a_crash_in_channels_would(
    in_memory_channel_layer: str,
) -> None:
    """The channel layer's messages are served by a task of their own (realtime/ws.py): a
    failure there ends the socket's application with that error, not silently."""
    client, _ = await connect_and_greet()
    await get_channel_layer().group_send(LOBBY_GROUP, {"type": "no.such.handler"})
    with pytest.raises(ValueError, match=r"No handler for message type no\.such\.handler"):
        for _ in range(20):  # frames sent before the failure come out first
            await client.receive_output(timeout=3)


class SlowConsumer(JsonConsumer):
    """A socket whose handlers take their time, saying when each starts and ends."""

    messages = Ping
    handlers: ClassVar[dict[str, str]] = {"ping": "handle_ping"}
    seen: ClassVar[list[str]] = []

    async def connect(self) -> None:
        await self.accept()
        await self.join("slow")

    async def handle_ping(self, message: Ping) -> None:
        self.seen.append("ping started")
        await asyncio.sleep(0.2)
        self.seen.append("ping ended")

    async def slow_news(self, message: dict[str, Any]) -> None:
        self.seen.append("news started")
        await asyncio.sleep(0.01)
        self.seen.append("news ended")
        await self.send(text_data="{}")


async def test_a_clients_message_and_a_broadcast_are_handled_one_at_a_time(
    in_memory_channel_layer: str,
) -> None:
    """A broadcast arriving while the socket handles a client's message waits for it (as in
    Channels: handlers never interleave, whichever side their messages come from)."""
    SlowConsumer.seen.clear()
    client = WebsocketCommunicator(SlowConsumer.as_asgi(), "/ws/slow/")
    connected, _ = await client.connect()
    assert connected
    await client.send_to(text_data=json.dumps({"type": "ping", "id": 7}))
    await asyncio.sleep(0.05)  # the ping is in hand
    await get_channel_layer().group_send("slow", {"type": "slow.news"})
    # (A test socket, not one of the site's: its frame is read raw, not as the protocol's.)
    assert await client.receive_output(timeout=3) == {"type": "websocket.send", "text": "{}"}
    assert SlowConsumer.seen == ["ping started", "ping ended", "news started", "news ended"]
    await client.disconnect()


def verdicts(times: list[float]) -> list[str]:
    """What a FloodGuard with the sockets' figures says to messages sent at `times`."""
    now = [0.0]
    guard = FloodGuard(20, 40, limit=100, quiet=2.0, clock=lambda: now[0])
    said = []
    for at in times:
        now[0] = at
        said.append(guard.admit())
    return said


def every(interval: float, start: float, end: float) -> list[float]:
    return [start + i * interval for i in range(round((end - start) / interval))]


@pytest.mark.parametrize(
    ("sent", "warnings", "closed_at"),
    [
        # 20 a second for ten seconds: within the rate, never refused.
        (every(1 / 20, 0, 10), 0, None),
        # 300 a second: 40 through (the burst), then every drop is one flood even though
        # the bucket lets one message through every 50 ms: warned once, closed at drop 100.
        (every(1 / 300, 0, 2), 1, 40 + 100 + 6),
        # 60 a second for a second: one flood, warned once, not closed.
        (every(1 / 60, 0, 1), 1, None),
        # The same, then 3 s of calm, then again: two floods, two warnings.
        (every(1 / 60, 0, 1) + every(1 / 60, 4, 5), 2, None),
    ],
)
def test_a_flood_is_warned_once_and_closed_when_it_goes_on(
    sent: list[float], warnings: int, closed_at: int | None
) -> None:
    said = verdicts(sent)
    assert said.count("warn") == warnings
    if closed_at is None:
        assert "close" not in said
    else:
        assert abs(said.index("close") - closed_at) <= 6  # the tokens earned meanwhile


@pytest.mark.django_db(transaction=True)
async def test_a_socket_that_floods_is_told_once_then_closed_with_4429() -> None:
    client, _ = await connect_and_greet()
    for index in range(300):
        await client.send_json_to({"type": "ping", "id": index})
    frames, code = await frames_until_close(client)
    assert code == CLOSE_FLOODING
    kinds = [frame["type"] for frame in frames if frame["type"] != "online"]
    assert kinds.count("error") == 1
    assert next(f for f in frames if f["type"] == "error")["code"] == "rate_limited"
    assert 40 <= kinds.count("pong") < 60


@pytest.mark.django_db(transaction=True)
async def test_a_flooder_is_refused_at_the_handshake_for_a_while_and_others_are_not(
    settings: Any,
) -> None:
    # Closed for flooding, a script reconnected at once and flooded again, over and over.
    from realtime.ws import COOLDOWN

    settings.FLOOD_COOLDOWN_SECONDS = 30
    COOLDOWN.until.clear()
    client, _ = await connect_and_greet(address="203.0.113.40")
    for index in range(300):
        await client.send_json_to({"type": "ping", "id": index})
    _, code = await frames_until_close(client)
    assert code == CLOSE_FLOODING
    for index in range(20):  # frames in flight after the close are not acted on
        await client.send_json_to({"type": "ping", "id": 300 + index})
    assert await client.receive_nothing(timeout=0.3)

    again = communicator(address="203.0.113.40")
    accepted, _ = await again.connect()
    assert not accepted  # refused before anything runs: Daphne answers 403
    neighbour, hello = await connect_and_greet(address="198.51.100.7")
    assert hello["type"] == "lobby"
    await neighbour.disconnect()

    COOLDOWN.until["address:203.0.113.40"] = 0  # the cool-down is over
    back, hello = await connect_and_greet(address="203.0.113.40")
    assert hello["type"] == "lobby"
    await back.disconnect()


async def test_turns_are_taken_in_order_and_a_cancelled_waiter_gives_its_turn_on() -> None:
    turn = Turn()
    order: list[str] = []

    async def take(name: str, hold: float) -> None:
        async with turn:
            order.append(f"{name} in")
            await asyncio.sleep(hold)
            order.append(f"{name} out")

    first = asyncio.create_task(take("first", 0.05))
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(take(name, 0)) for name in ("second", "third", "fourth")]
    await asyncio.sleep(0.01)
    waiting[0].cancel()  # gives up while waiting
    await asyncio.gather(first, *waiting[1:])
    assert order == ["first in", "first out", "third in", "third out", "fourth in", "fourth out"]
    assert turn._waiting is None and not turn._held  # nothing kept once all are through


async def test_a_waiter_cancelled_as_its_turn_came_passes_it_on() -> None:
    turn = Turn()
    got: list[str] = []
    await turn.__aenter__()
    second = asyncio.create_task(turn.__aenter__())
    third = asyncio.create_task(turn.__aenter__())
    await asyncio.sleep(0)
    await turn.__aexit__()  # handed to the second, which is cancelled before it runs
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    await asyncio.wait_for(third, 1)  # the turn went on to the third
    got.append("third")
    await turn.__aexit__()
    assert got == ["third"] and not turn._held and turn._waiting is None
