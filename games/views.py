"""HTTP for clients without a socket (bots, scripts) and for reading games."""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.tokens import ANY_SCOPE, accepts_tokens
from games import reasons, search, selectors, services
from games.models import Game, PlayedGame
from games.protocol import MoveBody, VacationBody
from games.rules import available_games
from realtime.db import db_call
from realtime.errors import ServiceError, http_status
from realtime.protocol import decode, decoder

MOVE_BODY = decoder(MoveBody)
VACATION_BODY = decoder(VacationBody)


def error_response(code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=http_status(code))


def _game_or_404(game_id: int) -> Game:
    game = selectors.load_game(game_id)
    if game is None:
        raise Http404(f"There is no game {game_id}.")
    return game


@require_GET
@accepts_tokens(*ANY_SCOPE)
def game_detail(request: HttpRequest, game_id: int) -> JsonResponse:
    loaded = selectors.load_snapshot(game_id)
    if loaded is None:
        return error_response("no_such_game", _("There is no game %(game)s.") % {"game": game_id})
    game, state = loaded
    # The result's reason in the reader's language, as the game's socket says it.
    return JsonResponse({"v": game.version, "game": reasons.localize_state(state)})


@require_GET
@accepts_tokens(*ANY_SCOPE)
def game_list(request: HttpRequest) -> JsonResponse:
    """Games in progress (the latest 100), or a search of the finished ones (games/search.py:
    every filter, a page at a time)."""
    status = request.GET.get("status", Game.Status.ACTIVE)
    if status not in Game.Status.values:
        return error_response(
            "bad_message",
            _("status must be one of %(values)s.") % {"values": ", ".join(Game.Status.values)},
        )
    if status == Game.Status.FINISHED:
        try:
            page = _search(request)
        except search.BadSearch as error:
            return error_response("bad_message", str(error))
        loaded = selectors.games_by_id([f.game_id for f in page.games])
        return JsonResponse(
            {
                "games": [selectors.finished_game_info(loaded[f.game_id]) for f in page.games],
                "next": page.next,
            }
        )
    games = [
        {
            "id": game.pk,
            "slug": game.slug,
            "options": game.options,
            "players": {
                "1": selectors.player_info(game.player1),
                "2": selectors.player_info(game.player2),
            },
            "status": game.status,
            "ply": game.ply,
            "updated_at": game.updated_at.isoformat(),
        }
        for game in selectors.games_with_status(status)
    ]
    return JsonResponse({"games": games})


def _search(request: HttpRequest) -> search.Page:
    limit = request.GET.get("limit", "50")
    if not limit.isdigit():
        raise search.BadSearch(_("limit must be a whole number"))
    query = search.query_from(request.GET)
    return search.search(query, request.GET.get("cursor") or None, int(limit))


@require_GET
@accepts_tokens(*ANY_SCOPE)
def game_export(request: HttpRequest) -> HttpResponse:
    """Every game a search finds, as one file of game records (the .json form, one per line,
    or the .txt form, one after another), streamed a page at a time: the whole result is
    never in memory."""
    kind = request.GET.get("format", "json")
    if kind not in ("json", "txt"):
        return error_response("bad_message", _("format must be json or txt."))
    try:
        query = search.query_from(request.GET)
        query.check()
        if request.GET.get("cursor"):
            search.decode_cursor(request.GET["cursor"])
    except search.BadSearch as error:
        return error_response("bad_message", str(error))
    records = _export(query, request.GET.get("cursor") or None, kind)
    content_type = "application/x-ndjson" if kind == "json" else "text/plain; charset=utf-8"
    response = StreamingHttpResponse(records, content_type=content_type)
    extension = "ndjson" if kind == "json" else "txt"
    response["Content-Disposition"] = f'attachment; filename="games.{extension}"'
    return response


async def _export(query: search.Query, cursor: str | None, kind: str) -> AsyncIterator[str]:
    """The export's pages, each read in a database thread as the client takes the last:
    an asynchronous iterator, which Django streams as it comes (a synchronous one it would
    read whole first, under ASGI)."""
    while True:
        text, cursor = await db_call(selectors.export_page)(query, cursor, kind)
        if text:
            yield text
        if cursor is None:
            return


@require_POST
@accepts_tokens("play")
def game_move(request: HttpRequest, game_id: int) -> JsonResponse:
    if not request.user.is_authenticated:
        return error_response("not_logged_in", _("Log in (or play as a guest) to move."))
    try:
        body = decode(request.body or b"{}", MOVE_BODY)
        applied = services.play_move(
            game_id=game_id, user=request.user, move=body.move, ply=body.ply
        )
    except ServiceError as error:
        return error_response(error.code, error.message)
    return JsonResponse({"ok": True, "duplicate": applied.duplicate, "event": applied.event})


@require_GET
def game_text(request: HttpRequest, game_id: int) -> HttpResponse:
    game = _game_or_404(game_id)
    return HttpResponse(selectors.game_text(game), content_type="text/plain; charset=utf-8")


@require_GET
def game_json(request: HttpRequest, game_id: int) -> JsonResponse:
    """The whole game as JSON, to download: who, what, how it ended, every move."""
    game = _game_or_404(game_id)
    response = JsonResponse(selectors.game_record(game), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="{game.slug}-{game.pk}.json"'
    return response


@require_GET
@accepts_tokens(*ANY_SCOPE)
def game_positions(request: HttpRequest, game_id: int) -> JsonResponse:
    """Every position of the game, from the start: positions[n] follows move n."""
    game = selectors.load_game(game_id)
    if game is None:
        return error_response("no_such_game", _("There is no game %(game)s.") % {"game": game_id})
    return JsonResponse({"positions": selectors.positions(game)})


@require_GET
def game_page(request: HttpRequest, game_id: int) -> HttpResponse:
    game = _game_or_404(game_id)
    # A link to one moment (`?ply=N`, static/js/game.js) previews that moment's picture.
    asked = request.GET.get("ply", "")
    ply = int(asked) if asked.isdigit() and int(asked) <= game.ply else None
    picture = reverse("game-png", args=[game.pk]) + ("" if ply is None else f"?ply={ply}")
    context = {
        "game": game,
        "title": selectors.title(game),
        # The game's own name, for what a screen reader calls its board.
        "name": selectors.title_for(game.slug, {}),
        # Link previews (Open Graph, Twitter cards): the board as a picture, whole URLs.
        "preview": {
            "title": selectors.title(game),
            "url": request.build_absolute_uri(),
            "image": request.build_absolute_uri(picture),
            "description": selectors.preview_text(game, ply),
        },
    }
    return render(request, "games/game.html", context)


# Who may frame the embed: anyone (a blog, a forum). Only this page says so; every other
# page keeps `frame-ancestors 'none'` and X-Frame-Options DENY.
EMBED_POLICY = settings.CONTENT_SECURITY_POLICY.replace(
    "frame-ancestors 'none'", "frame-ancestors *"
)


@require_GET
@xframe_options_exempt
def embed_page(request: HttpRequest, game_id: int) -> HttpResponse:
    """A game in an iframe on another site: the board, the players, the clocks and the
    result, live through the spectator socket; nothing to sign in to, no cookie set."""
    game = _game_or_404(game_id)
    response = render(
        request,
        "games/embed.html",
        {"game": game, "title": selectors.title(game), "name": selectors.title_for(game.slug, {})},
    )
    response["Content-Security-Policy"] = EMBED_POLICY
    return response


# --- vacations -------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def vacation(request: HttpRequest) -> JsonResponse:
    """GET: your vacation and the days left. POST {"days": n}: go on vacation."""
    if not request.user.is_authenticated:
        return error_response("not_logged_in", _("Log in first."))
    if request.method == "POST":
        try:
            body = decode(request.body or b"{}", VACATION_BODY)
            services.start_vacation(user=request.user, days=body.days)
        except ServiceError as error:
            return error_response(error.code, error.message)
    return JsonResponse(selectors.vacation_info(request.user))


@require_POST
def vacation_end(request: HttpRequest) -> JsonResponse:
    if not request.user.is_authenticated:
        return error_response("not_logged_in", _("Log in first."))
    try:
        services.end_vacation(user=request.user)
    except ServiceError as error:
        return error_response(error.code, error.message)
    return JsonResponse(selectors.vacation_info(request.user))


@require_POST
@login_required
def vacation_form(request: HttpRequest) -> HttpResponse:
    """The profile page's vacation form: start one for some days, or come back."""
    try:
        if request.POST.get("action") == "end":
            services.end_vacation(user=request.user)
            messages.success(request, _("Welcome back: your correspondence clocks run again."))
        else:
            days = request.POST.get("days", "")
            services.start_vacation(user=request.user, days=int(days) if days.isdigit() else days)
            messages.success(
                request,
                ngettext(
                    "Enjoy your vacation: your correspondence clocks stand still for %(days)s day.",
                    "Enjoy your vacation: your correspondence clocks stand still for %(days)s "
                    "days.",
                    int(days),
                )
                % {"days": days},
            )
    except ServiceError as error:
        messages.error(request, error.message)
    return redirect("profile", username=request.user.username)


@require_GET
def finished_games_page(request: HttpRequest) -> HttpResponse:
    """/games/: the game database's search as a form and a table, a page at a time, with
    links to replay each game and to export the search."""
    error, page, rows = "", None, []
    try:
        page = _search(request)
    except search.BadSearch as problem:
        error = str(problem)
    if page is not None:
        games = selectors.games_by_id([found.game_id for found in page.games])
        rows = [selectors.finished_game_info(games[found.game_id]) for found in page.games]
    given = {name: request.GET.get(name, "") for name in search.PARAMETERS}
    kept = urlencode({name: value for name, value in given.items() if value.strip()})
    return render(
        request,
        "games/search.html",
        {
            "given": given,
            "error": error,
            "rows": rows,
            "next": page.next if page else None,
            "kept": kept,
            "games": [
                (game["slug"], selectors.title_for(game["slug"], {})) for game in available_games()
            ],
            "speeds": search.SPEEDS,
            "results": PlayedGame.Result.values,
            "terminations": [t for t in Game.Termination.values if t != Game.Termination.ABORT],
        },
    )
