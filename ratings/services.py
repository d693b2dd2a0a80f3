"""The only code that writes ratings: a rated game that ends moves both players' ratings.

The stored ratings are a cache of the rated games: `recompute` plays every rated game again,
in the order they ended, and must arrive at the same numbers (`manage.py ratings --check`).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from accounts.models import User
from games.models import Game, GameEvent
from ratings.glicko import Glicko, after_game
from ratings.models import Rating, RatingChange, Speed

logger = logging.getLogger(__name__)


def speed_of(game: Game) -> str:
    return Speed.REALTIME if game.time_control.realtime else Speed.CORRESPONDENCE


def score_of(game: Game) -> float | None:
    """Player 1's score (1, 0.5 or 0), or None when the game does not count."""
    if not game.rated or game.status != Game.Status.FINISHED or game.annulled:
        return None
    if game.winner is None:
        return 0.5
    return 1.0 if game.winner == 1 else 0.0


def rated_games_in_order() -> list[Game]:
    """Every finished rated game not annulled by a moderator, in the order they ended (ties:
    the game's id)."""
    ends = dict(
        GameEvent.objects.filter(game__rated=True, payload__type="end").values_list(
            "game_id", "created_at"
        )
    )
    games = Game.objects.filter(
        rated=True, status=Game.Status.FINISHED, annulled=False
    ).select_related("player1", "player2")
    rated = [game for game in games if game.pk in ends]
    return sorted(rated, key=lambda game: (ends[game.pk], game.pk))


def game_ended(game: Game, **_: Any) -> None:
    """games.lifecycle's receiver: rate the game (after its transaction committed)."""
    if game.rated and game.status == Game.Status.FINISHED:
        rate_game(game.pk)


# A game's rating is written after its transaction commits: if the database is lost in between,
# the sweeper's next pass rates it. Games that ended longer ago than this are not looked for,
# so the pass reads only the newest rows of an index.
MISSED_WITHIN = timedelta(hours=1)


def rate_missed(**_: Any) -> int:
    """games.lifecycle.sweeping's receiver: rate the rated games of the last hour that ended
    without their ratings moving (an outage right after the end); how many."""
    missed = (
        Game.objects.filter(
            status=Game.Status.FINISHED,
            rated=True,
            annulled=False,
            ended_at__gte=timezone.now() - MISSED_WITHIN,
        )
        .filter(~Exists(RatingChange.objects.filter(game=OuterRef("pk"))))
        .order_by("ended_at", "pk")
        .values_list("pk", flat=True)
    )
    rated = sum(rate_game(game_id) for game_id in missed)
    if rated:
        logger.warning("ratings: rated %d game(s) whose rating was missed at their end", rated)
    return rated


def rate_game(game_id: int) -> bool:
    """Rate a finished rated game once (a second call changes nothing); whether it did."""
    with transaction.atomic():
        game = (
            Game.objects.select_for_update()
            .select_related("player1", "player2")
            .filter(pk=game_id)
            .first()
        )
        if game is None:
            return False
        score = score_of(game)
        if score is None or RatingChange.objects.filter(game=game).exists():
            return False
        speed = speed_of(game)
        users = {1: game.player1, 2: game.player2}
        rows = _locked_ratings([users[1], users[2]], game.slug, speed)
        before = {seat: _glicko(rows[users[seat].pk]) for seat in (1, 2)}
        scores = {1: score, 2: 1.0 - score}
        for seat in (1, 2):
            after = after_game(before[seat], before[3 - seat], scores[seat])
            row = rows[users[seat].pk]
            _store(row, after, scores[seat])
            row.save()
            RatingChange.objects.create(
                game=game,
                player=seat,
                user=users[seat],
                slug=game.slug,
                speed=speed,
                before=before[seat].rating,
                after=after.rating,
                deviation=after.deviation,
            )
    return True


def _locked_ratings(users: list[User], slug: str, speed: str) -> dict[int, Rating]:
    # In user order, so two games of the same players never wait on each other crosswise.
    rows = {}
    for user in sorted(users, key=lambda user: user.pk):
        Rating.objects.get_or_create(
            user=user, slug=slug, speed=speed, defaults=_defaults(Glicko())
        )
        rows[user.pk] = Rating.objects.select_for_update().get(user=user, slug=slug, speed=speed)
    return rows


def _defaults(glicko: Glicko) -> dict[str, float]:
    return {
        "rating": glicko.rating,
        "deviation": glicko.deviation,
        "volatility": glicko.volatility,
    }


def _glicko(row: Rating) -> Glicko:
    return Glicko(rating=row.rating, deviation=row.deviation, volatility=row.volatility)


def _store(row: Rating, glicko: Glicko, score: float) -> None:
    row.rating, row.deviation, row.volatility = glicko.rating, glicko.deviation, glicko.volatility
    row.games += 1
    if score == 1.0:
        row.wins += 1
    elif score == 0.0:
        row.losses += 1
    else:
        row.draws += 1


# --- the cache rebuilt from the games ------------------------------------------------------


@dataclass
class Recomputed:
    ratings: dict[tuple[int, str, str], Rating] = field(default_factory=dict)
    changes: list[RatingChange] = field(default_factory=list)


def recompute() -> Recomputed:
    """Every rating and rating change, computed again from the rated games alone."""
    result = Recomputed()
    for game in rated_games_in_order():
        score = score_of(game)
        assert score is not None
        speed = speed_of(game)
        users = {1: game.player1, 2: game.player2}
        rows = {}
        for seat in (1, 2):
            key = (users[seat].pk, game.slug, speed)
            if key not in result.ratings:
                result.ratings[key] = Rating(
                    user=users[seat], slug=game.slug, speed=speed, **_defaults(Glicko())
                )
            rows[seat] = result.ratings[key]
        before = {seat: _glicko(rows[seat]) for seat in (1, 2)}
        scores = {1: score, 2: 1.0 - score}
        for seat in (1, 2):
            after = after_game(before[seat], before[3 - seat], scores[seat])
            _store(rows[seat], after, scores[seat])
            result.changes.append(
                RatingChange(
                    game=game,
                    player=seat,
                    user=users[seat],
                    slug=game.slug,
                    speed=speed,
                    before=before[seat].rating,
                    after=after.rating,
                    deviation=after.deviation,
                )
            )
    return result


def differences(fresh: Recomputed) -> list[str]:
    """Where the stored ratings differ from `fresh` (empty: the cache is right)."""
    found = []
    stored = {(row.user_id, row.slug, row.speed): row for row in Rating.objects.all()}
    for key in sorted(set(stored) | set(fresh.ratings)):
        mine, theirs = stored.get(key), fresh.ratings.get(key)
        if mine is None or theirs is None:
            found.append(f"rating {key}: stored {mine}, from the games {theirs}")
            continue
        for name in ("rating", "deviation", "volatility", "games", "wins", "losses", "draws"):
            a, b = getattr(mine, name), getattr(theirs, name)
            if not math.isclose(a, b, rel_tol=0, abs_tol=1e-6):
                found.append(f"rating {key} {name}: stored {a}, from the games {b}")
    changes = {
        (row.game_id, row.player): row
        for row in RatingChange.objects.all().only("game_id", "player", "before", "after")
    }
    for change in fresh.changes:
        row = changes.pop((change.game_id, change.player), None)
        if row is None:
            found.append(f"game {change.game_id} player {change.player}: no stored change")
        elif not (
            math.isclose(row.before, change.before, abs_tol=1e-6)
            and math.isclose(row.after, change.after, abs_tol=1e-6)
        ):
            found.append(
                f"game {change.game_id} player {change.player}: stored {row.before:.4f} -> "
                f"{row.after:.4f}, from the games {change.before:.4f} -> {change.after:.4f}"
            )
    found += [
        f"game {game} player {player}: a change for no rated game" for game, player in changes
    ]
    return found


def rebuild(fresh: Recomputed) -> None:
    """Replace the stored ratings by `fresh`."""
    with transaction.atomic():
        RatingChange.objects.all().delete()
        Rating.objects.all().delete()
        Rating.objects.bulk_create(fresh.ratings.values())
        RatingChange.objects.bulk_create(fresh.changes)
