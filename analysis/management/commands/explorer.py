"""Count the finished games into the opening explorer (docs/EXPLORER.md).

    python manage.py explorer            # count the games not yet counted
    python manage.py explorer --rebuild  # forget every count and count every game again

The sweeper counts new games on each pass; this is for a rebuild (after a change to what is
counted) or to catch up at once. Either can be stopped and run again: a game is counted in
the transaction that marks it counted, so none is counted twice or missed.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand

from analysis import exploring


class Command(BaseCommand):
    help = "Count the finished games not yet counted into the opening explorer."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--rebuild", action="store_true", help="forget every count and count every game again"
        )
        parser.add_argument(
            "--batch", type=int, default=exploring.BATCH, help="games counted per transaction"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch"] < 1:
            self.stderr.write("--batch must be at least 1")
            raise SystemExit(2)
        started = time.monotonic()
        if options["rebuild"]:
            exploring.start_again()
            self.stdout.write("every count forgotten; counting every game again")
        last = [started]

        def report(progress: exploring.Progress) -> None:
            now = time.monotonic()
            if now - last[0] >= 10:
                last[0] = now
                self.stdout.write(f"{progress.games:,} games counted, {now - started:.0f} s")

        done = exploring.count_all(options["batch"], report)
        self.stdout.write(
            f"{done.games:,} games counted in {time.monotonic() - started:.1f} s"
            + (f" ({done.cut_short} cut short: see the log)" if done.cut_short else "")
        )
