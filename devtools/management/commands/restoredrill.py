"""The restore drill: dump a populated database, restore it, check the copy; prints figures.

    python -m devtools restoredrill [--games 56] [--seed 1] [--keep]

Needs DATABASE_URL on PostgreSQL (only the server is used: the drill makes its own
databases, backup_drill_* and backup_restored_*, and drops them) and pg_dump/pg_restore.
devtools/backups.py says what is populated and checked; docs/BACKUPS.md has a run's figures.
Exits 1 on any difference between the source and its restored copy.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from devtools import backups


class Command(BaseCommand):
    help = "Dump a populated database, restore it into a new one and check the copy."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--games", type=int, default=56, help="games to populate")
        parser.add_argument("--seed", type=int, default=1, help="the random moves' seed")
        parser.add_argument(
            "--keep", action="store_true", help="leave the restored copy (it is named)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        try:
            result = backups.drill(options["games"], seed=options["seed"], keep=options["keep"])
        except RuntimeError as error:
            raise CommandError(str(error)) from None
        for line in backups.report(result):
            self.stdout.write(line)
        self.stdout.write(f"drill: {time.monotonic() - started:.1f} s in all")
        if result.differences:
            raise CommandError(f"{len(result.differences)} difference(s) in the restored copy")
