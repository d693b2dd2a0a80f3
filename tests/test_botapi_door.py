"""The short way in for a program's game actions (botapi/door.py): a POST to
/api/games/<id>/<action> made with a token is answered through Django's synchronous handler in
one database thread, and answers exactly as Django's ASGI handler does (status, headers, body,
language, log lines); every other request goes on to Django's ASGI handler. Also the token's
look-up written once (accounts/tokens.py) and Twisted's quicker Content-Type
(config/quick_content_type.py)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import random
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.testing import ApplicationCommunicator
from django.core.asgi import get_asgi_application
from django.utils import timezone
from twisted.web import http

from accounts import tokens
from accounts.models import ApiToken, User
from botapi.door import GameActionDoor, takes
from config import quick_content_type, serve
from games.engine import pick_client_move
from games.models import Game
from games.selectors import snapshot
from realtime import limits, logs
from realtime.db import db_call
from realtime.log_format import JsonFormatter
from tests.botapi_helpers import db, http_scope, token_for
from tests.games_helpers import make_user, new_game

transactional = pytest.mark.django_db(transaction=True)


def scope(
    path: str, *, method: str = "POST", token: str | None = None, extra: tuple[Any, ...] = ()
) -> dict[str, Any]:
    headers = [(b"host", b"testserver"), (b"content-type", b"application/json"), *extra]
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    return http_scope(path, method, headers)


Answer = tuple[int, list[tuple[bytes, bytes]], bytes]


async def ask(app: Any, request: dict[str, Any], body: bytes = b"{}") -> Answer:
    """The status, headers and body an ASGI application answers."""
    communicator = ApplicationCommunicator(app, request)
    await communicator.send_input({"type": "http.request", "body": body, "more_body": False})
    start = await communicator.receive_output(10)
    assert start["type"] == "http.response.start", start
    content = b""
    while True:
        message = await communicator.receive_output(10)
        content += message.get("body", b"")
        if not message.get("more_body", False):
            break
    await communicator.wait(10)
    return start["status"], list(start["headers"]), content


class CountedDoor:
    """The door, counting the requests it served itself."""

    def __init__(self) -> None:
        self.door = GameActionDoor(get_asgi_application())  # type: ignore[arg-type]
        self.served = 0
        respond = self.door.handler.respond

        def counted(*args: Any) -> Any:
            self.served += 1
            return respond(*args)

        self.door._respond = db_call(counted)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.door(scope, receive, send)


def comparable(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers, in order, with the request id's value (new each request) left out."""
    return [(name, b"" if name == b"X-Request-ID" else value) for name, value in headers]


def a_legal_move(game_id: int) -> str:
    legal = snapshot(Game.objects.get(pk=game_id))["legal_moves"]
    return pick_client_move(legal, random.Random(3))


# --- which requests the door takes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "method", "authorization", "taken"),
    [
        ("/api/games/7/move", "POST", b"Bearer dif_x", True),
        ("/api/games/7/resign", "POST", b"bearer dif_x", True),
        ("/api/games/7/draw_answer", "POST", b"BEARER dif_x", True),
        ("/api/games/7/move", "POST", None, False),  # a session's (or a visitor's)
        ("/api/games/7/move", "POST", b"Basic YTpi", False),
        ("/api/games/7/stream", "GET", b"Bearer dif_x", False),
        ("/api/games/7", "POST", b"Bearer dif_x", False),
        ("/api/games/x/move", "POST", b"Bearer dif_x", False),
        ("/api/games/7/move/", "POST", b"Bearer dif_x", False),
        ("/api/challenges", "POST", b"Bearer dif_x", False),
        ("/games/7/move", "POST", b"Bearer dif_x", False),
    ],
)
def test_the_door_takes_only_a_programs_game_actions(
    path: str, method: str, authorization: bytes | None, taken: bool
) -> None:
    request = scope(path, method=method)
    if authorization is not None:
        request["headers"].append((b"authorization", authorization))
    assert takes(request) is taken
    assert takes({"type": "websocket", "path": path}) is False


# --- the same answers as Django's ASGI handler ----------------------------------------------


@transactional
async def test_refusals_are_answered_exactly_as_djangos_handler_answers_them(
    settings: Any,
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    door, django = CountedDoor(), get_asgi_application()
    game = await db(new_game)()
    alice, bob = game.player1, game.player2
    playing, reading = await db(token_for)(alice, "play"), await db(token_for)(alice, "read")
    waiting = await db(token_for)(bob, "play")
    french = await db(make_user)("camille")
    await db(User.objects.filter(pk=french.pk).update)(language="fr")
    outsider = await db(token_for)(french, "play")
    move = f"/api/games/{game.pk}/move"
    cases: list[tuple[str, dict[str, Any], bytes]] = [
        ("bad_token", scope(move, token="dif_" + "0" * 40), b"{}"),
        ("bad_token", scope(move, token="not-a-token"), b"{}"),
        ("missing_scope", scope(move, token=reading), b"{}"),
        ("bad_json", scope(move, token=playing), b"{nope"),
        ("bad_message", scope(move, token=playing), b'{"move": 5}'),
        ("not_your_turn", scope(move, token=waiting), b'{"move": "c3", "ply": 0}'),
        ("not_a_player", scope(move, token=outsider), b'{"move": "c3", "ply": 0}'),  # French
        ("not_found", scope(f"/api/games/{game.pk}/dance", token=playing), b"{}"),
        ("no_such_game", scope("/api/games/999999/resign", token=playing), b"{}"),
        ("bad_message", scope(f"/api/games/{game.pk}/draw_answer", token=playing), b"{}"),
        (
            "too_large",
            scope(move, token=playing, extra=((b"content-length", b"1001"),)),
            b'{"move": "' + b"c" * 989 + b'"}',
        ),
        # The proxy's request id is kept, as the middleware keeps it.
        (
            "bad_json",
            scope(move, token=playing, extra=((b"x-request-id", b"proxy-1"),)),
            b"{x",
        ),
    ]
    for code, request, body in cases:
        through_door = await ask(door, request, body)
        through_django = await ask(django, request, body)
        status, headers, content = through_door
        assert json.loads(content)["error"]["code"] == code, (code, content)
        assert (status, comparable(headers), content) == (
            through_django[0],
            comparable(through_django[1]),
            through_django[2],
        ), code
        if (b"x-request-id", b"proxy-1") in request["headers"]:
            assert (b"X-Request-ID", b"proxy-1") in headers
    assert door.served == len(cases)
    # The French account is answered in French (the same message as Django's, above).
    english = await db(token_for)(await db(make_user)("erin"), "play")
    said = {}
    for name, secret in (("fr", outsider), ("en", english)):
        answer = await ask(door, scope(move, token=secret), b'{"move": "c3", "ply": 0}')
        said[name] = json.loads(answer[2])["error"]["message"]
    assert said["en"] == "Only the two players of this game can do that."
    assert said["fr"] != said["en"]
    assert (await db(Game.objects.get)(pk=game.pk)).version == game.version  # nothing changed


@transactional
async def test_a_move_and_a_rate_limit_answer_as_through_djangos_handler(settings: Any) -> None:
    limits.forget_buckets()
    settings.API_TOKEN_BURST, settings.API_TOKEN_PER_SECOND = 2, 0.01
    door, django = CountedDoor(), get_asgi_application()
    answers: dict[str, list[Answer]] = {}
    for name, app in (("door", door), ("django", django)):
        game = await db(new_game)()
        secret = await db(token_for)(game.player1, "play")
        move = json.dumps({"move": await db(a_legal_move)(game.pk), "ply": 0}).encode()
        request = scope(f"/api/games/{game.pk}/move", token=secret)
        answers[name] = [await ask(app, request, move), await ask(app, request, move)]
        answers[name].append(await ask(app, request, move))  # the bucket is empty now
        assert (await db(Game.objects.get)(pk=game.pk)).version == game.version + 1
    assert door.served == 3
    for (status, headers, content), (status2, headers2, content2) in zip(
        answers["door"], answers["django"], strict=True
    ):
        assert status == status2
        # Content-Length may differ by a digit: the games' ids and clocks are not the same.
        same = [(n, v) for n, v in comparable(headers) if n != b"Content-Length"]
        assert same == [(n, v) for n, v in comparable(headers2) if n != b"Content-Length"]
        first, second = json.loads(content), json.loads(content2)
        assert first.keys() == second.keys()
    played, again, refused = (json.loads(answer[2]) for answer in answers["door"])
    assert played["ok"] and not played["duplicate"] and played["event"]["type"] == "move"
    assert again["duplicate"]  # the same move and ply again: nothing played twice
    assert refused["error"]["code"] == "rate_limited" and refused["error"]["retry_after"] > 0
    assert (
        dict(answers["door"][2][1])[b"Retry-After"] == dict(answers["django"][2][1])[b"Retry-After"]
    )


@transactional
async def test_every_other_request_goes_to_djangos_handler() -> None:
    door = CountedDoor()
    game = await db(new_game)()
    secret = await db(token_for)(game.player1, "read")
    status, _headers, content = await ask(
        door, scope(f"/api/games/{game.pk}/positions", method="GET", token=secret)
    )
    assert status == 200 and "positions" in json.loads(content)
    status, _headers, content = await ask(door, scope(f"/api/games/{game.pk}/move"), b"{}")
    assert (status, json.loads(content)["error"]["code"]) == (403, "csrf_failed")
    assert door.served == 0


@transactional
async def test_the_doors_lines_carry_the_request_and_never_the_token() -> None:
    door = CountedDoor()  # first: setting Django up configures the log's handlers anew
    handler = next(h for h in logging.getLogger().handlers if h.name == "console")
    assert isinstance(handler, logging.StreamHandler)
    stream = io.StringIO()
    previous_stream, previous_format = handler.setStream(stream), handler.formatter
    handler.setFormatter(JsonFormatter())
    game = await db(new_game)()
    secret = await db(token_for)(game.player1, "read")
    try:
        status, headers, _content = await ask(
            door, scope(f"/api/games/{game.pk}/resign", token=secret)
        )
    finally:
        handler.setStream(previous_stream)
        handler.setFormatter(previous_format)
    assert status == 403 and door.served == 1
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    (line,) = [record for record in records if record["message"].startswith("Forbidden")]
    assert line["message"] == f"Forbidden: /api/games/{game.pk}/resign"
    assert line["request_id"] == dict(headers)[b"X-Request-ID"].decode()
    assert (line["game_id"], line["user_id"], line["status"]) == (game.pk, game.player1_id, 403)
    assert secret not in stream.getvalue()


async def fields_while_sending(app: Any, request: dict[str, Any]) -> dict[str, Any]:
    """The log context's fields while the answer is sent: those of Daphne's access line."""
    seen: dict[str, Any] = {}
    waiting = [{"type": "http.request", "body": b"{}", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if waiting:
            return waiting.pop()
        await asyncio.sleep(60)  # Django's handler listens for a disconnect meanwhile
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            seen.update(logs.current_fields())

    # In a task of its own, as Daphne runs each request's application.
    await asyncio.wait_for(asyncio.create_task(app(request, receive, send)), 10)
    return seen


@transactional
async def test_the_access_line_names_the_request_as_through_djangos_handler() -> None:
    door = CountedDoor()
    game = await db(new_game)()
    secret = await db(token_for)(game.player1, "play")
    request = scope(f"/api/games/{game.pk}/resign", token=secret)
    through_door = await fields_while_sending(door, request)
    through_django = await fields_while_sending(get_asgi_application(), request)
    assert door.served == 1
    assert through_door.pop("request_id") != through_django.pop("request_id")
    assert (
        through_door
        == through_django
        == {
            "game_id": game.pk,
            "user_id": game.player1_id,
            "user": game.player1.username,
        }
    )


# --- the token's look-up ---------------------------------------------------------------------


@pytest.mark.django_db
def test_the_written_look_up_loads_the_token_and_user_as_the_orm_does() -> None:
    user = make_user("dora")
    User.objects.filter(pk=user.pk).update(
        language="de", bot_since=timezone.now(), closed_at=None, email_on_move=False
    )
    _token, secret = tokens.create_token(user=user, name="engine", scopes=["bot", "read"])
    found = tokens.authenticate(secret)
    assert found is not None
    expected = ApiToken.objects.select_related("user").get(digest=tokens.digest(secret))
    for field in ApiToken._meta.concrete_fields:
        assert getattr(found, field.attname) == getattr(expected, field.attname), field.name
    for field in User._meta.concrete_fields:
        assert getattr(found.user, field.attname) == getattr(expected.user, field.attname), (
            field.name
        )
    assert found.user.is_bot_account and found.user.language == "de"
    assert found.last_used_at is not None and found.last_used_at.tzinfo is not None
    assert not found._state.adding and not found.user._state.adding
    tokens.revoke(user=user, token_id=found.pk)
    assert tokens.authenticate(secret) is None  # read from the database every time


# --- Twisted's Content-Type --------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        b"application/json",
        b"Application/JSON; charset=UTF-8",
        b"application/json;charset=utf-8",
        b"  text/plain ; format=flowed",
        b"application/x-www-form-urlencoded",
        b"multipart/form-data; boundary=----x",
        b'MULTIPART/FORM-DATA;boundary="a;b"',
        b"application/vnd.api+json",
        b"json",
        b"",
        b"a/b/c",
        b"text/ plain",
        b"\xe9t\xe9/json",
        b"application/json (comment)",
    ],
)
def test_the_quick_content_type_answers_as_twisteds(value: bytes) -> None:
    twisted_parse: Callable[[bytes], bytes] = quick_content_type._twisted_parse
    assert quick_content_type.parse_content_type(value) == twisted_parse(value)


def test_the_quick_content_type_is_installed_by_the_server() -> None:
    original = http._parseContentType
    try:
        quick_content_type.install()
        assert http._parseContentType is quick_content_type.parse_content_type
    finally:
        http._parseContentType = original


def test_twisteds_own_access_line_is_not_formatted() -> None:
    from daphne import http_protocol

    original = http_protocol.HTTPFactory.log
    written = io.StringIO()

    class Factory(http_protocol.HTTPFactory):
        def __init__(self) -> None:
            self._logFile = written  # type: ignore[assignment]

    try:
        serve.no_twisted_access_lines()
        Factory().log(object())  # type: ignore[arg-type]
    finally:
        http_protocol.HTTPFactory.log = original  # type: ignore[method-assign]
    assert written.getvalue() == ""
