"""Pictures of a game's positions: /games/<id>.png (any ply) and /games/<id>.gif (the game).

Public, like the game page. Drawn by games/pictures.py from the engine's board description
and cached by games/picture_cache.py (which the mails' attachments share). docs/PICTURES.md.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from games import picture_cache, pictures
from games.engine import rules_for
from games.models import Game
from games.picture_cache import PNG_WIDTH, picture_key

# A finished game's pictures never change: browsers and proxies keep them a day. An active
# game's current position changes with the next move.
FINISHED_MAX_AGE = 86_400
ACTIVE_MAX_AGE = 10
# The widths offered: a few, so that the cache holds a few pictures of a position, not one per
# pixel a client can name. The GIF's widths stop lower: it is a picture per position.
PNG_WIDTHS = (240, 360, 480, 600, 800, 1200)
GIF_WIDTHS = (240, 360, 480, 600)
GIF_WIDTH = 480
# A longer game's GIF is refused: its frames would hold a worker for seconds.
MAX_GIF_PLIES = 1000


class BadPicture(Exception):
    """A parameter out of range: answered 400 with the message."""


def _width(request: HttpRequest, allowed: tuple[int, ...], default: int) -> int:
    text = request.GET.get("width")
    if text is None:
        return default
    if not text.isdigit() or int(text) not in allowed:
        raise BadPicture(
            _("width must be one of %(widths)s.") % {"widths": ", ".join(map(str, allowed))}
        )
    return int(text)


def _ply(request: HttpRequest, game: Game) -> int:
    text = request.GET.get("ply")
    if text is None:
        return int(game.ply)
    if not text.isdigit() or int(text) > game.ply:
        raise BadPicture(
            _("ply must be a whole number from 0 to %(last)s (the moves played so far).")
            % {"last": game.ply}
        )
    return int(text)


def _bad(error: BadPicture) -> HttpResponse:
    # Plain text, as the other downloads of a game under /games/ (game_text) answer.
    return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")


def _answer(
    game: Game, key: str, content_type: str, render: Callable[[], tuple[bytes, Game]]
) -> HttpResponse:
    """The cached picture under `key`, or a fresh one, stored; with its caching headers."""
    body = picture_cache.cached(game, key, render)
    response = HttpResponse(body, content_type=content_type)
    # What a picture says is in its reader's language (the switcher's cookie, the browser's).
    patch_vary_headers(response, ("Accept-Language", "Cookie"))
    finished = game.status != Game.Status.ACTIVE
    patch_cache_control(
        response, public=True, max_age=FINISHED_MAX_AGE if finished else ACTIVE_MAX_AGE
    )
    return response


@require_GET
def game_png(request: HttpRequest, game_id: int) -> HttpResponse:
    """The position after `ply` moves (default: the current one), `width` pixels wide."""
    game = picture_cache.load(game_id)
    try:
        ply = _ply(request, game)
        width = _width(request, PNG_WIDTHS, PNG_WIDTH)
    except BadPicture as error:
        return _bad(error)

    def render() -> tuple[bytes, Game]:
        return picture_cache.render_png(game_id, ply, width)

    key = picture_key(game.pk, "png", ply, game.version, width, picture_cache.language())
    return _answer(game, key, "image/png", render)


@require_GET
def game_gif(request: HttpRequest, game_id: int) -> HttpResponse:
    """The game so far as an animated GIF: a frame per position, from the start."""
    game = picture_cache.load(game_id)
    try:
        width = _width(request, GIF_WIDTHS, GIF_WIDTH)
        if game.ply > MAX_GIF_PLIES:
            raise BadPicture(
                _("A game of more than %(plies)s moves is too long for one picture.")
                % {"plies": MAX_GIF_PLIES}
            )
    except BadPicture as error:
        return _bad(error)

    def render() -> tuple[bytes, Game]:
        read, moves = picture_cache.moves_as_of(game_id)
        rules = rules_for(read.slug, read.options)
        return pictures.game_gif(rules, moves, width=width, words=picture_cache.words()), read

    key = picture_key(game.pk, "gif", game.ply, game.version, width, picture_cache.language())
    return _answer(game, key, "image/gif", render)
