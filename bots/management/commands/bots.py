"""Play the computer's moves in every game where a bot is to move.

    python manage.py bots [--processes N]

A long-running process beside the server (`make run` starts one; docker runs it as its own
service). Thinking runs in N processes (default: the machine's cores); stopping the worker
at any moment loses nothing, and a new one picks up every game where a bot is to move.
"""

from __future__ import annotations

import logging
import os
import signal
from typing import Any

from django.core.management.base import BaseCommand

from bots.worker import Worker
from realtime import metrics

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Play the computer's moves (a worker process beside the server)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--processes", type=int, default=os.cpu_count() or 1, help="thinking processes"
        )
        parser.add_argument("--poll", type=float, default=0.1, help="seconds between looks")

    def handle(self, *args: Any, **options: Any) -> None:
        stopping = False

        def stop(*_: Any) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        metrics.serve("bots")
        worker = Worker(processes=options["processes"], poll=options["poll"])
        logger.info("bots: playing the computer's moves (%s processes)", worker.processes)
        try:
            worker.run(lambda: stopping)
        finally:
            worker.close()
