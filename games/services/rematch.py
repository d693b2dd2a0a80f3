"""Rematches (lila's Rematcher): both players ask, one new game starts with sides swapped."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from games import protocol
from games.models import Game
from games.services._core import Applied, locked, player_of
from games.services.create import create_game
from games.services.events import emit
from realtime.errors import ServiceError


def offer_rematch(*, game_id: int, user: Any) -> Applied:
    """Ask for a rematch; when both have asked, ONE new game starts with sides swapped."""
    with transaction.atomic():
        game = locked(game_id)
        player = player_of(game, user)
        if game.status == Game.Status.ACTIVE:
            raise ServiceError(
                "game_not_over", _("A rematch can be offered once the game is over.")
            )
        if game.rematch_id is not None:
            return Applied(game=game, duplicate=True)
        offers = set(game.rematch_offers)
        if player in offers:
            return Applied(game=game, duplicate=True)
        offers.add(player)
        game.rematch_offers = sorted(offers)
        applied: Applied
        if offers == {1, 2}:
            rematch = create_game(
                slug=game.slug,
                options=game.options,
                player1=game.player2,
                player2=game.player1,
                time_control=game.time_control,
                rated=game.rated,
            )
            game.rematch = rematch
            applied = emit(game, protocol.RematchEvent(v=0, game_id=0, new_game_id=rematch.pk))
        else:
            applied = emit(game, protocol.RematchOffer(v=0, game_id=0, by=player))
        game.save()
    return applied
