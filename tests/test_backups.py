"""The restore drill (devtools/backups.py, docs/BACKUPS.md): a database populated through the
services is dumped and restored, and the copy's games and ratings are checked; and the checks
do find a damaged position or rating."""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import F

from devtools import backups
from games.models import Game
from ratings.models import Rating

pytestmark = [
    pytest.mark.postgres(reason="the drill runs pg_dump and pg_restore against PostgreSQL"),
    pytest.mark.django_db,
]


def _tampered(value: Any) -> tuple[Any, bool]:
    """The JSON value with its first whole number in a list raised by one."""
    if isinstance(value, dict):
        for key, item in value.items():
            changed, done = _tampered(item)
            if done:
                return {**value, key: changed}, True
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, int) and not isinstance(item, bool):
                return [*value[:index], item + 1, *value[index + 1 :]], True
            changed, done = _tampered(item)
            if done:
                return [*value[:index], changed, *value[index + 1 :]], True
    return value, False


def test_a_restored_copy_plays_every_game_and_rating_again_without_a_difference() -> None:
    result = backups.drill(8, keep=True)
    try:
        assert result.differences == []
        replayed = result.verified.replayed
        # Each of the four games has a finished and a running game, with moves.
        for slug in backups.SLUGS:
            assert replayed.games[slug] == 2, slug
            assert replayed.running[slug] == 1, slug
            assert replayed.moves[slug] > 0, slug
        assert result.verified.rated_games > 0
        assert result.rows > 0 and result.dump_bytes > 0
        lines = backups.report(result)
        assert lines[-1] == "differences: 0"

        with backups.on_database(result.restored):
            before = backups.table_digests()
            # A running game whose stored position is no longer what its moves make.
            game = Game.objects.filter(status=Game.Status.ACTIVE, ply__gt=0).first()
            assert game is not None
            damaged, done = _tampered(game.state)
            assert done
            Game.objects.filter(pk=game.pk).update(state=damaged)
            verified = backups.verify()
            assert verified.differences == [
                f"game {game.pk} ({game.slug}): the stored position differs from the replay "
                f"of its {game.ply} moves"
            ]
            assert backups.table_differences(before, backups.table_digests()) == [
                f"games_game: same {before['games_game'][0]} rows, different contents"
            ]
            Game.objects.filter(pk=game.pk).update(state=game.state)

            # A rating that is not what its games make.
            rating = Rating.objects.order_by("pk").first()
            assert rating is not None
            Rating.objects.filter(pk=rating.pk).update(rating=F("rating") + 1)
            verified = backups.verify()
            assert verified.replayed.differences == []
            key = (rating.user_id, rating.slug, rating.speed)
            assert verified.differences == [
                f"rating {key} rating: stored {rating.rating + 1}, from the games {rating.rating}"
            ]
    finally:
        backups.drop_database(result.restored)
