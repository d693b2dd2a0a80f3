"""What the profile page shows of a user's vacation and blocks."""

from __future__ import annotations

from typing import Any

from django import template

from accounts.models import Block
from games import selectors

register = template.Library()


@register.simple_tag
def vacation_of(user: Any) -> dict[str, Any]:
    return selectors.vacation_info(user)


@register.simple_tag
def blocks(viewer: Any, other: Any) -> bool:
    """Whether `viewer` blocks `other`."""
    if not getattr(viewer, "is_authenticated", False):
        return False
    return Block.objects.filter(blocker=viewer, blocked=other).exists()
