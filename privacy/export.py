"""A player's data, as one JSON document they can download: the profile, every game they
played (moves and result), the chat lines they wrote, their ratings and how each changed."""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.utils import timezone

from accounts import exports
from accounts.models import Block, User
from analysis.models import Analysis
from games import selectors as game_selectors
from games.models import ChatLine, Game
from puzzles.models import Attempt, PuzzleRating
from ratings.models import Rating, RatingChange

FORMAT = 1


def _when(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def profile(user: User) -> dict[str, Any]:
    return {
        "username": user.username,
        "email": user.email,
        "email_confirmed": user.email_confirmed_at is not None,
        "email_waiting_for_confirmation": user.pending_email or None,
        "email_on_move": user.email_on_move,
        "email_on_follow": user.email_on_follow,
        "mail_pictures": user.mail_pictures,
        "is_guest": user.is_guest,
        "joined": _when(user.date_joined),
        "last_login": _when(user.last_login),
        "blocked": sorted(
            Block.objects.filter(blocker=user).values_list("blocked__username", flat=True)
        ),
    }


def games(user: User) -> list[dict[str, Any]]:
    played = (
        Game.objects.filter(Q(player1=user) | Q(player2=user))
        .select_related("player1", "player2")
        .order_by("pk")
    )
    return [
        {**game_selectors.game_record(game), "you": game.player_number(user)} for game in played
    ]


def chat(user: User) -> list[dict[str, Any]]:
    lines = ChatLine.objects.filter(user=user).order_by("pk")
    return [
        {"game": line.game_id, "room": line.room, "text": line.text, "at": _when(line.created_at)}
        for line in lines
    ]


def ratings(user: User) -> list[dict[str, Any]]:
    history: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for change in RatingChange.objects.filter(user=user).order_by("pk"):
        history.setdefault((change.slug, change.speed), []).append(
            {
                "game": change.game_id,
                "before": round(change.before, 1),
                "after": round(change.after, 1),
                "deviation": round(change.deviation, 1),
                "at": _when(change.created_at),
            }
        )
    return [
        {
            "game": row.slug,
            "speed": row.speed,
            "rating": round(row.rating, 1),
            "deviation": round(row.deviation, 1),
            "volatility": row.volatility,
            "games": row.games,
            "wins": row.wins,
            "losses": row.losses,
            "draws": row.draws,
            "history": history.get((row.slug, row.speed), []),
        }
        for row in Rating.objects.filter(user=user).order_by("slug", "speed")
    ]


def analyses(user: User) -> list[dict[str, Any]]:
    """The analysis boards the user made, each with its whole tree of moves."""
    return [
        {
            "key": analysis.key,
            "game": analysis.slug,
            "options": analysis.options,
            "from_game": analysis.game_id,
            "tree": analysis.tree,
            "created": _when(analysis.created),
            "updated": _when(analysis.updated),
        }
        for analysis in Analysis.objects.filter(owner=user).order_by("created")
    ]


def puzzles(user: User) -> dict[str, Any]:
    """The user's puzzle ratings (one per game) and every first answer they gave."""
    return {
        "ratings": [
            {
                "game": row.slug,
                "rating": round(row.rating, 1),
                "deviation": round(row.deviation, 1),
                "attempts": row.attempts,
                "solved": row.solved,
            }
            for row in PuzzleRating.objects.filter(user=user).order_by("slug")
        ],
        "answers": [
            {
                "puzzle": attempt.puzzle_id,
                "move": attempt.move,
                "solved": attempt.solved,
                "rating_before": round(attempt.rating_before, 1),
                "rating_after": round(attempt.rating_after, 1),
                "at": _when(attempt.created),
            }
            for attempt in Attempt.objects.filter(user=user).order_by("created")
        ],
    }


def export(user: User) -> dict[str, Any]:
    """Everything above, for `user` only (the caller is the signed-in player)."""
    return {
        "format": FORMAT,
        "exported_at": timezone.now().isoformat(),
        "profile": profile(user),
        "games": games(user),
        "chat": chat(user),
        "ratings": ratings(user),
        "analyses": analyses(user),
        "puzzles": puzzles(user),
        # Follows, push notices: the apps beside this one add their parts (accounts/exports.py).
        **exports.parts(user),
    }
