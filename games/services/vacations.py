"""Vacations: the clocks of a player's correspondence games stand still."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from games import clocks, protocol, selectors
from games.clocks import now_ms
from games.models import Game, Vacation
from games.services._core import locked
from games.services.clock import set_deadline
from games.services.events import emit
from games.transition import clock_frame
from realtime.errors import ServiceError


def start_vacation(*, user: Any, days: Any) -> Vacation:
    """Go on vacation for `days`: every correspondence game of the user stops its clocks
    (both sides) until then. At most VACATION_DAYS days in any 365."""
    if user is None or not getattr(user, "is_authenticated", False):
        raise ServiceError("not_logged_in", _("Log in to take a vacation."))
    allowance = settings.VACATION_DAYS
    if not isinstance(days, int) or isinstance(days, bool) or days < 1:
        raise ServiceError(
            "bad_message", _("days is a whole number from 1 to %(most)s.") % {"most": allowance}
        )
    if days > allowance:  # a well-formed request for more than there can ever be
        raise ServiceError(
            "vacation_limit",
            _("At most %(most)s days of vacation in a year, not %(days)s.")
            % {"most": allowance, "days": days},
        )
    with transaction.atomic():
        # One vacation change per user at a time: their row orders concurrent requests.
        User.objects.select_for_update().filter(pk=user.pk).first()
        now = timezone.now()
        running = selectors.current_vacation(user)
        if running is not None:
            raise ServiceError(
                "on_vacation",
                _("You are on vacation until %(until)s UTC.")
                % {"until": format(running.ends_at, "%Y-%m-%d %H:%M")},
            )
        left = allowance - selectors.vacation_days_used(user, now)
        if days > left + 1e-9:
            raise ServiceError(
                "vacation_limit",
                _("At most %(most)s days of vacation in a year: you have %(left)s left.")
                % {"most": allowance, "left": max(0, int(left))},
            )
        vacation = Vacation.objects.create(
            user=user, starts_at=now, ends_at=now + timedelta(days=days)
        )
        _pause_games(user, until=int(vacation.ends_at.timestamp() * 1000))
    return vacation


def end_vacation(*, user: Any) -> Vacation:
    """Come back early: the clocks run again from now; the days not taken are not used."""
    if user is None or not getattr(user, "is_authenticated", False):
        raise ServiceError("not_logged_in", _("Log in first."))
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        vacation = selectors.current_vacation(user)
        if vacation is None:
            raise ServiceError("not_on_vacation", _("You are not on vacation."))
        vacation.ends_at = max(vacation.starts_at, timezone.now())
        vacation.save(update_fields=["ends_at"])
        _pause_games(user, until=now_ms())
    return vacation


def _pause_games(user: Any, *, until: int) -> None:
    """Hold the clocks of the user's active correspondence games until `until`, and tell
    each game's sockets (a versioned `vacation` event carries the new clock)."""
    ids = (
        Game.objects.filter(status=Game.Status.ACTIVE)
        .filter(models.Q(player1=user) | models.Q(player2=user))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for game_id in ids:
        game = locked(game_id)
        if game.status != Game.Status.ACTIVE or not game.time_control.correspondence:
            continue
        now = now_ms()
        game.clock = clocks.paused(game.clock, now, until)
        set_deadline(game)
        player = game.player_number(user)
        assert player is not None  # the query chose the user's games
        emit(
            game,
            protocol.VacationEvent(
                v=0,
                game_id=0,
                player=player,
                until=until,
                clock=clock_frame(clocks.view(game.clock, now)),
            ),
        )
        game.save(update_fields=["clock", "deadline", "version", "updated_at"])
