"""The product's settings with the tooling app installed: only `python -m devtools` and the
server processes its benchmarks start use these."""

from config.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "devtools"]  # noqa: F405
