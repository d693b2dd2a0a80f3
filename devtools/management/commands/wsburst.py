"""Open many websockets at once and report how they fared: a reconnection storm.

    python -m devtools wsburst --procs 2 --count 500 --signed-in      # its own Daphne processes
    python -m devtools wsburst --url ws://127.0.0.1:8000/ws/lobby/ --count 500   # a running one
    python -m devtools wsburst --procs 1 --count 5000 --hold 5          # memory per idle socket

With --procs it starts that many Daphne processes on the environment's database and channel
layer (PostgreSQL and REDIS_URL for more than one) and spreads the sockets over them. With
--signed-in every socket carries the session cookie of its own user, so the server looks the
session up as it does for players after a deploy. With --procs it also prints each server's
resident memory before the burst and once every socket is open, and the difference per socket.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.test import Client

from accounts.models import User
from devtools.servers import (
    check_shared_services,
    no_collector_pauses,
    start_servers,
    stop_servers,
)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def kind_of(error: str) -> str:
    """An error's class and the start of its text, so alike failures count together."""
    return error[:90]


Result = tuple[float | None, str | None]  # seconds to the greeting, or the error


async def burst(
    urls: list[str],
    cookies: list[str | None],
    *,
    per_socket: float = 60.0,
    hold: float = 1.0,
    origin: str | None = None,
    when_all_open: Callable[[], None] | None = None,
) -> tuple[list[Result], float]:
    """Connect one socket per cookie at once (spread over `urls`), wait for each one's first
    frame, hold them open; each socket's result, and the wall time. `when_all_open` runs
    once every socket has been greeted or has failed, while the greeted ones are all open."""
    import websockets

    settled = 0
    all_open = asyncio.Event()

    def settle() -> None:
        nonlocal settled
        settled += 1
        if settled == len(cookies):
            if when_all_open is not None:
                when_all_open()
            all_open.set()

    async def one(index: int) -> Result:
        url = urls[index % len(urls)]
        cookie = cookies[index]
        headers = {"Cookie": cookie} if cookie else {}
        started = time.perf_counter()
        greeted = False
        try:
            async with websockets.connect(
                url,
                origin=websockets.Origin(origin or url.replace("ws", "http", 1).split("/ws/")[0]),
                additional_headers=headers,
                open_timeout=per_socket,
            ) as socket:
                await asyncio.wait_for(socket.recv(), per_socket)  # the greeting
                elapsed = time.perf_counter() - started
                greeted = True
                settle()
                await all_open.wait()
                await asyncio.sleep(hold)
                return elapsed, None
        except Exception as error:
            if not greeted:
                settle()
            return None, f"{type(error).__name__}: {error}"

    started = time.perf_counter()
    results = await asyncio.gather(*(one(i) for i in range(len(cookies))))
    return list(results), time.perf_counter() - started


def resident_kb(pid: int) -> int:
    """A process's resident memory (VmRSS), in KB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def allow_many_files() -> None:
    """Raise this process's open-file limit to the hard limit (the servers started from
    here inherit it): thousands of sockets need thousands of descriptors."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Command(BaseCommand):
    help = "Connect COUNT websockets concurrently and print success count and connect latency."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--url", default=None, help="a running server's socket URL")
        parser.add_argument("--procs", type=int, default=0, help="start this many servers")
        parser.add_argument("--path", default="/ws/lobby/", help="with --procs: the socket")
        parser.add_argument(
            "--application",
            default=None,
            help="with --procs: serve this ASGI application instead of the site's "
            "(devtools.bare_asgi:application with --path /ws/bare/1/ measures the bare stack)",
        )
        parser.add_argument("--origin", default=None, help="Origin header (default: from URL)")
        parser.add_argument("--count", type=int, default=300)
        parser.add_argument("--signed-in", action="store_true", help="a user session each")
        parser.add_argument("--hold", type=float, default=1.0, help="seconds to keep them open")
        parser.add_argument("--timeout", type=float, default=60.0, help="per socket, seconds")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            import websockets  # noqa: F401
        except ImportError as error:  # a dev-extra tool
            raise CommandError("wsburst needs the dev extra: pip install -e '.[dev]'") from error
        if bool(options["url"]) == bool(options["procs"]):
            raise CommandError("Give either --url (a running server) or --procs N.")
        count: int = options["count"]
        cookies: list[str | None] = (
            self._sessions(count) if options["signed_in"] else [None] * count
        )
        allow_many_files()
        servers = []
        if options["procs"]:
            check_shared_services(options["procs"])
            application = options["application"]
            servers = start_servers(
                options["procs"], **({"application": application} if application else {})
            )
            urls = [f"ws://127.0.0.1:{s.port}{options['path']}" for s in servers]
        else:
            urls = [options["url"]]
        idle = [resident_kb(server.process.pid) for server in servers]
        busy: list[int] = []

        def measure() -> None:
            busy.extend(resident_kb(server.process.pid) for server in servers)

        try:
            with no_collector_pauses():
                results, wall = asyncio.run(
                    burst(
                        urls,
                        cookies,
                        per_socket=options["timeout"],
                        hold=options["hold"],
                        origin=options["origin"],
                        when_all_open=measure,
                    )
                )
        finally:
            stop_servers(servers)
        self._report(results, wall, count, len(urls))
        for index, (before, during) in enumerate(zip(idle, busy, strict=False)):
            sockets = sum(
                1 for i, (latency, _) in enumerate(results) if latency and i % len(urls) == index
            )
            per_socket = (during - before) / sockets if sockets else float("nan")
            self.stdout.write(
                f"server {index + 1}: resident {before / 1024:.0f} MB before, "
                f"{during / 1024:.0f} MB with {sockets} sockets open: "
                f"{per_socket:.1f} KB per socket"
            )

    @staticmethod
    def _sessions(count: int) -> list[str | None]:
        run = f"{int(time.time()) % 100000}"
        cookies: list[str | None] = []
        for index in range(count):
            user = User.objects.create_user(username=f"wb{run}u{index}", password=None)
            browser = Client()
            browser.force_login(user)
            cookies.append(f"sessionid={browser.cookies['sessionid'].value}")
        return cookies

    def _report(self, results: list[Result], wall: float, count: int, procs: int) -> None:
        latencies = [latency * 1000 for latency, _ in results if latency is not None]
        errors = Counter(kind_of(error) for _, error in results if error is not None)
        self.stdout.write(
            f"sockets: {count} over {procs} server(s)  greeted: {len(latencies)}  "
            f"failed: {sum(errors.values())}"
        )
        if latencies:
            self.stdout.write(
                "connect+greeting ms: "
                f"p50 {statistics.median(latencies):.1f}  p99 {percentile(latencies, 0.99):.1f}  "
                f"max {max(latencies):.1f}  (wall {wall:.1f} s)"
            )
        for error, times in errors.most_common(5):
            self.stdout.write(f"  {times} x {error}")
