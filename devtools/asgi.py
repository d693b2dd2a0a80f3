"""The product's ASGI application as the benchmarks serve it: the same, plus the counters of
devtools/stats.py and their GET /bench/stats."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "devtools.settings")

from channels.routing import ProtocolTypeRouter

from config.asgi import application as product
from devtools import stats

stats.enable()
# Websockets go straight to the product's own stack, as the bare stack's do to its consumer:
# a wrapper would stay on every idle socket's stack and count in its memory.
application = ProtocolTypeRouter(
    {"http": stats.serving(product), "websocket": product.application_mapping["websocket"]}
)
