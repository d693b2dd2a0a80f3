"""Account attacks: guessing a password, and sockets that must die with their session."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from django.conf import settings
from django_ratelimit.core import _get_window, _split_rate

from devtools.chaos.client import Browser, Socket, Tally, now
from devtools.chaos.cluster import Cluster

LOGIN = "/login/"
LOGOUT = "/logout/"


@dataclass
class Guessing:
    failures_before_lock: int | None = None  # None: never locked
    right_password_refused: bool = False
    # The account's counting window turned over during the guessing (the limiter counts in
    # fixed windows): the count then started again, so the lock may come up to one limit later.
    window_turned: bool = False
    statuses: list[int] = field(default_factory=list)


def guess(cluster: Cluster, username: str, password: str, attempts: int = 30) -> Guessing:
    """Wrong passwords until the site refuses; then the right one."""
    result = Guessing()
    window = _window(username)
    browser = Browser(cluster.servers[0].http)
    browser.get_csrf()
    for attempt in range(attempts):
        server = cluster.servers[attempt % len(cluster.servers)]
        browser.base = server.http
        status, _, _ = browser.form(LOGIN, {"username": username, "password": f"guess-{attempt}"})
        result.statuses.append(status)
        if status == 429:
            result.failures_before_lock = attempt
            break
    status, _, _ = browser.form(LOGIN, {"username": username, "password": password})
    result.right_password_refused = status == 429 and browser.session is None
    result.window_turned = _window(username) != window
    return result


def _window(username: str) -> int:
    """When the account's current login-failure window ends (django-ratelimit's own rule)."""
    _, period = _split_rate(settings.LOGIN_FAILURES_PER_ACCOUNT)
    return int(_get_window(username.lower(), period))


@dataclass
class Logouts:
    rounds: int = 0
    sockets: int = 0
    closed_4401: int = 0
    slowest: float = 0.0  # seconds from the logout request to the last socket closed
    login_failures: int = 0


async def logouts(
    cluster: Cluster, tally: Tally, username: str, password: str, game_id: int, rounds: int
) -> Logouts:
    """Log in, open a lobby and a game socket on every process, log out: all must close."""
    result = Logouts()
    for _ in range(rounds):
        browser = Browser(cluster.servers[0].http)
        await asyncio.to_thread(browser.get_csrf)
        status, _, _ = await asyncio.to_thread(
            browser.form, LOGIN, {"username": username, "password": password}
        )
        cookie = browser.session
        if status != 302 or cookie is None:
            result.login_failures += 1
            continue
        sockets = []
        for server in cluster.servers:
            for path in ("/ws/lobby/", f"/ws/games/{game_id}/"):
                socket = Socket(server.ws, path, cookie, tally)
                await socket.open()
                sockets.append(socket)
        await asyncio.to_thread(browser.get_csrf)
        started = now()
        status, _, _ = await asyncio.to_thread(browser.form, LOGOUT, {})
        waits = [asyncio.wait_for(socket.closed.wait(), 10) for socket in sockets]
        await asyncio.gather(*waits, return_exceptions=True)
        result.slowest = max(result.slowest, now() - started)
        result.rounds += 1
        result.sockets += len(sockets)
        result.closed_4401 += sum(1 for socket in sockets if socket.close_code == 4401)
        for socket in sockets:
            await socket.close()
    return result
