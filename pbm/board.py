"""A game as pbmserv's mails showed it: the site's text view of the game (fixed-width board,
whose move and its number, the legal moves in pbmserv's notation), with the last moves."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from games.models import Game
from games.selectors import game_text

# The last moves a mailed board shows (the site's text view lists every move).
LAST_MOVES = 10

# The boards a reply shows, (game id, ply) in order, while `shown()` collects them: a reader
# who asked for pictures gets each attached (pbm/inbox.py).
_shown: ContextVar[list[tuple[int, int]] | None] = ContextVar("pbm_boards_shown", default=None)


@contextmanager
def shown() -> Iterator[list[tuple[int, int]]]:
    """Collect the boards drawn inside the block: (game id, ply), each once."""
    boards: list[tuple[int, int]] = []
    token = _shown.set(boards)
    try:
        yield boards
    finally:
        _shown.reset(token)


def board(game: Game, *, at: int | None = None) -> str:
    """The game now, or as it stood after move `at` (0: before the first move)."""
    text = game_text(game, at=at, last=LAST_MOVES)
    boards = _shown.get()
    if boards is not None:
        ply = game.ply if at is None else max(0, min(at, game.ply))
        if (game.pk, ply) not in boards:
            boards.append((game.pk, ply))
    return text
