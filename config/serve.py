"""Start Daphne the way this project serves: `python -m config.serve --host H --port P`.

Every place that starts the server (`make run`, the Docker image, the tests, the benchmark
commands) goes through here, so the flags that matter under load are set once:

- a listen backlog of 1,024 instead of Twisted's 50, so a reconnection storm after a
  deploy waits in the kernel's queue instead of retrying SYNs;
- 30 s for a websocket handshake instead of Daphne's 5 s: in a storm of hundreds of
  connects the last ones are accepted late, not dropped (measured: 54 of 500 sockets
  dropped on two processes with 5 s, none with 30 s);
- the message size cap and the keep-alive pings;
- TCP writes sent at once when nothing is buffered (config/eager_writes.py), no debug-log
  arguments built for a debug log that is off (config/quiet_autobahn.py), and a POST's
  Content-Type read without the email package (config/quick_content_type.py);
- fewer, not longer, garbage collections (GC_THRESHOLDS);
- silent connections closed after HTTP_IDLE_SECONDS;
- the access log written through logging (config/access_log.py), in the log's format, and
  Twisted's own line per request, which went nowhere, no longer formatted;
- SIGTERM drains the process before it stops (config/graceful.py);
- on the in-memory layer, the other processes' broadcasts reach this one (realtime/bridge.py).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import Any

BACKLOG = 1024
HANDSHAKE_SECONDS = 30
# Daphne drops connections that send a bigger frame (the application refuses smaller ones
# above WEBSOCKET_MAX_MESSAGE_BYTES itself). Autobahn holds the server's own frames to the same
# limit, and drops a bigger one unsent: a Diffusion Chess move event, whose legal moves list a
# shortest path to every cell each stone reaches, passed 64 KiB in a 14-move game (79 KB) and
# never reached the players. 1 MiB is Daphne's own default.
WS_MAX_BYTES = int(os.environ.get("WS_MAX_BYTES", str(1 << 20)))

# A connection that sends nothing (no request yet, or nothing between requests) for this long
# is closed: Twisted's default of 60 s let a client hold hundreds of silent connections.
# Upgraded websockets are not affected (they idle for hours, with pings).
HTTP_IDLE_SECONDS = float(os.environ.get("HTTP_IDLE_SECONDS", "15"))

# Python's default (700, 10, 10) runs a full collection every few seconds under load, and with
# a thousand sockets a process holds enough objects for one to take 60-100 ms: every frame in
# flight waits. Measured (loadtest --games 200 --spectators 10 --procs 2, three runs each):
# p99 46-185 ms with the default, 26-35 ms with these. The young generation is collected
# 70 times less often (each pass is still short: it only looks at young objects), and full
# collections follow at the same ratio; cycles are still freed, later.
GC_THRESHOLDS = (50_000, 20, 10)


def close_silent_connections(seconds: float) -> None:
    """Give Daphne's HTTP connections an idle timeout of `seconds` instead of Twisted's 60."""
    from daphne import http_protocol

    original = http_protocol.HTTPFactory.__init__
    if getattr(original, "idle_seconds", None) is not None:
        return

    def __init__(self: Any, server: Any) -> None:
        original(self, server)
        self.timeOut = seconds

    __init__.idle_seconds = seconds  # type: ignore[attr-defined]
    http_protocol.HTTPFactory.__init__ = __init__


def no_twisted_access_lines() -> None:
    """Twisted's HTTP server formats a line in the Common Log Format for every request and
    writes it to Twisted's log, which Daphne (at the verbosity this project runs it with)
    sends nowhere: the site's access line is Daphne's own (config/access_log.py). Formatting
    the discarded line was 4% of a server's busy time while bots POSTed their moves
    (docs/PERFORMANCE.md, "The Bot API")."""
    from daphne import http_protocol

    def log(self: Any, request: Any) -> None:
        return None

    http_protocol.HTTPFactory.log = log


def endpoint(host: str, port: int) -> str:
    """A Twisted endpoint description; colons of an IPv6 address are escaped."""
    interface = host.strip("[]").replace(":", r"\:")
    return f"tcp:port={port}:interface={interface}:backlog={BACKLOG}"


APPLICATION = "config.asgi:application"


def daphne_arguments(
    host: str, port: int, *extra: str, application: str = APPLICATION
) -> list[str]:
    return [
        "--endpoint",
        endpoint(host, port),
        "--websocket-max-message-size",
        str(WS_MAX_BYTES),
        "--websocket_connect_timeout",
        str(HANDSHAKE_SECONDS),
        "--ping-interval",
        "20",
        "--ping-timeout",
        "30",
        *extra,
        application,
    ]


def command(host: str, port: int, *extra: str) -> list[str]:
    """The command line that starts one server process (for tests and benchmarks)."""
    return [sys.executable, "-m", "config.serve", "--host", host, "--port", str(port), *extra]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    # Only the benchmarks serve another application (devtools/asgi.py, devtools/bare_asgi.py).
    parser.add_argument("--application", default=APPLICATION, help=argparse.SUPPRESS)
    known, extra = parser.parse_known_args(argv)
    from daphne.cli import CommandLineInterface

    from config import access_log, eager_writes, graceful, quick_content_type, quiet_autobahn
    from realtime import bridge

    gc.set_threshold(*GC_THRESHOLDS)
    close_silent_connections(HTTP_IDLE_SECONDS)
    no_twisted_access_lines()
    eager_writes.install()
    quiet_autobahn.install()
    quick_content_type.install()
    access_log.install()
    bridge.listen_in_this_process()

    cli = CommandLineInterface()
    graceful.install(cli)
    cli.run(daphne_arguments(known.host, known.port, *extra, application=known.application))


if __name__ == "__main__":
    main()
