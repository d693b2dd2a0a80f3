"""Tell everyone in the lobby something: python manage.py announce "Maintenance at 22:00"."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.management.base import BaseCommand, CommandError

from lobby.services.feed import LOBBY_GROUP

MAX_LENGTH = 300


class Command(BaseCommand):
    help = "Send an announcement to every open lobby socket (needs REDIS_URL across processes)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("text")

    def handle(self, *args: Any, **options: Any) -> None:
        text = options["text"].strip()
        if not text or len(text) > MAX_LENGTH:
            raise CommandError(f"An announcement is 1 to {MAX_LENGTH} characters.")
        layer = get_channel_layer()
        async_to_sync(layer.group_send)(LOBBY_GROUP, {"type": "lobby.announcement", "text": text})
        self.stdout.write("announced")
