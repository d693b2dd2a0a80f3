"""Open many websockets at once against a running server and report how they fared.

python manage.py wsburst --url ws://127.0.0.1:8000/ws/lobby/ --count 500
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Command(BaseCommand):
    help = "Connect COUNT websockets concurrently and print success count and connect latency."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--url", default="ws://127.0.0.1:8000/ws/lobby/")
        parser.add_argument("--origin", default=None, help="Origin header (default: from --url)")
        parser.add_argument("--count", type=int, default=300)
        parser.add_argument("--hold", type=float, default=1.0, help="seconds to keep them open")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            import websockets
        except ImportError as error:  # a dev-extra tool
            raise CommandError("wsburst needs the dev extra: pip install -e '.[dev]'") from error
        url: str = options["url"]
        origin = options["origin"] or url.replace("ws", "http", 1).split("/ws/")[0]
        count: int = options["count"]

        async def one() -> tuple[float | None, str | None]:
            started = time.perf_counter()
            try:
                async with websockets.connect(
                    url, origin=websockets.Origin(origin), open_timeout=30
                ) as socket:
                    await asyncio.wait_for(socket.recv(), 30)  # the server's greeting
                    elapsed = time.perf_counter() - started
                    await asyncio.sleep(options["hold"])
                    return elapsed, None
            except Exception as error:
                return None, f"{type(error).__name__}: {error}"

        async def burst() -> list[tuple[float | None, str | None]]:
            return await asyncio.gather(*(one() for _ in range(count)))

        started = time.perf_counter()
        results = asyncio.run(burst())
        wall = time.perf_counter() - started
        latencies = [latency * 1000 for latency, _ in results if latency is not None]
        errors = [error for _, error in results if error is not None]
        self.stdout.write(f"sockets: {count}  greeted: {len(latencies)}  failed: {len(errors)}")
        if latencies:
            self.stdout.write(
                "connect+greeting ms: "
                f"p50 {statistics.median(latencies):.1f}  p99 {percentile(latencies, 0.99):.1f}  "
                f"max {max(latencies):.1f}  (wall {wall:.1f} s)"
            )
        for error in sorted(set(errors))[:5]:
            self.stdout.write(f"  error: {error}")
