"""Whether one player follows another, for the apps below `follows` (accounts, games, the
lobby) that enforce "people I follow" (who may challenge me, chat with me, follow me).

Following lives in `follows`, at the top of the tree; the apps that check the controls sit
below it and must not import it, nor reach its table through the user's reverse relations
(an import up the tree in disguise). So the arrow is inverted: `follows` registers its
reader here when it starts (FollowsConfig.ready). Without it nobody counts as followed, and
"people I follow" lets nobody through: the stricter reading, never the looser one.
"""

from __future__ import annotations

from collections.abc import Callable

from accounts.models import Circle

# (follower id, followed id) -> whether the first follows the second.
FollowsReader = Callable[[int, int], bool]
# follower id -> the names of the players they follow.
FollowedReader = Callable[[int], list[str]]

_reader: list[FollowsReader] = []
_followed: list[FollowedReader] = []


def register(reader: FollowsReader, followed: FollowedReader | None = None) -> None:
    """Called once by the follows app; a second registration replaces the first."""
    _reader[:] = [reader]
    _followed[:] = [followed] if followed is not None else []


def followed_names(follower_id: int) -> list[str]:
    """The players `follower` follows, by name (the lobby shows their games first); none
    without the follows app."""
    return _followed[0](follower_id) if _followed else []


def follows(follower_id: int, followed_id: int) -> bool:
    return bool(_reader) and _reader[0](follower_id, followed_id)


def admits(circle: str, *, owner_id: int, other_id: int) -> bool:
    """Whether `owner`'s setting `circle` lets `other` through."""
    if other_id == owner_id or circle == Circle.EVERYONE:
        return True
    if circle == Circle.FOLLOWED:
        return follows(owner_id, other_id)
    return False
