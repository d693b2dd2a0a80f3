"""One game socket's versioned stream: every versioned event its client receives goes out here.

Events reach a socket by several paths: the mover's own event (answered at once, with the
request's id), the broadcast every socket of the game receives, the stored events that fill
a gap before a later one, the periodic catch-up (games/catchup.py), the replay of `?v=` or
`sync`, and a snapshot when a replay would be too long. All of them go through one ordered
method under one lock, which tracks the last version the client has: the client receives the
versions in order, with no gap and none twice. See docs/PROTOCOL.md, "Versioned events".
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from games import reasons, selectors
from games.models import Game
from realtime.db import db_call
from realtime.protocol import encode

# Sends one text frame to the client.
Send = Callable[[str], Awaitable[None]]
# Sends the client a snapshot of the game; the version it shows, or None when there is no
# game to show (the client was told so).
Snapshot = Callable[[], Awaitable[int | None]]
# Re-arms the socket's deadline timer with the clock an event carries (None: no clock runs).
Rearm = Callable[[dict[str, Any] | None], None]


@dataclass(frozen=True, slots=True)
class Versioned:
    """One versioned event as the socket sends it: encoded once, with what it says about time."""

    v: int
    text: str
    # Whether the event carries a clock (possibly null): only then does it re-arm the timer.
    timed: bool = False
    clock: dict[str, Any] | None = None

    @classmethod
    def of(cls, event: Mapping[str, Any], text: str | None = None) -> Versioned:
        """From an event, or from a broadcast (services.broadcast: `v`, `clock` and the
        event's `text`, encoded once for every socket)."""
        return cls(
            v=event["v"],
            text=encode(event) if text is None else text,
            timed="clock" in event,
            clock=event.get("clock"),
        )

    @classmethod
    def stored(cls, payload: Mapping[str, Any]) -> Versioned:
        """A stored event sent to fill a gap or replay: its clock is as of when it happened,
        so it re-arms nothing (the event that follows it, or the game, does)."""
        return cls(v=payload["v"], text=encode(payload))


def state_frame(game_id: int, user: Any, player: int | None) -> dict[str, Any] | None:
    """The `state` frame a viewer's stream starts with (and falls back to): the game as of
    one moment, its result's reason in the active language, the viewer's chat room and, for
    a player, their conditional moves; None when there is no such game. In a database
    thread: the game socket and the Bot API's game stream both send it."""
    loaded = selectors.load_snapshot(game_id)
    if loaded is None:
        return None
    game, state = loaded
    return {
        "type": "state",
        "v": game.version,
        "you": player,
        "game": reasons.localize_state(state),
        "chat": selectors.chat_view(game, user, player),
        **({"queue": game.queues.get(str(player), [])} if player else {}),
    }


class VersionedStream:
    """The versions one socket has sent its client, and the only way to send it more."""

    def __init__(self, game_id: int, send: Send, snapshot: Snapshot, rearm: Rearm) -> None:
        self.game_id = game_id
        self.last_v = 0  # the last version the client has
        self._send_text = send
        self._snapshot = snapshot
        self._rearm = rearm
        # Held by whichever path is sending (or, for a request, from before its service runs
        # until its event is out), so the paths take turns and each sees the others' last_v.
        self._order = asyncio.Lock()

    @property
    def busy(self) -> bool:
        """Whether a path is sending now (and so bringing the client up to date itself)."""
        return self._order.locked()

    # --- the paths ---------------------------------------------------------------------------

    async def broadcast(self, event: Versioned) -> None:
        """An event every socket of the game receives; skipped when the client has it (the
        mover, answered first; a socket that caught up)."""
        async with self._order:
            await self._send(event)

    async def catch_up(self, version: int) -> None:
        """Send what the client lacks up to `version`: events stored without this socket
        hearing of them (a lost broadcast, another process's move on the in-memory layer)."""
        async with self._order:
            await self._fill(version, timed=True)

    async def resume(self, since: int | None) -> bool:
        """Bring a client that has everything up to `since` (`?v=`, `sync`) to the present:
        the events after it, or a snapshot (no `since`, too far behind, or a version the game
        has not reached). True when it replayed."""
        async with self._order:
            if since is not None and await self._replay(since):
                return True
            await self._reset()
            return False

    @asynccontextmanager
    async def request(self) -> AsyncIterator[Reply]:
        """Hold the stream while a client's request runs and is answered: its event cannot
        go out first by another path (the catch-up, the deadline) without the request's id,
        and its broadcast, coming after, is skipped."""
        async with self._order:
            yield Reply(self)

    # --- the one ordered way out (the caller holds the lock) ---------------------------------

    async def _send(self, event: Versioned) -> None:
        """Send `event` unless the client has it, after the stored events it lacks before it."""
        if event.v <= self.last_v:
            return
        if event.v > self.last_v + 1:
            await self._fill(event.v - 1, timed=False)
            if event.v <= self.last_v:
                return  # a snapshot replaced the missing events, and it shows this one
        self.last_v = event.v
        await self._send_text(event.text)
        if event.timed:
            self._rearm(event.clock)

    async def _fill(self, version: int, *, timed: bool) -> None:
        """Send the stored events after last_v up to `version`, or a snapshot when they are
        too many (or missing)."""
        if version <= self.last_v:
            return
        events = await db_call(selectors.events_since)(self.game_id, self.last_v, version)
        if events is None:
            await self._reset()
            return
        for event in events:
            await self._send(Versioned.of(event) if timed else Versioned.stored(event))

    async def _replay(self, since: int) -> bool:
        """Send the events after `since` (the client says it has up to there, whatever this
        socket sent before); False when a snapshot must be sent instead."""
        latest = await db_call(self._current_version)()
        if since > latest:
            return False  # the client claims a future it cannot have seen
        events = await db_call(selectors.events_since)(self.game_id, since, latest)
        if events is None:
            return False
        self.last_v = since
        for event in events:
            await self._send(Versioned.stored(event))
        return True

    async def _reset(self) -> None:
        version = await self._snapshot()
        if version is not None:
            self.last_v = version

    def _current_version(self) -> int:
        return Game.objects.filter(pk=self.game_id).values_list("version", flat=True).first() or 0


class Reply:
    """What a request may send on its socket's stream while it holds it (`request()`)."""

    def __init__(self, stream: VersionedStream) -> None:
        self._stream = stream

    async def event(self, event: Versioned) -> None:
        """The request's own new event, its text carrying the request's id."""
        await self._stream._send(event)

    async def duplicate(self, event: Versioned) -> None:
        """The stored event of a request already applied (a resend), marked so: in order if
        the client lacks it, else as the answer the client asked for."""
        if event.v > self._stream.last_v:
            await self._stream._send(event)
        else:
            await self._stream._send_text(event.text)

    async def snapshot(self) -> None:
        """A fresh snapshot (a request refused because the client's view is stale)."""
        await self._stream._reset()
