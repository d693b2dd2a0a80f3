"""The moderator's role: the permission moderation.moderate, held through the "Moderators"
group (created by migration 0002), so that moderators need not be superusers."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User
from moderation.models import Report
from realtime.errors import ServiceError

PERMISSION = "moderation.moderate"
GROUP = "Moderators"


def is_moderator(user: Any) -> bool:
    return bool(
        user is not None
        and getattr(user, "is_authenticated", False)
        and user.is_active
        and user.has_perm(PERMISSION)
    )


def check_moderator(user: Any) -> None:
    if not is_moderator(user):
        raise ServiceError("not_a_moderator", _("Only moderators can do that."))


def moderators() -> list[str]:
    return sorted(
        User.objects.filter(groups__name=GROUP).values_list("username", flat=True), key=str.lower
    )


def moderators_group() -> Group:
    """The group, holding the permission (both made by migration 0002; made again here if
    they were deleted, so that adding a moderator always works)."""
    kind = ContentType.objects.get_for_model(Report)
    permission, _ = Permission.objects.get_or_create(
        content_type=kind,
        codename=PERMISSION.split(".")[1],
        defaults={"name": "Can read reports and act as a moderator"},
    )
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(permission)
    return group


def do_set_moderator(*, username: str, moderator: bool) -> User:
    """Add a registered user to the Moderators group, or take them out of it."""
    with transaction.atomic():
        user = User.objects.filter(username__iexact=username).first()
        if user is None:
            raise ServiceError(
                "unknown_user", _("Nobody is called %(name)s.") % {"name": repr(username[:40])}
            )
        if moderator and (user.is_guest or user.is_bot):
            raise ServiceError("bad_message", _("Guests and the computer cannot moderate."))
        group = moderators_group()
        if moderator:
            user.groups.add(group)
        else:
            user.groups.remove(group)
    return user
