"""Write docs/openapi.json: the Bot API's OpenAPI description, generated from the URLconf and
the typed models (botapi/openapi.py).

    python manage.py openapi            # rewrite the file
    python manage.py openapi --check    # exit 1 if the file is out of date
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from botapi.openapi import DESCRIPTION_FILE, text


class Command(BaseCommand):
    help = "Write (or --check) docs/openapi.json from the endpoints that accept tokens."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--check", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        written = text()
        if options["check"]:
            if not DESCRIPTION_FILE.exists() or DESCRIPTION_FILE.read_text() != written:
                raise CommandError(f"{DESCRIPTION_FILE} is out of date: run manage.py openapi")
            self.stdout.write("up to date")
            return
        DESCRIPTION_FILE.write_text(written)
        self.stdout.write(f"wrote {DESCRIPTION_FILE}")
