"""The checks the apps below moderation and follows make before a player acts: a moderator's
restrictions (chat muted, rated play forbidden) and the other player's own controls (who may
challenge, chat with, follow them). Each refusal is an error code of docs/PROTOCOL.md.

The row is read afresh each time: a socket's user was loaded when it opened, and a mute or a
changed setting must count from the moment it is saved."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import circles
from accounts.models import User
from realtime.errors import ServiceError


def chat_muted_until(user_id: int) -> datetime | None:
    until = User.objects.filter(pk=user_id).values_list("chat_muted_until", flat=True).first()
    return until if until is not None and until > timezone.now() else None


def check_may_chat(user_id: int) -> None:
    until = chat_muted_until(user_id)
    if until is not None:
        raise ServiceError(
            "chat_muted",
            _("A moderator muted your chat until %(until)s UTC.")
            % {"until": format(until, "%Y-%m-%d %H:%M")},
        )


def check_may_play_rated(user: User, *others: User) -> None:
    """Refuse a rated seek, challenge or game with a player a moderator barred from it
    (`user` is the one asking, `others` their opponents)."""
    ids = [user.pk, *(other.pk for other in others)]
    barred = set(User.objects.filter(pk__in=ids, rated_forbidden=True).values_list("pk", flat=True))
    if user.pk in barred:
        raise ServiceError(
            "rated_forbidden", _("A moderator has barred you from rated games: play casual ones.")
        )
    for other in others:
        if other.pk in barred:
            raise ServiceError(
                "rated_forbidden",
                _("%(user)s may not play rated games: play casual.") % {"user": other.username},
            )


def _setting(user_id: int, field: str) -> str:
    return str(User.objects.filter(pk=user_id).values_list(field, flat=True).first() or "")


def check_may_challenge(*, challenger: User, target: User) -> None:
    if not circles.admits(
        _setting(target.pk, "may_challenge"), owner_id=target.pk, other_id=challenger.pk
    ):
        raise ServiceError(
            "not_accepting_challenges",
            _("%(user)s does not take challenges from you.") % {"user": target.username},
        )


def check_may_follow(*, follower: User, target: User) -> None:
    if not circles.admits(
        _setting(target.pk, "may_follow"), owner_id=target.pk, other_id=follower.pk
    ):
        raise ServiceError(
            "not_accepting_followers", _("%(user)s cannot be followed.") % {"user": target.username}
        )


def sees_chat_of(reader_id: int, author_id: int) -> bool:
    """Whether `reader`'s "who may chat with me" shows `author`'s players'-room lines."""
    return circles.admits(_setting(reader_id, "may_chat"), owner_id=reader_id, other_id=author_id)
