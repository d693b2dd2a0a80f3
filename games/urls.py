from django.urls import path

from games import picture_views, views
from games.rules_pages import rules_index, rules_page

urlpatterns = [
    path("api/games", views.game_list, name="api-games"),
    path("api/games/export", views.game_export, name="api-games-export"),
    path("games/", views.finished_games_page, name="games-search"),
    path("api/games/<int:game_id>", views.game_detail, name="api-game"),
    path("api/games/<int:game_id>/move", views.game_move, name="api-game-move"),
    path("api/games/<int:game_id>/positions", views.game_positions, name="api-game-positions"),
    path("games/<int:game_id>.txt", views.game_text, name="game-text"),
    path("games/<int:game_id>.json", views.game_json, name="game-json"),
    path("games/<int:game_id>.png", picture_views.game_png, name="game-png"),
    path("games/<int:game_id>.gif", picture_views.game_gif, name="game-gif"),
    path("games/<int:game_id>/", views.game_page, name="game"),
    path("embed/<int:game_id>/", views.embed_page, name="game-embed"),
    path("api/vacation", views.vacation, name="api-vacation"),
    path("api/vacation/end", views.vacation_end, name="api-vacation-end"),
    path("settings/vacation/", views.vacation_form, name="vacation"),
    path("rules/", rules_index, name="rules-index"),
    path("rules/<slug:slug>/", rules_page, name="rules"),
]
