"""`manage.py replaygames` (games/replay.py): every game's moves played again and compared
with its row."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from games import selectors, services
from games.models import Game, GameEvent
from tests.games_helpers import new_game

pytestmark = pytest.mark.django_db


def _replay() -> str:
    out = io.StringIO()
    call_command("replaygames", stdout=out)
    return out.getvalue()


def _played(moves: list[str]) -> Game:
    game = new_game()
    players = {1: game.player1, 2: game.player2}
    for ply, move in enumerate(moves):
        game = services.play_move(
            game_id=game.pk, user=players[1 + ply % 2], move=move, ply=ply
        ).game
    return game


def test_games_played_through_the_services_replay_to_their_rows() -> None:
    running = _played(["I", "A", "J"])
    resigned = _played(["I", "A"])
    services.resign(game_id=resigned.pk, user=resigned.player1)
    assert (
        _replay()
        .splitlines()[-1]
        .startswith("2 games replayed (diffusion 2 (1 running)): 5 moves in")
    )
    assert running.ply == 3


def test_a_position_its_moves_do_not_make_is_a_difference() -> None:
    game = _played(["I", "A", "J"])
    event = selectors.move_events(game).get(ply=1)
    GameEvent.objects.filter(pk=event.pk).update(payload={**event.payload, "move": "B"})
    with pytest.raises(CommandError, match="1 difference"):
        _replay()

    GameEvent.objects.filter(pk=event.pk).update(payload=event.payload)
    Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED, winner=1)
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("replaygames", stdout=out)
    assert f"game {game.pk} (diffusion): finished by '' with winner 1" in out.getvalue()
