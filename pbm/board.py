"""A game as pbmserv's mails showed it: the site's text view of the game (fixed-width board,
whose move and its number, the legal moves in pbmserv's notation), with the last moves."""

from __future__ import annotations

from games.models import Game
from games.selectors import game_text

# The last moves a mailed board shows (the site's text view lists every move).
LAST_MOVES = 10


def board(game: Game, *, at: int | None = None) -> str:
    """The game now, or as it stood after move `at` (0: before the first move)."""
    return game_text(game, at=at, last=LAST_MOVES)
