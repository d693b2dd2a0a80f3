"""SIGTERM on a server process: a stop nobody playing notices.

Twisted's own SIGTERM stops the reactor at once and Daphne then cancels every application:
sockets dropped without a close code (pages showed "reconnecting…" and opponents "left the
game"), the moves in hand cut off, and with thousands open, clean-up errors in the log. Here
SIGTERM instead:

1. stops accepting connections (the proxy sends new ones to the other processes);
2. drains (realtime/drain.py): /readyz answers 503 `draining`; every socket is asked to move
   to another process (its page opens a new socket before closing this one); those still
   here after that window finish the message in hand and are closed with 1012, their
   presence handed over;
3. lets the HTTP requests in hand finish;
4. then stops the reactor, within SHUTDOWN_GRACE_SECONDS of the signal (an orchestrator's
   own stop timeout must be longer: compose gives 75 s).

Every step waits at most what is left of the grace, less a reserve for the reactor's own stop
(RESERVE_SECONDS). A thread can still fail to return: a database that hangs (its connection
open, no byte passing) holds a database thread in a read for as long as the kernel keeps the
connection, minutes, and Python waits for every thread before it exits. So the grace is
also enforced from outside the event loop: a watchdog thread ends the process when it is over,
whatever is still running, after logging what that is (`stopped at the end of the grace`).

A second SIGTERM, or SIGINT (Ctrl-C), stops at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
import time
from typing import Any

logger = logging.getLogger("config.graceful")

# What the drain leaves of the grace for Daphne to cancel what still runs and the reactor to
# stop (at most a second, a fifth of a short grace).
RESERVE_SECONDS = 1.0

# How long the process waits, at the end of the grace, for its last line to be written.
LAST_WORDS_SECONDS = 0.2

_state: dict[str, Any] = {"stopping": False, "task": None, "deadline": None}


def reserve(grace: float) -> float:
    return min(RESERVE_SECONDS, grace * 0.2)


def install(cli: Any) -> None:
    """Take over SIGTERM once the reactor runs (Twisted installs its own handler as it
    starts, and the last one installed wins). `cli` is Daphne's CommandLineInterface: its
    server is known by then."""
    reactor = _reactor()
    patch_daphne_shutdown()
    allow_restart_close_code()

    def take_sigterm() -> None:
        def on_sigterm(signum: int, frame: Any) -> None:
            # Not in the context of whatever the signal interrupted (a socket's frame): its
            # log fields would be on the drain's lines.
            from realtime import logs

            reactor.callFromThread(logs.detached().run, begin, cli.server)

        signal.signal(signal.SIGTERM, on_sigterm)

    reactor.callWhenRunning(take_sigterm)


def grace_seconds() -> float:
    from django.conf import settings

    return float(settings.SHUTDOWN_GRACE_SECONDS)


def _reactor() -> Any:
    # Twisted's reactor is a module-level object whose type checkers see only a Protocol.
    from twisted.internet import reactor

    return reactor


def begin(server: Any) -> None:
    from twisted.internet import tcp

    reactor = _reactor()

    if _state["stopping"]:
        logger.warning("stopping now: a second SIGTERM")
        reactor.stop()
        return
    _state["stopping"] = True
    _state["deadline"] = time.monotonic() + grace_seconds()
    end_at_the_deadline(_state["deadline"])
    from realtime import drain

    for reader in list(reactor.getReaders()):
        if isinstance(reader, tcp.Port):
            reader.stopListening()
    logger.info(
        "SIGTERM: accepting no more connections; moving %d socket(s) to the other processes "
        "(grace %g s)",
        drain.open_sockets(),
        grace_seconds(),
    )
    _state["task"] = asyncio.ensure_future(_stop(server))


async def _stop(server: Any) -> None:
    from realtime import drain

    reactor = _reactor()

    started = time.monotonic()
    grace = grace_seconds()
    within = grace - reserve(grace)
    try:
        drained = await drain.drain(grace, within=within)
        # Daphne's table of connections is the only record of the requests in hand: look.
        while time.monotonic() - started < within and _requests_in_hand(server):  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        logger.info(
            "drained in %.2f s: %d socket(s) moved by their clients, %d closed with 1012 "
            "(%d still open), %d presence row(s) handed over, %d request(s) still in hand",
            time.monotonic() - started,
            drained.moved,
            drained.sockets - drained.moved - drained.left_open,
            drained.left_open,
            drained.handed_over,
            _requests_in_hand(server),
        )
    except Exception:
        logger.exception("draining failed; stopping now")
    finally:
        if reactor.running:
            reactor.stop()


def end_at_the_deadline(deadline: float) -> None:
    """End the process at `deadline` (time.monotonic()) if it is still running then: a
    daemon thread, which runs on while Python waits for the other threads before exiting."""

    def say_why() -> None:
        logger.warning(
            "stopped at the end of the grace (%g s), still busy: %s",
            grace_seconds(),
            "; ".join(_busy_threads()) or "nothing",
        )
        for handler in logging.getLogger().handlers:
            handler.flush()
        sys.stdout.flush()
        sys.stderr.flush()

    def watch() -> None:
        threading.Event().wait(max(0.0, deadline - time.monotonic()))
        # Said from a thread of its own, waited for briefly: a stuck thread may hold the log's
        # lock (a write to a full pipe), and the exit must not wait for it.
        saying = threading.Thread(target=say_why, name="grace-deadline-log", daemon=True)
        saying.start()
        saying.join(LAST_WORDS_SECONDS)
        # Not sys.exit: it would wait for the very threads that hold the process up.
        os._exit(0)

    threading.Thread(target=watch, name="grace-deadline", daemon=True).start()


def _busy_threads() -> list[str]:
    """The threads the process would wait for, each with where it is (`db_0 in wait
    (psycopg/connection.py:495)`); not the idle workers of a thread pool."""
    frames = sys._current_frames()
    busy = []
    for thread in threading.enumerate():
        if thread.daemon or thread is threading.current_thread() or thread.ident is None:
            continue
        frame = frames.get(thread.ident)
        if frame is None:
            busy.append(thread.name)
            continue
        path = "/".join(frame.f_code.co_filename.replace(os.sep, "/").split("/")[-2:])
        if (path, frame.f_code.co_name) == ("futures/thread.py", "_worker"):
            continue  # waiting for work: it ends as the process does
        busy.append(f"{thread.name} in {frame.f_code.co_name} ({path}:{frame.f_lineno})")
    return busy


def _requests_in_hand(server: Any) -> int:
    return sum(
        1
        for details in list(getattr(server, "connections", {}).values())
        if (task := details.get("application_instance")) is not None and not task.done()
    )


def allow_restart_close_code() -> None:
    """Let a socket be closed with 1012 (Service Restart, in IANA's registry of close codes
    since 2012, and understood by browsers). Autobahn's `sendClose` allows only 1000 and
    3000-4999, and refused it with an exception: the socket stayed open."""
    from daphne.ws_protocol import WebSocketProtocol

    from realtime.drain import CLOSE_RESTARTING

    original = WebSocketProtocol.serverClose
    if getattr(original, "restart_code", False):
        return

    def serverClose(self: Any, code: int | None = None) -> None:
        if code == CLOSE_RESTARTING:
            self.sendCloseFrame(code=code, isReply=False)
        else:
            original(self, code)

    serverClose.restart_code = True  # type: ignore[attr-defined]
    WebSocketProtocol.serverClose = serverClose


def patch_daphne_shutdown() -> None:
    """Daphne's last step cancels every application still running, and fails with a
    KeyError on a connection that has none yet (an HTTP connection whose request has not
    arrived): one traceback per stop on a busy server. Skip those."""
    from daphne import server as daphne_server
    from twisted.internet import defer

    if getattr(daphne_server.Server.kill_all_applications, "patched", False):
        return

    def kill_all_applications(self: Any) -> Any:
        wait_for = []
        for details in list(self.connections.values()):
            task = details.get("application_instance")
            if task is not None and not task.done():
                task.cancel()
                wait_for.append(task)
        if wait_for:
            logger.info("cancelled %d application instance(s) still running", len(wait_for))
        ending: Any = asyncio.gather(*wait_for, return_exceptions=True)
        if _state["deadline"] is not None:
            # An application whose cancellation waits on something that hangs does not hold
            # the reactor past the grace.
            ending = asyncio.wait_for(ending, max(0.0, _state["deadline"] - time.monotonic()))
        deferred = defer.Deferred.fromFuture(asyncio.ensure_future(ending))
        deferred.addErrback(lambda _: None)
        return deferred

    kill_all_applications.patched = True  # type: ignore[attr-defined]
    daphne_server.Server.kill_all_applications = kill_all_applications
