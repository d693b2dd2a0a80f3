"""Signed reply addresses for "your move" mails: replying with just the move plays it.

The address names the player, the game and the move number it was sent for, and is signed
with the site's secret key: `pbm+r-12-345-6-<signature>@host` (the mail door reads it,
pbm/handlers.py). A reply after the game has moved on is refused like a stale `#MOVENO`.
"""

from __future__ import annotations

import re
from email.utils import parseaddr

from django.conf import settings
from django.utils.crypto import constant_time_compare, salted_hmac

_TOKEN = re.compile(r"\+r-(\d{1,12})-(\d{1,12})-(\d{1,9})-([0-9a-f]{20})@", re.IGNORECASE)
# Any address in the reply addresses' shape, signed or not: one whose signature or numbers
# were altered, or cut off, still reads as a reply meant for a game, and is answered as an
# invalid reply address rather than taken for a command.
_SHAPE = re.compile(r"\+r-[^@\s]*@", re.IGNORECASE)


def _signature(user_id: int, game_id: int, ply: int) -> str:
    return salted_hmac("pbm-reply-address", f"{user_id}-{game_id}-{ply}").hexdigest()[:20]


def reply_address(user_id: int, game_id: int, ply: int) -> str:
    """The address a reply to "your move in game_id at ply" goes to."""
    local, _, domain = parseaddr(settings.PBM_ADDRESS)[1].partition("@")
    token = f"r-{user_id}-{game_id}-{ply}-{_signature(user_id, game_id, ply)}"
    return f"{local}+{token}@{domain or 'localhost'}"


def read_reply_address(address: str) -> tuple[int, int, int] | None:
    """(user id, game id, ply) if `address` is a reply address this site signed, else None."""
    found = _TOKEN.search(address)
    if found is None:
        return None
    user_id, game_id, ply = (int(found.group(n)) for n in (1, 2, 3))
    if not constant_time_compare(found.group(4).lower(), _signature(user_id, game_id, ply)):
        return None
    return user_id, game_id, ply


def looks_like_reply_address(address: str) -> bool:
    """Whether `address` has a reply address's shape (`pbm+r-...@`), signed or not."""
    return _SHAPE.search(address) is not None
