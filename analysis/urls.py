from django.urls import path

from analysis import views

urlpatterns = [
    path("api/explorer", views.api_explorer, name="api-explorer"),
    path("api/endgame", views.api_endgame, name="api-endgame"),
    path("api/analysis", views.api_analyses, name="api-analyses"),
    path("api/analysis/board", views.api_board, name="api-analysis-board"),
    path("api/analysis/<str:key>", views.api_analysis, name="api-analysis"),
    path("api/analysis/<str:key>/play", views.api_play, name="api-analysis-play"),
    path("api/analysis/<str:key>/delete", views.api_delete, name="api-analysis-delete"),
    path("api/analysis/<str:key>/promote", views.api_promote, name="api-analysis-promote"),
    path("api/analysis/<str:key>/go", views.api_go, name="api-analysis-go"),
    path("api/analysis/<str:key>/eval", views.api_eval, name="api-analysis-eval"),
    path("api/games/<int:game_id>/review", views.api_review, name="api-game-review"),
    path("api/analysis/<str:key>/remove", views.api_remove, name="api-analysis-remove"),
    path("analysis/", views.analysis_index, name="analysis-index"),
    path("analysis/notation/", views.notation_page, name="notation"),
    path("analysis/<str:key>/", views.analysis_page, name="analysis"),
]
