"""The link from a tournament game's page back to its tournament.

The game page is games' and games sits below this app, so the page loads this tag as it
loads follows' button, and games' Python names nothing of tournaments. A tag rather than the
reverse relation `game.tournament_pairing` in the template: the page would then know this
app's models, and following the relation costs a query for the pairing and another for its
tournament, where this is one indexed lookup (none found for an ordinary game).
"""

from __future__ import annotations

from typing import Any

from django import template

from tournaments import selectors

register = template.Library()


@register.inclusion_tag("tournaments/_game_link.html")
def tournament_of_game(game: Any) -> dict[str, Any]:
    return {"tournament": selectors.of_game(game.pk)}
