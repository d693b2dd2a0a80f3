"""What a moderator may do to a game (the moderation app calls these): end a running game
without a result, or annul a finished one so that it counts for no rating."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext as _

from games import messages
from games.models import Game
from games.services._core import Applied, locked
from games.services.ending import finish
from realtime.errors import ServiceError


def abort_by_moderator(*, game_id: int) -> Applied:
    """End a running game without a result, however far it has gone: every open page gets
    the `end` event, and an aborted game counts for no rating."""
    with transaction.atomic():
        game = locked(game_id)
        if game.status != Game.Status.ACTIVE:
            raise ServiceError("game_over", _("The game is already over: annul it instead."))
        applied = finish(
            game,
            winner=None,
            termination=Game.Termination.ABORT,
            reason=messages.ABORTED_BY_MODERATOR,
        )
        game.save()
    return applied


def annul(*, game_id: int) -> Game:
    """Mark a finished game annulled: its result stays on record, but the ratings, once
    recomputed (the caller does it), leave it out."""
    with transaction.atomic():
        game = locked(game_id)
        if game.status != Game.Status.FINISHED:
            raise ServiceError(
                "game_not_over", _("Only a finished game can be annulled: abort a running one.")
            )
        if game.annulled:
            raise ServiceError("game_annulled", _("That game is annulled already."))
        game.annulled = True
        game.save(update_fields=["annulled", "updated_at"])
    return game
