"""Bot accounts (docs/API.md, "Bot accounts"): an account an outside program plays through the
Bot API. An account that has never had a game becomes one, once and for good: its ratings
then belong to the bots' own list, and nobody meets it in the seek pool without asking.

Not the computer's accounts (User.is_bot, bots/), which the site's own worker plays.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from realtime.errors import ServiceError

logger = logging.getLogger(__name__)


def has_games(user: User) -> bool:
    """Whether the user has ever had a game: any status, against anyone (the computer too).
    Asked through the games' reverse relations, so that accounts need not import games."""
    return user.games_as_player1.exists() or user.games_as_player2.exists()


def upgrade(*, user: User) -> User:
    """Make `user` a bot account for good (asking twice answers as the first time did).

    The user's row is locked first: a game being created for them holds a key-share lock on
    it (its foreign keys), so the check below waits for that game's commit and sees it."""
    if not user.is_authenticated or user.is_guest or user.is_bot or user.closed_at is not None:
        raise ServiceError(
            "not_registered", _("Only a registered account can become a bot account.")
        )
    with transaction.atomic():
        row = User.objects.select_for_update().get(pk=user.pk)
        if row.bot_since is not None:
            user.bot_since = row.bot_since
            return row
        if has_games(row):
            raise ServiceError(
                "has_games",
                _(
                    "This account has played games: only an account that has never played can "
                    "become a bot account. Make a new account for your bot."
                ),
            )
        row.bot_since = timezone.now()
        row.save(update_fields=["bot_since"])
    user.bot_since = row.bot_since
    logger.info("user %s is now a bot account", row.pk)
    return row
