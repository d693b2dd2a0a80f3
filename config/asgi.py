"""ASGI entry point: HTTP through Django, websockets through origin checks and session auth."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Django must be set up before anything imports models (consumers, auth middleware).
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from botapi.door import with_game_action_door  # noqa: E402
from config.routing import websocket_urlpatterns  # noqa: E402
from realtime import bridge, metrics  # noqa: E402
from realtime.auth import SocketAdmission  # noqa: E402

application = ProtocolTypeRouter(
    {
        # A program's game actions (a bot's moves) skip the ASGI handler's threads
        # (botapi/door.py); every other request is Django's as before.
        "http": with_game_action_door(django_asgi_app),
        "websocket": SocketAdmission(URLRouter(websocket_urlpatterns)),
    }
)
# On the in-memory layer, the server hears the other processes' broadcasts (realtime/bridge.py).
bridge.bind()
# Each server process serves its own metrics, on METRICS_PORT if set (docs/METRICS.md).
metrics.serve("server")
