"""The tournaments section of a player's profile (the profile page is the lobby's; it loads
this tag as it loads the mail door's)."""

from __future__ import annotations

from typing import Any

from django import template

from tournaments import selectors

register = template.Library()


@register.inclusion_tag("tournaments/_profile.html")
def player_tournaments(player: Any) -> dict[str, Any]:
    return {"rows": selectors.of_player(player), "player": player}
