"""The sweeper's tournament work on each pass (games.lifecycle.sweeping): tournaments start
and end on time, arenas pair their free players, scheduled ones are created ahead, and a
result a killed process did not count is counted. With nobody connected, all of it happens."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from realtime import logs
from tournaments.models import Entry, Schedule, Tournament
from tournaments.services import creation, results, rounds
from tournaments.services.locking import locked

logger = logging.getLogger(__name__)

# A scheduled tournament is listed this long before it starts, so that players can join.
SCHEDULE_LEAD = timedelta(hours=1)


def tick(**_: Any) -> None:
    now = timezone.now()
    for tournament_id, game in rounds.games_to_count():
        with logs.context(game_id=game.pk):
            results.count(tournament_id, game.pk)
    for tournament_id in Tournament.objects.filter(
        status=Tournament.Status.UPCOMING, starts_at__lte=now
    ).values_list("pk", flat=True):
        rounds.start(tournament_id)
    for tournament_id, ends_at in Tournament.objects.filter(
        status=Tournament.Status.RUNNING, kind=Tournament.Kind.ARENA
    ).values_list("pk", "ends_at"):
        if ends_at is not None and now >= ends_at:
            with transaction.atomic():
                rounds.finish(locked(tournament_id))
        elif (
            Entry.objects.filter(tournament_id=tournament_id, playing=False, withdrawn=False)[
                :2
            ].count()
            >= 2
        ):
            rounds.arena_wave(tournament_id)
    create_scheduled(now)


def create_scheduled(now: Any) -> int:
    """The next tournament of every schedule whose next start is within the lead."""
    made = 0
    for schedule_id in Schedule.objects.filter(
        active=True, next_at__lte=now + SCHEDULE_LEAD
    ).values_list("pk", flat=True):
        with transaction.atomic():
            schedule = Schedule.objects.select_for_update().get(pk=schedule_id)
            if schedule.next_at > now + SCHEDULE_LEAD:
                continue  # another sweeper made it
            if schedule.next_at < now:
                # Missed starts (the site was down) are skipped, not made up for.
                behind = (now - schedule.next_at) // timedelta(minutes=schedule.every_minutes) + 1
                schedule.next_at += timedelta(minutes=schedule.every_minutes) * behind
            creation.from_schedule(schedule)
            schedule.next_at += timedelta(minutes=schedule.every_minutes)
            schedule.save(update_fields=["next_at"])
            made += 1
    return made
