"""The push API's bodies (docs/PROTOCOL.md, "Push notices"), decoded at the one edge
(realtime/protocol.py), and the payload a notice carries to the service worker."""

from __future__ import annotations

from typing import Annotated

import msgspec

from realtime.protocol import Body, register_bodies

Endpoint = Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]


class SubscriptionKeys(msgspec.Struct, kw_only=True, frozen=True):
    """The browser's keys: its P-256 public key and the authentication secret (base64url)."""

    p256dh: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
    auth: Annotated[str, msgspec.Meta(min_length=1, max_length=50)]


class SubscribeBody(Body, kw_only=True, frozen=True):
    """POST /api/push/subscriptions: PushSubscription.toJSON() as the browser gives it."""

    endpoint: Endpoint
    keys: SubscriptionKeys
    expirationTime: float | None = None  # the browser's name for it


class UnsubscribeBody(Body, kw_only=True, frozen=True):
    """DELETE /api/push/subscriptions."""

    endpoint: Endpoint


class KindsBody(Body, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """POST /api/push/kinds: the kinds to change (those left out stay as they are)."""

    move_correspondence: bool | None = None
    move_realtime: bool | None = None
    challenge: bool | None = None
    tournament_game: bool | None = None
    offer: bool | None = None


class Payload(msgspec.Struct, kw_only=True, frozen=True):
    """What the service worker receives (encrypted for the browser) and shows: `title` and
    `body` in the reader's language (`lang`), the page to open (`url`, a path of the site),
    `tag` (a newer notice with the same tag replaces the older) and `kind`."""

    title: str
    body: str
    url: str
    tag: str
    kind: str
    lang: str


register_bodies(
    {
        "POST /api/push/subscriptions": SubscribeBody,
        "DELETE /api/push/subscriptions": UnsubscribeBody,
        "POST /api/push/kinds": KindsBody,
    }
)
