"""Conditional moves (pbmserv's queue): "if they play X, answer Y", for correspondence and
untimed games. Setting a queue checks the whole line now; answering from it is a second move
transition, applied by games/services/moves.py."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from games.engine import canonical_move, rules_for
from games.messages import translated
from games.models import Game
from games.rules import IllegalMove
from games.services._core import active_player
from games.transition import ACTIVE, Transition
from realtime.errors import ServiceError

# Moves in a queue at most: ten "if they play X, answer Y" pairs.
QUEUE_MAX = 20


def set_queue(*, game_id: int, user: Any, moves: list[str]) -> list[str]:
    """Queue conditional moves while the opponent is to move: [X, Y, Z, W] means "if they
    play X, answer Y; if they then play Z, answer W". Every move is checked now by playing
    the line out; an empty list clears the queue. Returns the queue as stored (canonical)."""
    if not isinstance(moves, list) or not all(isinstance(move, str) for move in moves):
        raise ServiceError("bad_message", _('A queue needs "moves": a list of moves in notation.'))
    with transaction.atomic():
        game, player = active_player(game_id, user)
        if game.time_control.realtime:
            raise ServiceError(
                "bad_queue", _("Conditional moves are for correspondence and untimed games.")
            )
        if len(moves) % 2 or len(moves) > QUEUE_MAX:
            raise ServiceError(
                "bad_queue",
                _("A queue is pairs of moves (their move, then your answer), at most %(most)s.")
                % {"most": QUEUE_MAX},
            )
        queue = _checked_queue(game, player, moves) if moves else []
        queues = {seat: line for seat, line in game.queues.items() if seat != str(player)}
        game.queues = {**queues, str(player): queue} if queue else queues
        game.save(update_fields=["queues", "updated_at"])
    return queue


def _checked_queue(game: Game, player: int, moves: list[str]) -> list[str]:
    rules = rules_for(game.slug, game.options)
    state = rules.from_json(game.state)
    names = {1: game.player1.username, 2: game.player2.username}
    if rules.to_move(state) == player:
        raise ServiceError(
            "bad_queue", _("It is your move: play it. A queue answers your opponent's moves.")
        )
    queue: list[str] = []
    for number, move in enumerate(moves):
        mover = 3 - player if number % 2 == 0 else player
        if rules.outcome(state) is not None:
            raise ServiceError(
                "bad_queue", _("The game would be over before %(move)s.") % {"move": move}
            )
        if rules.to_move(state) != mover:
            raise ServiceError(
                "bad_queue",
                _(
                    "After %(move)s it is %(player)s's move, not %(mover)s's: a queue holds "
                    "whole turns of one move."
                )
                % {"move": queue[-1], "player": names[rules.to_move(state)], "mover": names[mover]},
            )
        try:
            canonical = canonical_move(rules, state, move)
            state = rules.play(state, move)
        except IllegalMove as error:
            raise ServiceError(
                "bad_queue",
                _("%(move)s: %(error)s") % {"move": move.strip()[:20], "error": translated(error)},
            ) from None
        queue.append(canonical)
    return queue


def pop_answer(game: Game, step: Transition, *, mover: int) -> tuple[bool, str | None]:
    """After `mover`'s move (`step`), take the head of the opponent's queue off the locked
    row: (whether the queues changed, the answer to play now or None). A queue that expected
    another move is dropped (the line it was written for is gone); one whose owner's turn
    has not come yet (a Diffusion Chess turn goes on) waits."""
    owner = 3 - mover
    queue = game.queues.get(str(owner))
    if not queue:
        return False, None
    if step.status == ACTIVE and step.to_move == mover:
        return False, None
    rest = {seat: line for seat, line in game.queues.items() if seat != str(owner)}
    expected, answer, *later = queue
    game.queues = {**rest, str(owner): later} if later else rest
    if step.status == ACTIVE and expected == step.notation:
        return True, answer
    return True, None
