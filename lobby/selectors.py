"""Reads for the lobby: its snapshot and the live games list."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from games.models import Game
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


def live_games() -> list[dict[str, Any]]:
    games = (
        Game.objects.filter(status=Game.Status.ACTIVE)
        .select_related("player1", "player2")
        .annotate(spectators=Count("connections", filter=Q(connections__player__isnull=True)))
        .order_by("-updated_at")[:LIVE_GAMES_SHOWN]
    )
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
        pending = Challenge.objects.filter(status=Challenge.Status.PENDING).select_related(
            "challenger", "challenged"
        )
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
