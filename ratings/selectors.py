"""Reads: standings, a player's ratings and history, a game's rating change, the graph."""

from __future__ import annotations

from typing import Any

from django.utils.html import escape
from django.utils.translation import gettext_lazy

from games.models import Game
from games.rules import available_games
from ratings.glicko import INITIAL_RATING, PROVISIONAL_DEVIATION
from ratings.models import Rating, RatingChange, Speed

STANDINGS = 100


def game_names() -> dict[str, str]:
    return {game["slug"]: game["name"] for game in available_games()}


def current(user_ids: list[int], speed: str) -> dict[tuple[int, str], tuple[float, bool]]:
    """(rating, provisional) of these users at this speed, by (user id, game); a game they
    never played rated is missing (1500, provisional)."""
    rows = Rating.objects.filter(user_id__in=user_ids, speed=speed)
    return {
        (row.user_id, row.slug): (row.rating, row.deviation > PROVISIONAL_DEVIATION) for row in rows
    }


def rating_of(user_id: int, slug: str, speed: str) -> tuple[float, bool]:
    found = current([user_id], speed).get((user_id, slug))
    return found if found is not None else (INITIAL_RATING, True)


def rating_view(row: Rating) -> dict[str, Any]:
    return {
        "username": row.user.username,
        "is_bot_account": row.user.bot_since is not None,
        "rating": round(row.rating),
        "deviation": round(row.deviation),
        "provisional": row.deviation > PROVISIONAL_DEVIATION,
        "games": row.games,
        "wins": row.wins,
        "losses": row.losses,
        "draws": row.draws,
    }


def standings(
    slug: str, speed: str, limit: int = STANDINGS, *, bots: bool = False
) -> list[dict[str, Any]]:
    """pbmserv's `standings`: the best ratings of a game at a speed (provisional last).
    People's list, or with `bots` the bot accounts' own (docs/RATINGS.md): their ratings are
    computed alike, from games against anyone, but each list ranks its own kind."""
    rows = Rating.objects.filter(
        slug=slug, speed=speed, games__gt=0, user__bot_since__isnull=not bots
    ).select_related("user")
    ordered = sorted(rows, key=lambda row: (row.deviation > PROVISIONAL_DEVIATION, -row.rating))
    return [{"rank": rank, **rating_view(row)} for rank, row in enumerate(ordered[:limit], 1)]


def ratings_of(user: Any) -> list[dict[str, Any]]:
    """A player's ratings, one per game and speed played rated."""
    names = game_names()
    rows = Rating.objects.filter(user=user, games__gt=0).select_related("user")
    return [
        {
            **rating_view(row),
            "slug": row.slug,
            "name": names.get(row.slug, row.slug),
            "speed": row.speed,
        }
        for row in sorted(rows, key=lambda row: (row.slug, row.speed))
    ]


def history(user: Any, slug: str, speed: str) -> list[float]:
    """The player's rating after each rated game of that kind, oldest first (1500 first)."""
    changes = RatingChange.objects.filter(user=user, slug=slug, speed=speed).order_by("id")
    points = list(changes.values_list("before", "after"))
    return [points[0][0], *(after for _, after in points)] if points else []


def game_changes(game: Game) -> dict[str, Any] | None:
    """{"1": {before, after, diff, provisional}, "2": ...}, or None while not rated yet."""
    rows = list(RatingChange.objects.filter(game=game))
    if len(rows) != 2:
        return None
    return {
        str(row.player): {
            "before": round(row.before),
            "after": round(row.after),
            "diff": round(row.after) - round(row.before),
            "provisional": row.deviation > PROVISIONAL_DEVIATION,
        }
        for row in rows
    }


def graph_svg(points: list[float], *, width: int = 320, height: int = 90, label: str = "") -> str:
    """A small line chart of a rating history, as SVG markup (numbers only, plus the
    escaped label)."""
    if len(points) < 2:
        return ""
    low, high = min(points), max(points)
    span = max(high - low, 50.0)
    middle = (high + low) / 2
    low, high = middle - span / 2 - 10, middle + span / 2 + 10
    pad = 4
    step = (width - 2 * pad) / (len(points) - 1)

    def y(value: float) -> float:
        return pad + (high - value) / (high - low) * (height - 2 * pad)

    line = " ".join(
        f"{pad + index * step:.1f},{y(value):.1f}" for index, value in enumerate(points)
    )
    last_x, last_y = pad + (len(points) - 1) * step, y(points[-1])
    return (
        f'<svg class="rating-graph" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(label)}">'
        f'<text x="{pad}" y="12" class="axis">{round(high - 10)}</text>'
        f'<text x="{pad}" y="{height - 2}" class="axis">{round(low + 10)}</text>'
        f'<polyline points="{line}" fill="none" stroke="currentColor" stroke-width="2"/>'
        f'<circle cx="{last_x:.1f}" cy="{last_y:.1f}" r="3"/>'
        "</svg>"
    )


SPEEDS = [
    (Speed.REALTIME, gettext_lazy("Real time")),
    (Speed.CORRESPONDENCE, gettext_lazy("Correspondence")),
]
