"""The move message's decode and validation at the protocol's edge, timed:
`python -m devtools.protocol_bench` (msgspec was chosen over pydantic by these figures)."""

from __future__ import annotations

import json
import timeit

from games.protocol import CLIENT_MESSAGES
from realtime.protocol import decode, decoder


def main() -> None:
    """Decode+validate time of the move message at the protocol's edge, against the
    json.loads and isinstance checks it replaced."""
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


if __name__ == "__main__":
    main()
