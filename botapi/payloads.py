"""The Bot API's views of rows: a game as the account's event stream names it."""

from __future__ import annotations

from typing import Any

import msgspec
from django.db.models import Q

from botapi import protocol
from games import protocol as games
from games.models import Game
from lobby.payloads import speed_of
from ratings import selectors as ratings


def api_game(game: Game, user_id: int) -> protocol.ApiGame | None:
    """`game` as its player `user_id` sees it in the event stream; None if not theirs."""
    if game.player1_id == user_id:
        you, other = 1, game.player2
    elif game.player2_id == user_id:
        you, other = 2, game.player1
    else:
        return None
    rating, provisional = ratings.rating_of(other.pk, game.slug, speed_of(game.time_control))
    result: Any = game.result()
    return protocol.ApiGame(
        id=game.pk,
        slug=game.slug,
        options=game.options,
        you=you,
        opponent=protocol.Opponent(
            username=other.username,
            is_bot=other.is_bot,
            is_bot_account=other.bot_since is not None,
            rating=round(rating),
            provisional=provisional,
        ),
        rated=game.rated,
        time_control=games.TimeControl(**game.time_control.describe()),
        status=game.status,
        result=None if result is None else msgspec.convert(result, games.Result),
    )


def active_games(user_id: int) -> list[protocol.ApiGame]:
    """The account's games in progress, oldest first."""
    rows = (
        Game.objects.filter(Q(player1_id=user_id) | Q(player2_id=user_id))
        .filter(status=Game.Status.ACTIVE)
        .select_related("player1", "player2")
        .order_by("pk")
    )
    made = (api_game(game, user_id) for game in rows)
    return [game for game in made if game is not None]


def game_for(game_id: int, user_id: int) -> protocol.ApiGame | None:
    game = Game.objects.select_related("player1", "player2").filter(pk=game_id).first()
    return None if game is None else api_game(game, user_id)
