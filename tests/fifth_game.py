"""A fifth pit-board game that exists only in the test suite.

It is ZigZag's engine registered under a new name with a small fixed board: one registry
line and nothing else, no JavaScript, no template. The browser test renders it from the
board description the server sends and plays it to the end, which proves a new pit game
needs no client code.
"""

from __future__ import annotations

from games.rules.base import REGISTRY, GameInfo, register
from games.rules.zigzag import ZigZagRules

SLUG = "test-pits"

if SLUG not in REGISTRY:
    register(
        GameInfo(
            slug=SLUG,
            name="Test Pits",
            factory=lambda: ZigZagRules(pits=4, seeds=3),
            summary="A game of the test suite: four pits a side, three seeds each.",
        )
    )
