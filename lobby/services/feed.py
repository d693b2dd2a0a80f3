"""The lobby feed: public events with versions in commit order, and personal messages."""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any

from channels.layers import get_channel_layer
from django.db import transaction

from lobby.models import LobbyEvent, LobbyVersion
from realtime.db import calling_loop, run_soon

logger = logging.getLogger(__name__)

LOBBY_GROUP = "lobby"


def user_group(user_id: int) -> str:
    return f"user.{user_id}"


# Public events wait this long in a process before going out together: a burst of seeks and
# pairings then costs every lobby socket one message instead of one per event.
BATCH_SECONDS = 0.05


class _Batcher:
    """Collects public lobby events on the server's event loop and sends them in batches."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.scheduled = False
        self.sending: set[asyncio.Future[None]] = set()  # keeps running sends referenced

    def add(self, events: list[dict[str, Any]]) -> None:
        self.events.extend(events)
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_later(BATCH_SECONDS, self._flush)

    def _flush(self) -> None:
        events, self.events, self.scheduled = self.events, [], False
        events.sort(key=lambda event: event["v"])
        task = asyncio.ensure_future(_group_send([(LOBBY_GROUP, _batch(events))]))
        self.sending.add(task)
        task.add_done_callback(self.sending.discard)


# One per event loop: a server has one; tests start a loop per test.
_batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Batcher] = (
    weakref.WeakKeyDictionary()
)


def _batcher() -> _Batcher:
    loop = asyncio.get_running_loop()
    batcher = _batchers.get(loop)
    if batcher is None:
        batcher = _batchers[loop] = _Batcher()
    return batcher


def _batch(events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "lobby.batch", "events": events}


async def _group_send(messages: list[tuple[str, dict[str, Any]]]) -> None:
    layer = get_channel_layer()
    try:
        for group, message in messages:
            await layer.group_send(group, message)
    except Exception:
        # Committed already: lobby sockets catch up by version or on reconnect.
        logger.exception("lobby broadcast failed")


def _send(public: list[dict[str, Any]], personal: list[tuple[str, dict[str, Any]]]) -> None:
    if get_channel_layer() is None:
        return
    batching = calling_loop() is not None

    async def send_all() -> None:
        await _group_send(personal)
        if not public:
            return
        if batching:
            _batcher().add(public)  # a long-running server: batch
        else:
            await _group_send([(LOBBY_GROUP, _batch(public))])

    run_soon(send_all)


def publish(*events: dict[str, Any]) -> list[dict[str, Any]]:
    """Version public events and send them to every lobby socket after commit.

    Call last in the transaction: the version row stays locked until commit, so versions are
    handed out in commit order and a client never sees v7 before v6 exists.
    """
    counter, _ = LobbyVersion.objects.select_for_update().get_or_create(pk=1)
    stamped = []
    for event in events:
        counter.version += 1
        stamped.append({**event, "v": counter.version})
    LobbyEvent.objects.bulk_create(
        LobbyEvent(version=payload["v"], payload=payload) for payload in stamped
    )
    counter.save(update_fields=["version"])
    transaction.on_commit(lambda: _send(stamped, []))
    return stamped


def tell(user_ids: list[int], event: dict[str, Any]) -> None:
    """Send a personal message to every lobby socket of these users after commit."""
    messages = [(user_group(uid), {"type": "lobby.personal", "event": event}) for uid in user_ids]
    transaction.on_commit(lambda: _send([], messages))


def current_version() -> int:
    return LobbyVersion.objects.filter(pk=1).values_list("version", flat=True).first() or 0


# A socket further behind than this gets one snapshot instead of the events.
MAX_REPLAY = 50


def events_since(version: int, limit: int = MAX_REPLAY) -> list[dict[str, Any]] | None:
    latest = current_version()
    if version == latest:
        return []
    # A version from the future (a client cannot have seen it) or too far back: a snapshot.
    if version < 0 or version > latest or latest - version > limit:
        return None
    return list(
        LobbyEvent.objects.filter(version__gt=version, version__lte=latest)
        .order_by("version")
        .values_list("payload", flat=True)
    )
