"""The wire views of the lobby's rows: a seek, a challenge, a game as the lobby shows them.

Reads (lobby.selectors) and writes (lobby.services) both build frames from these, so they live
apart from both: the selectors need not import the services to draw a seek.
"""

from __future__ import annotations

from typing import Any

from games import clocks
from games.models import Game
from lobby import protocol
from lobby.models import Challenge, Seek
from ratings import selectors as rating_selectors
from ratings.models import Speed


def speed_of(control: clocks.TimeControl) -> str:
    """The rating speed of a time control: real time, or correspondence (untimed included)."""
    return Speed.REALTIME if control.realtime else Speed.CORRESPONDENCE


def _games(choices: list[dict[str, Any]]) -> list[protocol.GameChoice]:
    return [protocol.GameChoice(slug=c["slug"], options=c.get("options") or {}) for c in choices]


def seek_payload(seek: Seek) -> protocol.SeekView:
    rating, provisional = rating_selectors.rating_of(
        seek.user_id, seek.games[0]["slug"], speed_of(seek.time_control)
    )
    return protocol.SeekView(
        id=seek.pk,
        user=seek.user.username,
        games=_games(seek.games),
        time_control=seek.time_control.code,
        time_label=seek.time_control.label,
        created_at=seek.created_at.isoformat(),
        rated=seek.rated,
        rating_range=seek.rating_range,
        rating=round(rating),
        provisional=provisional,
        user_is_bot_account=seek.user.bot_since is not None,
        bots=seek.bots,
    )


def challenge_payload(challenge: Challenge) -> protocol.ChallengeView:
    return protocol.ChallengeView(
        id=challenge.pk,
        challenger=challenge.challenger.username,
        challenged=challenge.challenged.username if challenge.challenged else None,
        slug=challenge.slug,
        options=challenge.options,
        side=challenge.side,
        time_control=challenge.time_control.code,
        time_label=challenge.time_control.label,
        status=challenge.status,
        decline_reason=challenge.decline_reason,
        token=challenge.token,
        game_id=challenge.game_id,
        expires_at=challenge.expires_at.isoformat(),
        rated=challenge.rated,
        challenger_is_bot_account=challenge.challenger.bot_since is not None,
        challenged_is_bot_account=bool(challenge.challenged and challenge.challenged.bot_since),
    )


def _players(game: Game) -> dict[str, str]:
    return {"1": game.player1.username, "2": game.player2.username}


def bot_seats(game: Game) -> list[str]:
    """The seats whose player is a bot account (docs/API.md), "1" before "2"."""
    players = (("1", game.player1), ("2", game.player2))
    return [seat for seat, user in players if user.bot_since is not None]


def game_summary(game: Game) -> protocol.GameSummary:
    return protocol.GameSummary(
        id=game.pk,
        slug=game.slug,
        options=game.options,
        players=_players(game),
        bot_accounts=bot_seats(game),
    )


def live_game(game: Any) -> protocol.LiveGame:
    """A game of the live list; `game` carries the `spectators` count its query annotated."""
    return protocol.LiveGame(
        id=game.pk,
        slug=game.slug,
        options=game.options,
        players=_players(game),
        ply=game.ply,
        spectators=game.spectators,
        bot_accounts=bot_seats(game),
    )
