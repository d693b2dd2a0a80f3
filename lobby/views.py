from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy
from django.views.decorators.http import require_GET

from accounts.forms import NotificationsForm
from bots.search import LEVELS
from games import clocks
from games.messages import described_games
from lobby import selectors
from ratings import selectors as rating_selectors

# The computer's levels as the lobby's forms name them (bots/search knows no Django).
LEVEL_NAMES = {
    "Beginner": gettext_lazy("Beginner"),
    "Casual": gettext_lazy("Casual"),
    "Club": gettext_lazy("Club"),
    "Strong": gettext_lazy("Strong"),
    "Expert": gettext_lazy("Expert"),
}
# A rating's speed as the profile's graphs name it.
SPEED_NAMES = {
    "realtime": pgettext_lazy("rating speed", "realtime"),
    "correspondence": pgettext_lazy("rating speed", "correspondence"),
}


def home(request: HttpRequest) -> HttpResponse:
    # The lobby's forms are built from the engines' option metadata (lobby.js reads it).
    return render(
        request,
        "lobby/home.html",
        {
            "games": described_games(),
            "time": clocks.offered(),
            "levels": [
                {"number": level.number, "name": LEVEL_NAMES.get(level.name, level.name)}
                for level in LEVELS
            ],
        },
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
            points,
            label=_("%(game)s, %(speed)s: rating after each rated game")
            % {"game": rating["name"], "speed": SPEED_NAMES.get(rating["speed"], rating["speed"])},
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
