"""The analysis board's HTTP bodies (docs/PROTOCOL.md, "Analysis")."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from games.engine import MAX_MOVE_LENGTH
from games.rules.notation import LONGEST_GAME, LONGEST_POSITION
from realtime.protocol import Body, register_bodies

NodeId = Annotated[int, msgspec.Meta(ge=0)]


class StartBody(Body, kw_only=True, frozen=True):
    """POST /api/analysis: a copy of another (`copy`, its key), from a game (`game`, at
    `ply`), or a game's `slug` and `options` with a `position` (docs/NOTATION.md) and
    `moves` played from it, both optional."""

    copy: Annotated[str, msgspec.Meta(max_length=16)] | None = None
    game: Annotated[int, msgspec.Meta(ge=1)] | None = None
    ply: Annotated[int, msgspec.Meta(ge=0)] | None = None
    slug: Annotated[str, msgspec.Meta(max_length=40)] | None = None
    options: dict[str, Any] = {}
    position: Annotated[str, msgspec.Meta(max_length=LONGEST_POSITION)] | None = None
    moves: Annotated[str, msgspec.Meta(max_length=LONGEST_GAME)] | None = None


class PlayBody(Body, kw_only=True, frozen=True):
    """POST /api/analysis/<key>/play."""

    node: NodeId
    move: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_MOVE_LENGTH)]


class NodeBody(Body, kw_only=True, frozen=True):
    """POST /api/analysis/<key>/delete, /promote and /go."""

    node: NodeId


class ReviewBody(Body, kw_only=True, frozen=True):
    """POST /api/games/<id>/review: no fields."""


register_bodies(
    {
        "POST /api/analysis/<key>/eval": NodeBody,
        "POST /api/games/<id>/review": ReviewBody,
        "POST /api/analysis": StartBody,
        "POST /api/analysis/<key>/play": PlayBody,
        "POST /api/analysis/<key>/delete": NodeBody,
        "POST /api/analysis/<key>/promote": NodeBody,
        "POST /api/analysis/<key>/go": NodeBody,
    }
)
