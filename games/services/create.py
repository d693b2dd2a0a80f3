"""Creating games: one (a challenge, a rematch) or a burst of them (matchmaking)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
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
    """A new active game; the engine validates the slug and options. A bot account at
    BOT_MAX_GAMES games going is refused (`too_many_games`)."""
    game = new_game(
        slug=slug,
        options=options,
        player1=player1,
        player2=player2,
        time_control=time_control,
        rated=rated,
    )
    if player1.is_bot_account or player2.is_bot_account:
        with transaction.atomic():
            check_bot_room([player1, player2], lock=True)
            game.save()
    else:
        game.save()
    lifecycle.started([game])
    return game


# --- how many games a bot account has going -------------------------------------------------


def bot_max_games() -> int:
    return int(getattr(settings, "BOT_MAX_GAMES", 20))


def games_going(user_ids: Iterable[int]) -> dict[int, int]:
    """Active games by player, for these users (those with none are missing)."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    rows = Game.objects.filter(status=Game.Status.ACTIVE).filter(
        Q(player1_id__in=ids) | Q(player2_id__in=ids)
    )
    counts: dict[int, int] = {}
    for first, second in rows.values_list("player1_id", "player2_id"):
        for user_id in (first, second):
            if user_id in ids:
                counts[user_id] = counts.get(user_id, 0) + 1
    return counts


def bots_without_room(user_ids: Iterable[int], *, lock: bool = False) -> set[int]:
    """Which of these users are bot accounts with BOT_MAX_GAMES games going. With `lock`
    (inside a transaction), their rows are locked first, in id order, so that two games
    created at once for one bot count each other."""
    bots = User.objects.filter(pk__in=sorted(set(user_ids)), bot_since__isnull=False)
    if lock:
        bots = bots.select_for_update().order_by("pk")
    ids = list(bots.values_list("pk", flat=True))
    most = bot_max_games()
    return {user_id for user_id, count in games_going(ids).items() if count >= most}


def check_bot_room(players: Iterable[User], *, lock: bool = False) -> None:
    """Refuse (`too_many_games`) when a bot account among `players` has BOT_MAX_GAMES games
    going already; the player asking is named first."""
    players = [p for p in players if p.is_bot_account]
    if not players:
        return
    full = bots_without_room([p.pk for p in players], lock=lock)
    for player in players:
        if player.pk in full:
            raise ServiceError(
                "too_many_games",
                _("%(user)s has %(count)s games going, the most a bot account may play at once.")
                % {"user": player.username, "count": bot_max_games()},
            )


def create_games(games: list[Game]) -> list[Game]:
    """Save many new games in one statement (matchmaking pairs a burst of seeks at once)."""
    created = Game.objects.bulk_create(games)
    lifecycle.started(created)
    return created
