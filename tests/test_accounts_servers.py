"""Accounts across server processes: limits counted in Redis, log-outs reaching every socket."""

from __future__ import annotations

import asyncio
import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import websockets

from tests.games_helpers import make_user
from tests.servers import Server, daphnes, shared_test_env

pytestmark = [
    pytest.mark.postgres(reason="two server processes share one database"),
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]

PASSWORD = "x-long-password-1"  # make_user's


class Browser:
    """Cookies and CSRF tokens, as a browser keeps them, across servers of one site."""

    def __init__(self) -> None:
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def post_form(
        self, server: Server, path: str, fields: dict[str, str], action: str | None = None
    ) -> int:
        """Open the page at `path` and post its form (to `action`); the final status, after
        redirects."""
        with self.opener.open(server.http + path, timeout=10) as page:
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())
        assert token, f"no form at {path}"
        data = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": token.group(1)}).encode()
        request = urllib.request.Request(
            server.http + (action or path), data=data, headers={"Referer": server.http + path}
        )
        try:
            with self.opener.open(request, timeout=10) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as refused:
            return int(refused.code)

    def cookie(self, name: str) -> str:
        return next((c.value or "" for c in self.jar if c.name == name), "")


def test_failed_log_ins_on_one_process_lock_the_account_on_the_other(tmp_path: Path) -> None:
    make_user("alice")
    env = shared_test_env(f"limits-{id(tmp_path)}")
    with daphnes(2, env, tmp_path) as (first, second):
        guesser = Browser()
        answers = [
            guesser.post_form(first, "/login/", {"username": "alice", "password": f"no{n}"})
            for n in range(10)
        ]
        assert answers == [200] * 10  # the form again, with its error
        assert not guesser.cookie("sessionid")
        right = Browser().post_form(second, "/login/", {"username": "alice", "password": PASSWORD})
    assert right == 429


def test_logging_out_through_one_process_closes_the_sessions_sockets_on_the_other(
    tmp_path: Path,
) -> None:
    make_user("bob")
    env = shared_test_env(f"logout-{id(tmp_path)}")

    async def watch_and_log_out(first: Server, second: Server, browser: Browser) -> Any:
        session = {"Cookie": f"sessionid={browser.cookie('sessionid')}"}
        async with websockets.connect(
            f"{second.ws}/ws/lobby/",
            origin=websockets.Origin(second.http),
            additional_headers=session,
        ) as lobby:
            hello = await asyncio.wait_for(lobby.recv(), 10)
            assert '"username":"bob"' in hello.replace(" ", "")
            # The header's "Log out" button, on a page served by the other process.
            logged_out = await asyncio.to_thread(browser.post_form, first, "/", {}, "/logout/")
            assert logged_out == 200  # after the redirect home
            started = asyncio.get_running_loop().time()
            try:
                while True:
                    await asyncio.wait_for(lobby.recv(), 5)
            except websockets.ConnectionClosed as closed:
                return closed.rcvd.code if closed.rcvd else None, (
                    asyncio.get_running_loop().time() - started
                )

    with daphnes(2, env, tmp_path) as (first, second):
        browser = Browser()
        assert browser.post_form(first, "/login/", {"username": "bob", "password": PASSWORD}) == 200
        assert browser.cookie("sessionid")
        code, seconds = asyncio.run(watch_and_log_out(first, second, browser))
    assert code == 4401
    assert seconds < 1.0
