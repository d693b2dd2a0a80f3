"""One tournament's failure stays that tournament's: its work is set aside, not retried forever.

The sweeper works on every tournament on each pass (about once a second) and the end of a
game counts its result. If that work raises (a bug, or a state no rule foresaw), retrying on
the next pass raises the same error again: the log fills with one traceback a second, and the
work after it in the pass (the other tournaments' starts, waves and results) never runs. So
the error is logged once, with its traceback, and the tournament is marked: `problem` says
what failed, the admin lists it (*Tournaments*, "held"), and nothing starts, pairs, ends or
counts it until staff have looked and cleared the mark (the admin's action "Try again"); its
results are then counted by the sweeper's next pass. An outage (the database or Redis
unreachable) is no bug of the tournament's: it is raised, and the pass is retried whole.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from realtime.errors import is_outage
from tournaments.models import Tournament

logger = logging.getLogger(__name__)

PROBLEM_LENGTH = 300


def guarded(tournament_id: int, doing: str, work: Callable[[], object]) -> bool:
    """Run `work` (the tournament's, in its own transaction); False if it failed and the
    tournament is now held."""
    try:
        work()
    except Exception as error:
        if is_outage(error):
            raise
        hold(tournament_id, doing, error)
        return False
    return True


def hold(tournament_id: int, doing: str, error: BaseException) -> None:
    """Mark the tournament held for `error` and log it, once."""
    problem = f"{doing}: {type(error).__name__}: {error}"[:PROBLEM_LENGTH]
    marked = Tournament.objects.filter(pk=tournament_id, problem="").update(problem=problem)
    if marked:
        logger.error(
            "tournament %s held (nothing pairs, ends or counts it until staff clear its "
            "problem in the admin): %s failed",
            tournament_id,
            doing,
            exc_info=error,
        )


def is_held(tournament_id: int) -> bool:
    return Tournament.objects.filter(pk=tournament_id).exclude(problem="").exists()
