"""The game database's rows of a finished game (games.models.PlayedGame), written in the
transaction that ends it: a search never finds a game whose end it cannot see, nor misses
one that ended."""

from __future__ import annotations

from typing import Any

from games.models import Game, GameEvent, PlayedGame, PlayedMoves


def option_key(options: dict[str, Any]) -> str:
    """An option set as the database keeps it and a search names it: "pits=6,seeds=5"."""
    return ",".join(f"{name}={options[name]}" for name in sorted(options))


def rows_of(game: Game) -> list[PlayedGame]:
    """One row for each seat of a finished game (none for a game that was aborted)."""
    if game.status != Game.Status.FINISHED or game.ended_at is None:
        return []
    players = {1: game.player1_id, 2: game.player2_id}
    rows = []
    for seat in (1, 2):
        if game.winner is None:
            result = PlayedGame.Result.DRAW
        else:
            result = PlayedGame.Result.WIN if game.winner == seat else PlayedGame.Result.LOSS
        rows.append(
            PlayedGame(
                game_id=game.pk,
                seat=seat,
                user_id=players[seat],
                opponent_id=players[3 - seat],
                slug=game.slug,
                options=option_key(game.options or {}),
                rated=game.rated,
                speed=game.time_control.kind,
                result=result,
                termination=game.termination,
                ended_at=game.ended_at,
                plies=game.ply,
            )
        )
    return rows


def record_finished(game: Game) -> None:
    """Add a game that has just finished to the database (in the caller's transaction)."""
    rows = rows_of(game)
    if rows:
        PlayedGame.objects.bulk_create(rows, ignore_conflicts=True)
        PlayedMoves.objects.bulk_create(
            [PlayedMoves(game_id=game.pk, moves=line_of(game.pk))], ignore_conflicts=True
        )


def line_of(game_id: int) -> str:
    """A game's moves as PlayedMoves keeps them: in order, separated by spaces."""
    moves = (
        GameEvent.objects.filter(game_id=game_id, ply__isnull=False, undone=False)
        .order_by("ply")
        .values_list("payload__move", flat=True)
    )
    return " ".join(str(move) for move in moves)
