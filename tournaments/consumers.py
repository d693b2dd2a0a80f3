"""The tournament socket /ws/tournaments/<id>/: the snapshot on connect, then every change.

Thin: it reads the snapshot (tournaments.selectors) and passes on the updates the services
publish, encoded once (tournaments/services/publish.py). See docs/PROTOCOL.md.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from django.utils.translation import gettext as _

from realtime import presence
from realtime.db import db_call
from realtime.protocol import Pong
from realtime.ws import JsonConsumer
from tournaments import protocol, selectors
from tournaments.models import Tournament, TournamentConnection
from tournaments.services import publish

CLOSE_NO_SUCH_TOURNAMENT = 4404
# Updates are committed in version order but sent by whichever process made them, so two close
# together may arrive swapped: a later one waits this long for the one before it, then the
# page gets the snapshot again. A lost update is rare (Redis restarting); a late one is common
# on a busy machine (measured: over a second, with 1,000 players), and a snapshot for every
# page at once would make the machine busier still.
REORDER_SECONDS = 3.0


class TournamentConsumer(JsonConsumer):
    messages = protocol.CLIENT_MESSAGES
    handlers: ClassVar[dict[str, str]] = {"sync": "handle_sync", "ping": "handle_ping"}
    max_message_bytes: ClassVar[int | None] = 1024

    async def connect(self) -> None:
        self.tournament_id = int(self.scope["url_route"]["kwargs"]["tournament_id"])
        self.joined = False
        self.version = 0  # the last version the page was sent
        self.early: dict[int, str] = {}  # updates that came before the one they follow
        self.resync: asyncio.Task[None] | None = None
        await self.accept()
        exists = await db_call(Tournament.objects.filter(pk=self.tournament_id).exists)()
        if not exists:
            await self.send_error(
                "no_such_tournament",
                _("There is no tournament %(tournament)s.") % {"tournament": self.tournament_id},
            )
            await self.close(code=CLOSE_NO_SUCH_TOURNAMENT)
            return
        self.joined = True
        if await self.refused_as_one_too_many(
            TournamentConnection, tournament_id=self.tournament_id
        ):
            self.joined = False
            return
        # Join before the snapshot: an update racing it arrives after, with a newer version.
        await self.join(publish.group(self.tournament_id))
        await self._send_snapshot()

    async def disconnect(self, code: int) -> None:
        resync = getattr(self, "resync", None)
        if resync is not None:
            resync.cancel()
        if not getattr(self, "joined", False):
            return
        try:
            if not self.handed_over:
                await db_call(presence.leave)(TournamentConnection, self.channel_name)
        finally:
            await self.channel_layer.group_discard(
                publish.group(self.tournament_id), self.channel_name
            )

    async def _send_snapshot(self) -> None:
        frame = await db_call(selectors.snapshot)(self.tournament_id, self.scope.get("user"))
        if frame is None:
            await self.send_error(
                "no_such_tournament",
                _("There is no tournament %(tournament)s.") % {"tournament": self.tournament_id},
            )
            return
        if frame.v < self.version:
            return  # the updates sent meanwhile are newer (a resync that came too late)
        self.version = frame.v
        await self.send_json(frame)
        await self._send_in_order()

    async def tournament_update(self, message: dict[str, Any]) -> None:
        # In version order, each once: an update the snapshot already holds is dropped, one
        # that came early waits for the one before it.
        if message["v"] > self.version:
            self.early[message["v"]] = message["text"]
            await self._send_in_order()

    async def _send_in_order(self) -> None:
        self.early = {v: text for v, text in self.early.items() if v > self.version}
        while self.version + 1 in self.early:
            self.version += 1
            await self.send(text_data=self.early.pop(self.version))
        if self.early and (self.resync is None or self.resync.done()):
            self.resync = asyncio.ensure_future(self._resync_if_still_missing())

    async def _resync_if_still_missing(self) -> None:
        await asyncio.sleep(REORDER_SECONDS)
        if self.early:  # the missing one never came (a broadcast lost): the snapshot again
            await self._send_snapshot()

    async def handle_sync(self, message: protocol.Sync) -> None:
        self.charge(self.sync_cost)
        await self._send_snapshot()

    async def handle_ping(self, message: protocol.Ping) -> None:
        await self.send_json(Pong(id=message.id))
