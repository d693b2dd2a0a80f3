"""The tournaments' pages: the list (with the form to create one) and a tournament's page."""

from __future__ import annotations

import msgspec
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from games.messages import described_games
from tournaments import selectors
from tournaments.models import Tournament
from tournaments.services import creation


@require_GET
def listing(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "tournaments/list.html",
        {
            "groups": selectors.listing(),
            "games": described_games(),
            "kinds": Tournament.Kind.choices,
            "arena_minutes": creation.ARENA_MINUTES,
            "swiss_rounds": creation.SWISS_ROUNDS,
        },
    )


@require_GET
def page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    frame = selectors.snapshot(tournament_id, request.user)
    if frame is None:
        raise Http404(f"There is no tournament {tournament_id}.")
    is_creator = request.user.is_authenticated and frame.tournament.creator == request.user.username
    token = ""
    if is_creator and frame.tournament.invite_only:
        token = Tournament.objects.values_list("invite_token", flat=True).get(pk=tournament_id)
    return render(
        request,
        "tournaments/tournament.html",
        {
            "t": frame.tournament,
            "frame": frame,
            # The page draws itself from the same snapshot the socket sends.
            "frame_json": msgspec.to_builtins(frame),
            "invite": request.GET.get("invite", "")[:64],
            "is_creator": is_creator,
            "invite_token": token,
        },
    )
