"""The site's settings plus the test suite's fifth game (tests/fifth_game.py)."""

from config.settings import *  # noqa: F403
from tests import fifth_game  # noqa: F401  (registers the game)
