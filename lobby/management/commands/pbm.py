"""pbmserv's command form: python manage.py pbm "zigzag challenge -pits=8 alice bob"."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from lobby.services.challenges import parse_pbm_command, pbm_challenge
from realtime.errors import ServiceError


class Command(BaseCommand):
    help = "Run a pbmserv command; `<game> challenge [-opt=N ...] userid1 userid2` challenges "
    help += "userid2 on behalf of userid1, who moves first."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("command_text", help='e.g. "diffusion challenge alice bob"')

    def handle(self, *args: Any, **options: Any) -> None:
        text = options["command_text"]
        try:
            _, _, first, _ = parse_pbm_command(text)
            sender = User.objects.filter(username__iexact=first).first()
            if sender is None:
                raise ServiceError("unknown_user", f"There is no user called {first!r}.")
            challenge = pbm_challenge(sender=sender, text=text)
        except ServiceError as error:
            raise CommandError(error.message) from None
        self.stdout.write(
            f"challenge {challenge.pk}: {challenge.challenger} challenges {challenge.challenged} "
            f"to {challenge.slug} {challenge.options or ''} ({challenge.challenger} moves first); "
            f"expires {challenge.expires_at:%Y-%m-%d %H:%M} UTC"
        )
