"""The puzzles' HTTP bodies (docs/API.md, "Puzzles")."""

from __future__ import annotations

from typing import Annotated

import msgspec

from games.engine import MAX_MOVE_LENGTH
from realtime.protocol import Body, register_bodies


class AnswerBody(Body, kw_only=True, frozen=True):
    """POST /api/puzzles/<id>/answer: the move the player chose."""

    move: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_MOVE_LENGTH)]


register_bodies({"POST /api/puzzles/<id>/answer": AnswerBody})
