"""Abandonment: a real-time player whose last socket closed starts a countdown; when it
runs out the opponent may claim the win. Away time is not charged to the one waiting."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from games import clocks, messages, presence, protocol
from games.clocks import now_ms
from games.models import Game, GameConnection
from games.services._core import Applied, locked, player_of
from games.services.clock import excused, set_deadline
from games.services.ending import finish
from games.services.events import emit
from games.transition import clock_frame
from realtime.errors import ServiceError

logger = logging.getLogger(__name__)


def _realtime_and_active(game: Game) -> bool:
    return game.status == Game.Status.ACTIVE and game.time_control.realtime


def player_left(*, game_id: int, player: int) -> Applied | None:
    """A player's socket closed: if it was their last on a real-time game, the countdown
    to a claimable win starts (the opponent is told)."""
    if GameConnection.objects.filter(game_id=game_id, player=player).exists():
        # Another socket of theirs is open (the usual case: a page moved or reloaded). Looked
        # at without the row lock: opening and closing sockets by the hundred (a server
        # restarting) must not queue on the game rows. A socket closing meanwhile runs this
        # itself. None: nothing changed.
        return None
    with transaction.atomic():
        game = locked(game_id)
        still_here = GameConnection.objects.filter(game=game, player=player).exists()
        if still_here or not _realtime_and_active(game) or str(player) in game.away:
            return Applied(game=game)
        now = now_ms()
        game.away = {**game.away, str(player): now}
        set_deadline(game)
        applied = emit(
            game,
            protocol.Away(v=0, game_id=0, player=player, claim_at=now + clocks.ABANDON_MS),
        )
        game.save()
    return applied


def player_returned(*, game_id: int, player: int) -> Applied | None:
    """A player is back: the countdown stops; the time their opponent did not spend
    waiting on them is given back."""
    game = Game.objects.filter(pk=game_id).only("away").first()
    if game is None or str(player) not in game.away:
        # Not away (the usual case): no transaction, no row lock, and None: nothing changed.
        # Their socket is recorded before this runs, so a countdown cannot start meanwhile
        # (player_left sees it).
        return None
    with transaction.atomic():
        game = locked(game_id)
        if str(player) not in game.away:
            return Applied(game=game)
        now = now_ms()
        if game.status == Game.Status.ACTIVE and game.clock:
            given_back = excused(game, now)
            if given_back:
                running = game.clock["running"]
                remaining = list(game.clock["remaining"])
                remaining[running - 1] += given_back
                game.clock = {**game.clock, "remaining": remaining}
        game.away = {seat: at for seat, at in game.away.items() if seat != str(player)}
        set_deadline(game)
        applied = emit(
            game,
            protocol.Back(
                v=0, game_id=0, player=player, clock=clock_frame(clocks.view(game.clock, now))
            ),
        )
        game.save()
    return applied


def claim_victory(*, game_id: int, user: Any) -> Applied:
    """The opponent of a real-time player away for ABANDON_MS may claim the win."""
    with transaction.atomic():
        game = locked(game_id)
        player = player_of(game, user)
        if game.status != Game.Status.ACTIVE:
            raise ServiceError("game_over", _("The game is already over."))
        opponent = 3 - player
        left_at = game.away.get(str(opponent))
        now = now_ms()
        if left_at is None or GameConnection.objects.filter(game=game, player=opponent).exists():
            raise ServiceError("opponent_here", _("Your opponent is connected: the game goes on."))
        wait = left_at + clocks.ABANDON_MS - now
        if wait > 0:
            raise ServiceError(
                "too_early",
                _("Your opponent may still come back: you can claim in %(seconds)s s.")
                % {"seconds": -(-wait // 1000)},
            )
        gone = game.player1 if opponent == 1 else game.player2
        applied = finish(
            game,
            winner=player,
            termination=Game.Termination.ABANDON,
            reason=messages.LEFT_THE_GAME % {"user": gone.username},
            now=now,
        )
        game.save()
    return applied


def connections_reaped(rows: list[GameConnection]) -> None:
    """Sockets of a dead server process are gone: their players count as having left (the
    abandonment countdown starts) and every crowd is told."""
    _players_changed(rows, player_left)


def connections_revived(rows: list[GameConnection]) -> None:
    """Sockets wrongly taken for dead (their process stalled) are back."""
    _players_changed(rows, player_returned)


def _players_changed(rows: list[GameConnection], change: Any) -> None:
    for game_id, player in sorted({(row.game_id, row.player) for row in rows if row.player}):
        try:
            change(game_id=game_id, player=player)
        except Exception:
            logger.exception("presence of player %s in game %s not recorded", player, game_id)
    for game_id in sorted({row.game_id for row in rows}):
        presence.send_crowd(game_id)
