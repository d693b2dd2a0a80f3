"""Takebacks and draws by consent (pbmserv's undo and propose draw; lila's Takebacker and
Drawer): one player offers, the other answers; a move withdraws a pending offer."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from games import clocks, lifecycle, messages, protocol, selectors
from games.clocks import now_ms
from games.engine import client_moves, rules_for
from games.messages import translated
from games.models import Game, GameEvent
from games.rules import game_info
from games.services._core import Applied, active_player
from games.services.clock import set_deadline
from games.services.ending import finish
from games.services.events import emit
from games.transition import clock_frame
from realtime.errors import ServiceError

# Two turns at most are taken back, and no turn has more than five moves (Diffusion Chess).
_LATEST_MOVES = 12


def _trailing_moves(game: Game, player: int) -> list[GameEvent]:
    """The moves at the end of the game made by `player` (their last turn, all of it in
    Diffusion Chess), newest first; empty when the opponent moved since.

    Against the computer, which answers at once, its answer goes with the asker's turn:
    the computer's last turn and the asker's turn before it are taken back together.
    """
    latest = selectors.move_events(game).order_by("-ply").only("pk", "ply", "payload")
    turns: list[list[GameEvent]] = []
    for event in latest[:_LATEST_MOVES]:
        if turns and turns[-1][0].payload["player"] == event.payload["player"]:
            turns[-1].append(event)
        else:
            turns.append([event])
    if turns and turns[0][0].payload["player"] == player:
        return turns[0]
    opponent = game.player2 if player == 1 else game.player1
    if opponent.is_bot and len(turns) >= 2:
        return turns[0] + turns[1]
    return []


def offer_takeback(*, game_id: int, user: Any) -> Applied:
    """Ask the opponent to take back the asker's last move (or last turn)."""
    with transaction.atomic():
        game, player = active_player(game_id, user)
        if not _trailing_moves(game, player):
            raise ServiceError(
                "nothing_to_take_back",
                _("You can take back only your own last move, before your opponent answers it."),
            )
        if game.offers.get("takeback") == player:
            return Applied(game=game, duplicate=True)
        game.offers = {**game.offers, "takeback": player}
        applied = emit(game, protocol.TakebackOffer(v=0, game_id=0, by=player))
        game.save(update_fields=["offers", "version", "updated_at"])
        lifecycle.offered(game, "takeback", player)
    return applied


def answer_takeback(*, game_id: int, user: Any, accept: bool) -> Applied:
    """Accept or decline the opponent's takeback request. Accepted, their last moves are
    undone: the position goes back, the clocks keep the time already spent and the
    asker's clock runs; the moves' events stay stored, marked undone."""
    with transaction.atomic():
        game, player = active_player(game_id, user)
        asker = 3 - player
        if game.offers.get("takeback") != asker:
            raise ServiceError("no_offer", _("Your opponent has not asked to take a move back."))
        offers = {kind: by for kind, by in game.offers.items() if kind != "takeback"}
        if not accept:
            game.offers = offers
            applied = emit(game, protocol.TakebackDeclined(v=0, game_id=0, by=player))
            game.save(update_fields=["offers", "version", "updated_at"])
            return applied
        undone = _trailing_moves(game, asker)
        if not undone:  # cannot happen while moves withdraw offers; refuse rather than guess
            raise ServiceError("nothing_to_take_back", _("There is no move to take back."))
        rules = rules_for(game.slug, game.options)
        first = undone[-1].ply or 0
        before = selectors.move_events(game).filter(ply=first - 1).values_list("payload", flat=True)
        state_json = before[0]["state"] if first else rules.to_json(rules.initial_state())
        state = rules.from_json(state_json)
        GameEvent.objects.filter(pk__in=[event.pk for event in undone]).update(undone=True)
        now = now_ms()
        game.ply = first
        game.state = state_json
        game.both_moved = selectors.move_events(game).filter(payload__player=2).exists()
        game.offers = {}
        game.queues = {}  # written for a line that is no longer on the board
        game.moved_at = timezone.now()
        if game.clock:
            clock = clocks.stopped(game.clock, now) or {}
            game.clock = {**clock, "running": rules.to_move(state), "since": now}
        set_deadline(game)
        applied = emit(
            game,
            protocol.TakebackEvent(
                v=0,
                game_id=0,
                by=player,
                ply=game.ply,
                undone=len(undone),
                state=state_json,
                to_move=rules.to_move(state),
                legal_moves=client_moves(rules, state),
                abortable=game.abortable,
                clock=clock_frame(clocks.view(game.clock, now)),
            ),
        )
        game.save()
    return applied


def offer_draw(*, game_id: int, user: Any) -> Applied:
    """Propose a draw; if the opponent proposed one already, the game is drawn."""
    with transaction.atomic():
        game, player = active_player(game_id, user)
        info = game_info(game.slug)
        if not info.draws:
            raise ServiceError("no_draws", translated(info.no_draws))
        if game.offers.get("draw") == player:
            return Applied(game=game, duplicate=True)
        if game.offers.get("draw") == 3 - player:
            applied = _draw_agreed(game)
        else:
            game.offers = {**game.offers, "draw": player}
            applied = emit(game, protocol.DrawOffer(v=0, game_id=0, by=player))
            lifecycle.offered(game, "draw", player)
        game.save()
    return applied


def answer_draw(*, game_id: int, user: Any, accept: bool) -> Applied:
    """Accept (the game is drawn) or decline the opponent's draw offer."""
    with transaction.atomic():
        game, player = active_player(game_id, user)
        if game.offers.get("draw") != 3 - player:
            raise ServiceError("no_offer", _("Your opponent has not offered a draw."))
        if accept:
            applied = _draw_agreed(game)
        else:
            game.offers = {kind: by for kind, by in game.offers.items() if kind != "draw"}
            applied = emit(game, protocol.DrawDeclined(v=0, game_id=0, by=player))
        game.save()
    return applied


def _draw_agreed(game: Game) -> Applied:
    return finish(
        game,
        winner=None,
        termination=Game.Termination.AGREEMENT,
        reason=messages.DRAWN_BY_AGREEMENT,
    )
