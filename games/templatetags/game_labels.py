"""`{% game_labels as games %}`: the games' names and their options' labels in the page's
language, for the pages' scripts that name a game with its options (static/js/game_title.js),
on pages that carry no other description of the games (the news bar's challenges)."""

from __future__ import annotations

from typing import Any

from django import template

from games.messages import described_games

register = template.Library()


@register.simple_tag
def game_labels() -> list[dict[str, Any]]:
    return [
        {
            "slug": game["slug"],
            "name": game["name"],
            "options": [
                {"name": option["name"], "label": option["label"]} for option in game["options"]
            ],
        }
        for game in described_games()
    ]
