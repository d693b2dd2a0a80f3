"""`{% bot_mark user %}`: the "BOT" beside a bot account's name (docs/API.md, "Bot
accounts"), as lichess writes a title: an abbreviation whose long form screen readers and a
pointer's tooltip give. Nothing for a person or for the site's own computer."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

register = template.Library()


def mark() -> SafeString:
    return format_html(
        ' <abbr class="bot-mark" title="{}">{}</abbr>',
        _("bot account"),
        pgettext("the mark beside a bot account's name", "BOT"),
    )


@register.simple_tag
def bot_mark(user_or_flag: Any) -> SafeString:
    """The mark for a user (a bot account when bot_since is set) or for a plain flag."""
    is_bot = (
        user_or_flag
        if isinstance(user_or_flag, bool)
        else getattr(user_or_flag, "bot_since", None) is not None
    )
    return mark() if is_bot else SafeString("")
