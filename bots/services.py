"""Games against the computer: its accounts, starting a game with it, and its moves.

The computer plays through the games services like a person (games.services.play_move with
the bot's user): the ply it expects, the locked game row, the versioned event. Nothing here
writes a game directly.
"""

from __future__ import annotations

import random
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from accounts.models import User
from bots.models import Bot
from bots.search import LEVELS
from games import services as games
from games.engine import normalized_options
from games.messages import translated
from games.models import Game
from games.rules import InvalidOptions
from realtime.errors import ServiceError

BOT_NAME = "Computer-{level}"  # "computer" names are reserved (accounts/usernames.py)
SIDES = ("first", "second", "random")
# Games a player may have going against the computer at once (each costs the worker).
MAX_COMPUTER_GAMES = 10


def check_level(level: Any) -> int:
    if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= len(LEVELS):
        raise ServiceError(
            "bad_level",
            _("The computer plays at levels 1 to %(top)s, not %(level)s.")
            % {"top": len(LEVELS), "level": repr(level)[:20]},
        )
    return level


def bot_user(level: int) -> User:
    """The computer's account at `level`, created the first time it is needed."""
    check_level(level)
    bot = Bot.objects.select_related("user").filter(level=level).first()
    if bot is not None:
        return bot.user
    name = BOT_NAME.format(level=level)
    try:
        with transaction.atomic():
            user = User.objects.filter(username=name, is_bot=True).first()
            if user is None:
                user = User(username=name, is_bot=True)
                user.set_unusable_password()
                user.save()
            Bot.objects.create(user=user, level=level)
    except IntegrityError:  # another process created it at the same moment
        pass
    return Bot.objects.select_related("user").get(level=level).user


def computer_games(user: Any) -> int:
    """How many active games `user` has against the computer."""
    return (
        Game.objects.filter(status=Game.Status.ACTIVE)
        .filter(Q(player1=user, player2__is_bot=True) | Q(player2=user, player1__is_bot=True))
        .count()
    )


def play_computer(
    *,
    user: Any,
    slug: str,
    options: dict[str, Any],
    level: Any,
    side: Any = "random",
    time_control: Any = "",
) -> Game:
    """A new casual game between `user` and the computer at `level`; `side` is the user's
    ("first" moves first). Refused for visitors and past MAX_COMPUTER_GAMES."""
    if user is None or not user.is_authenticated:
        raise ServiceError("not_logged_in", _("Log in or play as a guest first."))
    if getattr(user, "is_bot", False):
        raise ServiceError("bad_message", _("The computer does not play itself here."))
    check_level(level)
    if side not in SIDES:
        raise ServiceError("bad_side", _('The side is "first", "second" or "random".'))
    if not isinstance(options, dict):
        raise ServiceError("invalid_options", _("Options are an object of numbers."))
    if computer_games(user) >= MAX_COMPUTER_GAMES:
        raise ServiceError(
            "too_many_computer_games",
            _("You have %(count)s games against the computer going: finish one first.")
            % {"count": MAX_COMPUTER_GAMES},
        )
    try:
        options = normalized_options(slug, options)
    except InvalidOptions as error:
        raise ServiceError("invalid_options", translated(error)) from None
    bot = bot_user(level)
    first = side == "first" or (side == "random" and random.random() < 0.5)
    player1, player2 = (user, bot) if first else (bot, user)
    return games.create_game(
        slug=slug,
        options=options,
        player1=player1,
        player2=player2,
        time_control=time_control,
        rated=False,
    )
