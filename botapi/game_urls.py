"""The Bot API's streams and game actions (docs/API.md). `POST /api/games/<id>/move` is
games.urls' own (games.views.game_move), matched before these."""

from django.urls import path

from botapi import actions, streams

urlpatterns = [
    path("api/stream/event", streams.event_stream, name="api-stream-event"),
    path("api/games/<int:game_id>/stream", streams.game_stream, name="api-game-stream"),
    path("api/games/<int:game_id>/<str:action>", actions.game_action, name="api-game-action"),
]
