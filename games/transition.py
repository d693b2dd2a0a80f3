"""A move's transition, pure: what one move does to a game, as plain values.

Like lila's `Progress`: the rules advance the position, the clock is charged, the outcome is
read, and the events to publish are built typed. No Django, no database, no channel layer:
`advance` is a function of the engine, the clock dict and plain values, so every case of a
move is tested without a database (tests/test_transition.py). The locked service
(games/services/moves.py) loads and locks the row, checks who may move, calls `advance`,
applies the Transition to the row and stores its events, which are numbered (`v`) only then:
the version belongs to the locked row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from games import clocks, protocol
from games.engine import canonical_move, client_moves, sowing_path

# Game.Status and Game.Termination's values (games/models.py), spelled here so this module
# needs no Django; tests/test_transition.py checks they still agree.
ACTIVE = "active"
FINISHED = "finished"
RULES = "rules"


@dataclass(frozen=True, slots=True)
class Transition:
    """What a move changed. A move always withdraws the offers made for the position before
    it (takeback, draw), so there is no field for that: the service clears them."""

    ply: int  # moves played after it
    state: dict[str, Any]  # the new position as the engine's JSON
    position: Any  # the same position as the engine's object (a queued answer plays on it)
    to_move: int
    both_moved: bool
    clock: dict[str, Any] | None
    status: str
    winner: int | None
    termination: str
    reason: str
    turn_over: bool  # the next move is the opponent's (Diffusion Chess turns have several)
    game_over: bool
    notation: str  # the move in canonical notation
    path: list[list[str | int]] | None  # pit games: the sowing, seed by seed
    # The move event, then the end event when the move ended the game; `v` and `game_id`
    # are filled in when they are stored under the row lock.
    events: tuple[protocol.Event, ...]


def clock_frame(view: dict[str, Any] | None) -> protocol.Clock | None:
    """clocks.view's dict as the typed frame field."""
    return None if view is None else protocol.Clock(**view)


def result_frame(
    status: str, winner: int | None, termination: str, reason: str
) -> protocol.Result | None:
    """The result as clients see it (None while the game goes on), as Game.result()."""
    if status == ACTIVE:
        return None
    return protocol.Result(winner=winner, termination=termination, reason=reason)


def advance(
    rules: Any,
    state: Any,
    *,
    player: int,
    move: str,
    ply: int,
    clock: dict[str, Any] | None,
    both_moved: bool,
    now: int,
    lag: int = 0,
    excused: int = 0,
) -> Transition:
    """Play `move` for `player` on `state` (the engine's position after `ply` moves).

    The caller has checked that it is `player`'s turn and that the clock has not run out
    (clocks.due). `lag` is the mover's measured network delay, `excused` the time that does
    not count (the opponent was away); see clocks.after_move. Raises the engine's
    IllegalMove (a ValueError) when the move is not allowed here.
    """
    new_state = rules.play(state, move)
    notation = canonical_move(rules, state, move)
    path = sowing_path(rules, state, move)
    state_json = rules.to_json(new_state)
    outcome = rules.outcome(new_state)
    to_move = int(rules.to_move(new_state))
    game_over = outcome is not None
    turn_over = game_over or to_move != player
    if clock:
        clock = clocks.after_move(
            clock,
            player=player,
            turn_over=turn_over,
            game_over=game_over,
            now=now,
            lag=lag,
            excused=excused,
        )
    if outcome is not None:
        status, winner, termination, reason = FINISHED, outcome.winner, RULES, outcome.reason
    else:
        status, winner, termination, reason = ACTIVE, None, "", ""
    both_moved = both_moved or player == 2
    result = result_frame(status, winner, termination, reason)
    view = clock_frame(clocks.view(clock, now))
    events: list[protocol.Event] = [
        protocol.MoveEvent(
            v=0,
            game_id=0,
            ply=ply + 1,
            player=player,
            move=notation,
            state=state_json,
            to_move=to_move,
            legal_moves=client_moves(rules, new_state),
            status=status,
            result=result,
            abortable=status == ACTIVE and not both_moved,
            clock=view,
            path=path,
        )
    ]
    if game_over:
        events.append(protocol.End(v=0, game_id=0, status=status, result=result, clock=view))
    return Transition(
        ply=ply + 1,
        state=state_json,
        position=new_state,
        to_move=to_move,
        both_moved=both_moved,
        clock=clock,
        status=status,
        winner=winner,
        termination=termination,
        reason=reason,
        turn_over=turn_over,
        game_over=game_over,
        notation=notation,
        path=path,
        events=tuple(events),
    )
