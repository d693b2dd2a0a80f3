"""Time on the game row: the deadline, time excused while the opponent is away, and ending
a game whose running side ran out (or never made a first move)."""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import transaction

from games import clocks, messages
from games.clocks import now_ms
from games.models import Game
from games.services._core import Applied, locked
from games.services.ending import finish


def excused(game: Game, now: int) -> int:
    """Time the running player does not spend while their opponent is away (the
    abandonment countdown): at most ABANDON_MS, real-time games only."""
    clock = game.clock
    if not clock or not clock.get("running") or not game.time_control.realtime:
        return 0
    left_at = game.away.get(str(3 - clock["running"]))
    if left_at is None:
        return 0
    return min(clocks.ABANDON_MS, max(0, now - max(clock["since"], left_at)))


def set_deadline(game: Game) -> None:
    """The row's `deadline`: when the sweeper must look at the game again."""
    due = clocks.due(game.clock)
    if due is None or game.status != Game.Status.ACTIVE:
        game.deadline = None
        return
    at = due.at
    if not due.abort and str(3 - due.player) in game.away:
        at += clocks.ABANDON_MS  # an upper bound: check_clock looks again then
    game.deadline = datetime.fromtimestamp(at / 1000, tz=UTC)


def overdue(game: Game, now: int) -> clocks.Due | None:
    due = clocks.due(game.clock)
    if due is None:
        return None
    late = 0 if due.abort else excused(game, now)
    return due if due.at + late <= now else None


def end_by_clock(game: Game, due: clocks.Due, now: int) -> Applied:
    user = game.player1 if due.player == 1 else game.player2
    if due.abort:
        return finish(
            game,
            winner=None,
            termination=Game.Termination.ABORT,
            reason=messages.NO_FIRST_MOVE
            % {"user": user.username, "seconds": clocks.FIRST_MOVE_MS // 1000},
            now=now,
        )
    return finish(
        game,
        winner=3 - due.player,
        termination=Game.Termination.TIME,
        reason=messages.OUT_OF_TIME % {"user": user.username},
        now=now,
    )


def check_clock(*, game_id: int) -> Applied:
    """End the game if the running side is out of time (or never made a first move).

    Idempotent: connected consumers and the sweeper may all call it at the deadline; the
    row lock orders them and only the first finds the game still active.
    """
    with transaction.atomic():
        game = locked(game_id)
        if game.status != Game.Status.ACTIVE or game.clock is None:
            return Applied(game=game)
        now = now_ms()
        due = overdue(game, now)
        if due is None:
            before = game.deadline
            set_deadline(game)
            if game.deadline != before:
                game.save(update_fields=["deadline"])
            return Applied(game=game)
        applied = end_by_clock(game, due, now)
        game.save()
    return applied


def overdue_games(limit: int = 500) -> list[tuple[int, datetime]]:
    """Active games whose deadline has passed, with it (the sweeper's work list)."""
    now = datetime.fromtimestamp(now_ms() / 1000, tz=UTC)
    return list(
        Game.objects.filter(status=Game.Status.ACTIVE, deadline__lte=now)
        .order_by("deadline")
        .values_list("pk", "deadline")[:limit]
    )


def next_deadline() -> datetime | None:
    return (
        Game.objects.filter(status=Game.Status.ACTIVE, deadline__isnull=False)
        .order_by("deadline")
        .values_list("deadline", flat=True)
        .first()
    )
