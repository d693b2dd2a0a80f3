"""Closing an account, by its player or by a moderator (the moderation app calls this).

The account's games stay, under a neutral generated name (accounts.services.do_retire); its
old name is retired so nobody can take it again. Then whatever the account had going on ends
through the services that end it for anyone: its running games (aborted while abortable,
resigned otherwise), its open seeks, the challenges it sent (cancelled) and those waiting
for its answer (declined). All of it in one transaction: the broadcasts go out after the
commit, and a failure leaves the account as it was."""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import Q

from accounts import services as accounts
from accounts.models import User
from analysis.models import Analysis
from games import services as games
from games.models import Game
from lobby.models import Challenge, Seek
from lobby.services import challenges, seeks
from tournaments.services import entries as tournament_entries

logger = logging.getLogger(__name__)

CLOSED_REASON = "account closed"


def close_account(*, user: User, reason: str, by: User | None = None) -> None:
    """Close `user`'s account for good. `by`: the moderator; None when the player closes it
    (the caller has checked the password and the second factor). Closing a closed account
    changes nothing."""
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=user.pk)
        if locked.closed_at is not None:
            return
        # Renamed first, so that the games' records ("... resigned") carry the neutral name.
        retired = accounts.do_retire(user=locked, reason=reason, by=by)
        _end_games(retired)
        _withdraw_from_lobby(retired)
        tournament_entries.withdraw_everywhere(retired)
        # Analyses are the player's own notes, not part of any game's record: gone.
        Analysis.objects.filter(owner=retired).delete()
    logger.info(
        "account %s closed (%s)%s",
        retired.pk,
        reason[:80],
        f" by {by.pk}" if by is not None else " by its player",
    )
    user.username, user.is_active, user.closed_at = retired.username, False, retired.closed_at


def _end_games(user: User) -> None:
    running = Game.objects.filter(
        Q(player1=user) | Q(player2=user), status=Game.Status.ACTIVE
    ).values_list("pk", "both_moved")
    for game_id, both_moved in running:
        if both_moved:
            games.resign(game_id=game_id, user=user)
        else:
            games.abort(game_id=game_id, user=user)


def _withdraw_from_lobby(user: User) -> None:
    for seek_id in Seek.objects.filter(user=user, status=Seek.Status.OPEN).values_list(
        "pk", flat=True
    ):
        seeks.cancel_seek(user=user, seek_id=seek_id)
    pending = Challenge.objects.filter(status=Challenge.Status.PENDING)
    for challenge_id in pending.filter(challenger=user).values_list("pk", flat=True):
        challenges.cancel_challenge(user=user, challenge_id=challenge_id)
    for challenge_id in pending.filter(challenged=user).values_list("pk", flat=True):
        challenges.decline_challenge(user=user, challenge_id=challenge_id, reason=CLOSED_REASON)
