"""Creating a tournament, by a player (with limits) or from a staff schedule."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from games import services as game_services
from games.engine import normalized_options
from games.messages import translated
from games.rules import InvalidOptions
from realtime.errors import ServiceError
from tournaments.models import Schedule, Tournament

# A player's own tournaments: how many may wait or run at once, and how many a day.
MAX_OPEN_PER_CREATOR = 3
MAX_PER_CREATOR_PER_DAY = 10
MAX_STARTS_IN_MINUTES = 7 * 24 * 60
# An arena lasts from 10 minutes to 12 hours (a correspondence arena makes no sense: games
# of days cannot fit in an event of hours).
ARENA_MINUTES = (10, 720)
SWISS_ROUNDS = (3, 15)
MAX_PLAYERS = {"arena": 10_000, "swiss": 1_000, "round_robin": 30}
DEFAULT_MAX_PLAYERS = {"arena": 1_000, "swiss": 200, "round_robin": 10}


def _whole(value: Any, name: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ServiceError(
            "invalid_tournament",
            _("%(name)s must be a whole number from %(low)s to %(high)s.")
            % {"name": name, "low": low, "high": high},
        )
    return value


def check_format(
    *,
    kind: Any,
    slug: Any,
    options: Any,
    time_control: Any,
    minutes: Any,
    rounds: Any,
    max_players: Any,
) -> dict[str, Any]:
    """The checked fields of a tournament (ServiceError saying what is wrong)."""
    if kind not in Tournament.Kind.values:
        raise ServiceError(
            "invalid_tournament",
            _("kind must be one of %(choices)s.") % {"choices": ", ".join(Tournament.Kind.values)},
        )
    if not isinstance(slug, str):
        raise ServiceError("bad_message", _('A tournament needs "slug", the game.'))
    if not isinstance(options, dict):
        raise ServiceError("bad_message", _('"options" must be an object.'))
    try:
        full = normalized_options(slug, options)
    except InvalidOptions as error:
        raise ServiceError("invalid_options", translated(error)) from None
    control = game_services.check_time_control(time_control)
    fields: dict[str, Any] = {
        "kind": kind,
        "slug": slug,
        "options": full,
        "time_control": control.code,
    }
    if kind == Tournament.Kind.ARENA:
        if not control.realtime:
            raise ServiceError(
                "invalid_time_control",
                _("An arena is played in real time: give a clock such as 3+2."),
            )
        fields["minutes"] = _whole(minutes, "minutes", *ARENA_MINUTES)
    elif kind == Tournament.Kind.SWISS:
        fields["rounds"] = _whole(rounds, "rounds", *SWISS_ROUNDS)
    if control.kind == "untimed" and kind != Tournament.Kind.ROUND_ROBIN:
        raise ServiceError(
            "invalid_time_control",
            _("A tournament's games need a clock: real time or days a move."),
        )
    most = MAX_PLAYERS[kind]
    fields["max_players"] = (
        DEFAULT_MAX_PLAYERS[kind]
        if max_players is None
        else _whole(max_players, "max_players", 2, most)
    )
    return fields


def _default_name(creator: User, kind: str) -> str:
    """ "alice's arena": a name kept as written, in its creator's language."""
    names = {
        Tournament.Kind.ARENA: _("%(name)s's arena"),
        Tournament.Kind.SWISS: _("%(name)s's swiss"),
        Tournament.Kind.ROUND_ROBIN: _("%(name)s's round robin"),
    }
    return names[Tournament.Kind(kind)] % {"name": creator.username}


def create_tournament(
    *,
    creator: User,
    name: str = "",
    kind: str,
    slug: str,
    options: dict[str, Any] | None = None,
    time_control: str = "",
    rated: bool = True,
    starts_in_minutes: int = 5,
    minutes: int | None = None,
    rounds: int | None = None,
    double: bool = False,
    max_players: int | None = None,
    invite_only: bool = False,
    allow_bots: bool = False,
) -> Tournament:
    """A player's tournament: it starts `starts_in_minutes` from now."""
    if not creator.is_authenticated:
        raise ServiceError("not_logged_in", _("Log in to create a tournament."))
    if creator.is_guest and rated is True:
        # A guest's tournament is casual, as a guest's games are.
        raise ServiceError(
            "guests_play_casual", _("Guests make casual tournaments only: sign up for a rated one.")
        )
    fields = check_format(
        kind=kind,
        slug=slug,
        options=options or {},
        time_control=time_control,
        minutes=minutes,
        rounds=rounds,
        max_players=max_players,
    )
    starts_in = _whole(starts_in_minutes, "starts_in_minutes", 0, MAX_STARTS_IN_MINUTES)
    if (
        not isinstance(rated, bool)
        or not isinstance(double, bool)
        or not isinstance(invite_only, bool)
        or not isinstance(allow_bots, bool)
    ):
        raise ServiceError(
            "bad_message", _("rated, double, invite_only and allow_bots are true or false.")
        )
    name = (name or "").strip() or _default_name(creator, kind)
    now = timezone.now()
    with transaction.atomic():
        # The creator's row, locked: two requests at once cannot both pass the limits.
        User.objects.select_for_update().filter(pk=creator.pk).first()
        mine = Tournament.objects.filter(creator=creator)
        if (
            mine.filter(status__in=[Tournament.Status.UPCOMING, Tournament.Status.RUNNING]).count()
            >= MAX_OPEN_PER_CREATOR
        ):
            raise ServiceError(
                "too_many_tournaments",
                _("You have %(count)s tournaments waiting or running: let one finish first.")
                % {"count": MAX_OPEN_PER_CREATOR},
            )
        if mine.filter(created_at__gte=now - timedelta(days=1)).count() >= MAX_PER_CREATOR_PER_DAY:
            raise ServiceError(
                "too_many_tournaments",
                _("You created %(count)s tournaments in the last day: try again tomorrow.")
                % {"count": MAX_PER_CREATOR_PER_DAY},
            )
        tournament = Tournament.objects.create(
            name=name,
            creator=creator,
            rated=rated,
            double=double if kind == Tournament.Kind.ROUND_ROBIN else False,
            invite_token=secrets.token_urlsafe(12) if invite_only else "",
            allow_bots=allow_bots,
            starts_at=now + timedelta(minutes=starts_in),
            **fields,
        )
    return tournament


def from_schedule(schedule: Schedule) -> Tournament:
    """The next tournament of a staff schedule (the sweeper calls this ahead of its start)."""
    fields = check_format(
        kind=schedule.kind,
        slug=schedule.slug,
        options=schedule.options,
        time_control=schedule.time_control,
        minutes=schedule.minutes,
        rounds=schedule.rounds,
        max_players=schedule.max_players,
    )
    tournament = Tournament.objects.create(
        name=schedule.name,
        schedule=schedule,
        rated=schedule.rated,
        starts_at=schedule.next_at,
        **fields,
    )
    return tournament
