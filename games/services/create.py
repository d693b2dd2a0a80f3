"""Creating games: one (a challenge, a rematch) or a burst of them (matchmaking)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from games import clocks, lifecycle
from games.clocks import now_ms
from games.engine import rules_for
from games.messages import translated
from games.models import Game
from games.rules import InvalidOptions
from games.services.clock import set_deadline
from realtime.errors import ServiceError


def check_time_control(text: Any) -> clocks.TimeControl:
    """The time control `text` names; ServiceError("invalid_time_control") if none."""
    try:
        return clocks.parse(text)
    except clocks.BadTimeControl as error:
        raise ServiceError("invalid_time_control", translated(error)) from None


def new_game(
    *,
    slug: str,
    options: dict[str, Any],
    player1: User,
    player2: User,
    time_control: str | clocks.TimeControl = "",
    rated: bool = False,
) -> Game:
    """An unsaved active game; the engine validates the slug and options, clocks.parse the
    time control. A timed game's clock starts now, with player 1 to move. Only a game
    between two registered players can be rated."""
    if player1.pk == player2.pk:
        raise ServiceError("same_player", _("A game needs two different players."))
    if rated and (player1.is_guest or player2.is_guest):
        raise ServiceError(
            "guests_play_casual", _("Guests play casual games only: log in to play rated.")
        )
    if rated and (player1.is_bot or player2.is_bot):
        raise ServiceError("bots_play_casual", _("Games against the computer are never rated."))
    try:
        rules = rules_for(slug, options)
    except InvalidOptions as error:
        raise ServiceError("invalid_options", translated(error)) from None
    control = (
        time_control
        if isinstance(time_control, clocks.TimeControl)
        else check_time_control(time_control)
    )
    game = Game(
        slug=slug,
        options=options,
        player1=player1,
        player2=player2,
        state=rules.to_json(rules.initial_state()),
        time_control=control,
        clock=clocks.start(control, now_ms()),
        rated=rated,
        moved_at=timezone.now(),
        against_computer=player1.is_bot or player2.is_bot,
    )
    set_deadline(game)
    return game


def create_game(
    *,
    slug: str,
    options: dict[str, Any],
    player1: User,
    player2: User,
    time_control: str | clocks.TimeControl = "",
    rated: bool = False,
) -> Game:
    """A new active game; the engine validates the slug and options."""
    game = new_game(
        slug=slug,
        options=options,
        player1=player1,
        player2=player2,
        time_control=time_control,
        rated=rated,
    )
    game.save()
    lifecycle.started([game])
    return game


def create_games(games: list[Game]) -> list[Game]:
    """Save many new games in one statement (matchmaking pairs a burst of seeks at once)."""
    created = Game.objects.bulk_create(games)
    lifecycle.started(created)
    return created
