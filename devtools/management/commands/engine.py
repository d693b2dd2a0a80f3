"""`python -m devtools engine --level N`: devtools/engine.py, listed with the other commands.

devtools/__main__.py runs it before Django is set up (it needs none of it); this command is
the same engine for `python -m devtools help` and for callers of call_command.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from devtools.engine import run


class Command(BaseCommand):
    help = "Speak docs/BOTS.md's engine protocol on stdin/stdout with the site's computer."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--level", type=int, default=3, help="1 (a beginner) to 5")

    def handle(self, *args: Any, **options: Any) -> None:
        if not 1 <= options["level"] <= 5:
            raise CommandError("the levels are 1 to 5")
        run(options["level"], sys.stdin, sys.stdout)
