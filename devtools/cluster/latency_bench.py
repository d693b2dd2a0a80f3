"""The latency relay's own cost (devtools/cluster/latency.py), which the drill pays for every
PostgreSQL and Redis round trip when it adds latency: connections each sending a small
message and waiting for its echo through a relay process, for a while; printed, the round
trips a second and the relay's CPU a round trip (read from /proc).

    python -m devtools.cluster.latency_bench [--connections 100] [--seconds 10] [--size 300]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from devtools.servers import free_port, process_cpu_seconds

ROOT = Path(__file__).resolve().parents[2]


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65_536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    writer.close()


async def measure(connections: int, seconds: float, size: int) -> str:
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    target = server.sockets[0].getsockname()[1]
    port = free_port()
    relay = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "devtools.cluster.latency", f"127.0.0.1:{port}",
        f"127.0.0.1:{target}", "--ms", "0.75", "--jitter", "0.25",
        cwd=ROOT, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert relay.stdout is not None
        await relay.stdout.readline()  # relaying ...
        rounds = 0
        stop = time.monotonic() + seconds

        async def client() -> None:
            nonlocal rounds
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            message = b"x" * size
            while time.monotonic() < stop:
                writer.write(message)
                await reader.readexactly(size)
                rounds += 1
            writer.close()

        used, started = process_cpu_seconds(relay.pid), time.monotonic()
        await asyncio.gather(*(client() for _ in range(connections)))
        used, took = process_cpu_seconds(relay.pid) - used, time.monotonic() - started
    finally:
        relay.kill()
        await relay.wait()
        server.close()
    return (
        f"{connections} connections, {size}-byte messages, 0.75 ± 0.25 ms each way: "
        f"{rounds / took:,.0f} round trips/s; the relay {used / took:.2f} cores, "
        f"{used / rounds * 1e6:.1f} µs of its CPU a round trip"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--size", type=int, default=300)
    args = parser.parse_args(argv)
    print(asyncio.run(measure(args.connections, args.seconds, args.size)))


if __name__ == "__main__":
    main()
