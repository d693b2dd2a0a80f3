"""Browsers' push subscriptions and the kinds of notice a player wants: the only code that
changes them (the API and the settings form call it; push/sending.py drops the
subscriptions a push service says are gone)."""

from __future__ import annotations

import binascii
import fnmatch
import logging
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User
from push import notices
from push.keys import b64url_decode
from push.models import KINDS, Choices, Subscription
from realtime.errors import ServiceError

logger = logging.getLogger(__name__)

# Browsers one account keeps subscribed: a new one past these drops the one made longest ago.
MAX_SUBSCRIPTIONS = 20


def _signed_in(user: Any) -> User:
    if user is None or not getattr(user, "is_authenticated", False):
        raise ServiceError("not_logged_in", _("Log in (or play as a guest) first."))
    return user


def accepted_endpoint(endpoint: str) -> bool:
    """Whether the site sends to this address: a push service of settings.PUSH_SERVICES
    (`scheme://host` patterns, `*` for any part of a host name). Any other address is refused,
    so that the site's own network is never what a subscription points it at."""
    try:
        parts = urlsplit(endpoint)
    except ValueError:
        return False
    if not parts.hostname or "@" in parts.netloc or parts.scheme not in {"https", "http"}:
        return False
    for pattern in settings.PUSH_SERVICES:
        scheme, _sep, host = pattern.partition("://")
        if parts.scheme == scheme and fnmatch.fnmatchcase(parts.netloc.lower(), host.lower()):
            return True
    return False


def _key(text: str, length: int) -> bool:
    try:
        raw = b64url_decode(text)
    except (binascii.Error, ValueError):
        return False
    return len(raw) == length and (length != 65 or raw[0] == 4)


def subscribe(
    *,
    user: Any,
    endpoint: str,
    p256dh: str,
    auth: str,
    language: str = "",
    session_key: str = "",
) -> dict[str, bool]:
    """Keep this browser's subscription for `user` (a browser that subscribed for another
    account before is now this one's); the first one turns every kind on. The kinds."""
    user = _signed_in(user)
    if not accepted_endpoint(endpoint):
        raise ServiceError(
            "unknown_push_service",
            _("That address is not one of the push services this site sends to."),
        )
    if not _key(p256dh, 65) or not _key(auth, 16):
        raise ServiceError(
            "bad_subscription",
            _("The subscription's keys are not a P-256 public key and a 16-byte secret."),
        )
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        Subscription.objects.update_or_create(
            endpoint=endpoint,
            defaults={
                "user": user,
                "p256dh": p256dh,
                "auth": auth,
                "language": language[:8],
                "session_key": session_key[:40],
                "failures": 0,
            },
        )
        extra = Subscription.objects.filter(user=user).order_by("-created_at", "-pk")
        old = list(extra.values_list("pk", flat=True)[MAX_SUBSCRIPTIONS:])
        if old:
            Subscription.objects.filter(pk__in=old).delete()
        choices, _created = Choices.objects.get_or_create(user=user)
    notices.forget_wanting()
    return choices.as_dict()


def unsubscribe(*, user: Any, endpoint: str) -> bool:
    """Forget this browser's subscription; whether there was one."""
    user = _signed_in(user)
    deleted, _kinds = Subscription.objects.filter(user=user, endpoint=endpoint).delete()
    notices.forget_wanting()
    return deleted > 0


def kinds_of(user: Any) -> dict[str, bool]:
    """The kinds the player wants (all off while push was never turned on)."""
    choices = Choices.objects.filter(user_id=user.pk).first()
    return choices.as_dict() if choices else dict.fromkeys(KINDS, False)


def set_kinds(*, user: Any, changes: dict[str, bool]) -> dict[str, bool]:
    """Turn kinds on or off (those not named stay as they are); the kinds."""
    user = _signed_in(user)
    unknown = set(changes) - set(KINDS)
    if unknown:
        raise ServiceError(
            "bad_message", _("Unknown kinds: %(kinds)s.") % {"kinds": ", ".join(sorted(unknown))}
        )
    with transaction.atomic():
        choices = Choices.objects.select_for_update().filter(user_id=user.pk).first()
        if choices is None:
            choices = Choices(user=user, **dict.fromkeys(KINDS, False))
        for kind, on in changes.items():
            setattr(choices, kind, bool(on))
        choices.save()
    notices.forget_wanting()
    return choices.as_dict()


def browsers(user: Any) -> int:
    return int(Subscription.objects.filter(user_id=user.pk).count())


def logged_out(sender: Any, request: Any = None, user: Any = None, **_: Any) -> None:
    """Django's user_logged_out: the browser that logged out hears no more of that account."""
    session = getattr(request, "session", None)
    key = getattr(session, "session_key", None)
    if user is not None and key:
        Subscription.objects.filter(user_id=user.pk, session_key=key).delete()
        notices.forget_wanting()


def export_of(user: Any) -> dict[str, Any]:
    """The player's push data for their download: the kinds chosen, and each browser
    subscribed (its push service's address and when; not its keys, which are the browser's)."""
    return {
        "kinds": kinds_of(user),
        "browsers": [
            {
                "push_service": urlsplit(row.endpoint).netloc,
                "subscribed_at": row.created_at.isoformat(),
                "language": row.language,
            }
            for row in Subscription.objects.filter(user_id=user.pk).order_by("created_at", "pk")
        ],
    }
