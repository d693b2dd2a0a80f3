"""The profile page's push section (the profile belongs to the lobby, the notices to this
app, so the page asks here, as it asks the mail door for its own section)."""

from __future__ import annotations

from typing import Any

from django import template

from push import subscriptions
from push.models import KIND_LABELS

register = template.Library()


@register.inclusion_tag("push/_settings.html", takes_context=True)
def push_settings(context: Any) -> dict[str, Any]:
    user = context["request"].user
    wanted = subscriptions.kinds_of(user)
    return {
        "csrf_token": context.get("csrf_token"),
        "kinds": [(kind, label, wanted[kind]) for kind, label in KIND_LABELS.items()],
        "browsers": subscriptions.browsers(user),
    }
