"""Pictures of a game's positions, drawn (games/pictures.py) and cached: the pages' pictures
(games/picture_views.py) and the mails' attachments (the "your move" mail, the mail door's
replies) share them.

Cached (Django's cache: Redis in production) under the game, the ply, the game's version and
the width: a move or a takeback changes the version, so a cached picture is never stale.
docs/PICTURES.md.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.http import Http404
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from games import pictures, selectors
from games.engine import rules_for
from games.models import Game

PNG_WIDTH = 600
# How long the cache keeps a picture: a finished game's for a day, an active game's until
# its next moves have made it unlikely to be asked for again.
FINISHED_TIMEOUT = 86_400
ACTIVE_TIMEOUT = 600


def picture_key(
    game_id: int, kind: str, ply: int, version: int, width: int, language: str = "en"
) -> str:
    """The cache key of a picture: `kind` is "png" or "gif"; `language`, what it says."""
    return f"picture:{kind}:{game_id}:{ply}:{version}:{width}:{language}"


def language() -> str:
    """The active language, as a picture's key names it."""
    return translation.get_language() or settings.LANGUAGE_CODE


def words() -> pictures.Words:
    """What a picture says, in the active language (the page's reader, the mail's)."""
    return pictures.Words(
        sides=(pgettext("side of the board", "South"), pgettext("side of the board", "North")),
        colours=(pgettext("player's colour", "White"), pgettext("player's colour", "Black")),
        side_to_move=_("%(side)s (to move)"),
        store=pgettext("where a side's seeds are kept", "store"),
        captured=_("captured: %(south)s %(south_count)s · %(north)s %(north_count)s"),
        game_over=_("Game over"),
        colour_to_move=_("%(colour)s to move"),
        moves_left=lambda count: (
            ngettext("(%(count)s move left this turn)", "(%(count)s moves left this turn)", count)
            % {"count": count}
        ),
        last=_("last: %(move)s"),
    )


def load(game_id: int) -> Game:
    game = selectors.load_game(game_id)
    if game is None:
        raise Http404(f"There is no game {game_id}.")
    return game


def moves_as_of(game_id: int) -> tuple[Game, list[str]]:
    """The game row and its moves read as of one moment (as selectors.load_snapshot reads
    them): a move or takeback committed between the two reads would otherwise be drawn under
    the older version's key."""
    own_transaction = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql" and own_transaction:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        game = load(game_id)
        return game, [move for _player, move in selectors.played(game)]


def cached(game: Game, key: str, render: Callable[[], tuple[bytes, Game]]) -> bytes:
    """The picture under `key` (of `game` as last read), or drawn by `render` and stored
    unless a move came in between."""
    body = cache.get(key)
    if body is None:
        body, read = render()
        if read.version == game.version:
            finished = read.status != Game.Status.ACTIVE
            cache.set(key, body, FINISHED_TIMEOUT if finished else ACTIVE_TIMEOUT)
    return bytes(body)


def render_png(game_id: int, ply: int, width: int) -> tuple[bytes, Game]:
    """The position after `ply` moves, drawn, and the game row it was drawn from."""
    read, moves = moves_as_of(game_id)
    rules = rules_for(read.slug, read.options)
    state = pictures.replay(rules, moves, ply)
    last = moves[ply - 1] if 0 < ply <= len(moves) else None
    drawn = pictures.position_png(rules, state, last_move=last, width=width, words=words())
    return drawn, read


def picture_name(game_id: int, ply: int) -> str:
    """A mailed picture's file name: the game and the moves it shows."""
    return f"game-{game_id}-move-{ply}.png"


def png_of(game_id: int, ply: int | None = None, width: int = PNG_WIDTH) -> bytes | None:
    """A position's picture for a mail (games/services/correspondence.py, the mail door):
    from the cache the pages use, or drawn and stored there; None when there is no such
    game. `ply` past the moves played is the position now."""
    game = selectors.load_game(game_id)
    if game is None:
        return None
    shown = game.ply if ply is None else max(0, min(ply, game.ply))
    key = picture_key(game.pk, "png", shown, game.version, width, language())
    return cached(game, key, lambda: render_png(game_id, shown, width))
