"""Storing a game's events and sending them after commit (Zulip's send_event_on_commit).

An event is built typed (games/protocol.py) by the service or the move transition; here it
gets the game's next version and is encoded to JSON text once (`prepare`), stored as that text
(`record`: the event row; a move's row is also the move's record) and, once the transaction
commits, sent to every socket on the game as the same text.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from channels.layers import get_channel_layer
from django.db import transaction

from games import presence, protocol, store
from games.models import Game
from games.services._core import Applied
from realtime import metrics
from realtime.db import run_soon
from realtime.protocol import encode

logger = logging.getLogger(__name__)

_NO_CLOCK = object()  # an event kind without a clock field (a None clock is an untimed game)


def prepare(game: Game, frame: protocol.Event) -> Applied:
    """Give the event the game's next version and encode it, once: the text is what is stored
    and what every socket is sent. No database work: a move prepares its events before its
    write (games/services/moves.py), the locked services just before storing them."""
    game.version += 1
    frame.v = game.version
    frame.game_id = game.pk
    clock: Any = getattr(frame, "clock", _NO_CLOCK)
    timing: dict[str, Any] = {}
    if clock is not _NO_CLOCK:
        timing["clock"] = None if clock is None else msgspec.structs.asdict(clock)
    return Applied(game=game, frame=frame, text=encode(frame), timing=timing)


def record(event: Applied, *, ply: int | None = None) -> None:
    """Store a prepared event (a move event passes the move's `ply`: its row is also the
    move's record) and send it once the transaction commits."""
    assert event.text is not None
    store.insert_event(event.game.pk, event.version, ply, event.text)
    send_on_commit(event)


def send_on_commit(event: Applied) -> None:
    """Send a stored event once the transaction that stored it commits (at once outside a
    transaction: the statement that stored it has committed)."""
    game_id = event.game.pk
    transaction.on_commit(lambda: _broadcast(game_id, event))


def emit(game: Game, frame: protocol.Event, *, ply: int | None = None) -> Applied:
    """Prepare the event for the locked game and store it, to be sent after commit."""
    event = prepare(game, frame)
    record(event, ply=ply)
    return event


def _broadcast(game_id: int, event: Applied) -> None:
    # `broadcast` is looked up in this module at commit time, so whoever replaces it (a test
    # losing the broadcast on purpose) replaces it for every action.
    broadcast(game_id, event)


def broadcast(game_id: int, event: Applied) -> None:
    """Send a stored event to every socket on the game, as the JSON text the sockets send
    on (encoded once, not once per socket), with the version and clock they act on."""
    layer = get_channel_layer()
    if layer is None:
        return
    message: dict[str, Any] = {"type": "game.event", "v": event.version, "text": event.text}
    message.update(event.timing or {})

    async def send() -> None:
        try:
            await layer.group_send(presence.game_group(game_id), message)
        except Exception:
            # The move is committed; sockets that miss it resync by version.
            metrics.REDIS_ERRORS.labels("broadcast").inc()
            logger.exception("broadcast of game %s v%s failed", game_id, event.version)

    run_soon(send)
