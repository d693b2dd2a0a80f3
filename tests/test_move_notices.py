"""The sweeper's pass over the "your move" notices: every move of an untimed game writes one,
and a live site's many games write them by the hundred a second, nearly all for players who
get no such mail (no address, the mails off, or the game open in front of them)."""

from __future__ import annotations

import pytest
from pytest_django import DjangoAssertNumQueries

from games import services
from games.models import MoveNotice
from games.services import correspondence
from tests.games_helpers import make_user

pytestmark = pytest.mark.django_db


def test_notices_that_cannot_become_mails_are_cleared_in_a_few_queries_for_all_of_them(
    django_assert_max_num_queries: DjangoAssertNumQueries,
) -> None:
    games = []
    for index in range(20):
        first, second = make_user(f"a{index}"), make_user(f"b{index}")
        first.email, second.email = "", ""  # no address: no mail
        first.save(update_fields=["email"])
        second.save(update_fields=["email"])
        games.append(
            services.create_game(slug="diffusion", options={}, player1=first, player2=second)
        )
    MoveNotice.objects.bulk_create(MoveNotice(game=game, player=1) for game in games)
    # One by one it was two queries a notice (the game, the sockets on it): 40 and more.
    with django_assert_max_num_queries(8):
        assert correspondence.send_move_notices() == 0
    assert not MoveNotice.objects.exists()
