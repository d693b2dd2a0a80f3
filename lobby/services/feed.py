"""The lobby feed: public events with versions in commit order, and personal messages.

Both are typed frames (lobby/protocol.py), encoded once here: every socket they reach sends
the same text, and a batch is the texts of its events joined (lobby.consumers).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any, TypedDict

import msgspec
from channels.layers import get_channel_layer
from django.db import transaction

from lobby import protocol
from lobby.models import LobbyEvent, LobbyVersion
from realtime import logs, metrics
from realtime.channel_layers import group_send_many
from realtime.db import calling_loop, run_soon
from realtime.protocol import Frame, encode

logger = logging.getLogger(__name__)

LOBBY_GROUP = "lobby"


def user_group(user_id: int) -> str:
    return f"user.{user_id}"


class Stamped(TypedDict):
    """A public event as the channel layer carries it: its version and its JSON text."""

    v: int
    text: str


# What a service passes as an event's `v`: publish() replaces it with the event's version.
UNSTAMPED = 0


def online_message(count: int) -> dict[str, Any]:
    """The channel-layer message that tells every lobby socket the online count, encoded once."""
    return {"type": "lobby.online", "text": encode(protocol.Online(online=count))}


# Public events wait this long in a process before going out together: a burst of seeks and
# pairings then costs every lobby socket one message instead of one per event.
BATCH_SECONDS = 0.05


class _Batcher:
    """Collects public lobby events on the server's event loop and sends them in batches."""

    def __init__(self) -> None:
        self.events: list[Stamped] = []
        self.scheduled = False
        self.sending: set[asyncio.Future[None]] = set()  # keeps running sends referenced

    def add(self, events: list[Stamped]) -> None:
        self.events.extend(events)
        if not self.scheduled:
            self.scheduled = True
            # The batch is the process's, not the request's that opened it.
            asyncio.get_running_loop().call_later(
                BATCH_SECONDS, self._flush, context=logs.detached()
            )

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


def _batch(events: list[Stamped]) -> dict[str, Any]:
    return {"type": "lobby.batch", "events": events}


async def _group_send(messages: list[tuple[str, dict[str, Any]]]) -> None:
    try:
        await group_send_many(get_channel_layer(), messages)
    except Exception:
        # Committed already: lobby sockets catch up by version or on reconnect.
        metrics.REDIS_ERRORS.labels("broadcast").inc()
        logger.exception("lobby broadcast failed")


def _send(public: list[Stamped], personal: list[tuple[str, dict[str, Any]]]) -> None:
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


def publish(*events: protocol.FeedEvent) -> list[Stamped]:
    """Version public events and send them to every lobby socket after commit.

    Call last in the transaction: the version row stays locked until commit, so versions are
    handed out in commit order and a client never sees v7 before v6 exists.
    """
    counter, _ = LobbyVersion.objects.select_for_update().get_or_create(pk=1)
    stamped: list[Stamped] = []
    rows = []
    for event in events:
        counter.version += 1
        frame = msgspec.structs.replace(event, v=counter.version)
        stamped.append({"v": counter.version, "text": encode(frame)})
        rows.append(LobbyEvent(version=counter.version, payload=msgspec.to_builtins(frame)))
    LobbyEvent.objects.bulk_create(rows)
    counter.save(update_fields=["version"])
    transaction.on_commit(lambda: _send(stamped, []))
    return stamped


def tell(user_ids: list[int], frame: Frame) -> None:
    """Send a personal frame to every lobby socket of these users after commit (encoded
    once for all of them)."""
    message = {"type": "lobby.personal", "text": encode(frame)}
    messages = [(user_group(uid), message) for uid in user_ids]
    transaction.on_commit(lambda: _send([], messages))


def tell_each(frames: list[tuple[int, Frame]]) -> None:
    """Send each (user id, frame) to that user's lobby sockets after commit, all in one go:
    from sync code (the sweeper pairing an arena's wave) each send is a trip to an event loop
    of its own, so a burst of 1,000 personal frames sent one by one took seconds."""
    messages = [
        (user_group(uid), {"type": "lobby.personal", "text": encode(frame)})
        for uid, frame in frames
    ]
    if messages:
        transaction.on_commit(lambda: _send([], messages))
