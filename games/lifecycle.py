"""Game lifecycle events for the apps built on games (the lobby announces games from them).

games never imports those apps: it sends these signals after the transaction that started or
ended games commits, and whoever cares connects a receiver (lobby/apps.py). So a game from
any source (a seek, a challenge, a rematch, anything later) is announced the same way, and a
game's transaction never waits on a lock of another app.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.dispatch import Signal

from realtime.errors import is_outage

logger = logging.getLogger(__name__)

# Receivers get games=[Game, ...]: new active games, their players loaded.
games_started = Signal()
# Receivers get game=Game: it just finished or was aborted.
game_ended = Signal()
# The sweeper sends this on each pass (receivers get nothing): apps above games do their
# periodic work (e-mails to send) without the sweeper knowing them.
sweeping = Signal()
# Receivers get game=Game, player=1|2, ply=int: a move (or the queued answer it set off) made
# it that player's turn, in any game (push notices: "your move").
turn_passed = Signal()
# Receivers get game=Game, offer="draw"|"takeback", by=1|2, ply=int: a player asked the
# other (push notices).
offer_made = Signal()


def _send(signal: Signal, *, raise_outage: bool = False, **kwargs: Any) -> None:
    outage: Exception | None = None
    for receiver, error in signal.send_robust(sender=None, **kwargs):
        if not isinstance(error, Exception):
            continue
        if is_outage(error):
            # Not a bug of the listener's: no traceback. The sweeper retries its whole pass.
            outage = outage or error
            if not raise_outage:
                logger.warning(
                    "%s: database unreachable (%s)",
                    getattr(receiver, "__qualname__", receiver),
                    error,
                )
        else:
            # The game is committed; a listener's failure must not undo or fail the request.
            logger.error("%s failed on a game event", receiver, exc_info=error)
    if outage is not None and raise_outage:
        raise outage


def sweep() -> None:
    """The sweeper's pass: let every app do its periodic work. Bugs are logged; an outage
    is raised after every listener had its turn, so that the sweeper waits and retries."""
    _send(sweeping, raise_outage=True)


def started(games: Sequence[Any]) -> None:
    """Announce new games once the current transaction commits."""
    if games:
        transaction.on_commit(lambda: _send(games_started, games=list(games)))


def ended(game: Any) -> None:
    """Announce a game's end once the current transaction commits."""
    transaction.on_commit(lambda: _send(game_ended, game=game))


def moved(game: Any, player: int) -> None:
    """Announce, once the current transaction commits, that it is `player`'s turn."""
    if not turn_passed.has_listeners():
        return
    ply = game.ply
    transaction.on_commit(lambda: _send(turn_passed, game=game, player=player, ply=ply))


def offered(game: Any, offer: str, by: int) -> None:
    """Announce an offer (a draw, a takeback) once the current transaction commits."""
    ply = game.ply
    transaction.on_commit(lambda: _send(offer_made, game=game, offer=offer, by=by, ply=ply))


def announce(signal: Signal, **kwargs: Any) -> None:
    """Send another app's signal the same way, once the current transaction commits: a
    receiver's failure is logged, never raised into the request that made the news."""
    transaction.on_commit(lambda: _send(signal, **kwargs))
