"""Open challenges as shareable links: /challenge/<token>/ shows it; POST accepts it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from games.selectors import title_for
from lobby.models import Challenge
from lobby.services import challenges
from realtime.errors import ServiceError


@require_http_methods(["GET", "POST"])
def challenge_link(request: HttpRequest, token: str) -> HttpResponse:
    challenge = (
        Challenge.objects.select_related("challenger", "challenged").filter(token=token).first()
    )
    if challenge is None:
        return render(
            request,
            "lobby/challenge_link.html",
            {"error": _("There is no such challenge: check the link.")},
            status=404,
        )
    error = None
    if request.method == "POST":
        if not request.user.is_authenticated:
            error = _("Play as a guest or log in first, then accept.")
        else:
            try:
                game = challenges.accept_challenge(user=request.user, token=token)
            except ServiceError as refusal:
                error = refusal.message
            else:
                return redirect("game", game_id=game.pk)
    status = 200 if error is None or request.method == "GET" else 409
    return render(
        request,
        "lobby/challenge_link.html",
        {
            "challenge": challenge,
            "game_name": title_for(challenge.slug, challenge.options),
            "error": error,
        },
        status=status,
    )
