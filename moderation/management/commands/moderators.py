"""Who moderates: list the Moderators group, add a registered player to it, or take one out.

python manage.py moderators                 # list them
python manage.py moderators --add NAME      # NAME may now read reports and act
python manage.py moderators --remove NAME
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from moderation import roles
from realtime.errors import ServiceError


class Command(BaseCommand):
    help = "List, add or remove moderators (the Moderators group)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--add", metavar="NAME")
        parser.add_argument("--remove", metavar="NAME")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["add"]:
                user = roles.do_set_moderator(username=options["add"], moderator=True)
                self.stdout.write(f"{user.username} is a moderator")
            if options["remove"]:
                user = roles.do_set_moderator(username=options["remove"], moderator=False)
                self.stdout.write(f"{user.username} is no longer a moderator")
        except ServiceError as error:
            raise CommandError(error.message) from None
        if not (options["add"] or options["remove"]):
            self.stdout.write("\n".join(roles.moderators()) or "no moderators")
