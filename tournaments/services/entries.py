"""Joining and withdrawing."""

from __future__ import annotations

import contextlib
import secrets

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from ratings.models import Speed
from ratings.selectors import rating_of
from realtime.errors import ServiceError
from tournaments.models import Entry, Tournament
from tournaments.services import publish
from tournaments.services.locking import locked


def speed(tournament: Tournament) -> str:
    return Speed.CORRESPONDENCE if tournament.time_control.endswith("d") else Speed.REALTIME


def join(*, user: User, tournament_id: int, token: str = "") -> Entry:
    """Enter a tournament (or come back to one after withdrawing)."""
    if not user.is_authenticated:
        raise ServiceError("not_logged_in", _("Log in or play as a guest to join a tournament."))
    with transaction.atomic():
        tournament = locked(tournament_id)
        if (
            tournament.invite_token
            and not secrets.compare_digest(str(token), tournament.invite_token)
            and not Entry.objects.filter(tournament=tournament, user=user).exists()
        ):
            raise ServiceError(
                "not_invited", _("This tournament is by invitation: open the link you were sent.")
            )
        if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            raise ServiceError("tournament_over", _("This tournament is over."))
        if (
            tournament.status == Tournament.Status.RUNNING
            and tournament.kind == Tournament.Kind.ROUND_ROBIN
        ):
            raise ServiceError(
                "tournament_started", _("A round robin cannot be joined once it has started.")
            )
        if tournament.rated and user.is_guest:
            raise ServiceError(
                "guests_play_casual",
                _("Guests play casual games only: sign up to join a rated tournament."),
            )
        if tournament.rated and user.rated_forbidden:
            raise ServiceError(
                "rated_forbidden",
                _("A moderator has barred you from rated games: join a casual one."),
            )
        if user.is_bot:
            raise ServiceError("bots_play_casual", _("The computer does not play in tournaments."))
        if user.is_bot_account and not tournament.allow_bots:
            raise ServiceError(
                "bots_not_allowed", _("This tournament is for people: bot accounts cannot join it.")
            )
        entry = Entry.objects.filter(tournament=tournament, user=user).first()
        if entry is not None and not entry.withdrawn:
            raise ServiceError("already_joined", _("You are in this tournament already."))
        if (
            tournament.status == Tournament.Status.RUNNING
            and tournament.kind == Tournament.Kind.SWISS
            and tournament.round >= (tournament.rounds or 0)
        ):
            # Its last round is in play: a player joining now would never be paired.
            raise ServiceError(
                "tournament_started", _("This Swiss is in its last round: none is left to play.")
            )
        active = Entry.objects.filter(tournament=tournament, withdrawn=False).count()
        if active >= tournament.max_players:
            raise ServiceError(
                "tournament_full",
                _("This tournament is full (%(most)s players).") % {"most": tournament.max_players},
            )
        if entry is None:
            rating, _provisional = rating_of(user.pk, tournament.slug, speed(tournament))
            entry = Entry(
                tournament=tournament, user=user, rating=rating, free_since=timezone.now()
            )
            if tournament.kind == Tournament.Kind.SWISS and tournament.round:
                _joined_late(tournament, entry)
            entry.save()
        else:
            entry.withdrawn = False
            entry.free_since = timezone.now()
            entry.save(update_fields=["withdrawn", "free_since"])
        publish.changed(tournament, entries=[entry])
    return entry


def _joined_late(tournament: Tournament, entry: Entry) -> None:
    """A Swiss joined after its start: every round paired so far (the one in play too) is a
    round without a game and without points (FIDE's zero-point bye for an unpaired round;
    docs/TOURNAMENTS.md), and the player is paired from the next round with the next
    pairing number."""
    missed = tournament.round
    entry.colours = entry.floats = entry.sheet = "-" * missed
    last = Entry.objects.filter(tournament=tournament).aggregate(last=Max("seed"))["last"]
    entry.seed = (last or 0) + 1


def withdraw(*, user: User, tournament_id: int) -> None:
    """Leave a tournament: before it starts the entry goes; after, the player is not paired
    again (a game in play goes on and counts) and may come back to an arena or a Swiss."""
    if not user.is_authenticated:
        raise ServiceError("not_logged_in", _("Log in to withdraw from a tournament."))
    with transaction.atomic():
        tournament = locked(tournament_id)
        entry = Entry.objects.filter(tournament=tournament, user=user).first()
        if entry is None or entry.withdrawn:
            raise ServiceError("not_joined", _("You are not in this tournament."))
        if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            raise ServiceError("tournament_over", _("This tournament is over."))
        if tournament.status == Tournament.Status.UPCOMING:
            entry.delete()
            publish.changed(tournament, entries=[])
            return
        entry.withdrawn = True
        entry.save(update_fields=["withdrawn"])
        publish.changed(tournament, entries=[entry])


def withdraw_everywhere(user: User) -> int:
    """Withdraw from every tournament not over (an account closed); how many."""
    ids = list(
        Entry.objects.filter(
            user=user,
            withdrawn=False,
            tournament__status__in=[Tournament.Status.UPCOMING, Tournament.Status.RUNNING],
        ).values_list("tournament_id", flat=True)
    )
    for tournament_id in ids:
        with contextlib.suppress(ServiceError):  # it ended meanwhile
            withdraw(user=user, tournament_id=tournament_id)
    return len(ids)
