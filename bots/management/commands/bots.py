"""Play the computer's moves in every game where a bot is to move.

    python manage.py bots [--processes N] [--search-processes M]

A long-running process beside the server (`make run` starts one; docker runs it as its own
service). Thinking runs in N processes (default: the machine's cores); stopping the worker
at any moment loses nothing, and a new one picks up every game where a bot is to move.
The positions people ask the computer about (the analysis board, game reviews) are searched
in M more processes (default 1), on CPU time nothing else wants (bots/searches.py).
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
        parser.add_argument(
            "--search-processes",
            type=int,
            default=1,
            help="processes for the positions people ask about (analysis, reviews; idle CPU)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        stopping = False

        def stop(*_: Any) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        metrics.serve("bots")
        worker = Worker(
            processes=options["processes"],
            poll=options["poll"],
            search_processes=options["search_processes"],
        )
        logger.info(
            "bots: playing the computer's moves (%s processes; %s for analysis)",
            worker.processes,
            worker.search_processes,
        )
        try:
            worker.run(lambda: stopping)
        finally:
            worker.close()
