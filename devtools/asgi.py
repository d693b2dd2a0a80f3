"""The product's ASGI application as the benchmarks serve it: the same, plus the counters of
devtools/stats.py and their GET /bench/stats."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "devtools.settings")

from config.asgi import application as product
from devtools import stats

stats.enable()
application = stats.serving(product)
