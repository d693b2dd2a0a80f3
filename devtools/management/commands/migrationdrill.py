"""Every migration forward on a populated database, timed, with a move-like write beside it.

    python -m devtools migrationdrill [--games 2000] [--seed 1]

Needs DATABASE_URL on PostgreSQL (the drill makes its own database, backup_migrate_*, and
drops it). devtools/migrating.py says what is populated, measured and listed;
docs/BACKUPS.md has a run's figures. Exits 1 if a replayed game differs from its row.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from devtools import migrating


class Command(BaseCommand):
    help = "Migrate a populated database forward, migration by migration; print the waits."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--games", type=int, default=2000, help="games to populate")
        parser.add_argument("--seed", type=int, default=1, help="the random moves' seed")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = migrating.forward(options["games"], seed=options["seed"])
        except RuntimeError as error:
            raise CommandError(str(error)) from None
        for line in migrating.report(result, migrating.lock_heavy()):
            self.stdout.write(line)
        if result.replayed.differences:
            raise CommandError(f"{len(result.replayed.differences)} difference(s) after migrating")
