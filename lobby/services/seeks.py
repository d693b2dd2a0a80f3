"""Seeks and automatic pairing.

Pairing is safe across processes without a global lock: a new seek is committed first, then
paired in its own transaction that locks the two seek rows in id order (no deadlock) and
re-checks both are still open. Of two seeks committed at the same moment, at least the later
one sees the earlier, so a compatible pair never stays unpaired; a conditional update is the
backstop against pairing a seek twice.
"""

from __future__ import annotations

import random
from typing import Any

from django.db import transaction

from games import services as game_services
from games.engine import normalized_options
from games.models import Game
from games.rules import InvalidOptions
from lobby import matching
from lobby.models import Seek, User
from lobby.services import feed
from lobby.services.errors import LobbyError

MAX_OPEN_SEEKS = 3
MAX_GAMES_PER_SEEK = 8
CANDIDATES_SCANNED = 200


def check_games(games: Any) -> list[dict[str, Any]]:
    """The games of a seek, validated by the engines, with their defaults filled in."""
    if isinstance(games, dict):
        games = [games]
    if not isinstance(games, list) or not games or len(games) > MAX_GAMES_PER_SEEK:
        raise LobbyError(
            "bad_message",
            f'A seek needs "games": 1 to {MAX_GAMES_PER_SEEK} of {{"slug": ..., "options": {{}}}}.',
        )
    checked = []
    for entry in games:
        if not isinstance(entry, dict) or not isinstance(entry.get("slug"), str):
            raise LobbyError("bad_message", 'Each game needs a "slug" (and may have "options").')
        options = entry.get("options") or {}
        if not isinstance(options, dict):
            raise LobbyError("bad_message", '"options" must be an object.')
        try:
            full = normalized_options(entry["slug"], options)
        except InvalidOptions as error:
            raise LobbyError("invalid_options", str(error)) from None
        choice = {"slug": entry["slug"], "options": full}
        if choice not in checked:
            checked.append(choice)
    return checked


def seek_view(seek: Seek) -> matching.SeekView:
    return matching.SeekView(
        seek_id=seek.pk,
        user_id=seek.user_id,
        games=tuple(matching.GameChoice.of(g["slug"], g["options"]) for g in seek.games),
        time_control=seek.time_control,
    )


def seek_payload(seek: Seek) -> dict[str, Any]:
    return {
        "id": seek.pk,
        "user": seek.user.username,
        "games": seek.games,
        "time_control": seek.time_control,
        "created_at": seek.created_at.isoformat(),
    }


def create_seek(*, user: User, games: Any, time_control: str = "") -> tuple[Seek, Game | None]:
    """Open a seek and pair it at once if a compatible one is waiting."""
    if not user.is_authenticated:
        raise LobbyError("not_logged_in", "Log in or play as a guest to seek a game.")
    checked = check_games(games)
    with transaction.atomic():
        # Lock the user's row so two tabs cannot both slip under the limit.
        User.objects.select_for_update().filter(pk=user.pk).first()
        if Seek.objects.filter(user=user, status=Seek.Status.OPEN).count() >= MAX_OPEN_SEEKS:
            raise LobbyError("too_many_seeks", f"You can have at most {MAX_OPEN_SEEKS} open seeks.")
        seek = Seek.objects.create(user=user, games=checked, time_control=time_control)
        seek.user = user
        feed.publish({"type": "seek_added", "seek": seek_payload(seek)})
    return seek, pair(seek.pk)


def pair(seek_id: int) -> Game | None:
    """Pair an open seek with the oldest compatible one; the game, or None if none waits."""
    tried: set[int] = set()
    while True:
        seek = Seek.objects.filter(pk=seek_id).first()
        if seek is None or seek.status != Seek.Status.OPEN:
            return seek.game if seek else None
        waiting = (
            Seek.objects.filter(status=Seek.Status.OPEN, time_control=seek.time_control)
            .exclude(user_id=seek.user_id)
            .exclude(pk__in=tried)
            .order_by("created_at", "pk")[:CANDIDATES_SCANNED]
        )
        found = matching.candidates(seek_view(seek), [seek_view(s) for s in waiting])
        if not found:
            return None
        other, choice = found[0]
        tried.add(other.seek_id)
        game = _pair_two(seek_id, other.seek_id, choice)
        if game is not None:
            return game


def _pair_two(seek_id: int, other_id: int, choice: matching.GameChoice) -> Game | None:
    with transaction.atomic():
        rows = {
            s.pk: s
            for s in Seek.objects.select_for_update()
            .select_related("user")
            .filter(pk__in=[seek_id, other_id])
            .order_by("pk")
        }
        seek, other = rows.get(seek_id), rows.get(other_id)
        if seek is None or seek.status != Seek.Status.OPEN:
            return seek.game if seek else None
        if other is None or other.status != Seek.Status.OPEN:
            return None
        first, second = random.sample([seek.user, other.user], 2)
        game = game_services.create_game(
            slug=choice.slug, options=choice.options_dict(), player1=first, player2=second
        )
        updated = Seek.objects.filter(pk__in=[seek_id, other_id], status=Seek.Status.OPEN).update(
            status=Seek.Status.PAIRED, game=game
        )
        if updated != 2:
            raise RuntimeError(f"seeks {seek_id} and {other_id} changed under their lock")
        feed.publish(
            {"type": "seek_removed", "seek_id": seek_id},
            {"type": "seek_removed", "seek_id": other_id},
        )
        announce_game(game)
        return game


def announce_game(game: Game) -> None:
    """Tell both players (`you` says which side) and the live-games list of a new game."""
    feed.publish({"type": "game_started", "game_id": game.pk, "game": game_summary(game)})
    for number, user_id in ((1, game.player1_id), (2, game.player2_id)):
        feed.tell([user_id], {"type": "game_started", "game_id": game.pk, "you": number})


def game_summary(game: Game) -> dict[str, Any]:
    return {
        "id": game.pk,
        "slug": game.slug,
        "options": game.options,
        "players": {"1": game.player1.username, "2": game.player2.username},
    }


def cancel_seek(*, user: User, seek_id: Any) -> None:
    if not isinstance(seek_id, int) or isinstance(seek_id, bool):
        raise LobbyError("bad_message", 'cancel_seek needs "seek_id", a number.')
    with transaction.atomic():
        seek = Seek.objects.select_for_update().filter(pk=seek_id, user_id=user.pk).first()
        if seek is None:
            raise LobbyError("no_such_seek", "You have no such seek.")
        if seek.status != Seek.Status.OPEN:
            raise LobbyError("seek_closed", f"That seek is already {seek.status}.")
        seek.status = Seek.Status.CANCELLED
        seek.save(update_fields=["status"])
        feed.publish({"type": "seek_removed", "seek_id": seek.pk})


def cancel_realtime_seeks(*, user_id: int) -> int:
    """Close a user's realtime seeks (their last lobby socket has gone)."""
    with transaction.atomic():
        seeks = list(
            Seek.objects.select_for_update().filter(
                user_id=user_id, status=Seek.Status.OPEN, realtime=True
            )
        )
        if not seeks:
            return 0
        Seek.objects.filter(pk__in=[s.pk for s in seeks]).update(status=Seek.Status.CANCELLED)
        feed.publish(*({"type": "seek_removed", "seek_id": s.pk} for s in seeks))
    return len(seeks)
