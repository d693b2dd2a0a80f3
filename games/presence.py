"""Who is on a game's sockets, across every server process, and the `crowd` messages.

Connections live in the database (GameConnection) so every process counts the same crowd;
realtime/presence.py keeps them honest when a process dies. Crowd messages are not game events
(no version): a newer one simply replaces an older one,
so bursts of arrivals are coalesced into one message per game per interval.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any

from channels.layers import get_channel_layer

from games import protocol
from games.models import GameConnection
from realtime import presence
from realtime.db import db_call, run_soon
from realtime.presence import HANDED_OVER
from realtime.protocol import encode

logger = logging.getLogger(__name__)

# Crowds above this size get at most one crowd message per CROWD_INTERVAL seconds.
SMALL_CROWD = 20
CROWD_INTERVAL = 1.0

# Per event loop (a server has one; tests start a loop per test): game id -> its sender.
_pending: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, asyncio.Future[None]]] = (
    weakref.WeakKeyDictionary()
)
_dirty: set[int] = set()


def game_group(game_id: int) -> str:
    """Every socket on the game, players and spectators: an event is published once."""
    return f"game.{game_id}"


def leave(*, channel_name: str) -> None:
    presence.leave(GameConnection, channel_name)


def send_crowd(game_id: int) -> None:
    """Send the game's crowd now, from sync code (the heartbeat's reaper, the sweeper)."""
    layer = get_channel_layer()
    payload = _crowd_message(crowd(game_id))

    async def send() -> None:
        try:
            await layer.group_send(game_group(game_id), payload)
        except Exception:
            logger.exception("crowd update for game %s failed", game_id)

    if layer is not None:
        run_soon(send)


def crowd(game_id: int) -> protocol.Crowd:
    rows = list(GameConnection.objects.filter(game_id=game_id).values_list("player", "server"))
    players = [player for player, _ in rows]
    # A socket handed over by a restarting process (realtime/drain.py) is back on another
    # process already: its player counts as here, but a spectator is not counted twice.
    watching = [server for player, server in rows if player is None]
    return protocol.Crowd(
        spectators=sum(1 for server in watching if not server.startswith(HANDED_OVER)),
        players={"1": 1 in players, "2": 2 in players},
    )


def _crowd_message(frame: protocol.Crowd) -> dict[str, Any]:
    """The group message of a crowd frame: its text, encoded once for every socket."""
    return {"type": "game.crowd", "text": encode(frame)}


def crowd_changed(game_id: int) -> None:
    """Schedule a crowd message for the game, coalescing changes that come in a burst."""
    _dirty.add(game_id)
    pending = _pending.setdefault(asyncio.get_running_loop(), {})
    if game_id not in pending:
        pending[game_id] = asyncio.ensure_future(_send_crowds(game_id, pending))


async def _send_crowds(game_id: int, pending: dict[int, asyncio.Future[None]]) -> None:
    try:
        while game_id in _dirty:
            _dirty.discard(game_id)
            await asyncio.sleep(0)  # let the rest of a burst register first
            frame = await db_call(crowd)(game_id)
            layer = get_channel_layer()
            await layer.group_send(game_group(game_id), _crowd_message(frame))
            if frame.spectators > SMALL_CROWD:
                await asyncio.sleep(CROWD_INTERVAL)
    except Exception:
        logger.exception("crowd update for game %s failed", game_id)
    finally:
        pending.pop(game_id, None)
