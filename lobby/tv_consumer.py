"""The TV socket /ws/tv/ and /ws/tv/<game>/: the game TV shows, as a spectator sees it, and the
next one when it ends (docs/PROTOCOL.md, "The TV socket").

It speaks the spectator's protocol of the game socket (the same `state` and versioned
events), with one frame more: `tv`, naming the game shown, before its snapshot. The socket
only listens (it accepts `ping`); this process's feed (lobby/tv_feed.py) does the work once
for all its TV sockets. It reads no database and writes no presence of its own: the cap on
sockets per address is counted on each process, as the notification socket's.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from lobby import protocol, tv, tv_feed
from realtime.protocol import Pong
from realtime.ws import CLOSE_TOO_MANY_SOCKETS, JsonConsumer

CLOSE_NO_SUCH_GAME = 4404

# TV sockets of each address on this process.
_open: Counter[str] = Counter()


class TvConsumer(JsonConsumer):
    messages = protocol.Ping
    handlers: ClassVar[dict[str, str]] = {"ping": "handle_ping"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.language = settings.LANGUAGE_CODE
        self.shown_v = -1
        self.feed: tv_feed.Feed | None = None
        self.counted = ""

    async def connect(self) -> None:
        slug = self.scope["url_route"]["kwargs"].get("slug", "")
        self.language = translation.get_language() or settings.LANGUAGE_CODE
        await self.accept()
        if slug and not tv.known_game(slug):
            await self.send_error("no_such_game", _("There is no such game."))
            await self.close(code=CLOSE_NO_SUCH_GAME)
            return
        cap, address = settings.MAX_SOCKETS_PER_ADDRESS, self.address
        if cap and address and _open[address] >= cap:
            await self.send_error(
                "too_many_sockets",
                _(
                    "Your network address has %(count)s connections open already: "
                    "close one and reload."
                )
                % {"count": cap},
            )
            await self.close(code=CLOSE_TOO_MANY_SOCKETS)
            return
        if address:
            _open[address] += 1
            self.counted = address
        self.feed = tv_feed.feed(slug)
        await self.feed.join(self)

    async def disconnect(self, code: int) -> None:
        if self.counted:
            _open[self.counted] -= 1
            if _open[self.counted] <= 0:
                del _open[self.counted]
            self.counted = ""
        if self.feed is not None:
            self.feed.leave(self)
            self.feed = None

    async def send_text(self, text: str) -> None:
        await self.send(text_data=text)

    async def handle_ping(self, message: protocol.Ping) -> None:
        await self.send_json(Pong(id=message.id))
