"""Structured logs (docs/LOGGING.md): one JSON object per line with LOG_FORMAT=json, readable
lines by default; each line names its request or socket, its user and its game; a traceback is
one record; no secret is ever written.

The lines are read where they really go: from the console handler the settings configure, and
from the stderr of a real server process."""

from __future__ import annotations

import asyncio
import http.cookiejar
import io
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import yaml
from aiosmtpd.controller import Controller
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import Client, override_settings
from django.urls import reverse
from websockets import ConnectionClosed, InvalidStatus, Origin
from websockets.sync.client import connect

from accounts.models import User
from bots.search.mcts import Choice
from bots.services import bot_user
from bots.worker import Worker
from config import serve
from games import lifecycle, services
from games.management.commands import sweeper
from pbm import handlers, identity, inbox
from realtime import log_paths, logs
from realtime.log_format import JsonFormatter, redact
from tests.games_helpers import new_game, next_of_type, open_socket, overdue_game
from tests.mail import Sink, text_of
from tests.servers import Server, free_port, migrated_scratch_database, running

PASSWORD = "Correct-Horse-Battery-42"
CSRF = "csrf0123456789abcdef0123456789ab"


class Console:
    """What the settings' console handler writes, while a test runs."""

    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    @property
    def text(self) -> str:
        return self.stream.getvalue()

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text.splitlines()]


def _console_handler() -> logging.Handler:
    return next(h for h in logging.getLogger().handlers if h.name == "console")


@pytest.fixture
def console() -> Iterator[Console]:
    """The console handler, writing JSON (LOG_FORMAT=json) into a buffer."""
    handler = _console_handler()
    assert isinstance(handler, logging.StreamHandler)
    stream = io.StringIO()
    previous_stream, previous_format = handler.setStream(stream), handler.formatter
    handler.setFormatter(JsonFormatter())
    try:
        yield Console(stream)
    finally:
        handler.setStream(previous_stream)
        handler.setFormatter(previous_format)


@pytest.fixture
def plain_console() -> Iterator[Console]:
    """The console handler as the settings leave it by default (the plain format)."""
    handler = _console_handler()
    assert isinstance(handler, logging.StreamHandler)
    stream = io.StringIO()
    previous = handler.setStream(stream)
    try:
        yield Console(stream)
    finally:
        handler.setStream(previous)


logger = logging.getLogger("tests.test_logs")


# --- the formats ----------------------------------------------------------------------------


def test_a_line_is_one_json_object_with_its_context_and_its_whole_traceback(
    console: Console,
) -> None:
    with logs.context(request_id="edge-1", user_id=3, user="alice", game_id=7):
        try:
            raise ValueError("a message\non two lines")
        except ValueError:
            logger.exception("move %s failed", "c3")
    lines = console.text.splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["level"] == "ERROR" and record["logger"] == "tests.test_logs"
    assert record["message"] == "move c3 failed"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", record["ts"])
    assert {k: record[k] for k in ("request_id", "user_id", "user", "game_id")} == {
        "request_id": "edge-1",
        "user_id": 3,
        "user": "alice",
        "game_id": 7,
    }
    assert "socket_id" not in record and "mail" not in record
    assert record["traceback"].startswith("Traceback (most recent call last):")
    assert record["traceback"].endswith("ValueError: a message\non two lines")


def test_a_line_outside_any_context_has_no_context_fields(console: Console) -> None:
    logger.warning("the sweeper started")
    (record,) = console.records()
    assert set(record) == {"ts", "level", "logger", "message"}


def test_the_plain_format_shows_the_context_in_brackets(plain_console: Console) -> None:
    with logs.context(socket_id="ab12", user_id=3, user="alice", game_id=7):
        logger.warning("socket frame dropped")
    logger.warning("no context here")
    first, second = plain_console.text.splitlines()
    assert first.endswith(
        " WARNING tests.test_logs [sock=ab12 user=alice game=7]: socket frame dropped"
    )
    assert second.endswith(" WARNING tests.test_logs: no context here")


def test_settings_choose_the_format_from_log_format() -> None:
    assert settings.LOG_FORMAT == "plain"  # the tests' and `make run`'s
    assert settings.LOGGING["handlers"]["console"]["formatter"] == settings.LOG_FORMAT
    assert set(settings.LOGGING["formatters"]) == {"plain", "json"}


def test_production_logs_json_and_the_proxy_passes_its_request_id() -> None:
    docker = Path(__file__).resolve().parent.parent / "docker"
    assert re.search(r"^ENV LOG_FORMAT=json$", (docker / "Dockerfile").read_text(), re.M)
    compose = yaml.safe_load((docker / "compose.yml").read_text())["services"]
    for name in ("migrate", "web1", "web2", "sweeper", "bots", "mail"):
        assert compose[name]["environment"]["LOG_FORMAT"] == "${LOG_FORMAT:-json}", name
    site = re.search(r"location / \{(.*?)\}", (docker / "nginx-site.conf").read_text(), re.S)
    assert site is not None and "proxy_set_header X-Request-ID $request_id;" in site.group(1)


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parent.parent
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_in_json_a_warning_and_an_uncaught_exception_are_records_too() -> None:
    done = _python(
        "import django, warnings; django.setup(); warnings.warn('careful');"
        "raise RuntimeError('the process dies')",
        LOG_FORMAT="json",
        DJANGO_SECRET_KEY=SECRET,
    )
    assert done.returncode == 1
    warned, died = (json.loads(line) for line in done.stderr.splitlines())
    assert (warned["logger"], warned["level"]) == ("py.warnings", "WARNING")
    assert "UserWarning: careful" in warned["message"]
    assert (died["logger"], died["level"], died["message"]) == (
        "uncaught",
        "CRITICAL",
        "uncaught exception",
    )
    assert died["traceback"].endswith("RuntimeError: the process dies")


def test_an_unknown_log_format_stops_the_settings() -> None:
    done = _python("import django; django.setup()", LOG_FORMAT="xml", DJANGO_SECRET_KEY=SECRET)
    assert done.returncode != 0 and "LOG_FORMAT must be plain or json" in done.stderr


def test_a_process_wide_task_does_not_carry_the_socket_that_started_it() -> None:
    with logs.context(socket_id="ab12", game_id=7):
        inherited = logs.detached()
        assert logs.current_fields()["socket_id"] == "ab12"
    assert inherited.run(logs.current) is None


# --- secrets --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("POST /login/?next=/ password=Hunter-22&next=/", "Hunter-22"),
        ("form <QueryDict: {'password1': ['Hunter-22'], 'username': ['x']}>", "Hunter-22"),
        ('body {"password": "Hunter 22 with spaces", "move": "c3"}', "Hunter 22"),
        ("{'csrfmiddlewaretoken': ['tok3n-value-123']}", "tok3n-value-123"),
        ("Cookie: sessionid=abcd1234efgh5678; csrftoken=zyxw9876", "abcd1234efgh5678"),
        ("Cookie: sessionid=abcd1234efgh5678; csrftoken=zyxw9876", "zyxw9876"),
        ("{'HTTP_COOKIE': 'messages=hello; sessionid=abcd1234efgh5678'}", "abcd1234efgh5678"),
        ("Authorization: Bearer abcd.efgh.ijkl", "abcd.efgh.ijkl"),
        ("'HTTP_AUTHORIZATION': 'Basic dXNlcjpwYXNz'", "dXNlcjpwYXNz"),
        ("reply from pbm+r-12-345-6-0123456789abcdef0123@example.org", "0123456789abcdef0123"),
        ("stored pbkdf2_sha256$870000$salt$hashvalue", "870000$salt$hashvalue"),
        ("cannot reach postgres://diffusion:dbpass99@db:5432/diffusion", "dbpass99"),
        ("mail_password: hunter2hunter", "hunter2hunter"),
        ("session_key='q1w2e3r4t5y6u7i8'", "q1w2e3r4t5y6u7i8"),
        ("chat: my key is dif_Ab3-x_Yz0123456789abcdefghijklmnopqrst!", "Ab3-x_Yz0123456789"),
        ('bad body b\'{"move": "dif_0123456789abcdefghijklmnopqrstuvwxyzAB"}\'', "0123456789"),
    ],
)
def test_a_secret_in_a_line_is_redacted(line: str, secret: str) -> None:
    assert secret not in redact(line)
    assert "[redacted]" in redact(line)


@pytest.mark.parametrize(
    "line",
    [
        "game 7: move c3 by alice",
        "Forbidden (CSRF token missing.): /api/lobby",
        "change password alice: done",
        "sweeper: ended 2 game(s) on time",
        "tokens [3, 4] of user 7 revoked (password)",
        "GET /api/games/12/stream 200 (a stream of dif_ lines)",
    ],
)
def test_a_line_without_secrets_is_left_alone(line: str) -> None:
    assert redact(line) == line


# Each route of the URLconf with a secret parameter, and a value for each parameter.
MAILED_LINKS = {
    "password-reset-confirm": {"uidb64": "MQ", "token": "ctz3ab-0123456789abcdef0123"},
    "email-confirm": {"token": ".eJyrVkrOz8lJTS5RslJKLErMS8pXqgUAQ9oG9Q:1uX3Ab:Sig-nature_0123"},
    "challenge-link": {"token": "M2lTpVGaPxQxcIeK"},
}


@pytest.mark.parametrize("name", sorted(MAILED_LINKS))
def test_the_token_in_a_links_path_is_redacted_in_every_kind_of_line(name: str) -> None:
    values = MAILED_LINKS[name]
    path = reverse(name, kwargs=values)
    token = values["token"]
    for line in (
        f'127.0.0.1:5 "GET {path}" 200 3537',
        f'127.0.0.1:5 "POST {path}?next=/" 302 -',
        f'127.0.0.1:5 "GET {path.rstrip("/")}" 301 -',  # cut short of its slash
        f"Bad Request: {path}",
        f"Forbidden (CSRF token missing.): {path}",
        f"Internal Server Error: {path}\nTraceback …\nRuntimeError: at https://example.org{path}",
    ):
        assert token not in redact(line), line
        assert "[redacted]" in redact(line)
    assert redact(f"GET {path}") == f"GET {path.replace(token, '[redacted]')}"


def test_every_route_whose_parameter_is_named_as_a_secret_is_masked_and_no_other() -> None:
    # Read from the URLconf: the site's three links, and none of its other routes.
    routes = {route.route for route in log_paths.read_routes("config.urls")}
    assert routes == {
        "password-reset/<uidb64>/<token>/",
        "settings/email/confirm/<str:token>/",
        "challenge/<str:token>/",
    }
    for line in (
        "GET /password-reset/sent/ 200",
        "GET /password-reset/done/ 200",
        "GET /analysis/Ab12Cd34Ef56/ 200",  # shown to whoever has the link, changed by none
        "GET /@dora/ 200",
        "GET /games/12/ 200",
    ):
        assert redact(line) == line


@override_settings(ROOT_URLCONF="tests.log_urls")
def test_a_mailed_link_added_later_is_masked_from_its_route_alone() -> None:
    path = reverse("unsubscribe", kwargs={"user_id": 7, "signature": "s1gn4ture-of-the-link"})
    assert redact(f'"GET {path}" 200') == '"GET /mail/7/[redacted]/unsubscribe/" 200'


def test_a_tournaments_invitation_in_a_query_string_is_redacted() -> None:
    line = '"GET /tournaments/3/?invite=0123456789abcdef&x=1" 200'
    assert redact(line) == '"GET /tournaments/3/?invite=[redacted]&x=1" 200'
    assert redact("invite_only: True") == "invite_only: True"


def test_the_secret_key_and_a_bound_contexts_secrets_never_reach_the_log(console: Console) -> None:
    with logs.context(mail="<m1@example.org>"):
        logs.secret("mail-pass-1")
        try:
            raise KeyError(f"mail-pass-1 {settings.SECRET_KEY}")
        except KeyError:
            logger.exception("mail %s failed with %s", 1, settings.SECRET_KEY)
    text = console.text
    assert settings.SECRET_KEY not in text and "mail-pass-1" not in text
    (record,) = console.records()
    assert record["mail"] == "<m1@example.org>" and "KeyError" in record["traceback"]


# --- HTTP requests --------------------------------------------------------------------------


@pytest.mark.django_db
@override_settings(ROOT_URLCONF="tests.log_urls")
def test_a_failing_request_logs_its_id_user_and_game_on_every_line_and_no_secret(
    console: Console,
) -> None:
    User.objects.create_user(username="carol", password=PASSWORD)
    browser = Client(raise_request_exception=False)
    assert browser.login(username="carol", password=PASSWORD)
    session_key = browser.cookies["sessionid"].value
    browser.cookies["csrftoken"] = CSRF
    api = browser.post(
        "/api/games/7/explode?token=in-the-query-string",
        {"password": PASSWORD, "move": "c3"},
        HTTP_X_CSRFTOKEN=CSRF,
    )
    page = browser.post("/games/7/explode", {"password": PASSWORD}, content_type="application/json")
    assert (api.status_code, page.status_code) == (500, 500)
    ids = {api["X-Request-ID"], page["X-Request-ID"]}
    assert len(ids) == 2 and all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)

    text = console.text
    for secret in (PASSWORD, session_key, CSRF, settings.SECRET_KEY, "in-the-query-string"):
        assert secret not in text, secret
    records = console.records()
    # The view's warning, the API's error with its traceback, Django's "Internal Server Error"
    # after the response (API); the view's warning, Django's error with its traceback (page).
    assert len(records) == 5, records
    for record in records:
        assert record["request_id"] in ids
        assert (record["user"], record["user_id"], record["game_id"]) == (
            "carol",
            User.objects.get(username="carol").pk,
            7,
        )
    traced = [record for record in records if "traceback" in record]
    assert len(traced) == 2
    assert all("RuntimeError: game 7 broke on" in record["traceback"] for record in traced)
    assert text.count("Traceback (most recent call last)") == 2  # each in one record
    assert {record.get("status") for record in records} >= {500}
    assert logs.current() is None  # nothing of a request outlives it in the caller


@pytest.mark.django_db
def test_a_safe_request_id_from_the_proxy_is_kept_and_any_other_replaced() -> None:
    browser = Client()
    assert browser.get("/rules/", HTTP_X_REQUEST_ID="nginx-0a1b.2c")["X-Request-ID"] == (
        "nginx-0a1b.2c"
    )
    for unsafe in ("x" * 65, "a b", "id\r\nSet-Cookie: x=y", "<script>", ""):
        answer = browser.get("/rules/", HTTP_X_REQUEST_ID=unsafe)["X-Request-ID"]
        assert re.fullmatch(r"[0-9a-f]{16}", answer), unsafe


@pytest.mark.django_db
def test_an_anonymous_404_names_its_request_and_game_but_no_user(console: Console) -> None:
    answer = Client().get("/api/games/999999")
    assert answer.status_code == 404
    (record,) = console.records()
    assert record["message"] == "Not Found: /api/games/999999"
    assert record["request_id"] == answer["X-Request-ID"]
    assert record["game_id"] == 999999 and record["status"] == 404
    assert "user" not in record


# --- sockets --------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_game_sockets_frame_logs_with_its_socket_id_user_and_game_even_in_its_db_thread(
    console: Console, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = await database_sync_to_async(new_game)()
    alice = await database_sync_to_async(User.objects.get)(username="alice")
    bob = await database_sync_to_async(User.objects.get)(username="bob")
    threads: list[str] = []

    def broken_move(**kwargs: Any) -> None:
        threads.append(threading.current_thread().name)
        logger.warning("playing %s", kwargs["move"])
        raise RuntimeError("the engine broke")

    monkeypatch.setattr(services, "play_move", broken_move)
    first, _ = await open_socket(game.pk, alice)
    second, _ = await open_socket(game.pk, bob)
    for client in (first, second):
        await client.send_json_to({"type": "move", "move": "c3", "ply": 0, "id": 5})
        answer = await next_of_type(client, "error")
        assert answer["code"] == "server_error"
    for client in (first, second):
        await client.disconnect()
    await asyncio.sleep(0)

    assert all(name.startswith("db") for name in threads) and len(threads) == 2
    records = [r for r in console.records() if r["logger"] != "django.channels.server"]
    played = [r for r in records if r["message"] == "playing c3"]
    failed = [r for r in records if r["message"] == "websocket handler handle_move failed"]
    assert len(played) == len(failed) == 2, records
    for user, moved, crashed in zip((alice, bob), played, failed, strict=True):
        # The line from the database thread and the consumer's own say the same socket.
        assert moved["socket_id"] == crashed["socket_id"]
        for record in (moved, crashed):
            assert (record["user"], record["user_id"], record["game_id"]) == (
                user.username,
                user.pk,
                game.pk,
            )
        assert "RuntimeError: the engine broke" in crashed["traceback"]
    assert played[0]["socket_id"] != played[1]["socket_id"]
    assert all("request_id" not in record for record in records)


# --- the sweeper, the computer's worker, the mail door ----------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_sweeper_logs_with_the_game_it_checks(console: Console) -> None:
    # Two real games whose first mover's clock ran out; what is logged while the sweeper ends
    # each (here by a receiver of the real end-of-game signal) names that game.
    games = [overdue_game(seconds_late).pk for seconds_late in (2, 1)]

    def ended(sender: Any, **kwargs: Any) -> None:
        logger.warning("a game ended")

    lifecycle.game_ended.connect(ended, dispatch_uid="test_logs_ended")
    try:
        assert sweeper.sweep() == 2
    finally:
        lifecycle.game_ended.disconnect(dispatch_uid="test_logs_ended")
    records = [r for r in console.records() if r["message"] == "a game ended"]
    assert [record["game_id"] for record in records] == games


@pytest.mark.django_db(transaction=True)
def test_the_computers_move_logs_with_its_game_and_the_bot(console: Console) -> None:
    # A real game against the computer, and a move the rules refuse: the worker's warning
    # names the game and the bot's account.
    human = User.objects.create_user(username="human", password=None)
    bot = bot_user(1)
    game = services.create_game(slug="diffusion", options={}, player1=bot, player2=human)
    worker = Worker(processes=1)
    try:
        (turn,) = worker.waiting()
        assert worker.play(turn, Choice(move="not-a-move", playouts=0, ms=0.0)) == 0
    finally:
        worker.close()
    (record,) = [r for r in console.records() if "refused" in r["message"]]
    assert (record["game_id"], record["user_id"], record["user"]) == (game.pk, bot.pk, bot.username)


@pytest.mark.django_db
def test_a_mail_that_fails_logs_its_message_id_and_sender_and_never_its_mail_password(
    console: Console, monkeypatch: pytest.MonkeyPatch
) -> None:
    erin = User.objects.create_user(username="erin", email="erin@players.test")
    identity.set_mail_password(erin, "mail-pass-77")
    mail = inbox.store(
        b"From: erin@players.test\r\nTo: pbm@localhost\r\nMessage-ID: <m1@players.test>\r\n"
        b"Subject: list erin mail-pass-77\r\n\r\nbody\r\n",
        "erin@players.test",
        ["pbm@localhost"],
    )
    assert mail is not None

    def broken(subject: str, body: str, sender: str, recipient: str) -> handlers.Reply:
        _verb, name, password = subject.split()
        identity.authenticate(name, password, sender)
        raise RuntimeError(f"cannot answer {subject!r}")

    monkeypatch.setattr(handlers, "answer", broken)
    assert inbox.process(mail.pk) == 1
    assert "mail-pass-77" not in console.text
    (record,) = console.records()
    assert (record["mail"], record["user"], record["user_id"]) == (
        "<m1@players.test>",
        "erin",
        erin.pk,
    )
    assert "RuntimeError: cannot answer 'list erin [redacted]'" in record["traceback"]


# --- a real server process ------------------------------------------------------------------

SECRET = "log-test-secret-key-not-for-production-0123456789"


class Browser:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def cookie(self, name: str) -> str:
        return next((c.value or "" for c in self.cookies if c.name == name), "")

    def open(
        self, path: str, data: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any, bytes]:
        """Status, headers (any case) and body."""
        request = urllib.request.Request(self.server.http + path, data=data, headers=headers or {})
        try:
            with self.opener.open(request, timeout=20) as answer:
                return answer.status, answer.headers, answer.read()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.headers, refused.read()


def test_a_real_server_writes_only_json_lines_naming_request_user_and_game_and_no_secret(
    tmp_path: Path,
) -> None:
    with migrated_scratch_database(tmp_path) as database_url:
        env: dict[str, str | None] = {
            "DJANGO_SETTINGS_MODULE": "tests.log_settings",
            "DJANGO_SECRET_KEY": SECRET,
            "DATABASE_URL": database_url,
            "REDIS_URL": None,
            "LOG_FORMAT": "json",
        }
        port = free_port()
        with running(
            serve.command("127.0.0.1", port), env, tmp_path / "server.log", port
        ) as server:
            browser = Browser(server)
            browser.open("/signup/")
            signed_up = urlencode(
                {
                    "csrfmiddlewaretoken": browser.cookie("csrftoken"),
                    "username": "dora",
                    "password1": PASSWORD,
                    "password2": PASSWORD,
                }
            ).encode()
            status, _, _ = browser.open("/signup/", signed_up)
            assert status == 200 and browser.cookie("sessionid")
            session_key, csrf = browser.cookie("sessionid"), browser.cookie("csrftoken")
            status, headers, _ = browser.open(
                "/api/games/7/explode",
                json.dumps({"password": PASSWORD, "move": "c3"}).encode(),
                {
                    "Content-Type": "application/json",
                    "X-CSRFToken": csrf,
                    "X-Request-ID": "edge-req-0001",
                },
            )
            assert (status, headers.get("X-Request-ID")) == (500, "edge-req-0001")
            status, headers, _ = browser.open(f"/games/8/explode?password={PASSWORD}")
            assert status == 500
            page_id = headers.get("X-Request-ID")
            status, headers, _ = browser.open("/api/games/999999")
            assert status == 404
            missing_id = headers.get("X-Request-ID")
            _open_and_close_sockets(server, session_key)
        output = server.output()

    for secret in (PASSWORD, session_key, csrf, SECRET):
        assert secret not in output, secret
    lines = [line for line in output.splitlines() if line.strip()]
    not_json = [line for line in lines if not _is_json_object(line)]
    assert not not_json, not_json
    records = [json.loads(line) for line in lines]
    assert any(r["logger"].startswith("daphne") for r in records)  # the server's own lines too

    def of(request_id: str) -> list[dict[str, Any]]:
        return [r for r in records if r.get("request_id") == request_id]

    for request_id, game_id in (("edge-req-0001", 7), (page_id, 8)):
        lines_of_it = of(request_id)
        assert lines_of_it, (request_id, records)
        for record in lines_of_it:
            assert (record["user"], record["game_id"]) == ("dora", game_id)
        traced = [r for r in lines_of_it if "traceback" in r]
        assert traced and all("RuntimeError: game" in r["traceback"] for r in traced)
    (missing,) = [r for r in of(missing_id) if r["logger"] == "django.request"]
    assert (missing["user"], missing["game_id"], missing["status"]) == ("dora", 999999, 404)
    # Daphne's access log is in the log too, as records of the request, query string redacted.
    (access,) = [r for r in of(page_id) if r["logger"] == "daphne.access"]
    assert '"GET /games/8/explode?password=[redacted]" 500 ' in access["message"]
    assert access["status"] == 500

    # Each socket's lines, from its handshake to its close, name it, and its user and game.
    sockets = [r for r in records if r["logger"] == "daphne.access" and ' "WS' in r["message"]]
    by_socket: dict[str, list[tuple[str, str | None, int | None]]] = {}
    for record in sockets:
        assert re.fullmatch(r"[0-9a-f]{16}", record.get("socket_id", "")), record
        line = (record["message"].split('"')[1], record.get("user"), record.get("game_id"))
        by_socket.setdefault(record["socket_id"], []).append(line)
    assert sorted(by_socket.values(), key=str) == [
        [
            ("WSCONNECTING /ws/games/404/", "dora", 404),
            ("WSCONNECT /ws/games/404/", "dora", 404),
            ("WSDISCONNECT /ws/games/404/", "dora", 404),
        ],
        [
            ("WSCONNECTING /ws/lobby/", "dora", None),
            ("WSCONNECT /ws/lobby/", "dora", None),
            ("WSDISCONNECT /ws/lobby/", "dora", None),
        ],
        # Refused before anyone read who it is: its id ties its lines.
        [
            ("WSCONNECTING /ws/lobby/", None, None),
            ("WSREJECT /ws/lobby/", None, None),
            ("WSDISCONNECT /ws/lobby/", None, None),
        ],
    ], by_socket


def _open_and_close_sockets(server: Server, session_key: str) -> None:
    """Dora's game socket, closed by the server (there is no such game), her lobby socket,
    closed by her, and a socket refused (a page of another site)."""
    cookie = {"Cookie": f"sessionid={session_key}"}
    with connect(
        f"{server.ws}/ws/games/404/", origin=Origin(server.http), additional_headers=cookie
    ) as game:
        assert json.loads(game.recv(timeout=10))["code"] == "no_such_game"
        with pytest.raises(ConnectionClosed):
            game.recv(timeout=10)
    with connect(
        f"{server.ws}/ws/lobby/", origin=Origin(server.http), additional_headers=cookie
    ) as lobby:
        lobby.recv(timeout=10)
    with pytest.raises(InvalidStatus):
        connect(f"{server.ws}/ws/lobby/", origin=Origin("https://elsewhere.example"))
    time.sleep(0.5)  # the server's lines of the closes


def test_no_line_of_a_real_server_holds_the_token_of_a_mailed_or_shared_link(
    tmp_path: Path,
) -> None:
    # The whole life of each link, through a real server mailing a real SMTP server, with every
    # line at DEBUG: an address confirmed (its page, the Confirm button, the link used again:
    # a 400 and Django's "Bad Request" warning; cut short of its slash: a redirect), a
    # password reset (the link, the form it moves to, the new password, the link used
    # again), an open challenge's link opened and accepted, a tournament's invitation. Then a
    # program's API tokens (accounts/tokens.py): made on the settings page, used (a stream
    # too), refused, revoked and used again, malformed, and one sent in a query string;
    # none reaches a line, nor the process's metrics.
    sink = Sink()
    controller = Controller(sink, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        with migrated_scratch_database(tmp_path) as database_url:
            env: dict[str, str | None] = {
                "DJANGO_SECRET_KEY": SECRET,
                "DATABASE_URL": database_url,
                "REDIS_URL": None,
                "LOG_FORMAT": "json",
                "LOG_LEVEL": "DEBUG",
                "EMAIL_HOST": "127.0.0.1",
                "EMAIL_PORT": str(controller.port),
                "EMAIL_USE_TLS": "0",
                "METRICS_PORT": str(metrics_port := free_port()),
            }
            port = free_port()
            with running(
                serve.command("127.0.0.1", port), env, tmp_path / "server.log", port
            ) as server:
                dora = Browser(server)
                tokens, used = _mailed_and_shared_links(dora, Browser(server), sink)
                api_tokens, api_used = _a_programs_tokens(dora, server)
                with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics") as page:
                    metrics = page.read().decode()
            output = server.output()
    finally:
        controller.stop()

    assert len(tokens) == 4 and all(len(token) >= 12 for token in tokens), tokens
    assert len(api_tokens) == 5, api_tokens
    for number, line in enumerate(output.splitlines(), 1):
        for token in tokens + api_tokens:
            assert token not in line, (number, line)
        # Nor a part of one: the header is never written, a token's 40 characters never.
        assert "Bearer" not in line and "dif_" not in line, (number, line)
    assert "diffusion_" in metrics  # the product's metrics are there, and no token
    for token in api_tokens:
        assert token not in metrics and token.removeprefix("dif_") not in metrics
    messages = [json.loads(line)["message"] for line in output.splitlines() if line.strip()]
    used += api_used
    # The links' requests are all there, each with its secret masked.
    for path in used:
        assert any(f' {path}" ' in message for message in messages), (path, messages)
    assert "Bad Request: /settings/email/confirm/[redacted]/" in messages


def _mailed_and_shared_links(
    dora: Browser, visitor: Browser, sink: Sink
) -> tuple[list[str], list[str]]:
    """Every link's life (see the test above): the tokens, and the paths of the requests
    made with them as the log should show them."""

    def form(browser: Browser, path: str, **fields: str) -> int:
        fields["csrfmiddlewaretoken"] = browser.cookie("csrftoken")
        status, _, _ = browser.open(path, urlencode(fields).encode())
        return status

    def mailed(subject: str) -> str:
        mail = sink.wait_for(lambda m: subject in str(m["Subject"]))
        found = re.search(r"https?://[^/\s]+(/\S+/)", text_of(mail))
        assert found, text_of(mail)
        return found.group(1)

    dora.open("/signup/")
    assert form(dora, "/signup/", username="dora", password1=PASSWORD, password2=PASSWORD) == 200
    dora.open("/settings/email/")
    assert form(dora, "/settings/email/", email="dora@players.test", password=PASSWORD) == 200
    confirm = mailed("Confirm your e-mail address")
    confirm_token = confirm.split("/")[-2]
    assert dora.open(confirm)[0] == 200
    assert form(dora, confirm) == 200
    assert form(dora, confirm) == 400  # used already
    assert dora.open(confirm.rstrip("/"))[0] == 400  # redirected to the slash; used already

    challenge = dora.open(
        "/api/challenges",
        json.dumps({"slug": "zigzag"}).encode(),
        {"Content-Type": "application/json", "X-CSRFToken": dora.cookie("csrftoken")},
    )
    challenge_token = json.loads(challenge[2])["challenge"]["token"]
    visitor.open(f"/challenge/{challenge_token}/")
    assert form(visitor, "/guest/") == 200
    assert form(visitor, f"/challenge/{challenge_token}/") == 200  # accepted: on the game page
    invite_token = "invitation-0123456789abcdef"
    visitor.open(f"/tournaments/999999/?invite={invite_token}")

    assert form(dora, "/logout/") == 200
    dora.open("/password-reset/")
    assert form(dora, "/password-reset/", email="dora@players.test") == 200
    reset = mailed("new password")
    uid, reset_token = reset.split("/")[-3:-1]
    assert dora.open(reset)[0] == 200  # the form, at /password-reset/<uid>/set-password/
    new_password = PASSWORD + "-new"
    chosen = form(
        dora,
        f"/password-reset/{uid}/set-password/",
        new_password1=new_password,
        new_password2=new_password,
    )
    assert chosen == 200
    assert "reset-link-dead" in dora.open(reset)[2].decode()  # used: it works once
    assert form(dora, "/login/", username="dora", password=new_password) == 200
    assert dora.cookie("sessionid")
    used = [
        "/settings/email/confirm/[redacted]/",
        "/settings/email/confirm/[redacted]",
        "/challenge/[redacted]/",
        "/tournaments/999999/?invite=[redacted]",
        f"/password-reset/{uid}/[redacted]/",
    ]
    return [confirm_token, challenge_token, invite_token, reset_token], used


def _a_programs_tokens(dora: Browser, server: Server) -> tuple[list[str], list[str]]:
    """Dora's tokens through their life (see the test above): the secrets, and the paths of
    the requests made with them as the log should show them."""

    def settings_page(*fields: tuple[str, str]) -> tuple[int, str]:
        body = urlencode([("csrfmiddlewaretoken", dora.cookie("csrftoken")), *fields]).encode()
        status, _, page = dora.open("/settings/tokens/", body)
        return status, page.decode()

    def made(name: str) -> str:
        status, page = settings_page(
            ("action", "create"), ("name", name), ("scopes", "read"), ("scopes", "play")
        )
        found = re.search(r'id="new-token-secret">(dif_[A-Za-z0-9_-]+)<', page)
        assert status == 200 and found, page
        return found.group(1)

    def call(secret: str, path: str, body: Any = None, scheme: str = "Bearer") -> int:
        request = urllib.request.Request(
            server.http + path,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"{scheme} {secret}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=20) as answer:
                if path.endswith("/stream/event"):
                    answer.readline()  # the stream's first line: the game Dora is in
                return int(answer.status)
        except urllib.error.HTTPError as refused:
            return int(refused.code)

    good, revoked = made("engine"), made("old engine")
    assert call(revoked, "/api/games") == 200
    _, listing = settings_page()
    row = re.search(r">old engine</td>.*?name=\"token\" value=\"(\d+)\"", listing, re.S)
    assert row, listing
    assert settings_page(("action", "revoke"), ("token", row.group(1)))[0] == 200
    assert call(revoked, "/api/games") == 401  # bad_token
    assert call(good, "/api/games?status=active") == 200
    assert call(good, "/api/stream/event") == 200
    assert call(good, "/api/games/999999") == 404  # Django's "Not Found" warning
    assert call(good, "/api/games/999999/move", {"move": "a1", "ply": 0}) == 404
    assert call(good, "/api/seeks", {"games": "not a list"}) in (400, 403)  # no challenge scope
    assert call(good, "/settings/tokens/") == 403  # token_not_accepted: a page
    assert call(good, "/api/games", scheme="token") == 200  # not Bearer: a visitor's request
    malformed = [good[:-1] + "!", good + "A" * 100, "dif_" + "B" * 40]
    for secret in malformed:
        assert call(secret, "/api/games") == 401
    # A program that puts its token in the address: the access log masks it.
    assert call(good, f"/api/games?access_token={good}") == 200
    return [good, revoked, *malformed], ["/api/games?access_token=[redacted]"]


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False
