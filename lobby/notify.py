"""The notification socket /ws/notify/: a signed-in user's personal lobby news (a challenge
to answer, a seek paired, a challenge accepted) on every page of the site but the lobby,
which has its own socket. It reads no database and writes no presence: it only listens."""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

from django.conf import settings
from django.utils.translation import gettext as _

from lobby import protocol
from lobby.services import feed
from realtime.protocol import Pong
from realtime.ws import CLOSE_TOO_MANY_SOCKETS, JsonConsumer

# Sockets of each user on this process: the cap of MAX_SOCKETS_PER_USER holds for these too
# (they have no presence rows to count across processes).
_open: Counter[int] = Counter()


class NotifyConsumer(JsonConsumer):
    messages = protocol.Ping
    handlers: ClassVar[dict[str, str]] = {"ping": "handle_ping"}

    async def connect(self) -> None:
        user = self.scope.get("user")
        self.user_id: int | None = user.pk if user is not None and user.is_authenticated else None
        self.counted = False
        await self.accept()
        if self.user_id is None:
            return  # a visitor hears nothing, and may only ping
        if _open[self.user_id] >= settings.MAX_SOCKETS_PER_USER:
            await self.send_error(
                "too_many_sockets",
                _(
                    "You have %(count)s connections open already (tabs, devices): close one "
                    "and reload."
                )
                % {"count": settings.MAX_SOCKETS_PER_USER},
            )
            await self.close(code=CLOSE_TOO_MANY_SOCKETS)
            return
        _open[self.user_id] += 1
        self.counted = True
        await self.join(feed.user_group(self.user_id))

    async def disconnect(self, code: int) -> None:
        user_id = getattr(self, "user_id", None)
        if not getattr(self, "counted", False) or user_id is None:
            return
        _open[user_id] -= 1
        if _open[user_id] <= 0:
            del _open[user_id]
        await self.channel_layer.group_discard(feed.user_group(user_id), self.channel_name)

    async def lobby_personal(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["text"])  # encoded once for all (feed.tell)

    async def handle_ping(self, message: protocol.Ping) -> None:
        await self.send_json(Pong(id=message.id))
