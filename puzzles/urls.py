from django.urls import path

from puzzles import views

urlpatterns = [
    path("api/puzzles/next", views.api_next, name="api-puzzles-next"),
    path("api/puzzles/daily", views.api_daily, name="api-puzzles-daily"),
    path("api/puzzles/<int:puzzle_id>", views.api_puzzle, name="api-puzzle"),
    path("api/puzzles/<int:puzzle_id>/answer", views.api_answer, name="api-puzzle-answer"),
    path("puzzles/", views.puzzles_index, name="puzzles"),
    path("puzzles/<int:puzzle_id>/", views.puzzle_page, name="puzzle"),
    path("puzzles/<slug:slug>/", views.puzzles_of_game, name="puzzles-of-game"),
]
