from django.urls import path

from ratings import views

urlpatterns = [
    path("standings/", views.standings_page, name="standings"),
    path("standings/<slug:slug>/", views.standings_page, name="standings-game"),
    path("api/standings", views.standings_api, name="api-standings"),
    path("api/games/<int:game_id>/ratings", views.game_ratings, name="api-game-ratings"),
]
