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


@require_GET
def standings_page(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    names = selectors.game_names()
    slug = slug or next(iter(names))
    if slug not in names:
        raise Http404(f"There is no game {slug!r}.")
    tables = [
        {"speed": speed, "label": label, "rows": selectors.standings(slug, speed)}
        for speed, label in selectors.SPEEDS
    ]
    return render(
        request,
        "ratings/standings.html",
        {"slug": slug, "name": names[slug], "games": names, "tables": tables},
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
    return JsonResponse(
        {"game": slug, "speed": speed, "standings": selectors.standings(slug, speed)}
    )


@require_GET
@accepts_tokens(*ANY_SCOPE)
def game_ratings(request: HttpRequest, game_id: int) -> JsonResponse:
    game = Game.objects.filter(pk=game_id).first()
    if game is None:
        return _error("no_such_game", _("There is no game %(game)s.") % {"game": game_id}, 404)
    changes = selectors.game_changes(game) if game.rated else None
    return JsonResponse({"rated": game.rated, "changes": changes})
