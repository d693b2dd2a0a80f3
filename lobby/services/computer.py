"""Seeks handed to the computer: a seek that allowed it gets a game against the computer
once it has waited COMPUTER_FALLBACK_SECONDS without a partner.

The game is announced like every other (games.lifecycle.started: `game_started` to the
player, the live list to everyone).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation

from accounts.language import for_user
from bots import services as bots
from lobby import protocol
from lobby.models import Seek
from lobby.services import feed
from lobby.services.seeks import _lock_matchmaking
from realtime import metrics
from realtime.errors import ServiceError

# A pass hands at most this many seeks to the computer (the next pass takes the rest).
FALLBACK_BATCH = 50


def fallback_seconds() -> float:
    return float(getattr(settings, "COMPUTER_FALLBACK_SECONDS", 30))


def hand_to_computer(seek_ids: list[int] | None = None, grace: float = 0) -> int:
    """Give every seek (of `seek_ids`, or any) that allowed it and has waited long enough a
    game against the computer (its first choice of game); how many did. Under the
    matchmaking lock, so a seek is paired with a person or with the computer, never both.

    The lobby socket that opened the seek calls it when the wait is over; the bots worker
    calls it every second for the seeks whose socket went away (correspondence seeks)."""
    cutoff = timezone.now() - timedelta(seconds=fallback_seconds() + grace)
    started = 0
    with transaction.atomic():
        _lock_matchmaking(wait=True)
        query = Seek.objects.select_for_update().filter(
            status=Seek.Status.OPEN, computer_level__isnull=False, created_at__lte=cutoff
        )
        if seek_ids is not None:
            query = query.filter(pk__in=seek_ids)
        waiting = list(query.select_related("user").order_by("pk")[:FALLBACK_BATCH])
        events: list[protocol.FeedEvent] = []
        for seek in waiting:
            choice = seek.games[0]
            try:
                # A refusal is told to the seeker, maybe from another's socket or the worker:
                # in the seeker's language.
                with transaction.atomic(), translation.override(for_user(seek.user)):
                    game = bots.play_computer(
                        user=seek.user,
                        slug=choice["slug"],
                        options=choice.get("options", {}),
                        level=seek.computer_level,
                        time_control=seek.time_control,
                    )
            except ServiceError as error:
                # Say why to the seeker, and stop trying: the seek waits for a person.
                Seek.objects.filter(pk=seek.pk).update(computer_level=None)
                feed.tell(
                    [seek.user_id], protocol.SeekFailed(code=error.code, message=error.message)
                )
                continue
            Seek.objects.filter(pk=seek.pk).update(status=Seek.Status.PAIRED, game=game)
            started += 1
            metrics.seeks_paired("computer", [seek.created_at])
            if seek.announced:
                events.append(protocol.SeekRemoved(v=feed.UNSTAMPED, seek_id=seek.pk))
        if events:
            feed.publish(*events)
    return started


# The socket that opened a seek hands it over on time; the worker catches the rest (a
# correspondence seek whose socket closed, a server process that went away) this much later.
WORKER_GRACE_SECONDS = 5


def worker_tick(**_: Any) -> int:
    """The bots worker's periodic call (bots.worker.ticked)."""
    return hand_to_computer(grace=WORKER_GRACE_SECONDS)
