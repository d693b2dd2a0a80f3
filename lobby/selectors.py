"""Reads for the lobby: its snapshot, the live games list and the pages' listings."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from accounts.models import User
from games.models import Game
from games.selectors import title_for
from lobby.models import Challenge, LobbyConnection, Seek
from lobby.services import feed
from lobby.services.challenges import challenge_payload
from lobby.services.seeks import seek_payload

LIVE_GAMES_SHOWN = 50


def online_count() -> int:
    rows = LobbyConnection.objects.values_list("user_id", flat=True)
    users = set()
    anonymous = 0
    for user_id in rows:
        if user_id is None:
            anonymous += 1
        else:
            users.add(user_id)
    return len(users) + anonymous


def _active_games(limit: int) -> Any:
    """Games in progress, most recently active first, with their spectator counts."""
    return (
        Game.objects.filter(status=Game.Status.ACTIVE)
        .select_related("player1", "player2")
        .annotate(spectators=Count("connections", filter=Q(connections__player__isnull=True)))
        .order_by("-updated_at")[:limit]
    )


def live_games() -> list[dict[str, Any]]:
    games = _active_games(LIVE_GAMES_SHOWN)
    return [
        {
            "id": game.pk,
            "slug": game.slug,
            "options": game.options,
            "players": {"1": game.player1.username, "2": game.player2.username},
            "ply": game.ply,
            "spectators": game.spectators,
        }
        for game in games
    ]


def snapshot(user: Any) -> dict[str, Any]:
    signed_in = user is not None and user.is_authenticated
    seeks = (
        Seek.objects.filter(status=Seek.Status.OPEN, announced=True)
        .select_related("user")
        .order_by("created_at")
    )
    challenges: dict[str, list[dict[str, Any]]] = {"incoming": [], "outgoing": []}
    my_games: list[int] = []
    if signed_in:
        # Challenges past their expiry are not offered, even before anyone marks them.
        pending = Challenge.objects.filter(
            status=Challenge.Status.PENDING, expires_at__gt=timezone.now()
        ).select_related("challenger", "challenged")
        challenges["incoming"] = [
            challenge_payload(c) for c in pending.filter(challenged=user).order_by("created_at")
        ]
        challenges["outgoing"] = [
            challenge_payload(c) for c in pending.filter(challenger=user).order_by("created_at")
        ]
        my_games = list(
            Game.objects.filter(Q(player1=user) | Q(player2=user), status=Game.Status.ACTIVE)
            .order_by("-created_at")
            .values_list("pk", flat=True)[:20]
        )
    return {
        "type": "lobby",
        "v": feed.current_version(),
        "user": {"username": user.username, "is_guest": user.is_guest} if signed_in else None,
        "seeks": [seek_payload(s) for s in seeks[:200]],
        "challenges": challenges,
        "games": live_games(),
        "my_games": my_games,
        "online": online_count(),
    }


# --- pages: the live games page and profiles (server-rendered) ---------------------------

LIVE_PAGE_SHOWN = 200
PROFILE_GAMES_SHOWN = 100


def live_games_for_page(limit: int = LIVE_PAGE_SHOWN) -> list[dict[str, Any]]:
    """Games in progress, most recently active first, with their display name and watchers."""
    games = _active_games(limit)
    return [
        {
            "id": game.pk,
            "slug": game.slug,
            "name": title_for(game.slug, game.options),
            "player1": game.player1.username,
            "player2": game.player2.username,
            "ply": game.ply,
            "spectators": game.spectators,
            "updated_at": game.updated_at,
        }
        for game in games
    ]


def user_by_name(username: str) -> Any:
    """The user with this name (any case), or None."""
    return User.objects.filter(username__iexact=username).first()


def _outcome_for(game: Game, number: int) -> str:
    """won / lost / draw / aborted, from the point of view of player `number`."""
    if game.status == Game.Status.ABORTED:
        return "aborted"
    if game.winner is None:
        return "draw"
    return "won" if game.winner == number else "lost"


def user_games(user: Any, limit: int = PROFILE_GAMES_SHOWN) -> dict[str, list[dict[str, Any]]]:
    """A user's games: the running ones and the finished (or aborted) ones, newest first."""
    games = (
        Game.objects.filter(Q(player1=user) | Q(player2=user))
        .select_related("player1", "player2")
        .order_by("-updated_at")
    )
    listings = {
        "running": games.filter(status=Game.Status.ACTIVE),
        "finished": games.exclude(status=Game.Status.ACTIVE),
    }
    rows: dict[str, list[dict[str, Any]]] = {"running": [], "finished": []}
    for key, chosen in listings.items():
        for game in chosen[:limit]:
            number = 1 if game.player1_id == user.pk else 2
            opponent = game.player2 if number == 1 else game.player1
            rows[key].append(
                {
                    "id": game.pk,
                    "slug": game.slug,
                    "name": title_for(game.slug, game.options),
                    "side": number,
                    "opponent": opponent.username,
                    "opponent_is_guest": opponent.is_guest,
                    "ply": game.ply,
                    "status": game.status,
                    "outcome": None if key == "running" else _outcome_for(game, number),
                    "reason": game.reason,
                    "updated_at": game.updated_at,
                }
            )
    return rows
