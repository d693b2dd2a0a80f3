"""The sweeper's tournament work on each pass (games.lifecycle.sweeping): tournaments start
and end on time, arenas pair their free players, scheduled ones are created ahead, and a
result a killed process did not count is counted. With nobody connected, all of it happens."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from realtime import logs
from realtime.errors import is_outage
from tournaments.models import Entry, Schedule, Tournament
from tournaments.services import creation, holding, results, rounds
from tournaments.services.locking import locked

logger = logging.getLogger(__name__)

# A scheduled tournament is listed this long before it starts, so that players can join.
SCHEDULE_LEAD = timedelta(hours=1)


def tick(**_: Any) -> None:
    """One pass. Each tournament's work is guarded: one that fails is held (logged once and
    marked, tournaments/services/holding.py) and the others go on."""
    now = timezone.now()
    held: set[int] = set()

    def guarded(tournament_id: int, doing: str, work: Callable[[], object]) -> None:
        if tournament_id not in held and not holding.guarded(tournament_id, doing, work):
            held.add(tournament_id)

    for tournament_id, game in rounds.games_to_count():
        with logs.context(game_id=game.pk):
            guarded(
                tournament_id,
                f"counting game {game.pk}",
                partial(results.count, tournament_id, game.pk),
            )
    not_held = Tournament.objects.filter(problem="")
    for tournament_id in not_held.filter(
        status=Tournament.Status.UPCOMING, starts_at__lte=now
    ).values_list("pk", flat=True):
        guarded(tournament_id, "starting", partial(rounds.start, tournament_id))
    for tournament_id, ends_at in not_held.filter(
        status=Tournament.Status.RUNNING, kind=Tournament.Kind.ARENA
    ).values_list("pk", "ends_at"):
        if ends_at is not None and now >= ends_at:
            guarded(tournament_id, "finishing", partial(_finish, tournament_id))
        elif (
            Entry.objects.filter(tournament_id=tournament_id, playing=False, withdrawn=False)[
                :2
            ].count()
            >= 2
        ):
            guarded(tournament_id, "pairing a wave", partial(rounds.arena_wave, tournament_id))
    create_scheduled(now)


def _finish(tournament_id: int) -> None:
    with transaction.atomic():
        rounds.finish(locked(tournament_id))


def create_scheduled(now: Any) -> int:
    """The next tournament of every schedule whose next start is within the lead."""
    made = 0
    for schedule_id in Schedule.objects.filter(
        active=True, next_at__lte=now + SCHEDULE_LEAD
    ).values_list("pk", flat=True):
        try:
            made += _next_of(schedule_id, now)
        except Exception as error:
            if is_outage(error):
                raise
            # A schedule that cannot make its tournament would fail on every pass: it is
            # switched off (staff see it inactive in the admin), and said once.
            Schedule.objects.filter(pk=schedule_id).update(active=False)
            logger.error(
                "schedule %s switched off: its tournament failed", schedule_id, exc_info=error
            )
    return made


def _next_of(schedule_id: int, now: Any) -> int:
    with transaction.atomic():
        schedule = Schedule.objects.select_for_update().get(pk=schedule_id)
        if schedule.next_at > now + SCHEDULE_LEAD:
            return 0  # another sweeper made it
        if schedule.next_at < now:
            # Missed starts (the site was down) are skipped, not made up for.
            behind = (now - schedule.next_at) // timedelta(minutes=schedule.every_minutes) + 1
            schedule.next_at += timedelta(minutes=schedule.every_minutes) * behind
        creation.from_schedule(schedule)
        schedule.next_at += timedelta(minutes=schedule.every_minutes)
        schedule.save(update_fields=["next_at"])
        return 1
