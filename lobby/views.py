from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import formats
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy
from django.views.decorators.http import require_GET

from accounts import circles
from accounts.forms import NotificationsForm
from accounts.tokens import ANY_SCOPE, accepts_tokens
from bots.search import LEVELS
from games import clocks
from games.messages import described_games
from games.selectors import title_for
from lobby import selectors
from lobby import tv as tv_games
from ratings import selectors as rating_selectors
from realtime.api_errors import refuse
from realtime.errors import ServiceError

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
            # The players this user follows: the live games list shows their games first.
            "following": circles.followed_names(request.user.pk)
            if request.user.is_authenticated
            else [],
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
    playing = selectors.playing_now(player)
    context = {
        "player": player,
        "playing": playing,
        "games": selectors.user_games(player),
        "records": selectors.records(player),
        "ratings": ratings,
        "preview": _profile_preview(request, player, playing, ratings),
    }
    if request.user == player:
        context["notifications"] = NotificationsForm(
            initial={
                "email_on_move": player.email_on_move,
                "email_on_follow": player.email_on_follow,
                "mail_pictures": player.mail_pictures,
            }
        )
    return render(request, "lobby/profile.html", context)


# The ratings a profile's link preview names, highest first.
PREVIEW_RATINGS = 3


def _profile_preview(
    request: HttpRequest, player: Any, playing: dict[str, Any] | None, ratings: list[dict[str, Any]]
) -> dict[str, str]:
    """A profile's link preview (Open Graph, Twitter cards): what the player is playing now
    and their best ratings; the picture of the game they play, or of their last game's end."""
    said = []
    if playing is not None:
        said.append(
            _("Playing %(game)s against %(opponent)s now.")
            % {"game": playing["name"], "opponent": playing["opponent"]}
        )
    best = sorted(ratings, key=lambda rating: -rating["rating"])[:PREVIEW_RATINGS]
    if best:
        listed = ", ".join(
            f"{rating['name']} ({SPEED_NAMES.get(rating['speed'], rating['speed'])}) "
            f"{rating['rating']}"
            for rating in best
        )
        said.append(_("Rated %(ratings)s.") % {"ratings": listed})
    if not said:
        said.append(
            _("Playing since %(since)s.")
            % {"since": formats.date_format(player.date_joined, "DATE_FORMAT")}
        )
    shown = playing["id"] if playing is not None else selectors.last_finished_game(player)
    return {
        "title": player.username,
        "description": " ".join(said),
        "url": request.build_absolute_uri(),
        "image": request.build_absolute_uri(reverse("game-png", args=[shown])) if shown else "",
    }


@require_GET
def tv(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    """TV: the highest-rated live game (of one game, or of all), switching to the next when
    it ends (lobby/tv.py; static/js/tv.js)."""
    if slug is not None and not tv_games.known_game(slug):
        raise Http404("There is no such game.")
    name = title_for(slug, {}) if slug else ""
    return render(
        request,
        "lobby/tv.html",
        {
            "slug": slug or "",
            "title": _("TV: %(game)s") % {"game": name} if slug else _("TV"),
            "games": described_games(),
            "featured": tv_games.featured_json(slug),
        },
    )


@require_GET
@accepts_tokens(*ANY_SCOPE)
def api_tv(request: HttpRequest) -> JsonResponse:
    """The game TV shows now (`game`: of one game), or null when none is being played."""
    slug = request.GET.get("game") or None
    unknown = sorted(set(request.GET) - {"game"})
    if unknown or (slug is not None and not tv_games.known_game(slug)):
        message = (
            _("unknown parameter %(name)s") % {"name": unknown[0]}
            if unknown
            else _("game must be one of the site's games")
        )
        return refuse(ServiceError("bad_message", message))
    return JsonResponse({"game": tv_games.featured_json(slug)})
