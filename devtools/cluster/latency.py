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
from collections import deque
from typing import cast

import uvloop

from devtools.cluster.daemons import Daemon, answers, wait_until
from devtools.cluster.hosts import Host

# What a side queues for its peer: a chunk, or the end (EOF, or the connection gone).
END = b""
CLOSE = None


def delay(ms: float, jitter: float, rng: random.Random) -> float:
    """One chunk's delay in seconds: `ms` give or take up to `jitter` ms, never below zero."""
    return max(0.0, ms + rng.uniform(-jitter, jitter)) / 1000


class _Side(asyncio.Protocol):
    """One end of a relayed connection. What it receives goes out of its peer's transport, each
    chunk no sooner than its delay after it came and never before the chunk ahead of it (a link
    does not reorder). Callbacks and one timer a side, no task and no queue object a chunk:
    the relays' CPU is the drill's (docs/SCALING.md)."""

    def __init__(self, ms: float, jitter: float, rng: random.Random) -> None:
        self.ms, self.jitter, self.rng = ms, jitter, rng
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.peer: _Side | None = None
        self.pending: deque[tuple[float, bytes | None]] = deque()  # (when due, chunk) for the peer
        self.last = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.ended = False  # its reading side is done (EOF or lost)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        if self.peer is not None:
            self.peer._schedule()  # what the peer received meanwhile can now go out here

    def _queue(self, chunk: bytes | None) -> None:
        self.last = max(self.last, self.loop.time() + delay(self.ms, self.jitter, self.rng))
        self.pending.append((self.last, chunk))
        self._schedule()

    def data_received(self, data: bytes) -> None:
        self._queue(data)

    def eof_received(self) -> bool:
        self.ended = True
        self._queue(END)
        return True  # half-closed: the other way may still carry data

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ended:
            self.ended = True
            self._queue(CLOSE)

    def pause_writing(self) -> None:  # this side's buffer is full: hold its peer's reading
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()

    def _schedule(self) -> None:
        ready = self.peer is not None and self.peer.transport is not None
        if self.timer is None and self.pending and ready:
            self.timer = self.loop.call_at(self.pending[0][0], self._flush)

    def _flush(self) -> None:
        self.timer = None
        assert self.peer is not None and self.peer.transport is not None
        out = self.peer.transport
        now = self.loop.time()
        if out.is_closing():
            self.pending.clear()  # the peer's connection is gone: nowhere to pass it on
            return
        while self.pending and self.pending[0][0] <= now:
            _, chunk = self.pending.popleft()
            if chunk:
                out.write(chunk)
            elif chunk is not None and out.can_write_eof():
                out.write_eof()
                if self.peer.ended:
                    out.close()  # both ways are done
            else:
                out.close()
        self._schedule()


async def relay(
    listen: tuple[str, int], target: tuple[str, int], ms: float, jitter: float, seed: int = 1
) -> asyncio.Server:
    """Start relaying from `listen` to `target`; the server is returned, already serving."""
    rng = random.Random(seed)
    loop = asyncio.get_running_loop()

    def accepted() -> _Side:
        client = _Side(ms, jitter, rng)
        upstream = _Side(ms, jitter, rng)
        client.peer, upstream.peer = upstream, client

        async def dial() -> None:
            try:
                await loop.create_connection(lambda: upstream, *target)
            except OSError:
                if client.transport is not None:
                    client.transport.close()

        task = loop.create_task(dial())
        dialing.add(task)
        task.add_done_callback(dialing.discard)
        return client

    dialing: set[asyncio.Task[None]] = set()
    return await loop.create_server(accepted, *listen)


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

    uvloop.run(serve())


if __name__ == "__main__":
    main()
