"""Every websocket route of the site, one list per app."""

from games.routing import websocket_urlpatterns as game_routes
from lobby.routing import websocket_urlpatterns as lobby_routes
from tournaments.routing import websocket_urlpatterns as tournament_routes

websocket_urlpatterns = [*lobby_routes, *game_routes, *tournament_routes]
