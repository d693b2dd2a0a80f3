"""The profile page's mail-password section (the profile belongs to the lobby; the mail
password to this app, so the page asks here)."""

from __future__ import annotations

from typing import Any

from django import template
from django.conf import settings

from pbm.models import MailPassword

register = template.Library()


@register.inclusion_tag("pbm/_mail_password.html", takes_context=True)
def mail_password_form(context: Any) -> dict[str, Any]:
    user = context["request"].user
    stored = MailPassword.objects.filter(user=user).first()
    return {
        "user": user,
        "csrf_token": context.get("csrf_token"),
        "mail_password_set": stored is not None,
        "changed_at": stored.changed_at if stored else None,
        "pbm_address": settings.PBM_ADDRESS,
    }
