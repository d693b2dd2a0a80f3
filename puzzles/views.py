"""The puzzles' doors: the JSON API (docs/API.md, "Puzzles") and the pages. Each decodes,
calls one service or selector and answers."""

from __future__ import annotations

import random
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.tokens import ANY_SCOPE, accepts_tokens
from games.rules import available_games
from games.selectors import title_for
from puzzles import selectors, services
from puzzles.models import Puzzle
from puzzles.protocol import AnswerBody
from realtime.api_errors import refuse
from realtime.errors import ServiceError
from realtime.protocol import decode, decoder

ANSWER_BODY = decoder(AnswerBody)
SLUGS = {game["slug"] for game in available_games()}


def _with_player(puzzle: Puzzle, user: Any) -> dict[str, Any]:
    return {
        "puzzle": selectors.puzzle_json(puzzle),
        "you": selectors.player_rating(user, puzzle.slug),
    }


@require_GET
@accepts_tokens(*ANY_SCOPE)
def api_next(request: HttpRequest) -> JsonResponse:
    """A puzzle to solve next: of `game` (and `theme`), near your puzzle rating, one you have
    not answered yet."""
    try:
        slug, theme = request.GET.get("game", ""), request.GET.get("theme") or None
        unknown = sorted(set(request.GET) - {"game", "theme"})
        if unknown:
            raise ServiceError(
                "bad_message", _("unknown parameter %(name)s") % {"name": unknown[0]}
            )
        if slug not in SLUGS:
            raise ServiceError(
                "bad_message",
                _("game must be one of %(games)s") % {"games": ", ".join(sorted(SLUGS))},
            )
        if theme is not None and theme not in selectors.THEMES:
            raise ServiceError(
                "bad_message",
                _("theme must be one of %(themes)s") % {"themes": ", ".join(selectors.THEMES)},
            )
        puzzle = selectors.next_for(request.user, slug, theme, random.Random())
        if puzzle is None:
            raise ServiceError(
                "no_puzzle_left", _("You have answered every puzzle of this kind. Well done!")
            )
        return JsonResponse(_with_player(puzzle, request.user))
    except ServiceError as error:
        return refuse(error)


@require_GET
@accepts_tokens(*ANY_SCOPE)
def api_puzzle(request: HttpRequest, puzzle_id: int) -> JsonResponse:
    """One puzzle, to solve (its answer is given once you answer)."""
    try:
        return JsonResponse(_with_player(selectors.load(puzzle_id), request.user))
    except ServiceError as error:
        return refuse(error)


@require_GET
@accepts_tokens(*ANY_SCOPE)
def api_daily(request: HttpRequest) -> JsonResponse:
    """The puzzle of the day (UTC), the same for everyone: null while there are none."""
    puzzle = selectors.daily(timezone.now().date())
    return JsonResponse({"puzzle": None if puzzle is None else selectors.puzzle_json(puzzle)})


@require_POST
def api_answer(request: HttpRequest, puzzle_id: int) -> JsonResponse:
    """Your answer: whether it is the solution, the solution and its line, and (your first
    answer, signed in) your puzzle rating and the puzzle's after it."""
    try:
        body = decode(request.body or b"{}", ANSWER_BODY)
        done = services.answer(user=request.user, puzzle_id=puzzle_id, move=body.move)
    except ServiceError as error:
        return refuse(error)
    puzzle = done.puzzle
    return JsonResponse(
        {
            "correct": done.correct,
            "move": done.move,
            "solution": puzzle.solution,
            "line": puzzle.line,
            "verified": puzzle.verified,
            "rated": done.rated,
            "change": round(done.change, 1),
            "you": selectors.player_rating(request.user, puzzle.slug),
            "puzzle_rating": round(puzzle.rating),
        }
    )


@require_GET
def puzzles_index(request: HttpRequest) -> HttpResponse:
    games = selectors.games_with_puzzles()
    for game in games:
        game["you"] = selectors.player_rating(request.user, game["slug"])
    daily = selectors.daily(timezone.now().date())
    return render(
        request,
        "puzzles/index.html",
        {
            "games": games,
            "themes": selectors.THEMES,
            "daily": daily,
            "daily_title": title_for(daily.slug, daily.options) if daily else "",
        },
    )


@require_GET
def puzzles_of_game(request: HttpRequest, slug: str) -> HttpResponse:
    theme = request.GET.get("theme") or ""
    if slug not in SLUGS or (theme and theme not in selectors.THEMES):
        return render(request, "404.html", status=404)
    return render(
        request,
        "puzzles/puzzle.html",
        {
            "slug": slug,
            "puzzle_id": "",
            "theme": theme,
            "theme_name": selectors.THEMES.get(theme, ""),
            "title": _("Puzzles: %(game)s") % {"game": title_for(slug, {})},
        },
    )


@require_GET
def puzzle_page(request: HttpRequest, puzzle_id: int) -> HttpResponse:
    puzzle = Puzzle.objects.filter(pk=puzzle_id).first()
    if puzzle is None:
        return render(request, "404.html", status=404)
    return render(
        request,
        "puzzles/puzzle.html",
        {
            "slug": puzzle.slug,
            "puzzle_id": puzzle.pk,
            "theme": "",
            "theme_name": "",
            "title": _("Puzzle %(number)s: %(game)s")
            % {"number": puzzle.pk, "game": title_for(puzzle.slug, puzzle.options)},
        },
    )
