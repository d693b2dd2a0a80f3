"""The ratings are a cache of the rated games: check them, or rebuild them from the games.

python manage.py ratings --check       # print every difference; exit 1 if any
python manage.py ratings --recompute   # replace the stored ratings by the recomputed ones
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ratings import services


class Command(BaseCommand):
    help = "Check the stored ratings against the rated games, or rebuild them from the games."

    def add_arguments(self, parser: Any) -> None:
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--check", action="store_true", help="compare, change nothing")
        action.add_argument("--recompute", action="store_true", help="rebuild from the games")

    def handle(self, *args: Any, **options: Any) -> None:
        fresh = services.recompute()
        games = len(fresh.changes) // 2
        if options["recompute"]:
            services.rebuild(fresh)
            self.stdout.write(
                f"ratings rebuilt from {games} rated games: {len(fresh.ratings)} ratings"
            )
            return
        found = services.differences(fresh)
        for line in found:
            self.stdout.write(line)
        if found:
            raise CommandError(f"{len(found)} difference(s) between the cache and the games")
        self.stdout.write(f"ratings match the {games} rated games ({len(fresh.ratings)} ratings)")
