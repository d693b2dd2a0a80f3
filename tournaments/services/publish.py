"""Every change a tournament's pages must see: the version goes up under the row lock, and
after commit one `tournament_update` goes to every socket on the tournament (encoded once)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from channels.layers import get_channel_layer
from django.db import transaction

from realtime import metrics
from realtime.db import run_soon
from realtime.protocol import encode
from tournaments import protocol, selectors
from tournaments.models import Entry, Pairing, Tournament

logger = logging.getLogger(__name__)


def group(tournament_id: int) -> str:
    return f"tournament.{tournament_id}"


def changed(
    tournament: Tournament,
    *,
    entries: Iterable[Entry] = (),
    pairings: Iterable[Pairing] = (),
) -> None:
    """Record a change of the locked tournament (its version goes up now) and send it to its
    pages once the transaction commits."""
    tournament.version += 1
    Tournament.objects.filter(pk=tournament.pk).update(version=tournament.version)
    version = tournament.version
    users = {entry.user_id for entry in entries}
    pairing_ids = [pairing.pk for pairing in pairings]
    transaction.on_commit(lambda: send(tournament.pk, version, users, pairing_ids))


def update_frame(
    tournament_id: int, version: int, users: set[int], pairing_ids: list[int]
) -> protocol.TournamentUpdate | None:
    tournament = selectors.load(tournament_id)
    if tournament is None:
        return None
    top, mine, players = selectors.standings(tournament, concerning=users)
    pairings = (
        Pairing.objects.filter(pk__in=pairing_ids)
        .select_related("first", "second")
        .only("round", "game_id", "result", "first__username", "second__username")
    )
    return protocol.TournamentUpdate(
        v=version,
        status=tournament.status,
        round=tournament.round,
        players=players,
        winner=tournament.winner.username if tournament.winner else None,
        standings=top,
        changed=mine,
        pairings=[selectors.pairing_view(p) for p in pairings.order_by("id")],
    )


def send(tournament_id: int, version: int, users: set[int], pairing_ids: list[int]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    frame = update_frame(tournament_id, version, users, pairing_ids)
    if frame is None:
        return
    message: dict[str, Any] = {"type": "tournament.update", "v": version, "text": encode(frame)}

    async def go() -> None:
        try:
            await layer.group_send(group(tournament_id), message)
        except Exception:
            # Committed already: the pages see the version jump on the next one and resync.
            metrics.REDIS_ERRORS.labels("broadcast").inc()
            logger.exception("tournament %s update v%s not sent", tournament_id, version)

    run_soon(go)
