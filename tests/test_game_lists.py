"""The lists of games by status: finished games latest ended first, by when they ended (set
once as a game ends, whichever way), not by when their row last changed."""

from __future__ import annotations

import pytest

from games import selectors, services
from games.engine import rules_for
from games.models import Game
from tests.games_helpers import new_game

pytestmark = pytest.mark.django_db


def play_to_the_end(game: Game) -> None:
    """The first legal move each turn until the game is over."""
    rules = rules_for(game.slug, game.options)
    for _ in range(500):
        game.refresh_from_db()
        if game.status != Game.Status.ACTIVE:
            return
        state = rules.from_json(game.state)
        mover = game.player1 if rules.to_move(state) == 1 else game.player2
        move = sorted(rules.legal_moves(state))[0]
        services.play_move(game_id=game.pk, user=mover, move=move, ply=game.ply)
    raise AssertionError("the game did not end in 500 moves")


def test_finished_games_are_listed_latest_ended_first_whichever_way_they_ended() -> None:
    resigned = new_game()
    services.play_move(game_id=resigned.pk, user=resigned.player1, move="I", ply=0)
    services.play_move(game_id=resigned.pk, user=resigned.player2, move="A", ply=1)
    services.resign(game_id=resigned.pk, user=resigned.player1)
    played_out = new_game("zigzag", {"pits": 4, "seeds": 3})
    play_to_the_end(played_out)
    aborted = new_game()
    services.abort(game_id=aborted.pk, user=aborted.player1)
    games = {game.pk: game for game in Game.objects.all()}
    assert all(game.ended_at is not None for game in games.values())
    assert games[played_out.pk].ended_at == games[played_out.pk].moved_at  # its last move
    # A change to the row of a game over (a chat muted) does not move it up the list.
    services.mute_chat(game_id=resigned.pk, user=resigned.player2, mute=True)
    finished = [game.pk for game in selectors.games_with_status(Game.Status.FINISHED)]
    assert finished == [played_out.pk, resigned.pk]
    assert [game.pk for game in selectors.games_with_status(Game.Status.ABORTED)] == [aborted.pk]


def test_a_game_in_progress_has_no_end_time() -> None:
    game = new_game()
    services.play_move(game_id=game.pk, user=game.player1, move="I", ply=0)
    game.refresh_from_db()
    assert game.status == Game.Status.ACTIVE and game.ended_at is None
