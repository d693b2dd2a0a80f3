"""Play every game again from its stored moves and compare with its row (games/replay.py).

    python manage.py replaygames   # print every difference; exit 1 if any

Run after a restore (docs/BACKUPS.md), beside `python manage.py ratings --check`.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from games.replay import replay_all


class Command(BaseCommand):
    help = "Replay every game's moves through its rules engine and compare with its row."

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        found = replay_all()
        for line in found.differences:
            self.stdout.write(line)
        kinds = ", ".join(
            f"{slug} {count} ({found.running[slug]} running)"
            for slug, count in sorted(found.games.items())
        )
        self.stdout.write(
            f"{found.total_games} games replayed ({kinds or 'none'}): {found.total_moves} moves "
            f"in {time.monotonic() - started:.2f} s, {len(found.differences)} difference(s)"
        )
        if found.differences:
            raise CommandError(f"{len(found.differences)} difference(s) between moves and games")
