from django.urls import path

from lobby.consumers import LobbyConsumer
from lobby.notify import NotifyConsumer
from lobby.tv_consumer import TvConsumer

websocket_urlpatterns = [
    path("ws/lobby/", LobbyConsumer.as_asgi()),
    path("ws/notify/", NotifyConsumer.as_asgi()),
    path("ws/tv/", TvConsumer.as_asgi()),
    path("ws/tv/<slug:slug>/", TvConsumer.as_asgi()),
]
