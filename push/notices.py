"""Who is told what: the receivers of the games', lobby's and tournaments' news.

Each runs after the news committed, on the path of the request that made it (a move, an
offer, a challenge, a pairing wave), so each does as little as it can: a move no query at all
(who wants "your move" notices is known to the process, read again every few seconds), the
rarer news one query for whether anyone concerned asked for that kind of notice (most players
did not), and one INSERT of a Notice per reader who did. Nothing is sent here: the sweeper's
pass sends (push/sending.py), and decides then whether the notice is still news (the player
may have moved meanwhile, or opened the game).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from django.db.models import Exists, OuterRef

from games.models import Game
from lobby.models import Challenge
from push.models import Choices, Kind, Notice, Subscription
from tournaments.models import Pairing


def _who_wants(kind: str) -> Any:
    """The user ids that want `kind` and have a browser subscribed (a closed account has none
    of its news sent)."""
    return (
        Choices.objects.filter(user__is_active=True, **{kind: True})
        .filter(Exists(Subscription.objects.filter(user_id=OuterRef("user_id"))))
        .values_list("user_id", flat=True)
    )


def wanting(user_ids: Iterable[int | None], kind: str) -> set[int]:
    """Of these users, those who want `kind` and have a browser subscribed."""
    ids = {user_id for user_id in user_ids if user_id is not None}
    if not ids:
        return set()
    return set(_who_wants(kind).filter(user_id__in=ids))


# Who wants "your move" notices, per kind, read at most every WANTING_SECONDS by each process:
# a move must not pay a query to learn that (most players never turn notices on; the query
# was a third of a move's server time). This process forgets at once what it changed itself
# (push/subscriptions.py); another process learns it within the interval, so a notice for a
# move made on it in the first seconds after turning notices on may be missed.
WANTING_SECONDS = 5.0
_wanting_moves: dict[str, tuple[float, frozenset[int]]] = {}


def wanting_moves(kind: str) -> frozenset[int]:
    """The users who want `kind` ("your move" notices) and have a browser subscribed."""
    now = time.monotonic()
    cached = _wanting_moves.get(kind)
    if cached is not None and cached[0] > now:
        return cached[1]
    users = frozenset(_who_wants(kind))
    _wanting_moves[kind] = (now + WANTING_SECONDS, users)
    return users


def forget_wanting() -> None:
    """Read who wants notices again on the next move (a choice or subscription changed)."""
    _wanting_moves.clear()


def _seat(game: Game, player: int) -> int:
    return int(game.player1_id if player == 1 else game.player2_id)


def turn_passed(game: Game, player: int, ply: int, **_: Any) -> None:
    """games.lifecycle.turn_passed: a move made it `player`'s turn."""
    kind = Kind.MOVE_REALTIME if game.time_control.realtime else Kind.MOVE_CORRESPONDENCE
    user_id = _seat(game, player)
    if user_id in wanting_moves(kind):
        Notice.objects.create(user_id=user_id, kind=kind, game_id=game.pk, player=player, ply=ply)


def offer_made(game: Game, offer: str, by: int, ply: int, **_: Any) -> None:
    """games.lifecycle.offer_made: `by` offers a draw or asks for a takeback."""
    player = 3 - by
    user_id = _seat(game, player)
    if user_id in wanting([user_id], Kind.OFFER):
        Notice.objects.create(
            user_id=user_id, kind=Kind.OFFER, game_id=game.pk, player=player, ply=ply, detail=offer
        )


def challenged(challenge: Challenge, **_: Any) -> None:
    """lobby.services.challenges.challenge_made: a user was challenged by name."""
    user_id = challenge.challenged_id
    if user_id is not None and user_id in wanting([user_id], Kind.CHALLENGE):
        Notice.objects.create(user_id=user_id, kind=Kind.CHALLENGE, challenge_id=challenge.pk)


def games_started(games: list[Game], **_: Any) -> None:
    """games.lifecycle.games_started: of the new games, a tournament's tell its players who
    asked (a pairing wave starts hundreds at once: one query for all of them, and a second
    only when some player wants these notices)."""
    players = wanting(
        (p for g in games for p in (g.player1_id, g.player2_id)), Kind.TOURNAMENT_GAME
    )
    if not players:
        return
    by_id = {game.pk: game for game in games if {game.player1_id, game.player2_id} & players}
    pairings = Pairing.objects.filter(game_id__in=list(by_id)).values_list(
        "game_id", "tournament_id"
    )
    Notice.objects.bulk_create(
        Notice(
            user_id=_seat(by_id[game_id], player),
            kind=Kind.TOURNAMENT_GAME,
            game_id=game_id,
            player=player,
            ply=0,
            tournament_id=tournament_id,
        )
        for game_id, tournament_id in pairings
        for player in (1, 2)
        if _seat(by_id[game_id], player) in players
    )
