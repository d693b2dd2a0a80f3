from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from accounts.forms import NotificationsForm
from bots.search import LEVELS
from games import clocks
from games.rules import available_games
from lobby import selectors
from ratings import selectors as rating_selectors


def home(request: HttpRequest) -> HttpResponse:
    # The lobby's forms are built from the engines' option metadata (lobby.js reads it).
    return render(
        request,
        "lobby/home.html",
        {"games": available_games(), "time": clocks.offered(), "levels": LEVELS},
    )


@require_GET
def live(request: HttpRequest) -> HttpResponse:
    """Every game in progress, with how many people watch it."""
    return render(request, "lobby/live.html", {"games": selectors.live_games_for_page()})


@require_GET
def profile(request: HttpRequest, username: str) -> HttpResponse:
    """A player's running and finished games."""
    player = selectors.user_by_name(username)
    if player is None:
        raise Http404(f"There is no user called {username[:40]!r}.")
    if player.username != username:
        return redirect("profile", username=player.username)  # one address per player
    ratings = rating_selectors.ratings_of(player)
    for rating in ratings:
        points = rating_selectors.history(player, rating["slug"], rating["speed"])
        rating["graph"] = rating_selectors.graph_svg(
            points, label=f"{rating['name']}, {rating['speed']}: rating after each rated game"
        )
    context = {
        "player": player,
        "games": selectors.user_games(player),
        "records": selectors.records(player),
        "ratings": ratings,
    }
    if request.user == player:
        context["notifications"] = NotificationsForm(
            initial={
                "email_on_move": player.email_on_move,
                "email_on_follow": player.email_on_follow,
            }
        )
    return render(request, "lobby/profile.html", context)
