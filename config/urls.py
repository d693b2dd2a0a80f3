from django.contrib import admin
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from lobby.links import challenge_link
from realtime.health import healthz, readyz


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """Browsers and feed readers ask for /favicon.ico whatever the page names."""
    return HttpResponsePermanentRedirect(static("img/favicon.svg"))


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("", include("games.urls")),
    path("", include("analysis.urls")),
    path("", include("puzzles.urls")),
    path("", include("ratings.urls")),
    path("", include("follows.urls")),
    path("", include("pbm.urls")),
    path("", include("moderation.urls")),
    path("", include("tournaments.urls")),
    path("", include("push.urls")),
    path("", include("botapi.urls")),
    path("", include("lobby.api_urls")),
    path("challenge/<str:token>/", challenge_link, name="challenge-link"),
    path("", include("privacy.urls")),
    path("", include("accounts.urls")),
    path("", include("lobby.urls")),
]
