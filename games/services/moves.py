"""Playing a move: the move transition (games/transition.py) applied to the game's row.

play_move reads the row, checks the request against it, lets `advance` compute the move
(pure), applies the Transition to the row in memory and prepares (encodes) its events; then
one short transaction writes the row if it is still as read and stores the events, whose
broadcast follows the commit. A move the opponent's queue answers is a second transition,
written in the same transaction.
"""

from __future__ import annotations

import logging
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from games import lifecycle, reasons, selectors, store
from games.clocks import now_ms
from games.engine import MAX_MOVE_LENGTH, canonical_move, rules_for
from games.messages import translated
from games.models import Game
from games.rules import IllegalMove
from games.services import queue
from games.services._core import Applied, locked, player_of
from games.services.clock import end_by_clock, excused, overdue, set_deadline
from games.services.events import prepare, send_on_commit
from games.services.records import record_finished
from games.transition import Transition, advance
from realtime import metrics
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
    "ended_at",
    "offers",
    "queues",
)


# Tries that may lose the race for the row (another write to the game between reading it
# and writing the move) before the move takes the row lock for the whole of its work.
RACES = 3


@dataclass
class _Written:
    """What a move (and the queued answer it set off) writes once the row is still as read:
    its prepared events (with the ply of each move event) and who gets a move notice."""

    events: list[tuple[Applied, int | None]] = field(default_factory=list)
    noticed: list[int] = field(default_factory=list)
    ended: bool = False
    # The player whose turn the last move made it (None: the turn goes on, or the game ended).
    turn: int | None = None

    @property
    def applied(self) -> Applied:
        """The mover's move event: what play_move answers."""
        return self.events[0][0]

    @property
    def moves(self) -> int:
        """The moves played: the mover's, and the queued answer if there was one."""
        return sum(ply is not None for _, ply in self.events)


def play_move(*, game_id: int, user: Any, move: str, ply: int, lag: int = 0) -> Applied:
    """Apply `move` for `user` if `ply` moves have been played; see docs/PROTOCOL.md.

    `lag` is the mover's measured one-way network delay (ms), forgiven within a quota. A
    move that arrives after the mover's time ran out ends the game on time instead.

    The game is read without a lock, the move computed and its events encoded, and then, in
    one short transaction, the row is written only if it is still as read (compare and set on
    its version and `updated_at`) and the events stored: the row is locked only for those two
    statements. A move that lost the race to another write of the game is computed again from
    the new row; after RACES lost races the move holds the row lock from its read on.
    """
    if not isinstance(move, str) or not move.strip():
        raise ServiceError("bad_message", _('A move needs "move": the move in notation, as text.'))
    if len(move) > MAX_MOVE_LENGTH:
        raise ServiceError(
            "bad_message", _("A move has at most %(most)s characters.") % {"most": MAX_MOVE_LENGTH}
        )
    if not isinstance(ply, int) or isinstance(ply, bool) or ply < 0:
        raise ServiceError(
            "bad_message",
            _('A move needs "ply": the number of moves already played, as an integer.'),
        )
    started = time.perf_counter()
    races = 0
    while True:
        lock = races >= RACES
        with transaction.atomic() if lock else nullcontext():
            game = locked(game_id) if lock else _read(game_id)
            player = player_of(game, user)
            rules = rules_for(game.slug, game.options)
            if ply < game.ply:
                return _resent(game, rules, player=player, move=move, ply=ply)
            if game.status != Game.Status.ACTIVE:
                raise ServiceError(
                    "game_over",
                    _("The game is over (%(reason)s).")
                    % {"reason": reasons.translate(game.reason)},
                )
            if ply > game.ply:
                raise ServiceError(
                    "stale_ply",
                    _("Only %(played)s moves have been played, not %(ply)s; resync.")
                    % {"played": game.ply, "ply": ply},
                )
            state = rules.from_json(game.state)
            if rules.to_move(state) != player:
                raise ServiceError("not_your_turn", _("It is not your turn."))
            now = now_ms()
            flagged = overdue(game, now)
            if flagged is None:
                seen = None if lock else store.Seen.of(game)
                written = _play(game, rules, state, player=player, move=move, now=now, lag=lag)
                if _write(game, written, seen):
                    metrics.moved(game.slug, written.moves, started)
                    return written.applied
                races += 1
                continue
            if lock:
                end_by_clock(game, flagged, now)
                game.save()
        if lock:
            raise ServiceError(
                "game_over",
                _("The game is over (%(reason)s).") % {"reason": reasons.translate(game.reason)},
            )
        # Out of time when read: under the row lock the game is ended on time, or, if the row
        # changed meanwhile (a vacation stopped the clock), the move is played.
        races = RACES


def _read(game_id: int) -> Game:
    game = store.read_game(game_id)
    if game is None:
        raise ServiceError("no_such_game", _("There is no game %(game)s.") % {"game": game_id})
    return game


def _play(
    game: Game, rules: Any, state: Any, *, player: int, move: str, now: int, lag: int
) -> _Written:
    """The move and the opponent's queued answer to it, applied to the row as read (in
    memory) and their events prepared: everything but the writes."""
    written = _Written()
    step = _advance(game, rules, state, written, player=player, move=move, now=now, lag=lag)
    _answer_from_queue(game, rules, step, written, mover=player, now=now)
    return written


def _advance(
    game: Game,
    rules: Any,
    state: Any,
    written: _Written,
    *,
    player: int,
    move: str,
    now: int,
    lag: int,
) -> Transition:
    """Advance the game by the move (the pure transition) and apply it to the row in memory:
    the move event (also the move's record) and the end event when the move ended the game
    are prepared into `written`, to be written by `_write`."""
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
        raise ServiceError("illegal_move", translated(error)) from None
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
        game.ended_at = game.moved_at
        game.winner = step.winner
        game.termination = Game.Termination(step.termination)
        game.reason = step.reason
    set_deadline(game)
    move_event, *end = step.events
    written.events.append((prepare(game, move_event), played))
    written.events.extend((prepare(game, event), None) for event in end)
    # Correspondence and untimed games (the ones played by mail) tell the player to move.
    if step.turn_over and not step.game_over and not game.time_control.realtime:
        written.noticed.append(3 - player)
    written.ended = step.game_over
    written.turn = 3 - player if step.turn_over and not step.game_over else None
    return step


def _answer_from_queue(
    game: Game, rules: Any, step: Transition, written: _Written, *, mover: int, now: int
) -> None:
    """After `mover`'s move: the opponent's queued answer, if it expected that move, is
    played as a second transition; a queue that did not expect it is dropped."""
    _, answer = queue.pop_answer(game, step, mover=mover)
    if answer is None:
        return
    try:
        _advance(game, rules, step.position, written, player=3 - mover, move=answer, now=now, lag=0)
    except ServiceError:
        # Checked when queued along this very line, so it cannot happen; if it ever did, the
        # opponent's move must still stand: only the queue goes.
        logger.exception("queued answer %s in game %s refused", answer, game.pk)


def _write(game: Game, written: _Written, seen: store.Seen | None) -> bool:
    """Write the row (if still as `seen`, unless the caller holds its lock), the prepared
    events and the move notices, all or nothing (store.write_move); False, writing nothing,
    when the row changed. The events are sent once that has committed."""
    rows = [(event.version, ply, _text(event)) for event, ply in written.events]
    if written.ended:
        # The move that ends the game adds it to the game database in the same transaction.
        with transaction.atomic():
            if not store.write_move(
                game, MOVE_COLUMNS, rows, written.noticed, unless_changed_since=seen
            ):
                return False
            record_finished(game)
    elif not store.write_move(game, MOVE_COLUMNS, rows, written.noticed, unless_changed_since=seen):
        return False
    for event, _ply in written.events:
        send_on_commit(event)
    if written.ended:
        lifecycle.ended(game)
    elif written.turn is not None:
        lifecycle.moved(game, written.turn)
    return True


def _text(event: Applied) -> str:
    assert event.text is not None, "prepared events have their text"
    return event.text


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
        "stale_ply",
        _("%(played)s moves have been played, not %(ply)s; your view is out of date.")
        % {"played": game.ply, "ply": ply},
    )
