"""Standings (pbmserv's `standings`) as a page and as JSON, and a game's rating change."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from accounts.tokens import ANY_SCOPE, accepts_tokens
from games.models import Game
from ratings import selectors
from ratings.models import Speed


def _error(code: str, message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


# `bots=1` (or true, yes) asks for the bot accounts' list; nothing, 0, false or no for people's.
YES = ("1", "true", "yes")
NO = ("", "0", "false", "no")


def _bots(request: HttpRequest) -> bool | None:
    """Which list `?bots=` asks for; None for a value that is neither."""
    value = request.GET.get("bots", "").strip().lower()
    return True if value in YES else False if value in NO else None


@require_GET
def standings_page(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    names = selectors.game_names()
    slug = slug or next(iter(names))
    if slug not in names:
        raise Http404(f"There is no game {slug!r}.")
    bots = bool(_bots(request))
    tables = [
        {"speed": speed, "label": label, "rows": selectors.standings(slug, speed, bots=bots)}
        for speed, label in selectors.SPEEDS
    ]
    return render(
        request,
        "ratings/standings.html",
        {"slug": slug, "name": names[slug], "games": names, "tables": tables, "bots": bots},
    )


@require_GET
@accepts_tokens(*ANY_SCOPE)
def standings_api(request: HttpRequest) -> JsonResponse:
    names = selectors.game_names()
    slug = request.GET.get("game", "")
    speed = request.GET.get("speed", Speed.REALTIME)
    if slug not in names:
        return _error(
            "bad_message", _("game is one of %(values)s.") % {"values": ", ".join(names)}, 400
        )
    if speed not in Speed.values:
        return _error(
            "bad_message",
            _("speed is one of %(values)s.") % {"values": ", ".join(Speed.values)},
            400,
        )
    bots = _bots(request)
    if bots is None:
        return _error("bad_message", _("bots is true or false (1 or 0)."), 400)
    return JsonResponse(
        {
            "game": slug,
            "speed": speed,
            "bots": bots,
            "standings": selectors.standings(slug, speed, bots=bots),
        }
    )


@require_GET
@accepts_tokens(*ANY_SCOPE)
def game_ratings(request: HttpRequest, game_id: int) -> JsonResponse:
    game = Game.objects.filter(pk=game_id).first()
    if game is None:
        return _error("no_such_game", _("There is no game %(game)s.") % {"game": game_id}, 404)
    changes = selectors.game_changes(game) if game.rated else None
    return JsonResponse({"rated": game.rated, "changes": changes})
