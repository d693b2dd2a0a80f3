"""Ending a game: resignation, abort, and the one way every end is recorded (lila's Finisher)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from games import clocks, lifecycle, messages, protocol
from games.clocks import now_ms
from games.models import Game
from games.services._core import Applied, locked, player_of
from games.services.events import emit
from games.services.records import record_finished
from games.transition import clock_frame, result_frame
from realtime.errors import ServiceError


def finish(
    game: Game, *, winner: int | None, termination: str, reason: str, now: int | None = None
) -> Applied:
    """End the locked game (the clock stops, offers lapse) and emit its `end` event; the
    caller saves the row."""
    now = now_ms() if now is None else now
    game.status = (
        Game.Status.ABORTED if termination == Game.Termination.ABORT else (Game.Status.FINISHED)
    )
    game.ended_at = timezone.now()
    game.winner = winner
    game.termination = termination
    game.reason = reason
    game.clock = clocks.stopped(game.clock, now)
    game.deadline = None
    game.offers = {}
    applied = emit(
        game,
        protocol.End(
            v=0,
            game_id=0,
            status=game.status,
            result=result_frame(game.status, winner, termination, reason),
            clock=clock_frame(clocks.view(game.clock, now)),
        ),
    )
    record_finished(game)
    lifecycle.ended(game)
    return applied


def resign(*, game_id: int, user: Any) -> Applied:
    with transaction.atomic():
        game = locked(game_id)
        player = player_of(game, user)
        if game.status != Game.Status.ACTIVE:
            raise ServiceError("game_over", _("The game is already over."))
        applied = finish(
            game,
            winner=3 - player,
            termination=Game.Termination.RESIGNATION,
            reason=messages.RESIGNED % {"user": user.username},
        )
        game.save()
    return applied


def abort(*, game_id: int, user: Any) -> Applied:
    """End a game without a result, allowed until both players have moved."""
    with transaction.atomic():
        game = locked(game_id)
        player_of(game, user)
        if game.status != Game.Status.ACTIVE:
            raise ServiceError("game_over", _("The game is already over."))
        if game.both_moved:
            raise ServiceError(
                "too_late_to_abort", _("Both players have moved: resign instead of aborting.")
            )
        applied = finish(
            game,
            winner=None,
            termination=Game.Termination.ABORT,
            reason=messages.ABORTED_BY % {"user": user.username},
        )
        game.save()
    return applied
