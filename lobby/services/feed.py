"""The lobby feed: public events with versions in commit order, and personal messages."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from lobby.models import LobbyEvent, LobbyVersion

logger = logging.getLogger(__name__)

LOBBY_GROUP = "lobby"


def user_group(user_id: int) -> str:
    return f"user.{user_id}"


def _send(messages: list[tuple[str, dict[str, Any]]]) -> None:
    layer = get_channel_layer()
    if layer is None or not messages:
        return

    async def send_all() -> None:
        for group, message in messages:
            await layer.group_send(group, message)

    try:
        async_to_sync(send_all)()
    except Exception:
        # Committed already: lobby sockets catch up by version or on reconnect.
        logger.exception("lobby broadcast failed")


def publish(*events: dict[str, Any]) -> list[dict[str, Any]]:
    """Version public events and send them to every lobby socket after commit.

    Call last in the transaction: the version row stays locked until commit, so versions are
    handed out in commit order and a client never sees v7 before v6 exists.
    """
    counter, _ = LobbyVersion.objects.select_for_update().get_or_create(pk=1)
    stamped = []
    for event in events:
        counter.version += 1
        payload = {**event, "v": counter.version}
        LobbyEvent.objects.create(version=counter.version, payload=payload)
        stamped.append(payload)
    counter.save(update_fields=["version"])
    messages = [(LOBBY_GROUP, {"type": "lobby.event", "event": e}) for e in stamped]
    transaction.on_commit(lambda: _send(messages))
    return stamped


def tell(user_ids: list[int], event: dict[str, Any]) -> None:
    """Send a personal message to every lobby socket of these users after commit."""
    messages = [(user_group(uid), {"type": "lobby.personal", "event": event}) for uid in user_ids]
    transaction.on_commit(lambda: _send(messages))


def current_version() -> int:
    return LobbyVersion.objects.filter(pk=1).values_list("version", flat=True).first() or 0


def events_since(version: int, limit: int = 200) -> list[dict[str, Any]] | None:
    latest = current_version()
    if version >= latest:
        return []
    if version < 0 or latest - version > limit:
        return None
    return list(
        LobbyEvent.objects.filter(version__gt=version, version__lte=latest)
        .order_by("version")
        .values_list("payload", flat=True)
    )
