"""TV's feed in one server process: the game TV shows, followed once, sent to every TV socket.

A thousand people watching TV must not cost a thousand of everything. So each process has
one feed per channel (overall, or one game's) while it has TV sockets on it:

- **one follower of the game**: one subscription to the game's group on the channel layer
  and one versioned stream (games.delivery: versions in order, gaps filled from the stored
  events, lost broadcasts caught up by games.catchup), whatever the number of watchers;
- **one snapshot per version**: a socket that opens mid-game gets the state frame the feed
  computed for the current version (one database read per version, not per socket);
- **every frame encoded once**, put in each watcher's language once per language, and
  written to each socket;
- **the switch pushed**: when the game ends, the feed asks which game is next (lobby/tv.py,
  shared between processes for a second) and every socket gets a `tv` frame naming it, then
  its snapshot, with no request and no new socket. With no game on, the feed asks again
  every NO_GAME_SECONDS.

Each watcher receives every version after its snapshot once, in order (`shown_v`): the
fan-outs and a socket's first frames take turns under one lock. See docs/PROTOCOL.md,
"The TV socket".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import translation

from games import catchup, reasons
from games.delivery import Versioned, VersionedStream, state_frame
from games.presence import game_group
from lobby import tv
from realtime import logs
from realtime.channel_layers import LAYER_DOWN
from realtime.db import db_call
from realtime.errors import is_outage
from realtime.protocol import encode

logger = logging.getLogger(__name__)

# With no game on TV, how often a feed asks whether one has started (TV_NO_GAME_SECONDS).
NO_GAME_SECONDS = 5.0


def _no_game_seconds() -> float:
    return float(getattr(settings, "TV_NO_GAME_SECONDS", NO_GAME_SECONDS))


# After a failure (the database or the layer away), the feed tries again this soon.
RETRY_SECONDS = 1.0


class Watcher(Protocol):
    """What the feed needs of a TV socket (lobby/tv_consumer.py)."""

    language: str
    shown_v: int  # the version of the shown game the client has; -1: none yet

    async def send_text(self, text: str) -> None: ...


class _Kind(msgspec.Struct):
    type: str
    status: str | None = None


_kind = msgspec.json.Decoder(_Kind)


class Feed:
    """TV of one channel ("" overall, or a game's slug) on this process."""

    def __init__(self, slug: str) -> None:
        self.slug = slug
        self.watchers: set[Watcher] = set()
        self.game: dict[str, Any] | None = None  # lobby.tv.featured_json's answer, or None
        self.ready = asyncio.Event()  # the first answer is in
        self._lock = asyncio.Lock()  # fan-outs and a socket's first frames take turns
        self._stream: VersionedStream | None = None
        self._snapshot: Snapshot | None = None
        self._over = asyncio.Event()  # the game shown has ended
        self._follower: asyncio.Task[None] | None = None
        self._runner: asyncio.Task[None] | None = None

    # --- watchers ----------------------------------------------------------------------------

    async def join(self, watcher: Watcher) -> None:
        """Add a TV socket: it gets the `tv` frame of the game shown and its snapshot, then
        everything after. (Its consumer handles one message at a time: it cannot leave
        before this returns.)"""
        if self._runner is None:
            self._runner = asyncio.get_running_loop().create_task(
                self._run(), context=logs.detached()
            )
        await self.ready.wait()
        async with self._lock:
            self.watchers.add(watcher)
            await watcher.send_text(_tv_frame(self.game))
            if self.game is None:
                return
            snapshot = await self._current_snapshot(self.game["id"])
            if snapshot is not None and watcher.shown_v < snapshot.version:
                watcher.shown_v = snapshot.version
                await watcher.send_text(_localized(snapshot.text, watcher.language))

    def leave(self, watcher: Watcher) -> None:
        self.watchers.discard(watcher)
        if not self.watchers and self.ready.is_set():
            self.stop()

    def stop(self) -> None:
        """No watcher left on this process: nothing is followed any more."""
        _feeds.get(asyncio.get_running_loop(), {}).pop(self.slug, None)
        for task in (self._runner, self._follower):
            if task is not None:
                task.cancel()
        if self._stream is not None:
            catchup.forget(self._stream)

    # --- the game shown ----------------------------------------------------------------------

    async def _run(self) -> None:
        ended: int | None = None
        while True:
            try:
                ended = await self._step(ended)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                # The database or the channel layer away: the watchers keep what they have,
                # and the feed tries again. Anything else is a bug, logged as one.
                if is_outage(error) or isinstance(error, LAYER_DOWN):
                    logger.warning("TV %r: trying again (%s)", self.slug, error)
                else:
                    logger.exception("TV %r failed; trying again", self.slug)
                await asyncio.sleep(RETRY_SECONDS)

    async def _step(self, ended: int | None) -> int | None:
        """Show the next game and wait for its end (the game that ended, returned), or wait
        a while for one when none is being played."""
        shown = await db_call(tv.next_featured)(self.slug or None, ended)
        if shown is None:
            if self.game is not None or not self.ready.is_set():
                await self._show(None)
            await asyncio.sleep(_no_game_seconds())
            return None
        if self.game is not None and shown["id"] == self.game["id"]:
            await asyncio.sleep(RETRY_SECONDS)  # still this one: ask again in a moment
            return ended
        await self._show(shown)
        await self._over.wait()
        return int(shown["id"])

    async def _show(self, game: dict[str, Any] | None) -> None:
        """Switch: every watcher hears which game is next, then gets its snapshot."""
        if self._follower is not None:
            self._follower.cancel()
            self._follower = None
        if self._stream is not None:
            catchup.forget(self._stream)
            self._stream = None
        self._over = asyncio.Event()
        frame = _tv_frame(game)  # encoded once for every watcher
        async with self._lock:
            self.game = game
            self._snapshot = None
            for watcher in list(self.watchers):
                watcher.shown_v = -1
                await watcher.send_text(frame)
        self.ready.set()
        if game is None:
            return
        stream = VersionedStream(game["id"], self._fan_out, self._reset, _no_timer)
        self._stream = stream
        try:
            layer = get_channel_layer()
            channel = await layer.new_channel() if layer is not None else None
            if layer is not None:
                await layer.group_add(game_group(game["id"]), channel)
            # Joined before the snapshot: an event racing it is skipped by version, not lost.
            await stream.resume(None)
        except Exception:
            self.game = None  # shown again when the feed tries again
            raise
        catchup.watch(stream)
        if layer is not None and channel is not None:
            self._follower = asyncio.get_running_loop().create_task(
                self._follow(layer, channel, game["id"], stream), context=logs.detached()
            )

    async def _follow(
        self, layer: Any, channel: str, game_id: int, stream: VersionedStream
    ) -> None:
        try:
            while True:
                try:
                    message = await layer.receive(channel)
                except asyncio.CancelledError:
                    raise
                except Exception as error:
                    logger.warning("TV %r: channel layer unreachable (%s)", self.slug, error)
                    await asyncio.sleep(RETRY_SECONDS)  # the catch-up keeps the stream current
                    continue
                kind = message.get("type")
                if kind == "game.event":
                    await stream.broadcast(Versioned.of(message, message["text"]))
                elif kind == "game.crowd":
                    await self._fan_out_unversioned(message["text"])
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(layer.group_discard(game_group(game_id), channel))

    # --- fan-out -----------------------------------------------------------------------------

    async def _fan_out(self, text: str) -> None:
        """The stream's next event (its version is the stream's last_v): to every watcher
        that lacks it."""
        stream = self._stream
        if stream is None:
            return
        version = stream.last_v
        async with self._lock:
            await self._send_all(text, version)
        kind = _kind.decode(text)
        if kind.type == "end" or (kind.status is not None and kind.status != "active"):
            self._over.set()

    async def _reset(self) -> int | None:
        """A snapshot for every watcher (the game's first, or one in place of a long gap)."""
        stream = self._stream
        if stream is None:
            return None
        async with self._lock:
            snapshot = await self._current_snapshot(stream.game_id, fresh=True)
            if snapshot is None:
                self._over.set()  # the game is gone: go on to the next
                return None
            await self._send_all(snapshot.text, snapshot.version)
        if not snapshot.active:
            self._over.set()
        return snapshot.version

    async def _fan_out_unversioned(self, text: str) -> None:
        async with self._lock:
            for watcher, localized in self._localized(text):
                if watcher.shown_v >= 0:
                    await watcher.send_text(localized)

    async def _send_all(self, text: str, version: int) -> None:
        for watcher, localized in self._localized(text):
            if watcher.shown_v < version:
                watcher.shown_v = version
                await watcher.send_text(localized)

    def _localized(self, text: str) -> list[tuple[Watcher, str]]:
        """Each watcher with the text in its language, translated once per language."""
        texts: dict[str, str] = {}
        out = []
        for watcher in list(self.watchers):
            if watcher.language not in texts:
                texts[watcher.language] = _localized(text, watcher.language)
            out.append((watcher, texts[watcher.language]))
        return out

    async def _current_snapshot(self, game_id: int, *, fresh: bool = False) -> Snapshot | None:
        """The state frame of the game shown, at the version the watchers have or later:
        read once per version (the caller holds the lock)."""
        known = self._snapshot
        stream = self._stream
        current = stream.last_v if stream is not None and stream.game_id == game_id else 0
        if (
            not fresh
            and known is not None
            and known.game_id == game_id
            and known.version >= current
        ):
            return known
        frame = await db_call(state_frame)(game_id, None, None)
        if frame is None:
            return None
        self._snapshot = Snapshot(
            game_id, int(frame["v"]), encode(frame), frame["game"]["status"] == "active"
        )
        return self._snapshot


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A state frame of the game shown, encoded once."""

    game_id: int
    version: int
    text: str
    active: bool


def _no_timer(_clock: dict[str, Any] | None) -> None:
    """The feed arms no deadline: the players' sockets and the sweeper end games on time."""


def _tv_frame(game: dict[str, Any] | None) -> str:
    return encode({"type": "tv", "game": game})


def _localized(text: str, language: str) -> str:
    with translation.override(language):
        return reasons.localize_frame(text)


# Per event loop (a server has one; tests start a loop per test): slug -> its feed.
_feeds: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Feed]] = (
    weakref.WeakKeyDictionary()
)


def feed(slug: str) -> Feed:
    """This process's feed of TV channel `slug` ("" overall), started on first use."""
    feeds = _feeds.setdefault(asyncio.get_running_loop(), {})
    found = feeds.get(slug)
    if found is None:
        found = feeds[slug] = Feed(slug)
    return found
