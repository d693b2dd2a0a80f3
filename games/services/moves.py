"""Playing a move: the locked side of the move transition (games/transition.py).

play_move loads and locks the row, checks the request against it, lets `advance` compute the
move (pure), applies the Transition to the row, stores its events and schedules their
broadcast for after commit. A move the opponent's queue answers is a second transition,
applied the same way in the same transaction.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone

from games import lifecycle, selectors, store
from games.clocks import now_ms
from games.engine import MAX_MOVE_LENGTH, canonical_move, rules_for
from games.models import Game, MoveNotice
from games.rules import IllegalMove
from games.services import queue
from games.services._core import Applied, locked, player_of
from games.services.clock import end_by_clock, excused, overdue, set_deadline
from games.services.events import emit
from games.transition import Transition, advance
from realtime.errors import ServiceError
from realtime.protocol import encode

logger = logging.getLogger(__name__)

# What a move changes on the game row (store.update_game writes only these).
MOVE_COLUMNS = (
    "ply",
    "state",
    "both_moved",
    "clock",
    "deadline",
    "status",
    "winner",
    "termination",
    "reason",
    "version",
    "moved_at",
    "offers",
    "queues",
)


def play_move(*, game_id: int, user: Any, move: str, ply: int, lag: int = 0) -> Applied:
    """Apply `move` for `user` if `ply` moves have been played; see docs/PROTOCOL.md.

    `lag` is the mover's measured one-way network delay (ms), forgiven within a quota. A
    move that arrives after the mover's time ran out ends the game on time instead.
    """
    if not isinstance(move, str) or not move.strip():
        raise ServiceError("bad_message", 'A move needs "move": the move in notation, as text.')
    if len(move) > MAX_MOVE_LENGTH:
        raise ServiceError("bad_message", f"A move has at most {MAX_MOVE_LENGTH} characters.")
    if not isinstance(ply, int) or isinstance(ply, bool) or ply < 0:
        raise ServiceError(
            "bad_message", 'A move needs "ply": the number of moves already played, as an integer.'
        )
    with transaction.atomic():
        game = locked(game_id)
        player = player_of(game, user)
        rules = rules_for(game.slug, game.options)

        if ply < game.ply:
            return _resent(game, rules, player=player, move=move, ply=ply)
        if game.status != Game.Status.ACTIVE:
            raise ServiceError("game_over", f"The game is over ({game.reason}).")
        if ply > game.ply:
            raise ServiceError(
                "stale_ply", f"Only {game.ply} moves have been played, not {ply}; resync."
            )
        state = rules.from_json(game.state)
        if rules.to_move(state) != player:
            raise ServiceError("not_your_turn", "It is not your turn.")
        now = now_ms()
        flagged = overdue(game, now)
        if flagged is not None:
            end_by_clock(game, flagged, now)
            game.save()
        else:
            step, applied = _apply(game, rules, state, player=player, move=move, now=now, lag=lag)
            _answer_from_queue(game, rules, step, mover=player, now=now)
    if flagged is not None:
        raise ServiceError("game_over", f"The game is over ({game.reason}).")
    return applied


def _apply(
    game: Game, rules: Any, state: Any, *, player: int, move: str, now: int, lag: int
) -> tuple[Transition, Applied]:
    """Advance the locked game by the move and write it: the row, the move event (also the
    move's record), the end event when the move ended the game."""
    try:
        step = advance(
            rules,
            state,
            player=player,
            move=move,
            ply=game.ply,
            clock=game.clock,
            both_moved=game.both_moved,
            now=now,
            lag=lag,
            excused=excused(game, now),
        )
    except IllegalMove as error:
        raise ServiceError("illegal_move", str(error)) from None
    played = game.ply
    game.ply = step.ply
    game.state = step.state
    game.both_moved = step.both_moved
    game.moved_at = timezone.now()
    # An offer was made for the position before this move: the move withdraws it.
    game.offers = {}
    game.clock = step.clock
    if step.game_over:
        game.status = Game.Status(step.status)
        game.winner = step.winner
        game.termination = Game.Termination(step.termination)
        game.reason = step.reason
    set_deadline(game)
    move_event, *end = step.events
    applied = emit(game, move_event, ply=played)
    for event in end:
        emit(game, event)
    if step.turn_over and not step.game_over and game.time_control.correspondence:
        MoveNotice.objects.get_or_create(game=game, player=3 - player)
    store.update_game(game, MOVE_COLUMNS)
    if step.game_over:
        lifecycle.ended(game)
    return step, applied


def _answer_from_queue(game: Game, rules: Any, step: Transition, *, mover: int, now: int) -> None:
    """After `mover`'s move: the opponent's queued answer, if it expected that move, is
    played as a second transition; a queue that did not expect it is dropped."""
    changed, answer = queue.pop_answer(game, step, mover=mover)
    if answer is not None:
        try:
            _apply(game, rules, step.position, player=3 - mover, move=answer, now=now, lag=0)
            return  # the queues were written with the answer
        except ServiceError:
            # Checked when queued along this very line, so it cannot happen; if it ever
            # did, the opponent's move must still stand: only the queue goes.
            logger.exception("queued answer %s in game %s refused", answer, game.pk)
    if changed:
        store.update_game(game, ("queues",))


def _resent(game: Game, rules: Any, *, player: int, move: str, ply: int) -> Applied:
    """A move for a ply already played: the same move resent is a success, else stale."""
    records = {
        row.ply: row.payload
        for row in selectors.move_events(game).filter(ply__in=[ply - 1, ply]).only("ply", "payload")
    }
    earlier = records.get(ply)
    if earlier is not None and earlier["player"] == player:
        previous = rules.from_json(
            records[ply - 1]["state"] if ply else rules.to_json(rules.initial_state())
        )
        try:
            same = canonical_move(rules, previous, move) == earlier["move"]
        except IllegalMove:
            same = False
        if same:
            return Applied(game=game, text=encode(earlier), duplicate=True)
    raise ServiceError(
        "stale_ply", f"{game.ply} moves have been played, not {ply}; your view is out of date."
    )
