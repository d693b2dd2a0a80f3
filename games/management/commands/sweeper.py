"""End every game whose clock has run out, whether or not anyone is connected.

    python manage.py sweeper [--once] [--max-sleep 1.0]

A long-running process (`make run` starts one beside the server; docker runs it as its own
service). With a shared channel layer (Redis) it also removes the presence rows of server
processes that died (realtime/presence.py), so counts and claims recover even when no other
process is up.
Consumers of connected players check their game's deadline themselves; this is
the authority for everything else. Ending a game on time is idempotent: the game row is
locked and only the first checker finds it still active, so several sweepers (or a
sweeper racing a consumer) never end a game twice.
"""

from __future__ import annotations

import logging
import signal
import time
from typing import Any

from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.core.management.base import BaseCommand
from django.db import close_old_connections

from games import lifecycle, services
from realtime import logs, metrics, presence
from realtime.errors import is_outage

logger = logging.getLogger(__name__)

# After a failed pass (the database restarting), the next one comes this much later.
OUTAGE_RETRY_SECONDS = 1.0
# Games left for days are looked for this often.
STALL_CHECK_SECONDS = 60.0


class Command(BaseCommand):
    help = "End games whose clocks have run out (loss on time, or no first move: aborted)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="one pass, then exit")
        parser.add_argument(
            "--max-sleep", type=float, default=1.0, help="longest wait between passes (s)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        stopping = False

        def stop(*_: Any) -> None:
            nonlocal stopping
            stopping = True

        # On the in-memory layer (`make run`) news sent from here reaches no socket: there the
        # server's own heartbeat removes dead rows, so that its sockets hear of it.
        shares_broadcasts = not isinstance(get_channel_layer(), InMemoryChannelLayer)
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        # The sweeper also serves the gauges read from the database (seeks, mails queued...).
        metrics.serve("sweeper", state=True)
        if not options["once"]:
            logger.info("sweeper: watching game clocks")
        while not stopping:
            try:
                wait = self.one_pass(shares_broadcasts, options["max_sleep"])
            except Exception as error:
                # A sweeper that dies leaves every clock unwatched: report, and go on.
                if is_outage(error):
                    metrics.DATABASE_ERRORS.labels("sweeper").inc()
                    logger.warning("sweeper: database unreachable (%s); trying again", error)
                else:
                    logger.exception("sweeper: a pass failed")
                wait = OUTAGE_RETRY_SECONDS
            if options["once"]:
                return
            close_old_connections()
            time.sleep(wait)

    def one_pass(self, shares_broadcasts: bool, max_sleep: float) -> float:
        """End the overdue games, send the move e-mails, drop dead processes' rows; how long
        to sleep before the next pass."""
        ended = sweep()
        if ended:
            logger.info("sweeper: ended %s game(s) on time", ended)
        try:
            services.send_move_notices()
        except Exception as error:  # the clocks matter more: keep sweeping
            if is_outage(error):
                raise
            logger.exception("sweeper: sending move e-mails failed")
        try:
            self.long_correspondence()
            lifecycle.sweep()  # the other apps' periodic work (follow e-mails)
        except Exception as error:  # the clocks matter more: keep sweeping
            if is_outage(error):
                raise
            logger.exception("sweeper: reminders, forfeits or e-mails failed")
        try:
            if shares_broadcasts:
                presence.reap()
        except Exception as error:  # the clocks matter more: keep sweeping
            if is_outage(error):
                raise
            logger.exception("sweeper: removing dead processes' connections failed")
        metrics.SWEEPER_PASS.set_to_current_time()
        return pause(max_sleep)

    last_stall_check = 0.0

    def long_correspondence(self) -> None:
        """Reminders and forfeits of games nobody moved in for days: once a minute."""
        if time.monotonic() - self.last_stall_check < STALL_CHECK_SECONDS:
            return
        self.last_stall_check = time.monotonic()
        forfeited = services.forfeit_stalled()
        reminded = services.remind_stalled()
        if forfeited or reminded:
            logger.info("sweeper: %s forfeit(s), %s reminder(s)", forfeited, reminded)


def sweep() -> int:
    """One pass: check every overdue game; how many ended."""
    ended = 0
    for game_id, deadline in services.overdue_games():
        with logs.context(game_id=game_id):
            if services.check_clock(game_id=game_id).event is not None:
                ended += 1
                metrics.SWEEPER_LATENESS.observe(services.now_ms() / 1000 - deadline.timestamp())
    return ended


def pause(longest: float) -> float:
    """Until the next deadline, at most `longest` seconds (new games may start any time)."""
    upcoming = services.next_deadline()
    if upcoming is None:
        return longest
    return min(longest, max(0.05, upcoming.timestamp() - services.now_ms() / 1000))
