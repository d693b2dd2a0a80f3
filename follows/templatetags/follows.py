"""Whether the viewer follows a game or a player (the Follow buttons)."""

from __future__ import annotations

from typing import Any

from django import template

from follows.models import Follow

register = template.Library()


@register.simple_tag
def follows_game(user: Any, game: Any) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    return Follow.objects.filter(user=user, game=game).exists()


@register.simple_tag
def follows_player(user: Any, player: Any) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    return Follow.objects.filter(user=user, player=player).exists()
