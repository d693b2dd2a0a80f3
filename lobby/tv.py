"""TV (docs/PICTURES.md, "TV"): the game to show on /tv/, the highest-rated live one, overall
or of one game. A game's rating is the mean of its players' ratings in that game and speed
(1500 for a player without one); real-time games come first, as TV is about play you can
follow move by move; games against the computer are left out."""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db.models import Q
from django.utils import timezone

from games.models import Game
from games.rules import InvalidOptions, game_info
from games.selectors import title
from lobby.selectors import LIVE_IDLE
from ratings.glicko import INITIAL_RATING
from ratings.models import Rating
from ratings.services import speed_of

# The live games weighed for TV: the most recently active first (a site has few at once).
WEIGHED = 200


def featured(slug: str | None = None) -> tuple[Game, float] | None:
    """The game TV shows now, and its rating; None when no game is being played."""
    games = Game.objects.filter(
        status=Game.Status.ACTIVE,
        against_computer=False,
        updated_at__gte=timezone.now() - LIVE_IDLE,
    )
    if slug is not None:
        games = games.filter(slug=slug)
    weighed = list(games.select_related("player1", "player2").order_by("-updated_at")[:WEIGHED])
    if not weighed:
        return None
    wanted = Q()
    for game in weighed:
        wanted |= Q(
            user_id__in=[game.player1_id, game.player2_id], slug=game.slug, speed=speed_of(game)
        )
    ratings = {
        (row.user_id, row.slug, row.speed): row.rating for row in Rating.objects.filter(wanted)
    }

    def rating(game: Game) -> float:
        speed = speed_of(game)
        return (
            sum(
                ratings.get((player, game.slug, speed), INITIAL_RATING)
                for player in (game.player1_id, game.player2_id)
            )
            / 2
        )

    best = max(weighed, key=lambda game: (game.time_control.realtime, rating(game)))
    return best, rating(best)


# Every home page asks every few seconds: the answer is shared for this long. A game that ends
# takes the shared answers with it (`game_ended`), so TV's watchers, who all ask at its end,
# hear of the next game at once.
SHARED_SECONDS = 1


def _key(slug: str | None) -> str:
    return f"tv:featured:{slug or ''}"


def game_ended(game: Game, **_: Any) -> None:
    """games.lifecycle.game_ended: the shared answers (overall, and the game's own) may show
    the game that ended; they are dropped, the next asker computes them again."""
    cache.delete_many([_key(None), _key(game.slug)])


def featured_json(slug: str | None) -> dict[str, Any] | None:
    """featured() as the API and the pages give it, computed at most once a second."""
    key = _key(slug)
    shown = cache.get(key)
    if shown is None:
        # "No game" is not kept: it costs one look at no active game, and a game that starts
        # is then on TV at once.
        shown = _featured_json(slug)
        if shown is not None:
            cache.set(key, shown, SHARED_SECONDS)
    return shown


def next_featured(slug: str | None, ended: int | None) -> dict[str, Any] | None:
    """What TV shows after game `ended` (None: after no game), for the feeds of every
    process (lobby/tv_feed.py): the shared answer unless it still names the game that ended
    (an answer computed as it ended), else computed again now and shared."""
    key = _key(slug)
    shown = cache.get(key)
    if shown is not None and shown["id"] != ended:
        return dict(shown)
    shown = _featured_json(slug)
    if shown is not None:
        cache.set(key, shown, SHARED_SECONDS)
    return shown


def _featured_json(slug: str | None) -> dict[str, Any] | None:
    found = featured(slug)
    if found is None:
        return None
    game, rating = found
    return {
        "id": game.pk,
        "slug": game.slug,
        "title": title(game),
        "rating": round(rating),
        "players": {"1": game.player1.username, "2": game.player2.username},
        "ply": game.ply,
    }


def known_game(slug: str) -> bool:
    try:
        game_info(slug)
    except InvalidOptions:
        return False
    return True
