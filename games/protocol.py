"""Every message a client sends about a game, typed (the socket /ws/games/<id>/ and the HTTP
move endpoint). See docs/PROTOCOL.md; docs/protocol.schema.json is generated from these."""

from __future__ import annotations

from typing import Annotated

import msgspec

from config.protocol import Body, Message
from games.engine import MAX_MOVE_LENGTH

Notation = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_MOVE_LENGTH)]
Ply = Annotated[int, msgspec.Meta(ge=0)]


class Move(Message, tag="move", kw_only=True, frozen=True):
    move: Notation
    ply: Ply  # moves already played in the client's view


class Resign(Message, tag="resign", kw_only=True, frozen=True):
    pass


class Abort(Message, tag="abort", kw_only=True, frozen=True):
    pass


class Rematch(Message, tag="rematch", kw_only=True, frozen=True):
    pass


class Sync(Message, tag="sync", kw_only=True, frozen=True):
    v: int  # the last version the client saw


class Ping(Message, tag="ping", kw_only=True, frozen=True):
    pass


class Claim(Message, tag="claim", kw_only=True, frozen=True):
    pass


class LagReply(Message, tag="lag_reply", kw_only=True, frozen=True):
    t: int  # as the server's lag_probe sent it


CLIENT_MESSAGES = Move | Resign | Abort | Rematch | Sync | Ping | Claim | LagReply


class MoveBody(Body, kw_only=True, frozen=True):
    """POST /api/games/<id>/move."""

    move: Notation
    ply: Ply


def _bench() -> None:  # pragma: no cover - prints figures
    """Decode+validate time of the move message at the protocol's edge, against the
    json.loads and isinstance checks it replaced."""
    import json
    import timeit

    from config.protocol import decode, decoder

    raw = b'{"type": "move", "move": "I", "ply": 12, "id": "c17"}'
    reader = decoder(CLIENT_MESSAGES)

    def by_hand() -> object:
        content = json.loads(raw)
        assert isinstance(content, dict) and isinstance(content.get("type"), str)
        assert isinstance(content.get("move"), str) and isinstance(content.get("ply"), int)
        return content

    runs = 100_000
    for name, call in (
        ("json.loads + isinstance checks", by_hand),
        ("msgspec tagged union (the edge)", lambda: decode(raw, reader)),
    ):
        best = min(timeit.repeat(call, number=runs, repeat=5)) / runs * 1e6
        print(f"{name:36s} {best:6.2f} µs per move message")


if __name__ == "__main__":  # pragma: no cover
    _bench()
