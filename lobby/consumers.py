"""The lobby socket /ws/lobby/: a snapshot, then the versioned public feed and personal news.

Thin: the requests are the operations of lobby.commands, the table the HTTP API serves too;
this socket adds the snapshot, the feed and `sync`. See docs/PROTOCOL.md.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any, ClassVar
from urllib.parse import parse_qs

from channels.layers import get_channel_layer

from lobby import commands, matchmaker, protocol, selectors
from lobby.models import LobbyConnection
from lobby.services import computer, feed
from lobby.services import presence as lobby_presence
from realtime import logs, presence
from realtime.batches import Batches
from realtime.db import db_call
from realtime.errors import ServiceError
from realtime.protocol import Message, encode, tag_of
from realtime.ws import JsonConsumer

logger = logging.getLogger(__name__)

LOBBY_GROUP = feed.LOBBY_GROUP
ONLINE_INTERVAL = 1.0
# How long a socket waits for a missing feed version (another process's batch still on its
# way) before it reads the version from the database.
GAP_WAIT_SECONDS = 0.25
# Per event loop: whether an `online` update is on its way, and whether another is due.
_online: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def online_changed() -> None:
    """Coalesce arrivals and departures into at most one `online` message per interval."""
    state = _online.setdefault(asyncio.get_running_loop(), {"task": None, "dirty": False})
    state["dirty"] = True
    if state["task"] is None:
        state["task"] = asyncio.ensure_future(_send_online(state))


async def _send_online(state: dict[str, Any]) -> None:
    try:
        while state["dirty"]:
            state["dirty"] = False
            count = await db_call(selectors.online_count)()
            await get_channel_layer().group_send(LOBBY_GROUP, feed.online_message(count))
            await asyncio.sleep(ONLINE_INTERVAL)
    except Exception:
        logger.exception("online count update failed")
    finally:
        state["task"] = None


# Per event loop: the stored feed being read after a version, for every socket asking.
_reading: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[int, asyncio.Task[list[feed.Stamped] | None]]
] = weakref.WeakKeyDictionary()


async def _events_since(version: int) -> list[feed.Stamped] | None:
    """`selectors.events_since`, read once for all of this process's sockets that ask for
    the same version meanwhile: the lobby's sockets see a gap in the feed together (a batch
    from another process late), and reconnect together after a restart, each at the version
    it had; one query answers them all (a profile of `lobbybench` found 40% of the database
    threads' time in these reads and the snapshots)."""
    loop = asyncio.get_running_loop()
    reading = _reading.setdefault(loop, {})
    task = reading.get(version)
    if task is None:
        # The process's read, not the asking socket's (its log context, its cancellation).
        task = loop.create_task(db_call(selectors.events_since)(version), context=logs.detached())
        reading[version] = task
        task.add_done_callback(lambda _: reading.pop(version, None))
    return await asyncio.shield(task)


# A socket's snapshot is read after it joined the feed (else the events in between would be
# in neither): sockets asking while a read is in the database share the next one. The
# selector is looked up at each read (the tests count them).
_snapshots: Batches[Any, protocol.Lobby] = Batches(lambda users: selectors.snapshots(users))
# The public snapshot (a visitor's) as sent: the same text for every visitor until it changes.
_public_text: tuple[protocol.Lobby, str] | None = None


def _snapshot_text(snapshot: protocol.Lobby) -> str:
    global _public_text
    if snapshot.user is not None:
        return encode(snapshot)
    kept = _public_text
    if kept is None or kept[0] is not snapshot:
        kept = _public_text = (snapshot, encode(snapshot))
    return kept[1]


# Requests of an operation served many at once (commands.Operation.call_many, seeks): a
# lobby's burst is a few transactions, not one each.
_batched: dict[str, Batches[tuple[Any, Message], commands.Done | ServiceError]] = {
    tag: Batches(commands.run_many)
    for tag, operation in commands.BY_TAG.items()
    if operation.call_many is not None
}


def _user_id(user: Any) -> int | None:
    return user.pk if user is not None and user.is_authenticated else None


class LobbyConsumer(JsonConsumer):
    messages = protocol.CLIENT_MESSAGES
    handlers: ClassVar[dict[str, str]] = {
        "ping": "handle_ping",
        "sync": "handle_sync",
        **{tag: "handle_operation" for tag in commands.BY_TAG},
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Every attribute, before any await (realtime/ws.py, JsonConsumer.__init__, says why).
        self.user: Any = None
        self.user_id: int | None = None
        self.last_v = 0
        self._held: dict[int, str] = {}  # version -> the event's text
        self._gap_timer: asyncio.TimerHandle | None = None
        self._refused = False

    async def connect(self) -> None:
        self.user = self.scope.get("user")
        self.user_id = _user_id(self.user)
        presence.ensure_heartbeat()
        # Accept at once: in a reconnection storm the handshake must not wait for the
        # channel layer or the database (the client waits for its snapshot instead).
        await self.accept()
        # Admitted under the socket caps and recorded as present in one step.
        if await self.refused_as_one_too_many(LobbyConnection):
            self._refused = True
            return
        await self.join(LOBBY_GROUP)
        if self.user_id is not None:
            await self.join(feed.user_group(self.user_id))
        since = self._version_in_query()
        if since is None or not await self._replay(since):
            await self._send_snapshot()
        online_changed()

    async def disconnect(self, code: int) -> None:
        if self._refused:
            return  # it never joined anything
        user_id = self.user_id
        timer = self._gap_timer
        if timer is not None:
            timer.cancel()
        try:
            if not self.handed_over:  # closed for a restart: the row is handed over
                await lobby_presence.leave_socket((self.channel_name, user_id))
        finally:
            await self.channel_layer.group_discard(LOBBY_GROUP, self.channel_name)
            if user_id is not None:
                await self.channel_layer.group_discard(feed.user_group(user_id), self.channel_name)
            if not self.handed_over:
                online_changed()

    def _version_in_query(self) -> int | None:
        values = parse_qs(self.scope.get("query_string", b"").decode("latin-1")).get("v")
        try:
            return int(values[0]) if values else None
        except ValueError:
            return None

    async def _send_snapshot(self) -> None:
        snapshot = await _snapshots(self.user)
        self.last_v = snapshot.v
        await self.send(text_data=_snapshot_text(snapshot))

    async def _replay(self, since: int) -> bool:
        events = await _events_since(since)
        if events is None:
            return False
        self.last_v = since  # the client has everything up to here
        await self._deliver(*events)
        return True

    async def _deliver(self, *events: feed.Stamped) -> None:
        """Send public events in version order. Each process batches its own events, so
        another process's batch can arrive a moment after a later one: a gap is waited for
        briefly before it is filled from the stored feed (else every socket in the lobby
        would query the database at once)."""
        for event in events:
            if event["v"] > self.last_v:
                self._held.setdefault(event["v"], event["text"])
        await self._release(fill=False)

    async def _release(self, *, fill: bool) -> None:
        out: list[str] = []
        while self._held:
            following = self.last_v + 1
            if following in self._held:
                out.append(self._held.pop(following))
                self.last_v = following
                continue
            if not fill:
                break
            fill = False  # one query per gap: what the database lacks, no layer will bring
            missing = await _events_since(self.last_v)
            if missing is None:
                await self._flush(out)
                out = []
                await self._send_snapshot()
            else:
                for event in missing:
                    self._held.setdefault(event["v"], event["text"])
            self._held = {v: e for v, e in self._held.items() if v > self.last_v}
        await self._flush(out)
        if self._gap_timer is not None:
            self._gap_timer.cancel()
            self._gap_timer = None
        if self._held:
            loop = asyncio.get_running_loop()
            self._gap_timer = loop.call_later(
                GAP_WAIT_SECONDS, lambda: loop.create_task(self._fill_gap())
            )

    async def _fill_gap(self) -> None:
        self._gap_timer = None
        try:
            await self._release(fill=True)
        except Exception:
            logger.exception("lobby socket could not fill a gap in the feed")

    async def _flush(self, events: list[str]) -> None:
        # One frame per burst: a busy lobby must not cost a frame per event per socket. The
        # events come encoded (lobby.services.feed): a batch is their texts joined.
        if len(events) == 1:
            await self.send(text_data=events[0])
        elif events:
            await self.send(text_data='{"type":"batch","events":[' + ",".join(events) + "]}")

    # --- from the channel layer -------------------------------------------------------------

    async def lobby_batch(self, message: dict[str, Any]) -> None:
        await self._deliver(*message["events"])

    async def lobby_announcement(self, message: dict[str, Any]) -> None:
        """A message from the site's operators to everyone in the lobby (not versioned)."""
        await self.send_json(protocol.Announcement(text=str(message["text"])))

    async def lobby_personal(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["text"])  # encoded once for all (feed.tell)

    async def lobby_online(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["text"])  # encoded once for all (feed.online_message)

    # --- from the client --------------------------------------------------------------------

    async def handle_ping(self, message: protocol.Ping) -> None:
        await self.send_json(protocol.Pong(id=message.id))

    async def handle_sync(self, message: protocol.Sync) -> None:
        self.charge(self.sync_cost)
        if message.v > self.last_v or not await self._replay(message.v):
            await self._send_snapshot()

    async def handle_operation(self, message: Message) -> None:
        """Any operation of the command table: the same service and checks as over HTTP."""
        batch = _batched.get(tag_of(type(message)))
        if batch is None:
            done = await db_call(commands.run)(self.user, message, socket=True)
        else:
            done = await batch((self.user, message))
            if isinstance(done, ServiceError):
                raise done
        if isinstance(message, protocol.Seek):
            seek, _ = done.result
            self._seek_opened(seek.pk, message)
        await self.send_json(done.answer)

    def _seek_opened(self, seek_id: int, message: protocol.Seek) -> None:
        """A seek from this socket is paired by the matchmaker (`game_started` follows)."""
        matchmaker.poke()
        if message.computer is not None:
            # No partner by then: the computer (`game_started` follows in either case).
            asyncio.get_running_loop().call_later(
                computer.fallback_seconds(),
                lambda: asyncio.ensure_future(self._hand_to_computer(seek_id)),
            )

    async def _hand_to_computer(self, seek_id: int) -> None:
        try:
            await db_call(computer.hand_to_computer)(seek_ids=[seek_id])
        except Exception:
            # The bots worker hands it over a few seconds later: log, and let it.
            logger.exception("handing seek %s to the computer failed", seek_id)
