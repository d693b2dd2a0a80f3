"""Every websocket route of the site, one list per app."""

from lobby.routing import websocket_urlpatterns as lobby_routes

websocket_urlpatterns = [*lobby_routes]
