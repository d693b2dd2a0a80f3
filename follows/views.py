"""Following over HTTP: JSON for clients (/api/follows) and the pages' Follow buttons."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from follows import services
from realtime.errors import ServiceError, http_status


def _refuse(error: ServiceError) -> JsonResponse:
    return JsonResponse(
        {"error": {"code": error.code, "message": error.message}}, status=http_status(error.code)
    )


def _body(request: HttpRequest) -> dict[str, Any]:
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        raise ServiceError("bad_json", _("The body is not JSON.")) from None
    if not isinstance(body, dict):
        raise ServiceError("bad_message", _('Send {"game": id} or {"user": name}.'))
    return body


@require_http_methods(["GET", "POST"])
def follows(request: HttpRequest) -> JsonResponse:
    """GET: what you follow. POST {"game": id} or {"user": name}: follow it."""
    try:
        if request.method == "POST":
            body = _body(request)
            if "game" in body:
                services.follow_game(user=request.user, game_id=body["game"])
            else:
                services.follow_player(user=request.user, username=body.get("user"))
        elif not request.user.is_authenticated:
            raise ServiceError("not_logged_in", _("Log in first."))
    except ServiceError as error:
        return _refuse(error)
    return JsonResponse(services.following(request.user))


@require_POST
def unfollow(request: HttpRequest) -> JsonResponse:
    try:
        body = _body(request)
        services.unfollow(user=request.user, game_id=body.get("game"), username=body.get("user"))
    except ServiceError as error:
        return _refuse(error)
    return JsonResponse(services.following(request.user))


@require_POST
@login_required
def follow_form(request: HttpRequest) -> HttpResponse:
    """The Follow / Unfollow buttons of the profile and game pages."""
    game = request.POST.get("game", "")
    name = request.POST.get("user", "")
    stop = request.POST.get("action") == "unfollow"
    try:
        if stop:
            services.unfollow(
                user=request.user,
                game_id=int(game) if game.isdigit() else None,
                username=name or None,
            )
            messages.success(request, _("You no longer follow it."))
        elif game:
            followed = services.follow_game(
                user=request.user, game_id=int(game) if game.isdigit() else game
            )
            messages.success(
                request,
                _("You follow game #%(number)s: you will hear when it ends.")
                % {"number": followed.pk},
            )
        else:
            player = services.follow_player(user=request.user, username=name)
            messages.success(
                request,
                _("You follow %(name)s: you will hear when they start a game.")
                % {"name": player.username},
            )
    except ServiceError as error:
        messages.error(request, error.message)
    back = request.POST.get("next", "/")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = "/"
    return redirect(back)
