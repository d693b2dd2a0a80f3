"""Who is in the lobby, across every server process (realtime/presence.py keeps the rows honest
when a process dies): the online count, and real-time seeks that end with their owner's last
lobby socket."""

from __future__ import annotations

import logging

from channels.layers import get_channel_layer

from lobby import selectors
from lobby.models import LobbyConnection, Seek
from lobby.services import feed, seeks
from realtime import presence
from realtime.batches import Batches
from realtime.db import run_soon

logger = logging.getLogger(__name__)


# A socket is recorded as it is admitted under the socket caps (realtime.ws,
# `refused_as_one_too_many`, with realtime.presence.admit_socket).


def leave_many(departures: list[tuple[str, int | None]]) -> list[None]:
    """Lobby sockets closed (channel name, user): their rows deleted in one statement, and
    the real-time seeks of the users left without a lobby socket closed. One result per
    departure (realtime/batches.py)."""
    presence.leave_many(LobbyConnection, [channel_name for channel_name, _ in departures])
    users = [user_id for _, user_id in departures if user_id is not None]
    if users:
        _gone(users)
    return [None] * len(departures)


def _gone(user_ids: list[int]) -> None:
    """Close the real-time seeks of users who have no lobby socket left."""
    still_here = set(
        LobbyConnection.objects.filter(user_id__in=user_ids).values_list("user_id", flat=True)
    )
    gone = set(user_ids) - still_here
    if not gone:
        return
    # Most have none: one read finds the users who do, and only theirs are locked and closed.
    seeking = set(
        Seek.objects.filter(user_id__in=gone, status=Seek.Status.OPEN, realtime=True).values_list(
            "user_id", flat=True
        )
    )
    for user_id in sorted(seeking):
        seeks.cancel_realtime_seeks(user_id=user_id)


# `leave_many` for the lobby sockets of this process closing together.
leave_socket: Batches[tuple[str, int | None], None] = Batches(leave_many)


def send_online() -> None:
    """Send the online count to every lobby socket now, from sync code."""
    message = feed.online_message(selectors.online_count())
    layer = get_channel_layer()

    async def send() -> None:
        try:
            await layer.group_send(feed.LOBBY_GROUP, message)
        except Exception:
            logger.exception("online count update failed")

    if layer is not None:
        run_soon(send)


def connections_reaped(rows: list[LobbyConnection]) -> None:
    """Lobby sockets of a dead server process are gone."""
    _gone([row.user_id for row in rows if row.user_id is not None])
    send_online()


def connections_revived(rows: list[LobbyConnection]) -> None:
    send_online()
