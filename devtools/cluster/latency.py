"""Latency between the drill's hosts, where the kernel cannot add it (devtools/cluster/hosts.py:
no netem here): a TCP relay that holds every chunk it passes on for a delay with jitter, each
direction on its own and in order, as a link of that latency would.

    python -m devtools.cluster.latency LISTEN_HOST:PORT TARGET_HOST:PORT [--ms 1] [--jitter 0.5]

Run on the host a service lives on (listening on the host's address, the target on its
loopback), it makes every connection to the service from another host that much slower each
way. The relay's own cost is part of what the drill measures: it is counted apart
(docs/SCALING.md).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time

from devtools.cluster.daemons import Daemon, answers, wait_until
from devtools.cluster.hosts import Host

CHUNK = 65_536


def delay(ms: float, jitter: float, rng: random.Random) -> float:
    """One chunk's delay in seconds: `ms` give or take up to `jitter` ms, never below zero."""
    return max(0.0, ms + rng.uniform(-jitter, jitter)) / 1000


async def _pump(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    ms: float,
    jitter: float,
    rng: random.Random,
) -> None:
    """Pass on what `reader` gives, each chunk no sooner than its delay after it came and
    never before the chunk ahead of it (a link does not reorder)."""
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, data = await queue.get()
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()

    sender = asyncio.create_task(send())
    last = 0.0
    try:
        while True:
            data = await reader.read(CHUNK)
            last = max(last, time.monotonic() + delay(ms, jitter, rng))
            queue.put_nowait((last, data))
            if not data:
                break
        await sender
    except (ConnectionError, OSError):
        sender.cancel()
    finally:
        writer.close()


async def relay(
    listen: tuple[str, int], target: tuple[str, int], ms: float, jitter: float, seed: int = 1
) -> asyncio.Server:
    """Start relaying from `listen` to `target`; the server is returned, already serving."""
    rng = random.Random(seed)

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(
            _pump(reader, upstream_writer, ms, jitter, rng),
            _pump(upstream_reader, writer, ms, jitter, rng),
            return_exceptions=True,
        )

    return await asyncio.start_server(connected, *listen)


class Front(Daemon):
    """A relay on `host`: connections to its address at `port` reach the service listening on
    the host's loopback at `target`, `ms` ± `jitter` later each way."""

    def __init__(self, host: Host, port: int, target: int, ms: float, jitter: float) -> None:
        super().__init__(host, "latency")
        self.port = port
        self.target = target
        self.ms = ms
        self.jitter = jitter

    def start(self) -> None:
        process = self.spawn(
            [sys.executable, "-m", "devtools.cluster.latency", f"{self.host.address}:{self.port}",
             f"127.0.0.1:{self.target}", "--ms", str(self.ms), "--jitter", str(self.jitter)],
        )  # fmt: skip
        wait_until(lambda: answers(self.host.address, self.port), f"relay on {self.host.name}",
                   process=process)  # fmt: skip


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("listen", type=_address)
    parser.add_argument("target", type=_address)
    parser.add_argument("--ms", type=float, default=1.0, help="each way")
    parser.add_argument("--jitter", type=float, default=0.5)
    args = parser.parse_args(argv)

    async def serve() -> None:
        server = await relay(args.listen, args.target, args.ms, args.jitter)
        print(f"relaying {args.listen} to {args.target}", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
