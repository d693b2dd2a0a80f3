"""What the apps add to a player's data download (privacy/export.py, /settings/export.json).

The download is privacy's, but some of a player's data lives in apps beside it in the house
(follows, push) that privacy may not import: each registers a part here when it starts, and
the download holds every part registered, under its name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_PARTS: dict[str, Callable[[Any], Any]] = {}


def register(name: str, part: Callable[[Any], Any]) -> None:
    """`part(user)` is the JSON-ready data the app holds of `user`, under `name`."""
    _PARTS[name] = part


def parts(user: Any) -> dict[str, Any]:
    """Every registered app's part for `user`."""
    return {name: part(user) for name, part in sorted(_PARTS.items())}
