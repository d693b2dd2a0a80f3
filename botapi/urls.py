"""The Bot API's endpoints (docs/API.md): streams and game actions, bot accounts, and the
published description. Each part keeps its own routes."""

from django.urls import include, path

urlpatterns = [
    path("", include("botapi.game_urls")),
    path("", include("botapi.account_urls")),
    path("", include("botapi.meta_urls")),
]
