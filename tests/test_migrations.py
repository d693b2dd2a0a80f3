"""Data migrations keep what production databases already hold."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("games", "0002_both_moved")]
AFTER = [("games", "0003_event_is_the_move_record")]


@pytest.fixture
def old_schema() -> Iterator[Any]:
    """The apps as they were before the move table was folded into the events."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        yield executor.loader.project_state(BEFORE).apps
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def test_the_moves_of_existing_games_become_their_move_events(old_schema: Any) -> None:
    User = old_schema.get_model("accounts", "User")
    Game = old_schema.get_model("games", "Game")
    Move = old_schema.get_model("games", "Move")
    GameEvent = old_schema.get_model("games", "GameEvent")
    one = User.objects.create(username="one")
    two = User.objects.create(username="two")
    game = Game.objects.create(
        slug="diffusion", player1=one, player2=two, state={}, ply=2, version=3, time_control=""
    )
    for ply, (player, notation) in enumerate([(1, "I"), (2, "A")]):
        Move.objects.create(game=game, ply=ply, player=player, notation=notation, state={})
    for version, payload in [
        (1, {"type": "move", "ply": 1, "player": 1, "move": "I"}),
        (2, {"type": "move", "ply": 2, "player": 2, "move": "A"}),
        (3, {"type": "rematch_offer", "by": 1}),
    ]:
        GameEvent.objects.create(game=game, version=version, payload={**payload, "v": version})

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    apps = executor.loader.project_state(AFTER).apps

    events = apps.get_model("games", "GameEvent").objects.filter(game_id=game.pk)
    assert list(events.order_by("version").values_list("version", "ply")) == [
        (1, 0),
        (2, 1),
        (3, None),
    ]
