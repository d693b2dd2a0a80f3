from django.urls import path

from tournaments import api, views

urlpatterns = [
    path("tournaments/", views.listing, name="tournaments"),
    path("tournaments/<int:tournament_id>/", views.page, name="tournament"),
    path("api/tournaments", api.tournaments, name="api-tournaments"),
    path("api/tournaments/<int:tournament_id>", api.tournament, name="api-tournament"),
    path("api/tournaments/<int:tournament_id>/join", api.join, name="api-tournament-join"),
    path(
        "api/tournaments/<int:tournament_id>/withdraw",
        api.withdraw,
        name="api-tournament-withdraw",
    ),
]
